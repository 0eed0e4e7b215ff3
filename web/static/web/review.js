/* The review queue by keyboard: j/k move, a/r accept/reject the focused proposal, e edits
   it (Ctrl+Enter accepts the edit), x selects it, A/R accept/reject the selected ones.
   Without this file the page works with its buttons. */
(function () {
  "use strict";
  var form = document.getElementById("review-form");
  if (!form) return;
  var items = Array.prototype.slice.call(form.querySelectorAll(".review-item"));
  var current = 0;

  function focus(index) {
    if (!items.length) return;
    current = Math.max(0, Math.min(items.length - 1, index));
    items.forEach(function (item, i) { item.classList.toggle("is-current", i === current); });
    items[current].focus({ preventScroll: false });
    items[current].scrollIntoView({ block: "nearest" });
  }
  function press(item, key) {
    var button = item && item.querySelector('button[data-key="' + key + '"]');
    if (button) button.click();
  }
  function bulk(value) {
    var button = form.querySelector('button[name="bulk"][value="' + value + '"]');
    if (button && form.querySelector('input[name="ids"]:checked')) button.click();
  }
  var all = document.getElementById("review-all");
  if (all) {
    all.addEventListener("change", function () {
      form.querySelectorAll('input[name="ids"]').forEach(function (box) { box.checked = all.checked; });
    });
  }
  items.forEach(function (item, i) {
    item.addEventListener("focusin", function () { current = i; });
  });
  document.addEventListener("keydown", function (event) {
    var typing = /^(TEXTAREA|INPUT|SELECT)$/.test(event.target.tagName);
    if (typing) {
      if (event.target.classList.contains("review-edit") && event.key === "Enter" &&
          (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        press(event.target.closest(".review-item"), "a");
      } else if (event.key === "Escape") {
        event.target.blur();
        focus(current);
      }
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    var item = items[current];
    switch (event.key) {
      case "j": focus(current + 1); break;
      case "k": focus(current - 1); break;
      case "a": press(item, "a"); break;
      case "r": press(item, "r"); break;
      case "A": bulk("accept"); break;
      case "R": bulk("reject"); break;
      case "x": {
        var box = item && item.querySelector('input[name="ids"]');
        if (box) box.checked = !box.checked;
        break;
      }
      case "e": {
        var text = item && item.querySelector("textarea");
        if (text) { text.focus(); text.setSelectionRange(text.value.length, text.value.length); }
        break;
      }
      default: return;
    }
    event.preventDefault();
  });
  focus(0);
})();
