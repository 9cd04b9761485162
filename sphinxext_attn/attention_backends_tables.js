// sphinxext-attn: the Version column of a keyed feature table sticks beside Backend.
// CSS cannot know how wide the Backend column came out (fonts differ per theme and
// width), so this measures it and hands it to the stylesheet as --attn-key-left;
// until it has (or without scripts) only Backend sticks, as before.
(function () {
  "use strict";
  function measure(table) {
    var head = table.tHead && table.tHead.rows[0];
    if (!head || head.cells.length < 2) { return; }
    var width = head.cells[0].getBoundingClientRect().width;
    table.style.setProperty("--attn-key-left", width + "px");
    table.classList.add("attn-key-measured");
  }
  function start() {
    var tables = document.querySelectorAll("table.attn-keyed");
    var observer = typeof ResizeObserver === "function" ? new ResizeObserver(function (entries) {
      entries.forEach(function (entry) { measure(entry.target.closest("table")); });
    }) : null;
    Array.prototype.forEach.call(tables, function (table) {
      measure(table);
      if (observer && table.tHead) { observer.observe(table.tHead.rows[0].cells[0]); }
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
