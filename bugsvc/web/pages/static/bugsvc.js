// bugsvc's one optional script: every page works without it. On a bug's
// form it shows the resolution and duplicate fields only while a closed
// status is chosen.
(function () {
  "use strict";
  var status = document.getElementById("bug_status");
  if (!status) { return; }
  var closed = (status.getAttribute("data-closed") || "").split(" ");
  var parts = document.querySelectorAll("[data-when-closed]");
  function update() {
    var show = closed.indexOf(status.value) >= 0;
    for (var i = 0; i < parts.length; i++) { parts[i].hidden = !show; }
  }
  status.addEventListener("change", update);
  update();
}());
