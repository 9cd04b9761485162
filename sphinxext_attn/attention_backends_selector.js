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
    var unknown = [];
    names.forEach(function (name) {
      if (selected !== null) { steps.push({name: name, state: "untried"}); return; }
      var found = backendReasons(cap.backends[name], point);
      if (found.length === 0) {
        selected = name;
        steps.push({name: name, state: "chosen"});
      } else {
        var texts = found.map(function (r) { return data.reasons[r]; });
        if (texts.length === 1 && texts[0].indexOf(NOT_EVALUATED) === 0) {
          unknown.push({name: name, why: texts[0].slice(NOT_EVALUATED.length)});
        }
        steps.push({name: name, state: "rejected", reasons: texts});
      }
    });
    // A pick behind a backend the code cannot settle is conditional (as `select` says).
    var candidates = unknown.map(function (u) {
      return {backend: u.name, condition: u.name + " qualifies (" + u.why + ")"};
    });
    if (unknown.length && selected !== null) {
      candidates.push({backend: selected, condition: "neither " +
        unknown.map(function (u) { return u.name; }).join(" nor ") + " does"});
      steps.forEach(function (step) { if (step.state === "chosen") { step.state = "candidate"; } });
    }
    if (unknown.length) { selected = null; }
    return {selected: selected, steps: steps, candidates: candidates};
  }

  // -- values the grid does not list (typed, or from the address) -----------------

  function gridValues(data, dim) {
    for (var i = 0; i < data.dims.length; i++) {
      if (data.dims[i][0] === dim) { return data.dims[i][1]; }
    }
    return Object.keys(data.caps);
  }

  function accepts(rule, size) {  // "any", or ints and {min, max, multiple_of}
    if (rule === "any") { return true; }
    return rule.some(function (item) {
      if (typeof item === "number") { return item === size; }
      return (item.min === null || item.min === undefined || size >= item.min) &&
        (item.max === null || item.max === undefined || size <= item.max) &&
        (!item.multiple_of || size % item.multiple_of === 0);
    });
  }

  // A head size the grid does not hold is decided as a grid size every backend
  // treats alike (accepts both or refuses both), by the exact rules in the data.
  function headSizeLike(data, capability, size) {
    var rules = data.head_rules;
    var cap = data.caps[capability];
    if (!rules || !cap) { return null; }
    var names = Object.keys(cap.backends);
    if (names.some(function (n) { return !rules[n]; })) { return null; }
    var sizes = gridValues(data, "head_size").filter(function (v) { return v !== ""; });
    for (var i = 0; i < sizes.length; i++) {
      var g = Number(sizes[i]);
      if (names.every(function (n) { return accepts(rules[n], g) === accepts(rules[n], size); })) {
        return sizes[i];
      }
    }
    return null;
  }

  function canonicalCapability(text) {
    var t = text.trim().toLowerCase().replace(/^sm[\s_]*/, "");
    if (/^\d+$/.test(t) && t.length >= 2) { t = t.slice(0, -1) + "." + t.slice(-1); }
    if (/^\d+$/.test(t)) { t = t + ".0"; }
    return t;
  }

  // values -> {values: as the table spells them, notices: [why a value cannot be answered]}
  function resolve(data, values) {
    var out = {};
    Object.keys(values).forEach(function (k) { out[k] = values[k]; });
    var notices = [];
    var hints = [];
    var caps = Object.keys(data.caps);
    var cap = canonicalCapability(values.capability || "");
    if (caps.indexOf(cap) >= 0) {
      out.capability = cap;
    } else {
      notices.push({dim: "capability", text: "Compute capability \u201c" + values.capability + "\u201d: this page holds " +
        "decisions for " + caps.join(", ") + " only; \u201csphinxext-attn select --capability " +
        "X.Y\u201d answers any other."});
    }
    var sizes = gridValues(data, "head_size");
    var head = (values.head_size || "").trim();
    if ("head_size" in values && sizes.indexOf(head) < 0) {
      if (!/^[1-9]\d*$/.test(head)) {
        notices.push({dim: "head_size",
          text: "Head size \u201c" + values.head_size + "\u201d is not a positive whole number."});
      } else {
        var like = caps.indexOf(cap) >= 0 ? headSizeLike(data, cap, Number(head)) : null;
        if (like !== null) {
          out.head_size = like;
          hints.push("Head size " + head + " is decided as " + like + " is: by the rules of " +
            "the backends' code, each one accepts both or refuses both.");
        } else {
          notices.push({dim: "head_size", text: "Head size " + head + " is not one of this page's (" +
            sizes.filter(function (v) { return v !== ""; }).join(", ") + "), and the page " +
            "cannot tell which backends accept it; \u201csphinxext-attn select --head-size " + head +
            "\u201d answers it."});
        }
      }
    } else if ("head_size" in values) {
      out.head_size = head;
    }
    data.dims.forEach(function (d) {
      var name = d[0];
      if (name === "capability" || name === "head_size" || !(name in values)) { return; }
      if (d[1].indexOf(values[name]) < 0) {
        notices.push({dim: name, text: name.replace(/_/g, " ") + " \u201c" + values[name] +
          "\u201d is not one of the values this page's table holds."});
      }
    });
    return {values: out, notices: notices, hints: hints};
  }

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) { node.className = cls; }
    if (text !== undefined) { node.textContent = text; }
    return node;
  }

  function render(box, decision, resolved) {
    box.textContent = "";
    resolved.notices.forEach(function (notice) {
      box.appendChild(el("p", "attn-selector-notice", notice.text));
    });
    resolved.hints.forEach(function (text) {
      box.appendChild(el("p", "attn-selector-hint", text));
    });
    if (resolved.notices.length) { return; }
    if (decision === null) {
      box.appendChild(el("p", "attn-selector-result", "This configuration is not in the table."));
      return;
    }
    var result = el("p", "attn-selector-result", "Selected: ");
    if (decision.candidates.length) {
      result.appendChild(el("strong", "attn-conditional", "conditional"));
      result.appendChild(document.createTextNode(" (the code cannot settle it statically)"));
      box.appendChild(result);
      var options = el("ul", "attn-selector-candidates");
      decision.candidates.forEach(function (c) {
        var item = el("li", "attn-candidate");
        item.appendChild(el("code", "", c.backend));
        item.appendChild(document.createTextNode(" if " + c.condition));
        options.appendChild(item);
      });
      box.appendChild(options);
    } else {
      result.appendChild(el("strong", "attn-selected", decision.selected || "none"));
      if (!decision.selected) { result.appendChild(document.createTextNode(" (vLLM raises: no valid backend)")); }
      box.appendChild(result);
    }
    box.appendChild(el("p", "attn-selector-intro", "Priority list, in the order vLLM tries it:"));
    var list = el("ol", "attn-selector-list");
    decision.steps.forEach(function (step) {
      var item = el("li", "attn-" + step.state);
      item.appendChild(el("code", "", step.name));
      var text;
      if (step.state === "chosen") {
        text = ": selected";
      } else if (step.state === "candidate") {
        text = ": valid (picked unless a backend above qualifies)";
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

  // A value from the address is kept as the reader wrote it, as text (never markup):
  // a typed field takes it as it is; a list gains it as an extra entry, flagged.
  function setValue(control, raw) {
    var want = raw.toLowerCase();
    if (control.type === "checkbox") {
      if (!control.disabled && (want === "true" || want === "false")) {
        control.checked = want === "true";
      }
      return;
    }
    if (control.tagName === "INPUT") {
      control.value = raw;
      return;
    }
    if (want === "none" || want === "null" || want === "default" || want === "unknown") {
      want = "";
    }
    for (var i = 0; i < control.options.length; i++) {
      if (control.options[i].value.toLowerCase() === want) { control.selectedIndex = i; return; }
    }
    var extra = document.createElement("option");
    extra.value = raw;
    extra.textContent = raw + " (not in this page's table)";
    control.appendChild(extra);
    control.value = raw;
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
      var resolved = resolve(data, values);
      render(box, resolved.notices.length ? null : decide(data, resolved.values), resolved);
      Object.keys(controls).forEach(function (name) {
        var bad = resolved.notices.some(function (n) { return n.dim === name; });
        if (bad) { controls[name].setAttribute("aria-invalid", "true"); }
        else { controls[name].removeAttribute("aria-invalid"); }
      });
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
