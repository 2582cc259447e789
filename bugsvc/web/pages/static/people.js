// People pickers: a text box that names accounts (data-people="one", or
// "many" for a comma-separated list) suggests the accounts matching what is
// typed, as an ARIA 1.2 combobox with a list box: arrows move through the
// suggestions, Enter or a click takes one, Escape closes the list. The
// suggestions come from /user_match.cgi (User.get's match as the visitor:
// only accounts they may see, at most a page, from three characters on).
// Without this script the box is a plain text box.
(function () {
  "use strict";
  var MIN_CHARACTERS = 3;
  var WAIT_MS = 200;
  var boxes = document.querySelectorAll("input[data-people]");
  var status = null;

  function announce(text) {
    if (!status) {
      status = document.createElement("div");
      status.className = "sr-only";
      status.setAttribute("role", "status");
      status.setAttribute("aria-live", "polite");
      document.body.appendChild(status);
    }
    status.textContent = text;
  }

  function picker(box, number) {
    var many = box.getAttribute("data-people") === "many";
    var list = document.createElement("ul");
    var timer = null;
    var asked = "";
    var active = -1;
    var found = [];
    list.id = "people-" + number;
    list.className = "people-list";
    list.setAttribute("role", "listbox");
    list.setAttribute("aria-label", "Matching people");
    list.hidden = true;
    var wrap = document.createElement("span");
    wrap.className = "people";
    box.parentNode.insertBefore(wrap, box);
    wrap.appendChild(box);
    wrap.appendChild(list);
    box.setAttribute("role", "combobox");
    box.setAttribute("aria-autocomplete", "list");
    box.setAttribute("aria-expanded", "false");
    box.setAttribute("aria-controls", list.id);

    // The part of the box being typed: after the last comma for a list.
    function typed() {
      var value = box.value;
      if (!many) { return value.trim(); }
      var parts = value.split(",");
      return parts[parts.length - 1].trim();
    }

    function close() {
      list.hidden = true;
      list.textContent = "";
      found = [];
      active = -1;
      box.setAttribute("aria-expanded", "false");
      box.removeAttribute("aria-activedescendant");
    }

    function mark(index) {
      var items = list.children;
      for (var i = 0; i < items.length; i++) {
        items[i].setAttribute("aria-selected", i === index ? "true" : "false");
      }
      active = index;
      if (index >= 0) {
        box.setAttribute("aria-activedescendant", items[index].id);
        items[index].scrollIntoView({block: "nearest"});
      } else {
        box.removeAttribute("aria-activedescendant");
      }
    }

    function take(index) {
      var login = found[index].name;
      if (many) {
        var parts = box.value.split(",");
        parts[parts.length - 1] = (parts.length > 1 ? " " : "") + login;
        box.value = parts.join(",") + ", ";
      } else {
        box.value = login;
      }
      close();
      box.focus();
    }

    function show(users) {
      list.textContent = "";
      found = users;
      active = -1;
      users.forEach(function (person, index) {
        var item = document.createElement("li");
        item.id = list.id + "-" + index;
        item.setAttribute("role", "option");
        item.setAttribute("aria-selected", "false");
        item.textContent = person.real_name ? person.real_name + " <" + person.name + ">"
                                            : person.name;
        item.addEventListener("mousedown", function (event) {
          event.preventDefault();
          take(index);
        });
        list.appendChild(item);
      });
      list.hidden = users.length === 0;
      box.setAttribute("aria-expanded", users.length ? "true" : "false");
      announce(users.length ? users.length + " matching people; arrows to choose"
                            : "Nobody matches");
    }

    function ask() {
      var text = typed();
      if (text.length < MIN_CHARACTERS) { asked = ""; close(); return; }
      if (text === asked) { return; }
      asked = text;
      fetch("/user_match.cgi?match=" + encodeURIComponent(text),
            {credentials: "same-origin", headers: {"Accept": "application/json"}})
        .then(function (answer) { return answer.ok ? answer.json() : {users: []}; })
        .then(function (body) { if (asked === text) { show(body.users || []); } })
        .catch(function () { close(); });
    }

    box.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(ask, WAIT_MS);
    });
    box.addEventListener("keydown", function (event) {
      var open = !list.hidden && found.length > 0;
      if (event.key === "ArrowDown" && open) {
        event.preventDefault();
        mark((active + 1) % found.length);
      } else if (event.key === "ArrowUp" && open) {
        event.preventDefault();
        mark(active <= 0 ? found.length - 1 : active - 1);
      } else if (event.key === "Enter" && open && active >= 0) {
        event.preventDefault();
        take(active);
      } else if (event.key === "Escape" && open) {
        event.preventDefault();
        event.stopPropagation();
        close();
      }
    });
    box.addEventListener("blur", function () { setTimeout(close, 0); });
  }

  for (var i = 0; i < boxes.length; i++) { picker(boxes[i], i); }
}());
