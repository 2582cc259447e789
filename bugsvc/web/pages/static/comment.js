// The comment forms' Preview button in place: without script it sends the
// form and the page comes back with the preview above the comment box; with
// script the same request is made in the background and only the preview
// is replaced, so nothing else typed in the form is lost. Nothing is stored
// either way.
(function () {
  "use strict";
  var buttons = document.querySelectorAll("button[data-preview]");
  function preview(event) {
    var button = event.currentTarget;
    var form = button.form;
    var shown = document.getElementById("comment-preview");
    if (!form || !shown || !window.fetch || !window.DOMParser) { return; }
    event.preventDefault();
    var data = new FormData(form);
    data.delete("data");
    data.set("preview", "1");
    var body = form.enctype === "multipart/form-data" ? data : new URLSearchParams(data);
    button.disabled = true;
    fetch(form.action, {method: "POST", body: body, credentials: "same-origin"})
      .then(function (answer) { return answer.text(); })
      .then(function (text) {
        var page = new DOMParser().parseFromString(text, "text/html");
        var fresh = page.getElementById("comment-preview");
        if (fresh) { shown.innerHTML = fresh.innerHTML; }
        shown.setAttribute("data-shown", "1");
      })
      .then(function () { button.disabled = false; }, function () {
        // No answer in the background: the same preview by the page's round trip.
        button.disabled = false;
        form.requestSubmit(button);
      });
  }
  for (var i = 0; i < buttons.length; i++) {
    buttons[i].addEventListener("click", preview);
  }
}());
