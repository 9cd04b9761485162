/* sphinxext-attn: the attention backend selector's table, read as Python reads it.
 *
 * Recombines vLLM's decision from the factored table the docs build wrote
 * (sphinxext_attn/selector/predict.py's predict() does the same), per
 * platform and GPU, in the setting of the environment controls
 * (selector/facts.py's tree of settings). attention_backends_selector.js
 * draws the controls and the decision.
 */
(function () {
  "use strict";

  var NOT_EVALUATED = "not evaluated: ";
  // a backend get_valid_backends takes out of the list it tries (selector/probe.py)
  var LEFT_OUT = "(left out of the list by get_valid_backends)";

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

  // The configuration's point on the grid, its GPU's entries and what the factored
  // priority table holds there (a list, or a rule platform's outcome); null: not held.
  // A rule platform's checks (a backend's own validate_configuration, asked by its
  // rules: selector/checks.py) follow the grid's settings: 0 accepts, 1 refuses.
  function lookup(data, values) {
    var dims = data.dims.filter(function (d) { return d[0] !== "capability"; });
    var cap = data.caps[values.capability];
    if (!cap) { return null; }
    var point = dims.map(function (d) { return d[1].indexOf(values[d[0]]); });
    if (point.indexOf(-1) >= 0) { return null; }
    var full = point.concat((data.checks || []).map(function (name) {
      return backendReasons(cap.backends[name], point).length ? 1 : 0;
    }));
    var index = 0;
    cap.priorities.keys.forEach(function (d) {
      index = index * (d < dims.length ? dims[d][1].length : 2) + full[d];
    });
    return {cap: cap, point: point, item: data.lists[cap.priorities.table[index]]};
  }

  function decide(data, values) {
    var found = lookup(data, values);
    if (!found) { return null; }
    var cap = found.cap;
    var point = found.point;
    var names = found.item.filter(function (name) {
      var reasons = backendReasons(cap.backends[name], point);
      return !(reasons.length === 1 && data.reasons[reasons[0]] === LEFT_OUT);
    });
    var steps = [];
    var selected = null;
    var unknown = [];
    names.forEach(function (name) {
      var found = backendReasons(cap.backends[name], point);
      if (selected !== null) {  // past the pick: vLLM checked it too (as `select` labels it)
        if (found.length === 0) { steps.push({name: name, state: "lower"}); return; }
        steps.push({name: name, state: "rejected",
          reasons: found.map(function (r) { return data.reasons[r]; })});
        return;
      }
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

  // -- platforms and the environment controls (selector_facts.py's tree of settings) --

  function variantOf(data, platform, arch) {
    if (!data.variants) { return data; }
    var key = platform === "rocm" ? "rocm:" + arch : platform;
    return data.variants[key] || null;
  }

  function stateKey(fixed) {
    return Object.keys(fixed).sort().map(function (n) { return n + "=" + fixed[n]; }).join(";");
  }

  // From the default, each fact read where the walk stands whose control differs is
  // set, one at a time (as selector_facts.py explored); a setting that changes nothing
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
    var found = lookup(table, values);
    if (!found) { return null; }
    var outcome = found.item;
    if (outcome[0] === "selected") {
      return {selected: outcome[1], steps: [{name: outcome[1], state: "chosen"}], candidates: []};
    }
    if (outcome[0] === "unknown") {  // the rules could not be evaluated (select says so too)
      return {selected: null, steps: [], candidates: [], unknown: outcome[1]};
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
  // open is decided both ways and joined as `select` joins them (selection/settled.py).
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
  // treats alike (accepts both or refuses both), by the exact rules in the data
  // (`asked`: a backend asked for, whose rule must treat them alike too).
  function headSizeLike(data, capability, size, asked) {
    var rules = data.head_rules;
    var cap = data.caps[capability];
    if (!rules || !cap) { return null; }
    var names = Object.keys(cap.backends).concat(asked || []);
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

  // values -> {values: as the table spells them, notices: [why a value cannot be answered]}
  function resolve(data, values, asked) {
    var out = {};
    Object.keys(values).forEach(function (k) { out[k] = values[k]; });
    var notices = [];
    var hints = [];
    var caps = Object.keys(data.caps);
    var cap = (values.capability || "").trim();
    if (!/^\d{1,2}\.\d$/.test(cap)) {  // as the command line validates it
      notices.push({dim: "capability", text: "\u201c" + values.capability + "\u201d is not " +
        "a compute capability; give MAJOR.MINOR, e.g. 9.0 or 12.0."});
    } else if (caps.indexOf(cap) >= 0) {
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
        var like = caps.indexOf(cap) >= 0 ? headSizeLike(data, cap, Number(head), asked) : null;
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

  // -- a backend asked for (selector/requests.py: the same texts, read back) --------

  var MARK = "\u001f";

  // Python's repr of a list of texts (vLLM's message writes its reasons so).
  function pyRepr(list) {
    return "[" + list.map(function (text) {
      var quote = text.indexOf("'") >= 0 && text.indexOf('"') < 0 ? '"' : "'";
      var out = "";
      for (var i = 0; i < text.length; i++) {
        var c = text.charAt(i);
        var code = text.charCodeAt(i);
        if (c === "\\" || c === quote) { out += "\\" + c; }
        else if (c === "\n") { out += "\\n"; }
        else if (c === "\r") { out += "\\r"; }
        else if (c === "\t") { out += "\\t"; }
        else if (code < 32 || code === 127) { out += "\\x" + ("0" + code.toString(16)).slice(-2); }
        else { out += c; }
      }
      return quote + out + quote;
    }).join(", ") + "]";
  }

  function requestNames(table) {
    var caps = Object.keys(table.caps);
    return caps.length && table.caps[caps[0]].requests ? Object.keys(table.caps[caps[0]].requests) : [];
  }

  // What vLLM does with a request for `name` (as `select --backend` reports it);
  // null: not in the table.
  function decideRequest(table, values, name) {
    var found = lookup(table, values);
    if (!found || !found.cap.requests || !(name in found.cap.requests)) { return null; }
    var entry = table.requests[found.cap.requests[name]];
    var texts = backendReasons(entry, found.point).map(function (r) { return table.reasons[r]; });
    var out = {requested: name, selected: null, reasons: [], unsettled: [], candidates: []};
    if (!texts.length) { out.kind = "uses"; out.selected = name; return out; }
    var first = texts[0];
    var rest = texts.slice(1);
    function after(prefix) { return first.slice(MARK.length + prefix.length); }
    if (first.indexOf(MARK + "raises ") === 0) {
      out.kind = "refused";
      rest.forEach(function (t) {
        if (t.indexOf(MARK + "unsettled ") === 0) { out.unsettled.push(t.slice(MARK.length + 10)); }
        else if (t.indexOf(MARK) !== 0) { out.reasons.push(t.split(MARK + "again ")[0]); }
      });
      out.raised = after("raises ").replace("{reasons}", pyRepr(out.reasons));
    } else if (first.indexOf(MARK + "ignored ") === 0) {
      out.kind = "ignored";
      out.selected = after("ignored ");
      rest.forEach(function (t) {
        if (t.indexOf(MARK + "note ") === 0) { out.note = t.slice(MARK.length + 5); }
      });
    } else if (first === MARK + "open" || first === MARK + "settled") {
      out.kind = first === MARK + "open" ? "open" : "settled";
      rest.forEach(function (t) {
        var parts = t.slice(MARK.length + 3).split(MARK);
        out.candidates.push({backend: parts[0], condition: parts.slice(1).join(MARK)});
      });
    } else {
      out.kind = "unknown";
      out.unknown = after("unknown ");
    }
    return out;
  }

  window.attnSelectorTable = {
    NOT_EVALUATED: NOT_EVALUATED,
    decideRequest: decideRequest,
    requestNames: requestNames,
    pyRepr: pyRepr,
    decideAll: decideAll,
    resolve: resolve,
    variantOf: variantOf
  };
})();
