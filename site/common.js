// Shared by the leaderboard (app.js) and a model's page (model.js): number formats, the 95%
// interval's text and its whisker, the link to a model's page, and the names of the board's evals
// and scores (from data.js). Text only ever goes into the page as text (textContent), never as
// HTML, and with its invisible controls shown as escapes (`visible`).
"use strict";

window.SiteCommon = (function () {
  const DASH = "—";

  function isNumber(value) {
    return typeof value === "number" && isFinite(value);
  }

  function percent(value) {
    return isNumber(value) ? (value * 100).toFixed(1) + "%" : DASH;
  }

  // Every cost to a tenth of a cent, so that figures side by side line up and compare
  // ("$0.030" beside "$0.021", never "$0.03"); what is smaller says so, and thousands are dollars.
  const USD_DIGITS = 3;
  const USD_LEAST = Math.pow(10, -USD_DIGITS);

  function usd(value) {
    if (!isNumber(value)) return DASH;
    if (value === 0) return "$0";
    if (value >= 1000) return "$" + Math.round(value).toLocaleString("en-US");
    if (value < USD_LEAST / 2) return "< $" + USD_LEAST.toFixed(USD_DIGITS);
    return "$" + value.toFixed(USD_DIGITS);
  }

  // A run on the board only because its model was published with --allow-errors (data.js's
  // gateWaived: what failed), said the same way on the board and on the model's page.
  function waivedText(failed) {
    return "error gate waived: " + failed + ", counted as wrong";
  }

  // A score cell of such a run: a † after the score (before its whisker), and why in its title.
  function markWaived(cell, failed) {
    cell.classList.add("gate-waived");
    cell.title = (cell.title ? cell.title + "; " : "") + waivedText(failed);
    cell.insertBefore(tag("span", { className: "waived-mark", "aria-label": "(" + waivedText(failed) + ")" }, " †"), cell.childNodes[1] || null);
  }

  function count(value) {
    return isNumber(value) ? value.toLocaleString("en-US") : DASH;
  }

  function isInterval(ci) {
    return Array.isArray(ci) && ci.length === 2 && isNumber(ci[0]) && isNumber(ci[1]);
  }

  // [0.75, 0.8641] -> "75.0–86.4"
  function interval(ci) {
    return isInterval(ci) ? (ci[0] * 100).toFixed(1) + "–" + (ci[1] * 100).toFixed(1) : DASH;
  }

  // "81.3% (95% CI 75.0–86.4)"
  function scoreTitle(value, ci) {
    return percent(value) + (isInterval(ci) ? " (95% CI " + interval(ci) + ")" : "");
  }

  function clamp(value) {
    return Math.max(0, Math.min(1, value));
  }

  // The 95% interval in words under a score, shown where a title cannot be hovered (style.css).
  function intervalText(ci) {
    const text = document.createElement("span");
    text.className = "ci-text";
    text.setAttribute("aria-hidden", "true");
    if (isInterval(ci)) text.textContent = interval(ci);
    return text;
  }

  // A thin bar under a score: the track is 0–100%, the band the 95% interval, the tick the score.
  function whisker(value, ci) {
    const bar = document.createElement("span");
    bar.className = "whisker";
    bar.setAttribute("aria-hidden", "true");
    if (!isInterval(ci) || !isNumber(value)) return bar;
    const range = document.createElement("span");
    range.className = "whisker-range";
    range.style.left = (clamp(ci[0]) * 100).toFixed(2) + "%";
    range.style.width = ((clamp(ci[1]) - clamp(ci[0])) * 100).toFixed(2) + "%";
    const point = document.createElement("span");
    point.className = "whisker-point";
    point.style.left = (clamp(value) * 100).toFixed(2) + "%";
    bar.appendChild(range);
    bar.appendChild(point);
    return bar;
  }

  // A model's page: model.html?model=<its file name> (the names build writes are plain).
  function pageHref(page) {
    return "model.html?model=" + encodeURIComponent(page);
  }

  // Characters that change what a reader sees without being seen: control characters (line
  // breaks and tabs aside, which a reply's layout needs), line separators, bidi overrides that
  // show text reversed, zero-width and tag characters. As in the terminal (evals.scrub.printable),
  // each is shown as its escape.
  const INVISIBLE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b\u200e\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb]|\udb40[\udc00-\udc7f]/g;

  function visible(text) {
    return text.replace(INVISIBLE, function (c) {
      const code = c.codePointAt(0);
      const hex = code.toString(16);
      return code < 0x100 ? "\\x" + hex.padStart(2, "0") : code < 0x10000 ? "\\u" + hex.padStart(4, "0") : "\\U" + hex.padStart(8, "0");
    });
  }

  // An HTML element with attributes and (visible) text content.
  function tag(name, attrs, text) {
    const node = document.createElement(name);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "className") node.className = attrs[k];
      else node.setAttribute(k, String(attrs[k]));
    });
    if (text !== undefined && text !== null) node.textContent = visible(String(text));
    return node;
  }

  // ---- the board's evals and scores, as data.js describes them ---------------------------------
  // build writes them from the eval registry: `evals` (key, title, description, bands, kilowattHour
  // keys, judged) and `scores` (key, eval, label, band, averaged), in the board's order. Nothing
  // here or in the pages names an eval.

  // eval key -> its description
  function evalsOf(board) {
    const out = {};
    ((board && board.evals) || []).forEach(function (e) { out[e.key] = e; });
    return out;
  }

  // The scores of each eval, in order: [{ eval, scores: [...] }]
  function scoreGroups(board) {
    const groups = [];
    ((board && board.scores) || []).forEach(function (s) {
      const last = groups[groups.length - 1];
      if (last && last.eval === s.eval) last.scores.push(s);
      else groups.push({ eval: s.eval, scores: [s] });
    });
    return groups;
  }

  // A score's name where it stands alone: its label when it is its eval's only score, else its
  // eval's title and its band, or its title and "(overall)".
  function scoreName(board, score) {
    const e = evalsOf(board)[score.eval] || { title: score.eval };
    const siblings = ((board && board.scores) || []).filter(function (s) { return s.eval === score.eval; });
    if (siblings.length <= 1) return score.label;
    return e.title + " " + (score.band || "(overall)");
  }

  // A title inside a sentence: "Right answers" -> "right answers"; a name with capitals of its own
  // inside its first word ("RobloxQA") stays as it is.
  function inSentence(title) {
    const word = String(title).split(" ")[0];
    return /[A-Z]/.test(word.slice(1)) ? String(title) : String(title).charAt(0).toLowerCase() + String(title).slice(1);
  }

  // ["a", "b", "c"] -> "a, b and c" (with `serial`, "a, b, and c")
  function listed(words, serial) {
    if (words.length < 3) return words.join(" and ");
    return words.slice(0, -1).join(", ") + (serial ? ", and " : " and ") + words[words.length - 1];
  }

  // 3 -> "three"
  function countWord(n) {
    const words = ["no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"];
    return n >= 0 && n < words.length ? words[n] : String(n);
  }

  return {
    DASH: DASH, isNumber: isNumber, percent: percent, usd: usd, count: count, interval: interval,
    scoreTitle: scoreTitle, whisker: whisker, intervalText: intervalText, pageHref: pageHref, tag: tag, visible: visible,
    waivedText: waivedText, markWaived: markWaived, evalsOf: evalsOf, scoreGroups: scoreGroups, scoreName: scoreName, inSentence: inSentence, listed: listed, countWord: countWord,
  };
})();
