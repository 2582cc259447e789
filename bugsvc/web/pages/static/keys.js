// Keyboard shortcuts. None fires while the focus is in a text box, a menu
// or an editable element, nor with Ctrl, Alt or Meta held (those belong to
// the browser and to the access keys):
//   ?      lists the shortcuts (Escape closes the list)
//   /      goes to the quick search box
//   j, k   next, previous bug of a list, or comment of a bug
//   c      goes to the comment box of a bug
//   e      goes to the first field of a bug's form
// The access keys of the pages (Alt+Shift+S saves, Alt+Shift+C the comment
// box, in Chromium's way of pressing them) work without this script.
(function () {
  "use strict";
  var SHORTCUTS = [
    ["?", "Show this list of shortcuts"],
    ["/", "Go to the quick search box"],
    ["j", "Next bug in a list, next comment on a bug"],
    ["k", "Previous bug in a list, previous comment on a bug"],
    ["c", "Go to the comment box (bug page)"],
    ["e", "Go to the first field of the bug's form (bug page)"]
  ];
  var dialog = null;
  var before = null;
  var current = -1;

  function typing(target) {
    if (!target || !target.tagName) { return false; }
    var tag = target.tagName.toLowerCase();
    return tag === "input" || tag === "textarea" || tag === "select" || target.isContentEditable;
  }

  // The links j and k move through: each bug's number in a list, or each
  // comment's heading on a bug.
  function stops() {
    var links = document.querySelectorAll("table.buglist td.id a");
    if (!links.length) { links = document.querySelectorAll("ol.comments > li > article > header > a:first-child"); }
    return Array.prototype.slice.call(links);
  }

  function move(step) {
    var links = stops();
    if (!links.length) { return false; }
    var at = links.indexOf(document.activeElement);
    if (at < 0) { at = current; }
    at = Math.max(0, Math.min(links.length - 1, at < 0 ? (step > 0 ? 0 : links.length - 1)
                                                     : at + step));
    current = at;
    links[at].focus();
    links[at].scrollIntoView({block: "nearest"});
    return true;
  }

  function goTo(element) {
    if (!element) { return false; }
    var details = element.closest("details");
    if (details) { details.open = true; }
    element.focus();
    return true;
  }

  function closeList() {
    if (!dialog) { return; }
    dialog.hidden = true;
    if (before && before.focus) { before.focus(); }
  }

  function openList() {
    if (!dialog) {
      dialog = document.createElement("div");
      dialog.className = "shortcuts";
      dialog.setAttribute("role", "dialog");
      dialog.setAttribute("aria-modal", "true");
      dialog.setAttribute("aria-labelledby", "shortcuts-title");
      var title = document.createElement("h2");
      title.id = "shortcuts-title";
      title.textContent = "Keyboard shortcuts";
      var list = document.createElement("dl");
      SHORTCUTS.forEach(function (pair) {
        var key = document.createElement("dt");
        var kbd = document.createElement("kbd");
        kbd.textContent = pair[0];
        key.appendChild(kbd);
        var what = document.createElement("dd");
        what.textContent = pair[1];
        list.appendChild(key);
        list.appendChild(what);
      });
      var note = document.createElement("p");
      note.textContent = "None works while typing in a box. Access keys: Save with "
        + "Alt+Shift+S, the comment box with Alt+Shift+C.";
      var close = document.createElement("button");
      close.type = "button";
      close.textContent = "Close";
      close.addEventListener("click", closeList);
      dialog.appendChild(title);
      dialog.appendChild(list);
      dialog.appendChild(note);
      dialog.appendChild(close);
      dialog.addEventListener("keydown", function (event) {
        if (event.key === "Escape") { event.preventDefault(); closeList(); }
        if (event.key === "Tab") { event.preventDefault(); close.focus(); }
      });
      document.body.appendChild(dialog);
    }
    before = document.activeElement;
    dialog.hidden = false;
    dialog.querySelector("button").focus();
  }

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.ctrlKey || event.altKey || event.metaKey
        || typing(event.target) || (dialog && !dialog.hidden)) { return; }
    var done = false;
    switch (event.key) {
    case "?": openList(); done = true; break;
    case "/": done = goTo(document.getElementById("quicksearch")); break;
    case "j": done = move(1); break;
    case "k": done = move(-1); break;
    case "c": done = goTo(document.getElementById("comment")); break;
    case "e": done = goTo(document.querySelector("#changeform select, #changeform input:not([type=hidden])")); break;
    default: break;
    }
    if (done) { event.preventDefault(); }
  });
}());
