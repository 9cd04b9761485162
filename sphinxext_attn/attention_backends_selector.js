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

  // -- platforms and the environment controls (select_facts.py's tree of settings) --

  function variantOf(data, platform, arch) {
    if (!data.variants) { return data; }
    var key = platform === "rocm" ? "rocm:" + arch : platform;
    return data.variants[key] || null;
  }

  function stateKey(fixed) {
    return Object.keys(fixed).sort().map(function (n) { return n + "=" + fixed[n]; }).join(";");
  }

  // From the default, each fact read where the walk stands whose control differs is
  // set, one at a time (as select_facts.py explored); a setting that changes nothing
  // there is skipped. Returns the setting and the facts it holds no decisions for.
  function stateFor(table, facts) {
    var states = table.states || {};
    var same = table.same || [];
    var fixed = {};
    for (;;) {
      var here = states[stateKey(fixed)];
      var missing = [];
      var step = null;
      Object.keys(here.reads).sort().some(function (n) {
        if (n in fixed || !(n in facts) || facts[n] === here.reads[n] || facts[n] === "") {
          return false;
        }
        var trial = {};
        Object.keys(fixed).forEach(function (k) { trial[k] = fixed[k]; });
        trial[n] = facts[n];
        var key = stateKey(trial);
        if (key in states) { step = trial; return true; }
        var alone = {};
        alone[n] = facts[n];
        if (same.indexOf(key) < 0 && same.indexOf(stateKey(alone)) < 0) { missing.push(n); }
        return false;
      });
      if (step === null) { return {key: stateKey(fixed), missing: missing}; }
      fixed = step;
    }
  }

  function tableAt(table, key) {
    var state = (table.states || {})[key];
    var override = (state && state.caps) || {};
    var caps = {};
    Object.keys(table.caps).forEach(function (cap) {
      var data = table.caps[cap];
      var mine = override[cap] || {};
      var backends = {};
      Object.keys(data.backends).forEach(function (b) { backends[b] = data.backends[b]; });
      Object.keys(mine.backends || {}).forEach(function (b) { backends[b] = mine.backends[b]; });
      caps[cap] = {priorities: mine.priorities || data.priorities, backends: backends};
    });
    var out = {};
    Object.keys(table).forEach(function (k) { out[k] = table[k]; });
    out.caps = caps;
    return out;
  }

  function ruleDecision(table, values) {
    var dims = table.dims.filter(function (d) { return d[0] !== "capability"; });
    var cap = table.caps[values.capability];
    if (!cap) { return null; }
    var point = dims.map(function (d) { return d[1].indexOf(values[d[0]]); });
    if (point.indexOf(-1) >= 0) { return null; }
    var index = 0;
    cap.priorities.keys.forEach(function (d) { index = index * dims[d][1].length + point[d]; });
    var outcome = table.lists[cap.priorities.table[index]];
    if (outcome[0] === "selected") {
      return {selected: outcome[1], steps: [{name: outcome[1], state: "chosen"}], candidates: []};
    }
    return {selected: null, steps: [], candidates: [], raised: outcome[1]};
  }

  function meaning(name, value) {
    if (name.indexOf("installed.") === 0) {
      return name.slice(10) + " is " + (value === "true" ? "installed" : "not installed");
    }
    return name + "() is " + value;
  }

  // The decision for the configuration and the controls' facts; a guessed fact left
  // open is decided both ways and joined as `select` joins them (select/settled.py).
  function decideAll(table, values, facts) {
    var open = (table.facts || []).filter(function (f) { return f.guessed && facts[f.name] === ""; });
    if (open.length) {
      var name = open[0].name;
      var answers = ["true", "false"].map(function (value) {
        var mine = {};
        Object.keys(facts).forEach(function (k) { mine[k] = facts[k]; });
        mine[name] = value;
        return {value: value, decision: decideAll(table, values, mine)};
      });
      var odd = answers.filter(function (a) { return a.decision === null || a.decision.missing; });
      if (odd.length) { return odd[0].decision; }
      var first = answers[0].decision;
      var same = answers.every(function (a) {
        return a.decision.selected === first.selected && !a.decision.candidates.length &&
          !a.decision.raised === !first.raised && listOf(a.decision) === listOf(first);
      });
      if (same) { return first; }
      var candidates = [];
      answers.forEach(function (a) {
        var words = meaning(name, a.value) + " (--assume " + name + "=" + a.value + ")";
        if (a.decision.candidates.length) {
          a.decision.candidates.forEach(function (c) {
            candidates.push({backend: c.backend, condition: words + " and " + c.condition,
              steps: a.decision.steps});
          });
        } else {
          candidates.push({backend: a.decision.selected || "none", condition: words,
            steps: a.decision.steps});
        }
      });
      var picks = candidates.map(function (c) { return c.backend; });
      var one = picks.every(function (p) { return p === picks[0]; }) && picks[0] !== "none";
      return {selected: one ? picks[0] : null, steps: [], candidates: candidates, byFact: true};
    }
    var at = table;
    if (table.states) {
      var state = stateFor(table, facts);
      if (state.missing.length) { return {missing: state.missing}; }
      at = tableAt(table, state.key);
    }
    return at.kind === "rules" ? ruleDecision(at, values) : decide(at, values);
  }

  function listOf(decision) {
    return decision.steps.map(function (s) { return s.name; }).join(">");
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
    if (decision.missing) {
      box.appendChild(el("p", "attn-selector-notice", "This page holds decisions with " +
        decision.missing.join(", ") + " set otherwise than the docs build only alone, not " +
        "together with the other settings chosen; \u201csphinxext-attn select --env " +
        "NAME=VALUE --assume FACT=VALUE ...\u201d answers this combination."));
      assuming(box, resolved);
      return;
    }
    var result = el("p", "attn-selector-result", "Selected: ");
    if (decision.byFact) {
      if (decision.selected) {
        result.appendChild(el("strong", "attn-selected", decision.selected));
        result.appendChild(document.createTextNode(" (from a list that depends on a fact)"));
      } else {
        result.appendChild(el("strong", "attn-conditional", "conditional"));
        result.appendChild(document.createTextNode(" (it depends on a fact nobody set)"));
      }
      box.appendChild(result);
      var cases = el("ul", "attn-selector-candidates");
      decision.candidates.forEach(function (c) {
        var item = el("li", "attn-candidate");
        item.appendChild(el("code", "", c.backend));
        item.appendChild(document.createTextNode(" if " + c.condition));
        item.appendChild(stepList(c.steps));
        cases.appendChild(item);
      });
      box.appendChild(cases);
      assuming(box, resolved);
      return;
    }
    if (decision.raised !== undefined) {
      result.appendChild(el("strong", "attn-selected", "none"));
      result.appendChild(document.createTextNode(" (vLLM raises: " + decision.raised + ")"));
      box.appendChild(result);
      assuming(box, resolved);
      return;
    }
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
    box.appendChild(stepList(decision.steps));
    assuming(box, resolved);
  }

  function assuming(box, resolved) {
    if (resolved.assuming.length) {
      box.appendChild(el("p", "attn-selector-assuming", "Assuming: " + resolved.assuming.join(", ")));
    }
  }

  function stepList(steps) {
    var list = el("ol", "attn-selector-list");
    steps.forEach(function (step) {
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
    return list;
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

  var FACT_WORDS = {"": "not known: decided both ways", "unset": "unset (vLLM's default)"};

  // The environment controls of one table: a list per fact that changes a decision.
  function renderFacts(root, table, factValues) {
    var holder = root.querySelector(".attn-selector-facts");
    if (!holder) { return; }
    holder.textContent = "";
    (table.facts || []).forEach(function (fact) {
      var field = el("div", "attn-selector-field attn-selector-fact");
      var id = root.id + "-fact-" + fact.name.replace(/[^A-Za-z0-9_-]/g, "_");
      var label = el("label", "", fact.name);
      label.setAttribute("for", id);
      var control = el("select");
      control.id = id;
      control.name = fact.name;
      control.setAttribute("data-fact", fact.name);
      fact.values.forEach(function (value) {
        var text = FACT_WORDS[value] || value;
        if (value === fact["default"]) { text += " (as the docs were built)"; }
        var option = el("option", "", text);
        option.value = value;
        control.appendChild(option);
      });
      var want = fact.name in factValues ? factValues[fact.name] : fact["default"];
      setValue(control, want);
      field.appendChild(label);
      field.appendChild(document.createTextNode(" "));
      field.appendChild(control);
      holder.appendChild(field);
    });
    var env = holder.parentNode;
    if (env) { env.hidden = !(table.facts || []).length; }
  }

  function showFor(root, table) {
    var platform = table.platform || "cuda";
    function show(name, on) {
      var control = root.querySelector('[name="' + name + '"]');
      var field = control && control.closest(".attn-selector-field");
      if (field) { field.hidden = !on; }
    }
    show("capability", platform === "cuda");
    show("arch", platform === "rocm");
  }

  function init(root) {
    var script = root.querySelector("script.attn-selector-data");
    if (!script) { return; }
    var data = JSON.parse(script.textContent);
    var box = root.querySelector(".attn-selector-decision");
    var params = new URLSearchParams(window.location.search);
    var factValues = {};
    var first = data.variants ? data.variants[data["default"]] : data;
    Object.keys(data.variants || {"": first}).forEach(function (key) {
      var table = data.variants ? data.variants[key] : first;
      (table.facts || []).forEach(function (f) {
        if (params.has(f.name)) { factValues[f.name] = params.get(f.name); }
      });
    });
    var fixed = {};
    ["platform", "arch"].concat(first.dims.map(function (d) { return d[0]; })).forEach(function (name) {
      var control = root.querySelector('[name="' + name + '"]');
      if (control) { fixed[name] = control; }
    });
    Object.keys(fixed).forEach(function (name) {
      if (params.has(name)) { setValue(fixed[name], params.get(name)); }
    });
    function current() {
      var platform = fixed.platform ? fixed.platform.value : (first.platform || "cuda");
      var arch = fixed.arch ? fixed.arch.value : (first.arch || "");
      return variantOf(data, platform, arch);
    }
    var shown = null;
    function update() {
      var table = current();
      if (table !== shown) {
        if (table) { renderFacts(root, table, factValues); showFor(root, table); }
        shown = table;
      }
      var values = {};
      Object.keys(fixed).forEach(function (name) { values[name] = valueOf(fixed[name]); });
      var facts = {};
      Array.prototype.forEach.call(root.querySelectorAll("[data-fact]"), function (control) {
        facts[control.name] = control.value;
        factValues[control.name] = control.value;
      });
      if (!table) {
        box.textContent = "";
        box.appendChild(el("p", "attn-selector-notice", "This page holds no table for " +
          values.platform + (values.arch ? " " + values.arch : "") + "."));
        return {values: values, facts: facts};
      }
      var asked = {};
      Object.keys(values).forEach(function (k) { asked[k] = values[k]; });
      if ((table.platform || "cuda") !== "cuda") {  // the GPU is the platform's own
        asked.capability = Object.keys(table.caps)[0];
      }
      var resolved = resolve(table, asked);
      (table.facts || []).forEach(function (f) {
        if (f.name in facts && f.values.indexOf(facts[f.name]) < 0) {
          resolved.notices.push({dim: f.name, text: f.name + " \u201c" + facts[f.name] +
            "\u201d is not one of the values this page's table holds (" +
            f.values.map(function (v) { return v || "not known"; }).join(", ") + ")."});
        }
      });
      resolved.assuming = (table.facts || []).map(function (f) {
        var v = facts[f.name];
        return f.name + "=" + (v === "" ? "true|false" : v);
      });
      render(box, resolved.notices.length ? null : decideAll(table, resolved.values, facts), resolved);
      Object.keys(fixed).forEach(function (name) {
        var bad = resolved.notices.some(function (n) { return n.dim === name; });
        if (bad) { fixed[name].setAttribute("aria-invalid", "true"); }
        else { fixed[name].removeAttribute("aria-invalid"); }
      });
      return {values: values, facts: facts};
    }
    root.addEventListener("change", function () {
      var now = update();
      var query = new URLSearchParams(window.location.search);
      Object.keys(now.values).forEach(function (name) { query.set(name, now.values[name]); });
      Object.keys(now.facts).forEach(function (name) { query.set(name, now.facts[name]); });
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
