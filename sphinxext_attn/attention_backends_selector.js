/* sphinxext-attn: the attention backend selector.
 *
 * Draws the controls (configuration, platform and GPU, environment) and the
 * decision attention_backends_selector_table.js reads from the table the docs
 * build wrote next to them (computed by the same code as `sphinxext-attn
 * select`). No server, no network: works from file://. The controls start from
 * the page's query string (capability=9.0&dtype=bf16&platform=rocm&...) and
 * write it back when changed.
 */
(function () {
  "use strict";

  var NOT_EVALUATED = "not evaluated: ";
  var T = null;  // attention_backends_selector_table.js, loaded first

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
      box.appendChild(candidateList(decision.candidates));
      assuming(box, resolved);
      return;
    }
    if (decision.unknown !== undefined) {  // as `select` says it: nothing is guessed
      result.appendChild(el("strong", "attn-unknown", "not evaluated"));
      result.appendChild(document.createTextNode(" (" + decision.unknown + ")"));
      box.appendChild(result);
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
      box.appendChild(candidateList(decision.candidates));
    } else {
      result.appendChild(el("strong", "attn-selected", decision.selected || "none"));
      if (!decision.selected) { result.appendChild(document.createTextNode(" (vLLM raises: no valid backend)")); }
      box.appendChild(result);
    }
    box.appendChild(el("p", "attn-selector-intro", "Priority list, in the order vLLM tries it:"));
    box.appendChild(stepList(decision.steps));
    assuming(box, resolved);
  }

  // What vLLM does with a backend asked for, in `select --backend`'s words (the
  // directive's: model/selection.py request_summary).
  function renderRequest(box, req, resolved) {
    box.textContent = "";
    resolved.hints.forEach(function (text) {
      box.appendChild(el("p", "attn-selector-hint", text));
    });
    if (req === null) {
      box.appendChild(el("p", "attn-selector-result", "This configuration is not in the table."));
      return;
    }
    var asked = req.requested;
    var line = null;
    var items = [];
    if (req.kind === "refused") {
      line = "Requested: " + asked + ": vLLM refuses it" + (req.reasons.length ? ":" : "");
      items = req.reasons.concat(req.unsettled.map(function (why) { return "(not evaluated: " + why + ")"; }));
    } else if (req.kind === "ignored") {
      line = "Requested: " + asked + ": vLLM ignores the request and uses " + req.selected;
      if (req.note) { items = [req.note]; }
    } else if (req.kind === "uses") {
      line = "Requested: " + asked + ": vLLM uses it";
    } else if (req.kind === "open") {
      line = "Requested: " + asked + ": not settled (see the candidates)";
    }
    if (line !== null) { box.appendChild(el("p", "attn-request", line)); }
    if (items.length) {
      var list = el("ul", "attn-request-reasons");
      items.forEach(function (text) { list.appendChild(el("li", "", text)); });
      box.appendChild(list);
    }
    var result = el("p", "attn-selector-result", "Selected: ");
    if (req.kind === "refused") {
      result.appendChild(el("strong", "attn-selected", "none"));
      result.appendChild(document.createTextNode(" (vLLM raises: " + req.raised + ")"));
    } else if (req.kind === "open" || req.kind === "settled") {
      result.appendChild(el("strong", "attn-conditional", "conditional"));
      result.appendChild(document.createTextNode(" (the code cannot settle it statically)"));
    } else if (req.kind === "unknown") {
      result.appendChild(el("strong", "attn-unknown", "not evaluated"));
      result.appendChild(document.createTextNode(" (" + req.unknown + ")"));
    } else {
      result.appendChild(el("strong", "attn-selected", req.selected));
    }
    box.appendChild(result);
    if (req.candidates.length) { box.appendChild(candidateList(req.candidates)); }
    assuming(box, resolved);
  }

  // Each candidate with its condition (and, decided by a fact, the list it comes from).
  function candidateList(candidates) {
    var list = el("ul", "attn-selector-candidates");
    candidates.forEach(function (c) {
      var item = el("li", "attn-candidate");
      item.appendChild(el("code", "", c.backend));
      item.appendChild(document.createTextNode(" if " + c.condition));
      if (c.steps) { item.appendChild(stepList(c.steps)); }
      list.appendChild(item);
    });
    return list;
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
      } else if (step.state === "lower") {
        text = ": valid, lower priority";
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
  // Returns false where the control cannot hold the value (a box asked for neither
  // true nor false): the caller keeps it and says so.
  function setValue(control, raw) {
    var want = raw.toLowerCase();
    if (control.type === "checkbox") {
      if (want !== "true" && want !== "false") { return false; }
      if (!control.disabled) { control.checked = want === "true"; }
      return true;
    }
    if (control.tagName === "INPUT") {
      control.value = raw;
      return true;
    }
    if (want === "none" || want === "null" || want === "default" || want === "unknown" ||
        want === "automatic") {
      want = "";
    }
    for (var i = 0; i < control.options.length; i++) {
      if (control.options[i].value.toLowerCase() === want) { control.selectedIndex = i; return true; }
    }
    var extra = document.createElement("option");
    extra.value = raw;
    extra.textContent = raw + " (not in this page's table)";
    control.appendChild(extra);
    control.value = raw;
    return true;
  }

  var FACT_WORDS = {"": "not known: decided both ways", "unset": "unset (vLLM's default)"};

  // A fact in a reader's words; its name (as --assume and --env take it) beside them.
  function factWords(name) {
    var m = /^(installed|which|features)\.(.+)$/.exec(name);
    if (m && m[1] === "installed") { return m[2].replace(/_/g, "-") + " installed"; }
    if (m && m[1] === "which") { return m[2] + " on PATH"; }
    if (m) { return m[2] + " has what vLLM's feature probes ask of it"; }
    if (name === "network") { return "network reachable"; }
    if (/^[A-Z][A-Z0-9_]*$/.test(name)) { return "environment variable"; }
    return "the answer of " + name + "()";
  }

  // The environment controls of one table: a list per fact that changes a decision.
  function renderFacts(root, table, factValues) {
    var holder = root.querySelector(".attn-selector-facts");
    if (!holder) { return; }
    holder.textContent = "";
    (table.facts || []).forEach(function (fact) {
      var field = el("div", "attn-selector-field attn-selector-fact");
      var id = root.id + "-fact-" + fact.name.replace(/[^A-Za-z0-9_-]/g, "_");
      var label = el("label", "", factWords(fact.name) + " ");
      label.appendChild(el("code", "attn-fact-name", fact.name));
      label.setAttribute("for", id);
      var control = el("select");
      control.id = id;
      control.name = fact.name;
      control.setAttribute("data-fact", fact.name);
      fact.values.forEach(function (value) {
        var text = FACT_WORDS[value] || value;
        if (value === fact["default"] && value !== "") {
          text += fact.set ? " (as the docs set it)" : " (the reference machine's)";
        }
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
      var field = control && control.closest(".attn-selector-field, .attn-selector-flag");
      if (field) { field.hidden = !on; }
    }
    show("capability", platform === "cuda");
    show("arch", platform === "rocm");
    // a setting only some tables have (the KV connector, the model's attention type:
    // where the platform's code reads them) is shown with those tables
    var dims = table.dims.map(function (d) { return d[0]; });
    Array.prototype.forEach.call(root.querySelectorAll("[data-layer]"), function (control) {
      show(control.name, dims.indexOf(control.name) >= 0);
    });
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
    var names = ["platform", "arch", "backend"];
    Object.keys(data.variants || {"": first}).forEach(function (key) {
      (data.variants ? data.variants[key] : first).dims.forEach(function (d) {
        if (names.indexOf(d[0]) < 0) { names.push(d[0]); }
      });
    });
    names.forEach(function (name) {
      var control = root.querySelector('[name="' + name + '"]');
      if (control) { fixed[name] = control; }
    });
    // address values the page cannot hold: kept (in the address too) and said so
    var unheld = {};
    Object.keys(fixed).forEach(function (name) {
      if (params.has(name) && !setValue(fixed[name], params.get(name))) {
        unheld[name] = params.get(name);
      }
    });
    names.forEach(function (name) {  // a setting this page has no control for
      if (!fixed[name] && params.has(name) && name === "platform" &&
          params.get(name) !== (first.platform || "cuda")) {
        unheld[name] = params.get(name);
      }
    });
    function current() {
      var platform = fixed.platform ? fixed.platform.value : (first.platform || "cuda");
      var arch = fixed.arch ? fixed.arch.value : (first.arch || "");
      return T.variantOf(data, platform, arch);
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
      var asking = values.backend || "";
      var resolved = T.resolve(table, asked, asking ? [asking] : []);
      Object.keys(unheld).forEach(function (name) {
        resolved.notices.push({dim: name, text: name === "platform" ?
          "Platform \u201c" + unheld[name] + "\u201d: this page holds decisions for " +
          (first.platform || "cuda") + " only." :
          name.replace(/_/g, " ") + " \u201c" + unheld[name] + "\u201d is neither true nor " +
          "false; the box shows the page's default until it is set."});
      });
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
      var askable = T.requestNames(table);
      if (asking && askable.indexOf(asking) < 0) {  // as select --backend refuses the name
        resolved.notices.push({dim: "backend", text: "'" + asking + "' is not a backend of " +
          "this release; choose from " + askable.join(", ") + " (or automatic)."});
      } else if (asking && !(table.facts || []).every(function (f) {
        return facts[f.name] === f["default"];
      })) {
        resolved.notices.push({dim: "backend", text: "This page holds what vLLM does with a " +
          "backend asked for in the environment the docs were built with only; " +
          "\u201csphinxext-attn select --backend " + asking + " --env NAME=VALUE --assume " +
          "FACT=VALUE ...\u201d answers this combination."});
      }
      if (asking && !resolved.notices.length) {
        renderRequest(box, T.decideRequest(table, resolved.values, asking), resolved);
      } else {
        var decision = resolved.notices.length ? null : T.decideAll(table, resolved.values, facts);
        render(box, decision, resolved);
      }
      Object.keys(fixed).forEach(function (name) {
        var bad = resolved.notices.some(function (n) { return n.dim === name; });
        if (bad) { fixed[name].setAttribute("aria-invalid", "true"); }
        else { fixed[name].removeAttribute("aria-invalid"); }
      });
      return {values: values, facts: facts};
    }
    root.addEventListener("change", function (event) {
      var target = event.target;
      if (target && target.name) { delete unheld[target.name]; }  // the reader chose now
      var now = update();
      var query = new URLSearchParams(window.location.search);
      Object.keys(now.values).forEach(function (name) {
        var value = name in unheld ? unheld[name] : now.values[name];
        if (name === "backend" && value === "") { query.delete(name); return; }  // automatic
        query.set(name, value);
      });
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
    T = window.attnSelectorTable;
    if (!T) { return; }
    var roots = document.querySelectorAll(".attn-selector");
    for (var i = 0; i < roots.length; i++) { init(roots[i]); }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
