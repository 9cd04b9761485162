// Row keys of sphinxext-attn's scrolled tables, run in the page by tests/browser.
// Each feature table is scrolled fully right; a row's key is the text of its cells that
// stayed where they were (the sticky ones), inside the box and not covering each other.
// A table whose keys repeat has rows a reader cannot tell apart while it is scrolled.
(function () {
  "use strict";
  function text(el) { return (el.textContent || "").trim().replace(/\s+/g, " "); }
  var report = { checked: [], repeated: [], overlapping: [], frozen: {} };
  Array.prototype.forEach.call(document.querySelectorAll(".attn-scroll"), function (box) {
    var table = box.querySelector("table.attn-features");
    if (!table || box.scrollWidth <= box.clientWidth + 1) { return; }
    var name = table.className.split(" ").filter(function (c) {
      return c.indexOf("attn-") === 0 && c !== "attn-table" && c !== "attn-features";
    }).join(".");
    var rows = Array.prototype.slice.call(table.tBodies[0].rows);
    box.scrollLeft = 0;
    var before = rows.map(function (tr) {
      return Array.prototype.map.call(tr.cells, function (td) { return td.getBoundingClientRect().left; });
    });
    box.scrollLeft = box.scrollWidth;
    var edge = box.getBoundingClientRect();
    var left = edge.left + box.clientLeft, right = left + box.clientWidth;
    var seen = {}, columns = {};
    rows.forEach(function (tr, r) {
      var kept = [], end = -Infinity;
      Array.prototype.forEach.call(tr.cells, function (td, c) {
        var rect = td.getBoundingClientRect();
        if (Math.abs(rect.left - before[r][c]) > 0.5 || rect.left < left - 1 || rect.right > right + 1) {
          return;
        }
        if (rect.left < end - 1) { report.overlapping.push(name + ": " + text(tr.cells[0])); }
        end = rect.right;
        kept.push(text(td));
        columns[c] = true;
      });
      var key = kept.join(" | ");
      if (!key || seen[key]) { report.repeated.push(name + ": " + key); }
      seen[key] = true;
    });
    report.checked.push([name, box.scrollLeft > 0, rows.length]);
    report.frozen[name] = Object.keys(columns).map(function (c) {
      return text(table.tHead.rows[0].cells[Number(c)]);
    });
    box.scrollLeft = 0;
  });
  return report;
})()
