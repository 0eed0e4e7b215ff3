/* memoryapp: small progressive enhancements. Everything works without this file. */
(function () {
  "use strict";

  // A link to #m-N opens the collapsed tool call holding it and scrolls to it; when the
  // message is not on this page (long sessions load in pages), reload starting near it.
  function revealHash() {
    var match = /^#m-(\d+)$/.exec(location.hash);
    if (!match) return;
    var target = document.getElementById("m-" + match[1]);
    if (!target) {
      if (document.querySelector(".transcript") && !/[?&](at|from)=/.test(location.search)) {
        location.replace(location.pathname + "?at=" + match[1] + location.hash);
      }
      return;
    }
    for (var el = target; el; el = el.parentElement) {
      if (el.tagName === "DETAILS") el.open = true;
    }
    target.classList.add("is-target");
    target.scrollIntoView({ block: "start" });
  }
  window.addEventListener("hashchange", revealHash);
  document.addEventListener("DOMContentLoaded", revealHash);

  document.addEventListener("click", function (event) {
    // Copy buttons: <button data-copy="#input">.
    var button = event.target.closest("[data-copy]");
    if (button) {
      var input = document.querySelector(button.getAttribute("data-copy"));
      if (input && navigator.clipboard) {
        navigator.clipboard.writeText(input.value).then(function () {
          button.textContent = "Copied";
          setTimeout(function () { button.textContent = "Copy"; }, 2000);
        });
      } else if (input) {
        input.select();
      }
    }
    // Menus close when clicking elsewhere.
    document.querySelectorAll("details.menu[open]").forEach(function (menu) {
      if (!menu.contains(event.target)) menu.open = false;
    });
  });

  // Fields that select their whole value when focused (a new API token): <input data-select-on-focus>.
  document.addEventListener("focusin", function (event) {
    if (event.target.matches && event.target.matches("[data-select-on-focus]")) event.target.select();
  });

  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape") {
      document.querySelectorAll("details.menu[open]").forEach(function (menu) {
        menu.open = false;
        var summary = menu.querySelector("summary");
        if (summary) summary.focus();
      });
    }
    // "/" focuses the search box, as on many sites.
    if (event.key === "/" && !/INPUT|TEXTAREA|SELECT/.test(document.activeElement.tagName)) {
      var box = document.querySelector("input[type=search]");
      if (box) { event.preventDefault(); box.focus(); }
    }
  });

  // Forms that ask first: <form data-confirm="Sure?">.
  document.addEventListener("submit", function (event) {
    var message = event.target.getAttribute && event.target.getAttribute("data-confirm");
    if (message && !window.confirm(message)) event.preventDefault();
  }, true);

  // Bulk selection: a "select all" box and a live count of the ticked rows.
  function syncBulk(form) {
    var boxes = document.querySelectorAll('input[type=checkbox][form="' + form.id + '"]');
    var ticked = Array.prototype.filter.call(boxes, function (b) { return b.checked; }).length;
    var label = form.querySelector("[data-bulk-count]");
    if (label) {
      if (!label.dataset.idle) label.dataset.idle = label.textContent;
      label.textContent = ticked ? ticked + " selected" : label.dataset.idle;
    }
    form.classList.toggle("has-selection", ticked > 0);
  }
  document.addEventListener("change", function (event) {
    var box = event.target;
    if (box.matches && box.matches("[data-check-all]")) {
      var form = document.querySelector(".bulk-bar");
      if (!form) return;
      document.querySelectorAll('input[type=checkbox][form="' + form.id + '"]').forEach(function (b) {
        b.checked = box.checked;
      });
      syncBulk(form);
    } else if (box.getAttribute && box.getAttribute("form")) {
      var owner = document.getElementById(box.getAttribute("form"));
      if (owner && owner.classList.contains("bulk-bar")) syncBulk(owner);
    }
  });
})();
