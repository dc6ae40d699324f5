// A model's page, model.html?model=<its file name>: finds the model in window.LEADERBOARD
// (data.js), loads its data (models/<file name>.js, window.MODEL, written by `uv run build
// --write`) and shows its scores with their intervals, each run (cost, tokens, judge agreement,
// identity) and every item: question, reply, verdict, with filters and a search. Items are shown
// a hundred at a time. The evals, their scores and bands are data.js's (`evals`, `scores`): this
// page names none. Model replies are hostile text: everything goes in as textContent.
"use strict";

(function () {
  const common = window.SiteCommon;
  const tag = common.tag, percent = common.percent, count = common.count;
  const PAGE = 100;
  const board = window.LEADERBOARD;
  const DESCRIBED = common.evalsOf(board); // eval key -> its title, bands, kilowattHour keys, judged
  const EVALS = {}; // eval key -> its title, in the board's order
  const BANDS = []; // every eval's bands, in order
  ((board && board.evals) || []).forEach(function (e) {
    EVALS[e.key] = e.title;
    (e.bands || []).forEach(function (band) { if (BANDS.indexOf(band) < 0) BANDS.push(band); });
  });
  const STATUS = { correct: "correct", wrong: "wrong", unparseable: "unparseable", apiError: "API error", datasetError: "dataset error" };
  // each score: [its key, its name, its eval, the summary it is read from (a band, "overall" or null)]
  const SCORES = ((board && board.scores) || []).map(function (s) {
    return [s.key, common.scoreName(board, s), s.eval, s.band || (hasBands(s.eval) ? "overall" : null)];
  });

  function hasBands(evalKey) {
    return Boolean(DESCRIBED[evalKey] && (DESCRIBED[evalKey].bands || []).length);
  }

  // DOMContentLoaded to the first screen of items and the counts, for the page's speed test.
  const timing = window.modelPageTiming = { domContentLoaded: null, ready: null };
  document.addEventListener("DOMContentLoaded", function () { timing.domContentLoaded = performance.now(); });

  const empty = document.getElementById("empty");
  function fail(message) {
    empty.textContent = message;
    empty.hidden = false;
    document.body.dataset.ready = "error";
  }

  function append(parent, children) {
    children.forEach(function (child) { if (child) parent.appendChild(child); });
    return parent;
  }

  // ---- the model and its runs ------------------------------------------------------------------

  function meta(model) {
    const line = document.getElementById("model-meta");
    const parts = [model.provider, "released " + model.releaseDate, model.size ? model.sizeLabel : null,
      "suite cost " + common.usd(model.cost) + (model.costBasis === "electricity" ? " (electricity)" : ""),
      "average " + common.scoreTitle(model.average, (model.ci95 || {}).average)];
    line.textContent = common.visible(parts.filter(Boolean).join(" · ") + " · ");
    if (/^https?:\/\//i.test(String(model.url))) line.appendChild(tag("a", { href: model.url, rel: "noopener" }, model.url));
  }

  function summaryOf(model, evalKey, band) {
    const summary = (model.evals[evalKey] || {}).summary || {};
    return band ? summary[band] || {} : summary;
  }

  function answers(summary) {
    if (summary.epochs > 1) return count(summary.n) + " (" + count(summary.questions) + " questions × " + summary.epochs + " epochs)";
    return count(summary.n);
  }

  function passAt(summary) {
    const pass = summary.passAt || {};
    return Object.keys(pass).sort(function (a, b) { return a - b; })
      .map(function (k) { return "pass@" + k + " " + percent(pass[k]); }).join(", ") || common.DASH;
  }

  // A row of the scores table: the score with its whisker, its interval, then `more` cells.
  function scoreRow(key, label, value, ci, more) {
    const score = tag("td", { className: "num score", title: common.scoreTitle(value, ci) }, percent(value));
    score.appendChild(common.whisker(value, ci));
    return append(tag("tr", { "data-key": key }), [tag("th", { scope: "row" }, label), score,
      tag("td", { className: "num" }, common.interval(ci))].concat(more));
  }

  function scoresTable(model) {
    const tbody = document.querySelector("#scores tbody");
    const summaries = SCORES.map(function (s) { return summaryOf(model, s[2], s[3]); });
    // pass@k only for runs of several epochs
    const withPass = summaries.some(function (summary) { return summary.passAt; });
    document.querySelector("#scores .col-pass").hidden = !withPass;
    SCORES.forEach(function (s, i) {
      const more = [tag("td", { className: "num" }, answers(summaries[i]))];
      if (withPass) more.push(tag("td", { className: "num" }, passAt(summaries[i])));
      const row = scoreRow(s[0], s[1], model[s[0]], (model.ci95 || {})[s[0]], more);
      const waived = (model.gateWaived || {})[s[2]];
      if (waived) common.markWaived(row.querySelector("td.score"), waived);  // beside the score, not only in its run's card
      tbody.appendChild(row);
    });
    const average = scoreRow("average", "Average", model.average, (model.ci95 || {}).average, withPass ? [tag("td"), tag("td")] : [tag("td")]);
    average.classList.add("col-average");
    tbody.appendChild(average);
  }

  function field(list, name, value) {
    if (value === null || value === undefined || value === "") return;
    list.appendChild(tag("dt", {}, name));
    list.appendChild(value instanceof Node ? append(tag("dd"), [value]) : tag("dd", {}, value));
  }

  function tokens(t) {
    if (!t) return null;
    return ["input", "output", "reasoning", "cached"].map(function (k) { return count(t[k] || 0) + " " + k; }).join(", ");
  }

  function costText(model, run, key) {
    const price = model.price || {};
    if (model.costBasis === "electricity") {
      const kwh = model.kilowattHour || {};
      const parts = (DESCRIBED[key] || {}).kilowattHour || [key];
      const known = parts.every(function (p) { return common.isNumber(kwh[p]); });
      const total = parts.reduce(function (sum, p) { return sum + (kwh[p] || 0); }, 0);
      return known ? common.usd(run.cost) + " (" + Number(total.toPrecision(6)) + " kWh at $" + price.electricity + " per kWh)" : "no energy recorded";
    }
    return common.usd(run.cost) + " (at $" + price.input + " / $" + price.output + " per million input / output tokens)";
  }

  function configTable(config) {
    const table = tag("table", { className: "config" });
    Object.keys(config || {}).sort().forEach(function (k) {
      const value = config[k];
      table.appendChild(append(tag("tr"), [tag("th", { scope: "row" }, k),
        tag("td", {}, typeof value === "string" ? value : JSON.stringify(value))]));
    });
    return table;
  }

  // How often the judges agreed, where that means something: one judge agrees with no one, and
  // verdicts none of which could be read agree on nothing (never "0.0%" for either).
  function agreement(run, summary) {
    const judges = Array.isArray((run.config || {}).judges) ? run.config.judges.length : null;
    const unreadable = summary.judgeUnparseable || 0;
    const graded = (summary.n || 0) - (summary.apiErrors || 0);
    if (judges !== null && graded > 0 && unreadable >= graded * judges) {
      return "none: no verdict could be read (" + count(unreadable) + " unparseable)";
    }
    if (judges === 1) return "one judge: no agreement to measure";
    return common.isNumber(summary.judgeAgreement) ? percent(summary.judgeAgreement) + " of graded answers unanimous" : common.DASH;
  }

  function runCard(model, key) {
    const run = model.evals[key];
    const summary = hasBands(key) ? run.summary.overall : run.summary;
    const card = tag("article", { className: "run-card", "data-eval": key });
    card.appendChild(tag("h3", {}, EVALS[key] || key));
    const score = tag("p", { className: "run-score" }, percent(summary.accuracy));
    score.appendChild(tag("span", { className: "run-ci" }, " 95% CI " + common.interval(summary.ci95)));
    card.appendChild(score);
    const list = tag("dl");
    field(list, "Answers", answers(summary) + " (" + count(summary.correct) + " correct)");
    if (summary.passAt) field(list, "pass@k", passAt(summary));
    field(list, "Cost", costText(model, run, key));
    field(list, "Tokens", tokens(summary.tokens));
    if ((model.gateWaived || {})[key]) field(list, "Error gate", "waived when published (--allow-errors): " + model.gateWaived[key]);
    if ((DESCRIBED[key] || {}).judged) {
      field(list, "Judge agreement", agreement(run, summary));
      field(list, "Judge tokens", summary.judgeTokens ? tokens(summary.judgeTokens) + " (not the model's cost)" : null);
    }
    field(list, "API errors", count(summary.apiErrors || 0));
    if ("unparseable" in summary) field(list, "No answer letter", count(summary.unparseable));
    if ("judgeUnparseable" in summary) field(list, "Unparseable verdicts", count(summary.judgeUnparseable));
    if (summary.datasetErrors) field(list, "Dataset errors", count(summary.datasetErrors) + " (not scored)");
    if (summary.batch) field(list, "Batch API", count(summary.batch.calls) + " calls at " + percent(summary.batch.priceFactor) + " of the price");
    field(list, "Result file", tag("code", {}, "data/results/" + run.resultFile));
    field(list, "Run folder", tag("code", {}, "data/runs/" + run.runFolder + (run.runFolderPresent ? "" : " (not in this checkout)")));
    card.appendChild(list);
    const identity = append(tag("details", { className: "identity" }), [tag("summary", {}, "Run identity (config)"), configTable(run.config)]);
    card.appendChild(identity);
    return card;
  }

  // ---- items -------------------------------------------------------------------------------

  function verdict(item) {
    const parts = [];
    if ("expected" in item) { // an eval of a right answer to pick: the one expected, the one given
      parts.push("expected " + item.expected + ", " + (item.answer ? "answered " + item.answer : "no answer letter in the reply"));
    }
    if (Array.isArray(item.verdicts)) {
      if (item.verdicts.length) {
        parts.push("judges: " + item.verdicts.map(function (v) { return v.judge + " " + (v.verdict || "unparseable"); }).join(", ")
          + (item.agreed ? " (unanimous)" : " (split)"));
      }
    }
    if (item.tests) parts.push("tests " + item.tests + " passed");
    if (item.note) parts.push(item.note);
    if (item.unmetered) parts.push("ran unmetered: " + item.unmetered);
    if (item.error) parts.push(item.error);
    if (item.finishReason === "length") parts.push("reply cut off at the token limit");
    return tag("p", { className: "verdict" }, parts.join(" · ") || common.DASH);
  }

  function textBlock(label, text, className) {
    return append(tag("div", { className: "block " + className }), [tag("div", { className: "label" }, label), tag("div", { className: "text" }, text)]);
  }

  function itemNode(item, runs) {
    const node = tag("article", { className: "item", "data-eval": item.eval, "data-status": item.status });
    const head = append(tag("header", { className: "item-head" }), [
      tag("span", { className: "badge status " + item.status }, STATUS[item.status] || item.status),
      tag("span", { className: "badge" }, EVALS[item.eval] || item.eval),
      item.band ? tag("span", { className: "badge band" }, item.band) : null,
      item.epoch ? tag("span", { className: "badge" }, "epoch " + item.epoch) : null,
      tag("code", { className: "item-id" }, item.id),
      item.usage ? tag("span", { className: "item-tokens" }, count(item.usage.input) + " in, " + count(item.usage.output) + " out tokens") : null,
    ]);
    append(node, [head, verdict(item)]);
    if (!item.stored) {
      const folder = "data/runs/" + ((runs[item.eval] || {}).runFolder || "");
      node.appendChild(tag("p", { className: "missing" }, "Question and reply not in this checkout (" + folder + " is not here): the result row above is what was recorded."));
      return node;
    }
    node.appendChild(textBlock("Question", item.question, "question"));
    if (item.reasoning) {
      node.appendChild(append(tag("details", { className: "reasoning" }), [
        tag("summary", {}, "Reasoning (" + count(item.reasoning.length) + " characters)"), tag("div", { className: "text" }, item.reasoning)]));
    }
    const reply = typeof item.reply === "string" ? item.reply : null;
    node.appendChild(textBlock("Reply", reply === null ? "(no reply: the call failed)" : reply || "(empty reply)", "reply" + (reply ? "" : " none")));
    return node;
  }

  function options(select, first, values, labels, counts) {
    select.appendChild(tag("option", { value: "" }, first));
    values.forEach(function (v) {
      if (counts[v]) select.appendChild(tag("option", { value: v }, (labels[v] || v) + " (" + count(counts[v]) + ")"));
    });
  }

  function tally(items, key) {
    const counts = {};
    items.forEach(function (item) { if (item[key]) counts[item[key]] = (counts[item[key]] || 0) + 1; });
    return counts;
  }

  function itemList(model) {
    const items = model.items || [];
    const texts = new Array(items.length); // lowercased id, question and reply, made when first searched
    const pickers = {
      eval: document.getElementById("filter-eval"), band: document.getElementById("filter-band"),
      status: document.getElementById("filter-status"), search: document.getElementById("filter-search"),
    };
    const list = document.getElementById("items");
    const countLine = document.getElementById("item-count");
    const more = document.getElementById("show-more"), all = document.getElementById("show-all");
    let shown = PAGE, matching = [];

    options(pickers.eval, "All evals", Object.keys(EVALS), EVALS, tally(items, "eval"));
    options(pickers.band, "All bands", BANDS, {}, tally(items, "band"));
    options(pickers.status, "All verdicts", Object.keys(STATUS).concat(Object.keys(tally(items, "status")).filter(function (s) { return !(s in STATUS); })),
      STATUS, tally(items, "status"));

    function text(i) {
      if (texts[i] === undefined) texts[i] = [items[i].id, items[i].question || "", items[i].reply || ""].join("\n").toLowerCase();
      return texts[i];
    }

    function filter() {
      const evalKey = pickers.eval.value, band = pickers.band.value, status = pickers.status.value;
      const words = pickers.search.value.trim().toLowerCase();
      pickers.band.disabled = evalKey !== "" && !hasBands(evalKey);
      matching = [];
      items.forEach(function (item, i) {
        if (evalKey && item.eval !== evalKey) return;
        if (band && !pickers.band.disabled && item.band !== band) return;
        if (status && item.status !== status) return;
        if (words && text(i).indexOf(words) < 0) return;
        matching.push(item);
      });
    }

    function render() {
      const fragment = document.createDocumentFragment();
      matching.slice(0, shown).forEach(function (item) { fragment.appendChild(itemNode(item, model.evals)); });
      list.textContent = "";
      list.appendChild(fragment);
      const visible = Math.min(shown, matching.length);
      let line = matching.length === items.length ? count(items.length) + " items" : count(matching.length) + " of " + count(items.length) + " items match";
      if (visible < matching.length) line += "; showing the first " + count(visible);
      countLine.textContent = line;
      countLine.dataset.matching = String(matching.length);
      more.hidden = all.hidden = visible >= matching.length;
      more.textContent = "Show " + count(Math.min(PAGE, matching.length - visible)) + " more";
    }

    let last = null;
    function update() {
      const now = [pickers.eval.value, pickers.band.value, pickers.status.value, pickers.search.value].join("\u0000");
      if (now === last) return; // a select reports input and change alike
      last = now;
      shown = PAGE;
      filter();
      render();
    }

    ["input", "change"].forEach(function (type) { document.getElementById("filters").addEventListener(type, update); });
    document.getElementById("filters").addEventListener("submit", function (event) { event.preventDefault(); });
    more.addEventListener("click", function () { shown += PAGE; render(); });
    all.addEventListener("click", function () { shown = matching.length; render(); });
    update();
  }

  function show(model) {
    meta(model);
    scoresTable(model);
    const runs = document.getElementById("runs");
    Object.keys(EVALS).forEach(function (key) { if (model.evals && model.evals[key]) runs.appendChild(runCard(model, key)); });
    ["scores-section", "runs-section", "items-section"].forEach(function (id) { document.getElementById(id).hidden = false; });
    itemList(model);
    timing.ready = performance.now();
    document.body.dataset.ready = "1";
  }

  // ---- start -------------------------------------------------------------------------------

  const wanted = new URLSearchParams(location.search).get("model");
  if (!board || !Array.isArray(board.models)) {
    fail("The leaderboard data (data.js) did not load: run `uv run build --write`.");
    return;
  }
  const row = board.models.find(function (m) { return m.page === wanted; });
  // only a page that build wrote for a published model is loaded, and its names are plain
  if (!row || !/^[A-Za-z0-9._~-]+$/.test(row.page)) {
    fail(wanted ? "No published model has this page: pick one on the leaderboard." : "No model given: pick one on the leaderboard.");
    return;
  }
  document.title = row.name + " — Roblox LLM leaderboard";
  document.getElementById("model-name").textContent = common.visible(String(row.name));
  const script = document.createElement("script");
  script.src = "models/" + row.page + ".js";
  script.onload = function () {
    if (window.MODEL && window.MODEL.page === row.page) show(window.MODEL);
    else fail("This model's page data (models/" + row.page + ".js) is not this model's: run `uv run build --write`.");
  };
  script.onerror = function () { fail("This model's page data (models/" + row.page + ".js) did not load: run `uv run build --write`."); };
  document.body.appendChild(script);
})();
