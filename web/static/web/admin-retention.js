// The project change form: as retention or trash days change, ask the server what the next
// run would remove with the new values and show it before the form is saved.
(function () {
  "use strict";
  function start() {
    var box = document.getElementById("retention-preview");
    var retention = document.getElementById("id_retention_days");
    var trash = document.getElementById("id_trash_days");
    if (!box || !retention || !trash) return;
    var timer = null;
    var asked = 0;
    function refresh() {
      var mine = ++asked;
      var query = new URLSearchParams({ retention_days: retention.value, trash_days: trash.value });
      fetch(box.dataset.url + "?" + query.toString(), { credentials: "same-origin" })
        .then(function (response) {
          return response.text().then(function (text) { return { ok: response.ok, text: text }; });
        })
        .then(function (answer) {
          if (mine !== asked) return; // a later value was typed meanwhile
          if (answer.ok) {
            box.innerHTML = answer.text;
          } else {
            box.textContent = answer.text;
          }
        })
        .catch(function () {
          if (mine === asked) box.textContent = "Could not count what the change removes; it is counted again when you save.";
        });
    }
    function later() {
      clearTimeout(timer);
      timer = setTimeout(refresh, 300);
    }
    retention.addEventListener("input", later);
    trash.addEventListener("input", later);
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
