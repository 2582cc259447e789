// Paste or drop an image (or a short video) into a bug's comment box to
// attach it: the file is posted to attachment.cgi (action=insert, with the
// form's token) as the "Attach a file" page would post it, then the new
// comment with the file shown inline and the attachment list come in from
// the bug's page. Nothing else of the form changes: the text typed stays.
// The bug's form keeps its mid-air check: its tokens move on only when the
// bug had not changed before the file was attached (the file's own change
// is the visitor's). Without this script the box is a plain text box and
// files are attached with the "Attach a file" page.
(function () {
  "use strict";
  var TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp", "video/mp4", "video/webm"];
  var box = document.getElementById("comment");
  var form = document.getElementById("changeform");
  if (!box || !form || !window.fetch || !window.FormData || !window.DOMParser) { return; }
  var field = function (name) { return form.querySelector("input[name='" + name + "']"); };
  var bugId = field("id") && field("id").value;
  var token = field("csrf_token") && field("csrf_token").value;
  if (!bugId || !token) { return; }
  var hint = document.createElement("p");
  hint.id = "attach-hint";
  hint.className = "hint";
  hint.textContent = "Paste or drop an image or a short video into the comment box to attach it.";
  var status = document.createElement("p");
  status.id = "attach-status";
  status.setAttribute("role", "status");
  box.parentNode.insertBefore(hint, box.nextSibling);
  hint.parentNode.insertBefore(status, hint.nextSibling);
  box.setAttribute("aria-describedby", "attach-hint");
  var pageUrl = "/show_bug.cgi?id=" + encodeURIComponent(bugId);

  function page(text) { return new DOMParser().parseFromString(text, "text/html"); }

  function tokenOf(doc) {
    var input = doc.querySelector("#changeform input[name='update_token']");
    return input ? input.value : null;
  }

  function bringIn(doc, unchanged) {
    var list = document.querySelector("ol.comments");
    var known = {};
    Array.prototype.forEach.call(list.children, function (item) { known[item.id] = true; });
    Array.prototype.forEach.call(doc.querySelectorAll("ol.comments > li"), function (item) {
      if (!known[item.id]) { list.appendChild(document.importNode(item, true)); }
    });
    var fresh = doc.querySelector("section[aria-labelledby='h-attachments']");
    var here = document.querySelector("section[aria-labelledby='h-attachments']");
    if (fresh && here) { here.replaceWith(document.importNode(fresh, true)); }
    if (unchanged) {
      ["update_token", "delta_ts"].forEach(function (name) {
        var newer = doc.querySelector("#changeform input[name='" + name + "']");
        if (newer && field(name)) { field(name).value = newer.value; }
      });
    }
  }

  function attach(file) {
    var name = file.name || ("pasted." + (file.type.split("/")[1] || "bin"));
    status.textContent = "Attaching " + name + "…";
    var before = null;
    fetch(pageUrl, {credentials: "same-origin"})
      .then(function (answer) { return answer.text(); })
      .then(function (text) {
        before = tokenOf(page(text));
        var body = new FormData();
        body.append("csrf_token", token);
        body.append("action", "insert");
        body.append("bugid", bugId);
        body.append("attachment_description", name);
        body.append("contenttypeselection", "auto");
        body.append("data", file, name);
        return fetch("/attachment.cgi", {method: "POST", body: body, credentials: "same-origin"});
      })
      .then(function (answer) {
        return answer.text().then(function (text) { return {answer: answer, doc: page(text)}; });
      })
      .then(function (got) {
        if (!got.answer.ok || !got.doc.querySelector("ol.comments")) {
          var error = got.doc.querySelector(".error");
          status.textContent = name + " was not attached: "
            + (error ? error.textContent : "the server refused it (" + got.answer.status + ").");
          return;
        }
        bringIn(got.doc, before !== null && before === field("update_token").value);
        status.textContent = name + " is attached; it shows in the new comment above.";
      })
      .catch(function () { status.textContent = name + " was not attached: the server did not answer."; });
  }

  function files(list) {
    var found = [];
    for (var i = 0; list && i < list.length; i++) {
      if (TYPES.indexOf(list[i].type) >= 0) { found.push(list[i]); }
    }
    return found;
  }

  box.addEventListener("paste", function (event) {
    var found = files(event.clipboardData && event.clipboardData.files);
    if (found.length) { event.preventDefault(); found.forEach(attach); }
  });
  box.addEventListener("dragover", function (event) {
    if (event.dataTransfer && Array.prototype.indexOf.call(event.dataTransfer.types, "Files") >= 0) {
      event.preventDefault();
    }
  });
  box.addEventListener("drop", function (event) {
    var found = files(event.dataTransfer && event.dataTransfer.files);
    if (found.length) { event.preventDefault(); found.forEach(attach); }
  });
}());
