// Text of the decision tables (table.attn-select) a reader cannot see without scrolling
// sideways: every text line must lie inside the viewport and inside its scroll box.
(function () {
  "use strict";
  var report = { tables: 0, lines: 0, outside: [] };
  Array.prototype.forEach.call(document.querySelectorAll("table.attn-select"), function (table) {
    report.tables++;
    var box = table.closest(".attn-scroll") || table.parentElement;
    var edge = box.getBoundingClientRect();
    var left = Math.max(0, edge.left + box.clientLeft);
    var right = Math.min(window.innerWidth, edge.left + box.clientLeft + box.clientWidth);
    var walker = document.createTreeWalker(table, NodeFilter.SHOW_TEXT);
    for (var node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!node.textContent.trim()) { continue; }
      var range = document.createRange();
      range.selectNodeContents(node);
      Array.prototype.forEach.call(range.getClientRects(), function (r) {
        if (r.width < 1 || r.height < 1) { return; }
        report.lines++;
        if (r.left < left - 1 || r.right > right + 1) {
          report.outside.push(node.textContent.trim().slice(0, 40) + " (" +
                              Math.round(r.left) + ".." + Math.round(r.right) + ")");
        }
      });
    }
  });
  return report;
})()
