// Shared by the leaderboard (app.js) and a model's page (model.js): number formats, the 95%
// interval's text and its whisker, and the link to a model's page. Text only ever goes into the
// page as text (textContent), never as HTML.
"use strict";

window.SiteCommon = (function () {
  const DASH = "—";

  function isNumber(value) {
    return typeof value === "number" && isFinite(value);
  }

  function percent(value) {
    return isNumber(value) ? (value * 100).toFixed(1) + "%" : DASH;
  }

  function usd(value) {
    if (!isNumber(value)) return DASH;
    if (value === 0) return "$0";
    if (value >= 1000) return "$" + Math.round(value).toLocaleString("en-US");
    if (value >= 1) return "$" + value.toFixed(2);
    if (value >= 0.01) return "$" + value.toFixed(3).replace(/0$/, "");
    return "$" + value.toPrecision(2);
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

  // An HTML element with attributes and text content.
  function tag(name, attrs, text) {
    const node = document.createElement(name);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "className") node.className = attrs[k];
      else node.setAttribute(k, String(attrs[k]));
    });
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  return {
    DASH: DASH, isNumber: isNumber, percent: percent, usd: usd, count: count, interval: interval,
    scoreTitle: scoreTitle, whisker: whisker, pageHref: pageHref, tag: tag,
  };
})();
