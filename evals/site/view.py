"""A local page for any run (`build --view PATH`), published or not: a result file, or a run
folder (finished, or unfinished and shown from the calls it has stored so far).

The page is one self-contained HTML file in the site's style (site/style.css inlined; no
script, and a Content-Security-Policy that lets none run and nothing load): the run's identity,
its score with the 95% interval its summary records (`evals.stats`), each result row with the
question asked, the reply, its reasoning and what the eval's `Task.shown` says was read from
it. Every text a model, a judge, a server or a dataset wrote goes in escaped (`_text`): its
invisible characters as their escapes, as the site's pages show them, then HTML-escaped; a
text longer than `LIMIT` is cut, saying so. Nothing here names an eval.

A file or folder that cannot be read is a DataFileError, one line naming it and the cause."""

from __future__ import annotations

import html
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evals import bounded
from evals.cache import RunCache
from evals.errors import DataFileError
from evals.names import attempt_key
from evals.results import read_result
from evals.scrub import printable
from evals.site.rendering import SITE
from evals.tasks import TASKS, Shown, Task

LIMIT = 200_000  # characters of one text on the page; past that it is cut, saying so
FOLD = 2_000  # a reply or passage longer than this (or of more than FOLD_LINES lines) is folded
FOLD_LINES = 40
STATUS = {
    "correct": "correct",
    "wrong": "wrong",
    "unparseable": "unparseable",
    "apiError": "API error",
    "datasetError": "dataset error",
    "pending": "not graded yet",
}
# Only inline style, nothing else: no script runs, no file or address is fetched.
POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


@dataclass
class Item:
    """An answer on the page: its attempt key, its result row (None: not graded yet) and its
    cache records by role."""

    key: str
    row: dict[str, Any] | None
    calls: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass
class Run:
    """What the page shows: the eval, the identity, the result file's content (None: an
    unfinished run), where it was read from, its items."""

    task: Task
    config: dict[str, Any]
    result: dict[str, Any] | None
    result_path: Path | None
    folder: Path | None  # the run folder, when it is there
    items: list[Item]
    unreadable: int = 0  # cache records that could not be read, left out


def read_run(path: Path, *, runs_dir: Path | None = None) -> Run:
    """The run at `path`: a result file (its run folder under `runs_dir`, by default the runs
    folder beside its results folder: data/runs for data/results), or a run folder (its result
    file, when the results folder beside the runs folder has it, else unfinished)."""
    if path.is_dir():
        return _from_folder(path)
    if not path.exists():
        raise DataFileError(f"{path}: no such result file or run folder")
    result = read_result(path)
    config = result["config"]
    task = TASKS[config["eval"]]
    runs = runs_dir if runs_dir is not None else path.parent.parent.parent / "runs"
    folder = runs / config["eval"] / path.stem
    cache = RunCache(folder, None) if folder.is_dir() else None
    items = []
    for row in result["results"]:
        key = attempt_key(row["id"], row.get("epoch"))
        items.append(Item(key, row, _calls(cache, key) if cache else {}))
    return Run(task, config, result, path, folder if cache else None, items)


def _from_folder(folder: Path) -> Run:
    task = TASKS.get(folder.parent.name)
    if task is None:
        raise DataFileError(
            f"{folder}: not a run folder (data/runs/<eval>/<run>/) of any installed eval; "
            "give a result file or a run folder"
        )
    beside = result_beside(folder)
    if beside.is_file():
        return read_run(beside, runs_dir=folder.parent.parent)
    cache = RunCache(folder, None)
    items: dict[str, Item] = {}
    unreadable = 0
    calls = folder / "calls"
    for path in sorted(calls.glob("*/*.json")) if calls.is_dir() else []:
        record = _record(cache, path)
        if record is None:
            unreadable += 1
            continue
        item = items.setdefault(record["item"], Item(record["item"], None))
        item.calls[record["role"]] = record
    config = _identity(task, folder, [item.calls for item in items.values()])
    ordered = [items[key] for key in sorted(items)]
    return Run(task, config, None, None, folder, ordered, unreadable)


def result_beside(folder: Path) -> Path:
    """Where a run folder's result file is when the results folder is beside the runs folder
    (data/results/<eval>/<run>.json for data/runs/<eval>/<run>/)."""
    return folder.parent.parent.parent / "results" / folder.parent.name / f"{folder.name}.json"


def _record(cache: RunCache, path: Path) -> dict[str, Any] | None:
    """The record at `path`, read as the cache reads it (whole, of its item and role), or None."""
    try:
        stored = bounded.load_json(path)  # within the limits: no FIFO, /dev/zero or deep nest
    except (OSError, ValueError):
        return None
    if not isinstance(stored, dict) or not all(
        isinstance(stored.get(k), str) for k in ("item", "role")
    ):
        return None
    return cache.read(stored["item"], stored["role"], aside=False)


def _calls(cache: RunCache, key: str) -> dict[str, dict[str, Any]]:
    """An item's records by role: its candidate's and whatever else its folder holds."""
    folder = cache.record_path(key, "candidate").parent
    roles = (
        {"candidate", *(p.stem for p in folder.glob("*.json"))}
        if folder.is_dir()
        else {"candidate"}
    )
    found = {role: cache.read(key, role, aside=False) for role in sorted(roles)}
    return {role: record for role, record in found.items() if record is not None}


def _identity(task: Task, folder: Path, calls: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """What an unfinished run's stored calls say of its identity: the eval, the candidate's
    provider and what was sent beside the prompt (a finished run's result file says it all)."""
    config: dict[str, Any] = {"eval": task.name, "run": folder.name}
    for records in calls:
        request = (records.get("candidate") or {}).get("request")
        if isinstance(request, dict):
            if isinstance(provider := request.get("provider"), dict):
                config |= provider
            config |= {k: v for k, v in request.items() if k not in ("provider", "prompt")}
            break
    return config


# ---- the page ------------------------------------------------------------------------------


def page(run: Run) -> str:
    """The page's HTML."""
    config, task = run.config, run.task
    title = f"{config.get('model', '?')} · {task.title or task.name}"
    state = "unfinished: no result file yet" if run.result is None else None
    lede = " · ".join(
        str(part)
        for part in (
            config.get("provider"),
            task.description or task.title or task.name,
            f"{len(run.items):,} answers" + (" stored so far" if run.result is None else ""),
            state,
        )
        if part
    )
    body = [
        '<header class="page-header">',
        f'<p class="back">Local page of one run (<code>uv run build --view</code>)</p>',
        f'<h1 id="run-name">{_text(title)}</h1>',
        f'<p id="run-meta" class="lede">{_text(lede)}</p>',
        "</header>",
        "<main>",
        _scores(run),
        _identity_section(run),
        _items(run),
        "</main>",
        '<footer class="page-footer"><p>Written by <code>uv run build --view</code> from '
        f"<code>{_text(str(run.result_path or run.folder))}</code>: one run's page, on this machine "
        "only; the leaderboard shows published runs (<code>uv run build --write</code>).</p></footer>",
    ]
    style = (SITE / "style.css").read_text(encoding="utf-8").replace("</", "<\\/")
    return "\n".join(
        [
            "<!doctype html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            '<meta name="color-scheme" content="light dark">',
            f"<title>{_text(title)} — local run page</title>",
            f"<style>\n{style}\n.unfinished {{ color: var(--bad); font-weight: 600; }}\n"
            '.item[data-status="pending"] { border-left-color: var(--muted); }\n'
            ".facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 10px; margin: 6px 0; "
            "font-size: 0.88rem; }\n.facts dt { color: var(--muted); }\n"
            ".facts dd { margin: 0; overflow-wrap: anywhere; white-space: pre-wrap; }\n"
            ".facts .correct { color: var(--good); } .facts .wrong, .facts .unparseable { color: var(--bad); }\n"
            ".block details summary { cursor: pointer; font-size: 0.85rem; color: var(--accent); }\n"
            "</style>",
            "</head>",
            f'<body class="model-page view-page" data-state="{"unfinished" if run.result is None else "finished"}">',
            *body,
            "</body>",
            "</html>",
            "",
        ]
    )


def _scores(run: Run) -> str:
    if run.result is None:
        where = f" (none at {result_beside(run.folder)})" if run.folder else ""
        return (
            '<section id="scores-section"><h2>Score</h2>'
            f'<p class="unfinished" id="unfinished">Unfinished: no result file yet{_text(where)}, so no score. '
            "Below is what was asked and answered so far; the same command that started the run finishes it.</p>"
            "</section>"
        )
    summary = run.result["summary"]
    rows = (
        [("Overall", summary["overall"])] + [(band, summary[band]) for band in run.task.bands]
        if run.task.bands
        else [("Overall", summary)]
    )
    cells = []
    for label, part in rows:
        # a band without answers has no score, whatever its summary's 0.0 says
        value, ci = (part.get("accuracy"), part.get("ci95")) if part.get("n") else (None, None)
        answers = f"{part.get('correct', 0):,} of {part.get('n', 0):,}"
        if part.get("epochs"):
            answers += f" ({part['questions']:,} questions × {part['epochs']} epochs)"
        cells.append(
            f'<tr><th scope="row">{_text(label)}</th>'
            f'<td class="num score" title="{_text(_score_title(value, ci))}">'
            f"{_percent(value)}{_whisker(value, ci)}</td>"
            f'<td class="num">{_interval(ci)}</td><td class="num">{_text(answers)}</td>'
            f'<td class="num">{part.get("apiErrors", 0):,}</td></tr>'
        )
    return (
        '<section id="scores-section"><h2>Score</h2><div class="table-wrap"><table id="scores"><thead><tr>'
        '<th scope="col" class="col-text">Score</th><th scope="col">Accuracy</th><th scope="col">95% interval</th>'
        '<th scope="col">Correct</th><th scope="col">API errors</th></tr></thead><tbody>'
        + "".join(cells)
        + "</tbody></table></div></section>"
    )


def _identity_section(run: Run) -> str:
    facts: list[tuple[str, str]] = []
    if run.result_path is not None:
        facts.append(("Result file", str(run.result_path)))
    facts.append(
        (
            "Run folder",
            str(run.folder)
            if run.folder
            else "not here: the rows alone are shown (--runs DIR says where the run folders are)",
        )
    )
    if run.result is not None:
        result = run.result
        facts.append(
            (
                "Publishable",
                "yes"
                if result.get("publishable")
                else "no: " + "; ".join(result.get("notPublishable") or []),
            )
        )
        if result.get("graders"):
            facts.append(
                ("Graded by", ", ".join(f"{k} {v}" for k, v in sorted(result["graders"].items())))
            )
    if run.unreadable:
        facts.append(
            ("Unreadable records", f"{run.unreadable:,} (cut short or not a record: left out)")
        )
    config = "".join(
        f'<tr><th scope="row">{_text(k)}</th><td>{_text(_plain(v))}</td></tr>'
        for k, v in sorted(run.config.items())
    )
    return (
        '<section id="run-section"><h2>Run</h2>'
        + _facts([Shown(k, v) for k, v in facts])
        + '<details class="identity" open><summary>Run identity (config)</summary>'
        + f'<table class="config">{config}</table></details>'
        "</section>"
    )


def _items(run: Run) -> str:
    nodes = [_item(run, item) for item in run.items]
    empty = "" if nodes else '<p class="empty">No answer stored yet.</p>'
    return (
        f'<section id="items-section"><h2>Items</h2><p class="count" id="item-count">{len(nodes):,} items</p>'
        f'{empty}<div id="items" class="items">{"".join(nodes)}</div></section>'
    )


def _item(run: Run, item: Item) -> str:
    row = item.row
    status = row["status"] if row else "pending"
    candidate = item.calls.get("candidate") or {}
    response = candidate.get("response") or {}
    badges = [
        f'<span class="badge status {_text(status)}">{_text(STATUS.get(status, status))}</span>'
    ]
    band = _band(run.task, row)
    if band:
        badges.append(f'<span class="badge band">{_text(str(band))}</span>')
    if row and row.get("epoch"):
        badges.append(f'<span class="badge">epoch {_text(str(row["epoch"]))}</span>')
    badges.append(f'<code class="item-id">{_text(row["id"] if row else item.key)}</code>')
    usage = (row or {}).get("usage") or response.get("usage")
    if isinstance(usage, dict) and all(_finite(usage.get(k, 0)) for k in ("input", "output")):
        badges.append(
            f'<span class="item-tokens">{usage.get("input", 0):,} in, {usage.get("output", 0):,} out tokens</span>'
        )
    parts = [
        f'<article class="item" data-status="{_text(status)}" data-id="{_text(item.key)}">',
        f'<header class="item-head">{"".join(badges)}</header>',
        f'<p class="verdict">{_text(_outcome(run.task, row, candidate))}</p>',
    ]
    if not item.calls:
        where = (
            "its run folder is not here"
            if run.folder is None
            else "no record of it in the run folder"
        )
        parts.append(
            f'<p class="missing">Question and reply not shown: {where}; the result row is what was recorded.</p>'
        )
    else:
        prompt = candidate.get("request", {}).get("prompt")
        if isinstance(prompt, str):
            parts.append(_block("Question", prompt, "question"))
        if response.get("reasoning"):
            reasoning = response["reasoning"]
            parts.append(
                f'<details class="reasoning"><summary>Reasoning ({len(reasoning):,} characters)</summary>'
                f'<div class="text">{_text(reasoning)}</div></details>'
            )
        if "response" in candidate:
            reply = response.get("text") or ""
            parts.append(
                _block("Reply", reply or "(empty reply)", "reply" + ("" if reply else " none"))
            )
        elif "error" in candidate:
            parts.append(
                _block(
                    "Reply",
                    f"(no reply: the call failed: {candidate['error'].get('message', '')})",
                    "reply none",
                )
            )
    try:
        shown = run.task.shown(row, item.calls)
    except (KeyError, TypeError, AttributeError, IndexError, ValueError):
        # A row whose fields are not what the eval writes (another version's, hand-edited):
        # shown as every eval's are, field by field.
        shown = Task.shown(run.task, row, item.calls)
    parts.append(_facts([s for s in shown if not s.block]))
    parts += [_block(s.label, s.text, "passage") for s in shown if s.block]
    parts.append("</article>")
    return "".join(parts)


def _band(task: Task, row: Mapping[str, Any] | None) -> str | None:
    """A row's band, of an eval with bands (None: it has none, or the row says none)."""
    if row is None or not task.bands:
        return None
    try:
        return task.band(dict(row))
    except (KeyError, TypeError):
        return None


def _outcome(task: Task, row: dict[str, Any] | None, candidate: Mapping[str, Any]) -> str:
    """The item's outcome in a line: why it failed, in the eval's words (`Task.explain`)."""
    if row is None:
        return (
            "answered, not graded yet"
            if "response" in candidate
            else "asked: the call failed, to be retried"
        )
    parts = [STATUS.get(row["status"], row["status"])]
    if row["status"] in ("wrong", "unparseable"):
        try:
            parts.append(task.explain(row))
        except (KeyError, TypeError, AttributeError, IndexError, ValueError):
            pass  # a row of another version: the facts below say it
    if row["status"] == "apiError" and row.get("error"):
        parts.append(str(row["error"]))
    if row.get("finishReason") == "length":
        parts.append("reply cut off at the token limit")
    return " · ".join(p for p in parts if p)


def _facts(shown: Sequence[Shown]) -> str:
    if not shown:
        return ""
    return (
        '<dl class="facts">'
        + "".join(
            f"<dt>{_text(s.label)}</dt><dd{_class(s.mark)}>{_text(s.text)}</dd>" for s in shown
        )
        + "</dl>"
    )


def _class(mark: str | None) -> str:
    return f' class="{_text(mark)}"' if mark else ""


def _block(label: str, text: str, kind: str) -> str:
    """A passage under its label, folded when long (a reply of a thousand lines stays one
    click away)."""
    inner = f'<div class="text">{_text(text)}</div>'
    if len(text) > FOLD or text.count("\n") > FOLD_LINES:
        size = f"{len(text):,} characters, {text.count(chr(10)) + 1:,} lines"
        inner = f"<details><summary>{_text(label)} ({size})</summary>{inner}</details>"
    return f'<div class="block {kind}"><div class="label">{_text(label)}</div>{inner}</div>'


def _text(value: Any) -> str:
    """A value as the site's pages show text, as HTML (one that is not text, as its JSON):
    every invisible character (controls, bidi overrides, zero-width and tag characters, line
    separators) as its escape (`evals.scrub.printable`), line breaks and tabs kept; then
    HTML-escaped, quotes too. Past `LIMIT` characters it is cut, saying how much more there was."""
    text = _plain(value)
    more = len(text) - LIMIT
    if more > 0:
        text = text[:LIMIT]
    shown = "\n".join(
        "\t".join(printable(cell) for cell in line.split("\t"))
        for line in text.replace("\r\n", "\n").split("\n")
    )
    if more > 0:
        shown += f"\n… ({more:,} more characters, cut here; the run folder holds them all)"
    return html.escape(shown, quote=True)


def _plain(value: Any) -> str:
    return (
        value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)
    )


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _interval_of(ci: Any) -> tuple[float, float] | None:
    if isinstance(ci, list) and len(ci) == 2 and all(_finite(b) for b in ci):
        return float(ci[0]), float(ci[1])
    return None


# The site's formats (site/common.js: percent, interval, scoreTitle, whisker).
def _percent(value: Any) -> str:
    return f"{value * 100:.1f}%" if _finite(value) else "—"


def _interval(ci: Any) -> str:
    bounds = _interval_of(ci)
    return f"{bounds[0] * 100:.1f}–{bounds[1] * 100:.1f}" if bounds else "—"


def _score_title(value: Any, ci: Any) -> str:
    return _percent(value) + (f" (95% CI {_interval(ci)})" if _interval_of(ci) else "")


def _whisker(value: Any, ci: Any) -> str:
    bounds = _interval_of(ci)
    if bounds is None or not _finite(value):
        return '<span class="whisker" aria-hidden="true"></span>'
    low, high = (max(0.0, min(1.0, b)) for b in bounds)
    point = max(0.0, min(1.0, float(value)))
    return (
        '<span class="whisker" aria-hidden="true">'
        f'<span class="whisker-range" style="left: {low * 100:.2f}%; width: {(high - low) * 100:.2f}%"></span>'
        f'<span class="whisker-point" style="left: {point * 100:.2f}%"></span></span>'
    )


def default_out(run: Run) -> Path:
    """Where a run's page goes unless told: one file per run in the temp folder, so viewing it
    again replaces it."""
    import tempfile

    name = run.result_path.stem if run.result_path else run.folder.name if run.folder else "run"
    return Path(tempfile.gettempdir()) / "roblox-evals-view" / f"{run.task.name}-{name}.html"
