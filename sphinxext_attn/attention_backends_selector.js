/* sphinxext-attn: the attention backend selector.
 *
 * Looks vLLM's decision up in the table the docs build wrote next to the
 * controls (computed by the same code as `sphinxext-attn select`), the way
 * sphinxext_attn/core/selector_table.py's predict() recombines it. No server,
 * no network: works from file://. The controls start from the page's query
 * string (capability=9.0&dtype=bf16&...) and write it back when changed.
 */
(function () {
  "use strict";

  var NOT_EVALUATED = "not evaluated: ";

  function combine(base, factors, order) {
    var out = [];
    base.forEach(function (r) {
      if (factors.every(function (f) { return f.indexOf(r) >= 0; })) { out.push(r); }
    });
    factors.forEach(function (f) {
      f.forEach(function (r) {
        if (base.indexOf(r) < 0 && out.indexOf(r) < 0) { out.push(r); }
      });
    });
    return sortByOrder(out, order);
  }

  function sortByOrder(reasons, order) {
    function rank(r) { var i = order.indexOf(r); return i < 0 ? order.length : i; }
    return reasons.slice().sort(function (a, b) { return rank(a) - rank(b); });
  }

  function backendReasons(entry, point) {
    var base = entry.base;
    var factors = [];
    Object.keys(entry.single).forEach(function (key) {
      var d = Number(key);
      if (point[d] !== base[d]) { factors.push(entry.single[key][point[d]]); }
    });
    var found = combine(entry.reasons, factors, entry.order);
    var keys = Object.keys(entry.joint).sort(function (a, b) {  // pairs, then triples
      return a.split(",").length - b.split(",").length;
    });
    keys.forEach(function (key) {
      var dims = key.split(",").map(Number);
      var delta = entry.joint[key][dims.map(function (d) { return point[d]; }).join(",")];
      if (delta) {
        delta[0].forEach(function (r) { if (found.indexOf(r) < 0) { found.push(r); } });
        found = found.filter(function (r) { return delta[1].indexOf(r) < 0; });
      }
    });
    return sortByOrder(found, entry.order);
  }

  function decide(data, values) {
    var dims = data.dims.filter(function (d) { return d[0] !== "capability"; });
    var cap = data.caps[values.capability];
    if (!cap) { return null; }
    var point = dims.map(function (d) { return d[1].indexOf(values[d[0]]); });
    if (point.indexOf(-1) >= 0) { return null; }
    var index = 0;
    cap.priorities.keys.forEach(function (d) {
      index = index * dims[d][1].length + point[d];
    });
    var names = data.lists[cap.priorities.table[index]];
    var steps = [];
    var selected = null;
    names.forEach(function (name) {
      if (selected !== null) { steps.push({name: name, state: "untried"}); return; }
      var found = backendReasons(cap.backends[name], point);
      if (found.length === 0) {
        selected = name;
        steps.push({name: name, state: "chosen"});
      } else {
        steps.push({name: name, state: "rejected", reasons: found.map(function (r) {
          return data.reasons[r];
        })});
      }
    });
    return {selected: selected, steps: steps};
  }

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) { node.className = cls; }
    if (text !== undefined) { node.textContent = text; }
    return node;
  }

  function render(box, decision) {
    box.textContent = "";
    if (decision === null) {
      box.appendChild(el("p", "attn-selector-result", "This configuration is not in the table."));
      return;
    }
    var result = el("p", "attn-selector-result", "Selected: ");
    result.appendChild(el("strong", "attn-selected", decision.selected || "none"));
    if (!decision.selected) { result.appendChild(document.createTextNode(" (vLLM raises: no valid backend)")); }
    box.appendChild(result);
    box.appendChild(el("p", "attn-selector-intro", "Priority list, in the order vLLM tries it:"));
    var list = el("ol", "attn-selector-list");
    decision.steps.forEach(function (step) {
      var item = el("li", "attn-" + step.state);
      item.appendChild(el("code", "", step.name));
      var text;
      if (step.state === "chosen") {
        text = ": selected";
      } else if (step.state === "untried") {
        text = ": not tried";
      } else if (step.reasons.length === 1 && step.reasons[0].indexOf(NOT_EVALUATED) === 0) {
        text = ": " + step.reasons[0] + " (never taken as valid)";
      } else {
        text = ": rejected: " + step.reasons.join("; ");
      }
      item.appendChild(document.createTextNode(text));
      list.appendChild(item);
    });
    box.appendChild(list);
  }

  function valueOf(control) {
    if (control.type === "checkbox") { return control.checked ? "true" : "false"; }
    return control.value;
  }

  function setValue(control, want) {
    want = want.toLowerCase();
    if (control.type === "checkbox") {
      if (!control.disabled && (want === "true" || want === "false")) {
        control.checked = want === "true";
      }
      return;
    }
    if (want === "none" || want === "null" || want === "default" || want === "unknown") {
      want = "";
    }
    for (var i = 0; i < control.options.length; i++) {
      if (control.options[i].value.toLowerCase() === want) { control.selectedIndex = i; return; }
    }
  }

  function init(root) {
    var script = root.querySelector("script.attn-selector-data");
    if (!script) { return; }
    var data = JSON.parse(script.textContent);
    var box = root.querySelector(".attn-selector-decision");
    var controls = {};
    data.dims.forEach(function (d) {
      var control = root.querySelector('[name="' + d[0] + '"]');
      if (control) { controls[d[0]] = control; }
    });
    var params = new URLSearchParams(window.location.search);
    Object.keys(controls).forEach(function (name) {
      if (params.has(name)) { setValue(controls[name], params.get(name)); }
    });
    function update() {
      var values = {};
      Object.keys(controls).forEach(function (name) { values[name] = valueOf(controls[name]); });
      render(box, decide(data, values));
      return values;
    }
    root.addEventListener("change", function () {
      var values = update();
      var query = new URLSearchParams(window.location.search);
      Object.keys(values).forEach(function (name) { query.set(name, values[name]); });
      try {
        window.history.replaceState(null, "", "?" + query.toString() + window.location.hash);
      } catch (e) {
        /* some browsers refuse it for file:// pages; the decision is shown anyway */
      }
    });
    update();
  }

  function start() {
    var roots = document.querySelectorAll(".attn-selector");
    for (var i = 0; i < roots.length; i++) { init(roots[i]); }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
