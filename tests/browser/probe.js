// Layout probe of sphinxext-attn's tables, run in the page by tests/browser.
// Returns what a reader would see go wrong; every list empty means "reads well".
(function () {
  "use strict";
  function parse(color) {
    var m = color.match(/rgba?\(([^)]+)\)/);
    var parts;
    if (m) {
      parts = m[1].split(/[\s,\/]+/).filter(Boolean).map(Number);
    } else {
      m = color.match(/color\(srgb ([^)]+)\)/);
      if (!m) { return [0, 0, 0, 0]; }
      parts = m[1].split(/[\s\/]+/).filter(Boolean).map(Number);
      parts = [parts[0] * 255, parts[1] * 255, parts[2] * 255, parts.length > 3 ? parts[3] : 1];
    }
    return [parts[0], parts[1], parts[2], parts.length > 3 ? parts[3] : 1];
  }
  function over(top, below) {  // top composited over an opaque colour
    var a = top[3];
    return [0, 1, 2].map(function (i) { return top[i] * a + below[i] * (1 - a); }).concat([1]);
  }
  function background(el) {
    var layers = [];
    for (var node = el; node && node.nodeType === 1; node = node.parentElement) {
      var c = parse(getComputedStyle(node).backgroundColor);
      if (c[3] > 0) { layers.push(c); if (c[3] >= 1) { break; } }
    }
    var out = [255, 255, 255, 1];  // the canvas
    for (var i = layers.length - 1; i >= 0; i--) { out = over(layers[i], out); }
    return out;
  }
  function luminance(c) {
    var v = c.slice(0, 3).map(function (x) {
      x /= 255;
      return x <= 0.03928 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2];
  }
  function contrast(fg, bg) {
    var a = luminance(over(fg, bg)), b = luminance(bg);
    return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
  }
  function lines(el) {  // text lines of an element's text (a hidden headerlink left out)
    var tops = [];
    var walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (var node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!node.textContent.trim() || (node.parentElement && node.parentElement.closest(".headerlink"))) {
        continue;
      }
      var range = document.createRange();
      range.selectNodeContents(node);
      Array.prototype.forEach.call(range.getClientRects(), function (r) {
        if (r.width < 1 || r.height < 1) { return; }
        var mid = r.top + r.height / 2;
        if (!tops.some(function (t) { return Math.abs(t - mid) < r.height / 2; })) { tops.push(mid); }
      });
    }
    return tops.length;
  }
  function label(el) {
    var table = el.closest("table");
    var cls = table ? table.className.split(" ").filter(function (c) {
      return c.indexOf("attn-") === 0 && c !== "attn-table";
    }).join(".") : el.className;
    return cls + ": " + (el.textContent || "").trim().replace(/\s+/g, " ").slice(0, 60);
  }
  var report = {
    viewport: window.innerWidth,
    scrollWidth: document.documentElement.scrollWidth,
    tables: 0,
    unscrolled: [],      // tables wider than their box, with nothing to scroll them
    wideContainers: [],  // a container wider than the column it sits in
    rows: [],            // [label, lines] of every feature-table row
    captions: [],        // [text, lines] of every caption
    contrasts: [],       // [label, ratio] under 4.5
    minContrast: 99,
    sticky: [],          // wide tables whose header or Backend column scrolled away
    stickyChecked: 0,
    ids: []
  };
  var tables = document.querySelectorAll("table.attn-table");
  report.tables = tables.length;
  Array.prototype.forEach.call(tables, function (table) {
    var box = table.closest(".attn-scroll");
    var width = table.getBoundingClientRect().width;
    if (!box) {
      var parentWidth = table.parentElement.getBoundingClientRect().width;
      var own = getComputedStyle(table).overflowX;
      if (width > parentWidth + 1 || table.scrollWidth > table.clientWidth + 1) {
        if (own !== "auto" && own !== "scroll") { report.unscrolled.push(label(table)); }
      }
      return;
    }
    var column = box.parentElement.getBoundingClientRect();
    var rect = box.getBoundingClientRect();
    if (rect.width > column.width + 1 || rect.right > window.innerWidth + 1) {
      report.wideContainers.push(label(table) + " (" + Math.round(rect.width) + " > " +
                                 Math.round(column.width) + ")");
    }
    var ox = getComputedStyle(box).overflowX;
    if (width > box.clientWidth + 1 && ox !== "auto" && ox !== "scroll") {
      report.unscrolled.push(label(table));
    }
  });
  Array.prototype.forEach.call(document.querySelectorAll("table.attn-features tbody tr"), function (tr) {
    var most = 0;
    Array.prototype.forEach.call(tr.cells, function (td) { most = Math.max(most, lines(td)); });
    report.rows.push([label(tr.cells[0]), most]);
  });
  Array.prototype.forEach.call(document.querySelectorAll(".attn-caption, table.attn-table > caption"), function (cap) {
    var text = cap.querySelector(".caption-text") || cap;
    report.captions.push([(text.textContent || "").trim(), lines(text)]);
  });
  var scope = document.querySelectorAll(
    "table.attn-table th, table.attn-table td, table.attn-table td *, .attn-caption, .attn-selector, .attn-selector *");
  Array.prototype.forEach.call(scope, function (el) {
    var style = getComputedStyle(el);
    if (style.visibility === "hidden" || style.display === "none") { return; }
    var text = Array.prototype.some.call(el.childNodes, function (n) {
      return n.nodeType === 3 && n.textContent.trim();
    });
    var before = getComputedStyle(el, "::before");
    var mark = before.content && before.content !== "none" && before.content !== "normal";
    if (!text && !mark) { return; }
    var bg = background(el);
    var checks = [];
    if (text && parseFloat(style.fontSize) > 0) { checks.push(parse(style.color)); }
    if (mark) { checks.push(parse(before.color)); }
    checks.forEach(function (fg) {
      if (fg[3] === 0) { return; }
      var ratio = contrast(fg, bg);
      report.minContrast = Math.min(report.minContrast, ratio);
      if (ratio < 4.5) { report.contrasts.push([label(el), Math.round(ratio * 100) / 100]); }
    });
  });
  Array.prototype.forEach.call(document.querySelectorAll(".attn-scroll"), function (box) {
    var table = box.querySelector("table.attn-features");
    if (!table || box.scrollWidth <= box.clientWidth + 1) { return; }
    report.stickyChecked++;
    var rows = table.tBodies[0].rows;
    box.scrollLeft = box.scrollWidth;
    box.scrollTop = box.scrollHeight;
    var edge = box.getBoundingClientRect();
    var head = table.tHead.rows[0].cells[1].getBoundingClientRect();
    var name = rows[rows.length - 1].cells[0].getBoundingClientRect();
    var ok = box.scrollLeft > 0 && Math.abs(name.left - edge.left) < 2 && name.right < edge.right;
    if (box.scrollTop > 0) { ok = ok && Math.abs(head.top - edge.top) < 2; }
    if (!ok) { report.sticky.push(label(table)); }
    box.scrollLeft = 0;
    box.scrollTop = 0;
  });
  report.overflowing = [];
  Array.prototype.forEach.call(document.querySelectorAll("body *"), function (el) {
    var r = el.getBoundingClientRect();
    if (r.right > window.innerWidth + 1 && r.width > 0 && getComputedStyle(el).position !== "fixed") {
      for (var a = el.parentElement; a && a !== document.body; a = a.parentElement) {
        var ox = getComputedStyle(a).overflowX;
        if (ox === "auto" || ox === "scroll" || ox === "hidden") { return; }
      }
      var p = el.parentElement.getBoundingClientRect();
      if (p.right <= window.innerWidth + 1) {
        report.overflowing.push(el.tagName + "." + el.className + " " + Math.round(r.right));
      }
    }
  });
  var seen = {};
  Array.prototype.forEach.call(document.querySelectorAll("[id]"), function (el) {
    if (seen[el.id]) { report.ids.push(el.id); }
    seen[el.id] = true;
  });
  return report;
})()
