"""The leaderboard site: data/models.json, the result files it names and their run folders ->
site/data.js and a page of data per model (site/models/<file name>.js); and the JSON Schemas
of models.json and of a result file (site/schema/, from evals/schema.py), kept as true as the
data by `--check`.

The generated files are committed; `site/index.html` + `app.js` read data.js as
`window.LEADERBOARD`, `site/model.html?model=<file name>` + `model.js` read data.js and the
model's `window.MODEL` (plain scripts, so the pages work from file:// as well as over http).

The board's evals and their columns are the registry's (`evals.tasks.on_board()`: each
eval's `columns()`, `bands` and `kilowatt_hour_keys()`): nothing here or in the pages' scripts
names an eval. data.js says which they are, `evals` (each eval's resultFiles key, name,
title, description, bands, kilowattHour keys, whether it is judged) and `scores` (each column:
its key, eval, label, band, whether it is averaged), and the pages build their headings,
filters and texts from them.

data.js: one row per published model (scores, each with its 95% interval under `ci95`, the
average and its interval, suite cost, the file name of its page) and `comparisons`: for every
pair of models and each score whose result files used the same dataset, `stats.paired` over
per-question scores, one compact row `[a, b, difference, low, high, distinguishable, shared,
onlyA, onlyB, mcnemarP]` (a and b index `models`, a < b; points; the last three null for
scores that are not plain right/wrong, as with several epochs), named by `comparisonFields`.

A model's page: its entry, each result file's config and summary with the cost of that eval,
and every row as an item with the question (the prompt of the candidate's cache record in the
run folder, data/runs/<eval>/<result file's stem>/) and the reply when that folder is there.

The output is deterministic (sorted rows and keys, rounded floats, no timestamps): building
twice from the same data gives the same bytes, so `--check` can tell a stale file in CI; a
model page no published model has is stale too (`--write` removes it). Text is JSON with `<`,
`>`, `&` and U+2028/9 escaped, so no reply can end a script.

    uv run build --write    # rewrite what changed under site/
    uv run build --check    # exit 1 if anything under site/ is stale

`--write` holds the models.json lock that publishing takes, so a build racing a publish never
leaves a stale site; publishing renders the site itself (`site_changes`) from the models list
it is about to write.

Bad data is one line naming the file, exit 2: models.json invalid (see models_file.check_entry), a
result file missing, truncated or of the wrong shape (see results.read_result: the line names
the field), or one that cannot be on the board by the publish rules (not publishable by its own
config and summary, with the entry's allowErrors; another eval's result; renamed or edited so
its name is not its run's; the entry's files from different runs)."""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evals import stats
from evals.atomic import write_text_atomic
from evals.cache import RunCache
from evals.errors import DataFileError
from evals.entry_points import ExtensionError, Registry
from evals.names import attempt_key, file_name
from evals.publish import board_refusals, identity_mismatch
from evals.models_file import MODELS, RESULTS, Render, load_models, lock
from evals.results import failures, over_error_gate, read_result
from evals.scrub import escape_unencodable, printable
from evals.tasks import Column, Task, on_board
from evals.words import in_words

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "site"
DATA_JS = "data.js"
MODEL_PAGES = "models"  # site/models/<file name>.js, read by site/model.html
SCHEMA_DIR = "schema"  # site/schema/models.schema.json and result.schema.json (evals/schema.py)
SCORE_DIGITS = 4  # accuracies are fractions, as in the result files (0.8125)
COST_DIGITS = 6  # USD, as in result summaries
# The board's evals, read from the registry when asked (a Mapping): resultFiles key -> the
# eval's results folder; and each score on the board: its key -> (resultFiles key, band or None).
RESULT_KEYS: Registry[str] = Registry(lambda: {task.key: task.name for task in on_board().values()})
SCORES: Registry[tuple[str, str | None]] = Registry(lambda: {column.key: (task.key, column.band) for task, column in _columns()})
COMPARISON_FIELDS = ("a", "b", "difference", "low", "high", "distinguishable", "shared", "onlyA", "onlyB", "mcnemarP")
# A board row's own fields (and a model page's), which no score's key may take.
ROW_FIELDS = ("name", "page", "provider", "url", "releaseDate", "size", "sizeLabel", "average", "ci95", "cost", "costBasis", "price",
              "gateWaived", "kilowattHour", "allowErrors", "evals", "items")
# A row's fields a model page shows, beside its id, status and band.
ITEM_FIELDS = ("epoch", "correct", "expected", "answer", "verdicts", "agreed", "tests", "note", "error", "finishReason", "unmetered", "usage")
HEADER = (
    "// Generated by `uv run build --write` from data/models.json and data/results/: do not edit.\n"
    "// `uv run build --check` fails when this file is stale.\n"
)
MODEL_HEADER = (
    "// Generated by `uv run build --write` from data/models.json, data/results/ and data/runs/: do not edit.\n"
    "// `uv run build --check` fails when this file is stale.\n"
)


@dataclass(frozen=True)
class Published:
    """A published entry with its result files (one per eval on the board), read and checked."""

    entry: dict[str, Any]
    paths: dict[str, Path]  # resultFiles key -> result file
    results: dict[str, dict[str, Any]]  # resultFiles key -> its content

    @property
    def page(self) -> str:
        """The file name of the model's page, site/models/<page>.js."""
        return file_name(self.entry["name"])


def build(*, models_path: Path = MODELS, results_dir: Path = RESULTS, runs_dir: Path | None = None, site_dir: Path = SITE,
          write: bool) -> bool:
    """Whether the generated files under `site_dir` differ from what the data produces (are
    stale). With `write`, rewrite those that differ and remove model pages of no published
    model (atomically, under the models.json lock that publishing takes): the return value
    then says something changed. Raises DataFileError (one line, naming the file) on bad data."""
    return bool(_build(models_path=models_path, results_dir=results_dir, runs_dir=runs_dir, site_dir=site_dir, write=write)[0])


def _build(*, models_path: Path, results_dir: Path, runs_dir: Path | None, site_dir: Path,
           write: bool) -> tuple[dict[Path, str | None], int]:
    """The changes (path -> new text, or None: remove) and the number of published models."""
    dict(SCORES)  # the board's columns first: an eval that cannot be on it is its own one line
    # Read and written under the lock: a publish cannot slip in between, leaving the site stale.
    with lock(Path(models_path)) if write else contextlib.nullcontext():
        models = load_models(Path(models_path), results=Path(results_dir))
        changes = site_changes(models, results_dir=results_dir, runs_dir=runs_dir, site_dir=site_dir)
        if write:
            write_changes(changes)
    return changes, sum(bool(entry.get("resultFiles")) for entry in models)


def rebuild_site(data_dir: Path) -> Render:
    """The render `publish` (and `models_file.update_entry`) takes: the site beside the data folder
    (the repository's site/ for its data/), its data.js and model pages from the new models
    list, the results and the run folders. Publishing is handed it by its caller, so publish.py
    (whose rules the site applies) never imports the site."""

    def render(models: list[dict[str, Any]]):
        changes = site_changes(models, results_dir=data_dir / "results", runs_dir=data_dir / "runs", site_dir=data_dir.parent / "site")
        return lambda: write_changes(changes)

    return render


def site_changes(models: list[dict[str, Any]], *, results_dir: Path = RESULTS, runs_dir: Path | None = None,
                 site_dir: Path = SITE) -> dict[Path, str | None]:
    """What publishing writes with a (validated) models list: each generated file of `site_dir`
    that is not already as the list makes it, with its new text, and each model page of no
    published model, with None. The run folders are `runs_dir`, by default the runs folder
    beside the results folder (data/runs for data/results). Raises DataFileError as `build`."""
    board = _published(models, Path(results_dir))
    runs_dir = Path(runs_dir) if runs_dir is not None else Path(results_dir).parent / "runs"
    return board_changes(board, runs_dir=runs_dir, site_dir=Path(site_dir))


def board_changes(board: list[Published], *, runs_dir: Path, site_dir: Path) -> dict[Path, str | None]:
    """`site_changes` of a board already read and checked: its `Published` entries, `ranked`."""
    return _changes(_pages(board, runs_dir=runs_dir, site_dir=site_dir), site_dir)


def write_changes(changes: dict[Path, str | None]) -> None:
    """Write `changes` (from `site_changes`): model pages first, then data.js, so the board
    never links to a page not yet written; then remove the pages of models no longer published."""
    for path, text in sorted(changes.items(), key=lambda change: (change[0].name == DATA_JS, str(change[0]))):
        if text is not None:
            write_text_atomic(path, text)
    for path, text in changes.items():
        if text is None:
            path.unlink(missing_ok=True)


def site_data(models: list[dict[str, Any]], *, results_dir: Path = RESULTS) -> dict[str, Any]:
    """data.js's content for a (validated) models list: `models`, one row per published model
    (one with resultFiles), best average first, then by name; `comparisons` and
    `comparisonFields`. Every result file must be able to be on the board (see `_published`)."""
    return _site_data(_published(models, Path(results_dir)))


def render(data: dict[str, Any]) -> str:
    """The text of data.js: sorted keys, two-space indent (lists of numbers on one line),
    trailing newline."""
    return f"{HEADER}window.LEADERBOARD = {to_js(data, inline_from=None)};\n"


def render_model(page: dict[str, Any]) -> str:
    """The text of a model's page data: as data.js, each item on a line of its own."""
    return f"{MODEL_HEADER}window.MODEL = {to_js(page, inline_from=2)};\n"


def to_js(value: Any, *, inline_from: int | None, depth: int = 0) -> str:
    """`value` as JSON that is also safe anywhere in a script, an HTML one included: sorted
    keys, two-space indent; a list of plain values, or any value at `inline_from` levels deep
    or more, on one line; `<`, `>`, `&`, U+2028 and U+2029 escaped (they occur only in strings)."""
    inline = (inline_from is not None and depth >= inline_from) or not isinstance(value, (dict, list)) or not value or (
        isinstance(value, list) and not any(isinstance(v, (dict, list)) for v in value))
    if inline:
        text = json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False, separators=(", ", ": "))
        return text.translate(JS_ESCAPES)
    pad, inner = "  " * depth, "  " * (depth + 1)
    if isinstance(value, dict):
        body = ",\n".join(f"{inner}{to_js(str(k), inline_from=None)}: {to_js(v, inline_from=inline_from, depth=depth + 1)}"
                          for k, v in sorted(value.items()))
        return f"{{\n{body}\n{pad}}}"
    body = ",\n".join(f"{inner}{to_js(v, inline_from=inline_from, depth=depth + 1)}" for v in value)
    return f"[\n{body}\n{pad}]"


JS_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def human_size(size: int | None) -> str:
    """Decimal units, one decimal: 70_600_000_000 -> "70.6 GB"; None -> "—"."""
    if size is None:
        return "—"
    value = float(size)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if round(value, 1) < 1000 or unit == "TB":
            return f"{size} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    raise AssertionError("unreachable")


def _published(models: list[dict[str, Any]], results_dir: Path) -> list[Published]:
    """The published entries (those with resultFiles), in board order: best average first,
    then by name. Each result file must be able to be on the board by the publish rules
    (publishable by its own config and summary, with the entry's allowErrors; the run its name
    says; the eval it is filed under), all of one run."""
    _columns()  # first, the board's columns: an eval whose columns cannot be on it is refused before any file is read
    board = []
    for entry in models:
        if not entry.get("resultFiles"):
            continue
        paths, results = {}, {}
        for key, folder in RESULT_KEYS.items():
            if key not in entry["resultFiles"]:
                raise DataFileError(f"entry {entry['name']!r}: resultFiles.{key}: missing, and the {folder} eval is on the board; "
                                    f"publish its result or take the eval off the board")
            path = paths[key] = results_dir / folder / entry["resultFiles"][key]
            result = results[key] = read_result(path)
            reasons = board_refusals(key, path, result, allow_errors=entry.get("allowErrors", False))
            if reasons:
                raise DataFileError(f"{path}: cannot be on the board as resultFiles.{key} of {entry['name']!r}: {'; '.join(reasons)}")
        mismatch = identity_mismatch({key: result["config"] for key, result in results.items()})
        if mismatch:
            key, how = mismatch
            raise DataFileError(f"{paths[key]}: not the same run as the other result files of {entry['name']!r} "
                                f"({how}); its {in_words(len(paths))} result files must come from one run")
        board.append(Published(entry, paths, results))
    return ranked(board)


def ranked(board: list[Published]) -> list[Published]:
    """The board's order: best average first, then by name."""
    return sorted(board, key=lambda p: (-average(p), p.entry["name"]))


def _site_data(board: list[Published]) -> dict[str, Any]:
    return {"models": [_row(p) for p in board], "comparisons": _comparisons(board), "comparisonFields": list(COMPARISON_FIELDS),
            "evals": [_described(task) for task in on_board().values()],
            "scores": [{"key": column.key, "eval": task.key, "label": column.label, "band": column.band, "averaged": column.averaged}
                       for task, column in _columns()]}


def _described(task: Task) -> dict[str, Any]:
    """What the pages need to know of an eval on the board (data.js's `evals`)."""
    title = task.title or task.name
    return {"key": task.key, "name": task.name, "title": title, "description": task.description or title,
            "bands": list(task.bands), "kilowattHour": list(task.kilowatt_hour_keys()), "judged": task.uses_judges}


def _columns() -> list[tuple[Task, Column]]:
    """Every score on the board, each with its eval, in the registry's order: each eval's
    columns (its own score, or its overall score and one per band)."""
    columns: list[tuple[Task, Column]] = []
    owners: dict[str, str] = {}  # column key -> its eval
    for task in on_board().values():
        for column in task.columns():
            owner = owners.setdefault(column.key, task.name)
            if owner != task.name or column.key in ROW_FIELDS or (column.band is not None and column.band not in task.bands):
                why = (f"is {owner!r}'s already" if owner != task.name else "is a field of every board row" if column.key in ROW_FIELDS
                       else f"reads band {column.band!r}, not one of its bands")
                raise DataFileError(f"eval {task.name!r} ({type(task).__module__}): its board column {column.key!r} {why}; "
                                    "give it another key or band")
            columns.append((task, column))
    return columns


def _score(published: Published, task: Task, column: Column) -> dict[str, Any]:
    """The summary a board score is read from: its eval's; of an eval with bands, the column's
    band's, or the overall one."""
    summary = published.results[task.key]["summary"]
    return summary[column.band or "overall"] if task.bands else summary


def average(published: Published) -> float:
    """A model's average over the board's averaged columns: what the board is ranked by."""
    averaged = [_accuracy(_score(published, task, column)) for task, column in _columns() if column.averaged]
    return round(math.fsum(averaged) / len(averaged), SCORE_DIGITS) if averaged else 0.0


def _row(published: Published) -> dict[str, Any]:
    entry = published.entry
    columns = _columns()
    scores = {column.key: _accuracy(_score(published, task, column)) for task, column in columns}
    intervals = {column.key: _interval(_score(published, task, column)) for task, column in columns}
    intervals["average"] = stats.average_interval([(scores[column.key], intervals[column.key]) for _, column in columns if column.averaged])
    costs, basis = _costs(entry, published.results)
    return {
        "name": entry["name"],
        "page": published.page,
        "provider": entry["provider"],
        "url": entry["url"],
        "releaseDate": entry["releaseDate"],
        "size": entry.get("size"),
        "sizeLabel": human_size(entry.get("size")),
        **scores,
        "average": average(published),
        "ci95": intervals,
        "cost": _total(entry, costs),
        "costBasis": basis,
        "price": entry["price"],
        **({"gateWaived": waived} if (waived := _gate_waived(published)) else {}),
    }


def _gate_waived(published: Published) -> dict[str, str]:
    """The runs on the board only because the model was published with --allow-errors (its
    entry's allowErrors), by resultFiles key: what failed in each, over the error gate. A score the
    failures pulled down must not pass for an ordinary one."""
    if not published.entry.get("allowErrors"):
        return {}
    return {key: failures(result["summary"]) for key, result in sorted(published.results.items()) if over_error_gate(result["summary"])}


def _comparisons(board: list[Published]) -> dict[str, list[list[Any]]]:
    """For each score, a row per pair of models (a < b, indexes into the board) whose result
    files used the same dataset: `stats.paired` over their answers to each question."""
    comparisons = {}
    for task, column in _columns():
        key, result_key = column.key, task.key
        answers = [question_answers(task, p.results[result_key]["results"], column.band) for p in board]
        rows = []
        for a, b in itertools.combinations(range(len(board)), 2):
            dataset = board[a].results[result_key]["config"].get("dataset")
            if dataset is None or dataset != board[b].results[result_key]["config"].get("dataset"):
                continue
            paired = stats.paired(answers[a], answers[b])
            if paired is not None:
                rows.append([a, b, paired["difference"], *paired["ci95"], paired["distinguishable"], paired["shared"],
                             paired.get("onlyA"), paired.get("onlyB"), paired.get("mcnemarP")])
        comparisons[key] = rows
    return comparisons


def question_answers(task: Task, rows: list[dict[str, Any]], band: str | None = None) -> dict[str, list[bool]]:
    """Each question's answers, `correct` of its rows (its epochs; their mean is its score), of
    the rows in `band` (one of the eval's bands; None: all); rows the dataset broke
    (datasetError) left out, as the summary leaves them out."""
    kept = [r for r in rows if r["status"] != "datasetError" and (band is None or _band(task, r) == band)]
    return stats.per_question(kept)


# ---- a model's page ------------------------------------------------------------------------

def _pages(board: list[Published], *, runs_dir: Path, site_dir: Path) -> dict[Path, str]:
    """Every generated file of the site and its text: data.js, the JSON Schemas of models.json
    and of a result file, and each model's page."""
    data = _site_data(board)
    pages = {site_dir / DATA_JS: render(data)}
    from evals import schema  # its models are the registered evals': loaded inside main, which reports a clash

    pages |= {site_dir / SCHEMA_DIR / name: schema.schema_text(name) for name in schema.SCHEMAS}
    for published, row in zip(board, data["models"]):
        pages[site_dir / MODEL_PAGES / f"{published.page}.js"] = render_model(model_page(published, row, runs_dir=runs_dir))
    return pages


def _changes(pages: dict[Path, str], site_dir: Path) -> dict[Path, str | None]:
    """The pages whose file is not as they are (missing or different), and with None each model
    page of no published model."""
    changes: dict[Path, str | None] = {}
    for path, text in pages.items():
        try:
            if path.read_bytes() == text.encode("utf-8"):
                continue
        except FileNotFoundError:
            pass
        changes[path] = text
    folder = site_dir / MODEL_PAGES
    if folder.is_dir():
        for path in sorted(folder.glob("*.js")):
            if path not in pages and not path.name.startswith("."):
                changes[path] = None
    return changes


def model_page(published: Published, row: dict[str, Any], *, runs_dir: Path) -> dict[str, Any]:
    """`window.MODEL` of a model's page: its board row, and per eval the result file's name,
    config and summary (as recorded), the eval's cost and whether its run folder is in this
    checkout; `items`, one per result row (see `_items`)."""
    entry = published.entry
    costs, _ = _costs(entry, published.results)
    evals, items = {}, []
    for task in on_board().values():
        key, eval_name = task.key, task.name
        result, run = published.results[key], published.paths[key].stem
        folder = runs_dir / eval_name / run
        evals[key] = {
            "eval": eval_name,
            "resultFile": f"{eval_name}/{run}.json",
            "runFolder": f"{eval_name}/{run}/",
            "runFolderPresent": folder.is_dir(),
            "config": result["config"],
            "summary": result["summary"],
            "cost": None if (cost := costs[key]) is None else round(cost, COST_DIGITS),
        }
        items += _items(task, result["results"], RunCache(folder, None) if folder.is_dir() else None)
    return {**row, "kilowattHour": entry.get("kilowattHour"), "allowErrors": entry.get("allowErrors", False),
            "evals": evals, "items": items}


def _items(task: Task, rows: list[dict[str, Any]], cache: RunCache | None) -> list[dict[str, Any]]:
    """A page item per row, by id then epoch: its eval (resultFiles key), id, status, band (of
    an eval with bands) and `ITEM_FIELDS`, and from the candidate's cache record (when the run
    folder is here) the question (the prompt asked), the reply and its reasoning; `stored` says
    whether it was found."""
    items = []
    for row in sorted(rows, key=lambda r: (r["id"], r.get("epoch") or 1)):
        item = {"eval": task.key, "id": row["id"], "status": row["status"], **{f: row[f] for f in ITEM_FIELDS if f in row}}
        band = _band(task, row)
        if band is not None:
            item["band"] = band
        record = cache.read(attempt_key(row["id"], row.get("epoch")), "candidate", aside=False) if cache else None
        prompt = record["request"].get("prompt") if record else None
        item["stored"] = isinstance(prompt, str)
        if record is not None and isinstance(prompt, str):
            item["question"] = prompt
            response = record.get("response") or {}
            item["reply"] = response.get("text")
            if response.get("reasoning"):
                item["reasoning"] = response["reasoning"]
        items.append(item)
    return items


def _band(task: Task, row: dict[str, Any]) -> str | None:
    """The band of a row of an eval with bands (None: the eval has none, or the row says none)."""
    if not task.bands:
        return None
    try:
        return task.band(row)
    except KeyError:
        return None


def _costs(entry: dict[str, Any], results: dict[str, dict[str, Any]]) -> tuple[dict[str, float | None], str]:
    """USD per eval (resultFiles key), unrounded, and the basis. Token prices: the candidate's
    input and output tokens of the result file (of an eval with bands: overall) at the entry's
    prices, those of Batch API calls at the share the result file records; judge tokens are not
    the model's cost. Electricity: the eval's kilowattHour figures (its `kilowatt_hour_keys()`:
    one per band, else its own) at the price per kWh; None when one is not recorded."""
    price = entry["price"]
    kwh = entry.get("kilowattHour") or {}
    costs: dict[str, float | None] = {}
    for task in on_board().values():
        key = task.key
        try:
            if "electricity" in price:
                parts = task.kilowatt_hour_keys()
                costs[key] = math.fsum(kwh[part] for part in parts) * price["electricity"] if all(part in kwh for part in parts) else None
                continue
            summary = results[key]["summary"]
            summary = summary["overall"] if task.bands else summary
            tokens, batch, total = summary["tokens"], summary.get("batch"), 0.0
            for kind in ("input", "output"):
                # Batch API calls cost the result file's recorded share of the listed price.
                discount = (1 - batch["priceFactor"]) * batch["tokens"][kind] if batch else 0
                total += (tokens[kind] - discount) * price[kind]
            costs[key] = total / 1e6
        except OverflowError:  # figures beyond any float
            costs[key] = math.inf
    return costs, "electricity" if "electricity" in price else "tokens"


def _total(entry: dict[str, Any], costs: dict[str, float | None]) -> float | None:
    """USD for the whole suite, rounded: None when an eval's cost is not known (an
    electricity-priced model without every kilowattHour figure of the board's evals)."""
    known = [cost for cost in costs.values() if cost is not None]
    if len(known) < len(costs):
        return None
    total = math.fsum(known)
    if not math.isfinite(total):
        raise DataFileError(f"models.json: {entry['name']!r}: the suite's cost at price {entry['price']} is too large to be a number; fix the price")
    return round(total, COST_DIGITS)


def _interval(summary: dict[str, Any]) -> list[float]:
    return [round(float(bound), SCORE_DIGITS) for bound in summary["ci95"]]


def _accuracy(summary: dict[str, Any]) -> float:
    return round(float(summary["accuracy"]), SCORE_DIGITS)


def _shown(path: Path) -> str:
    """A path as the user would type it: relative to the working directory when inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="build",
        description="Build the leaderboard site's data from data/models.json, data/results/ and data/runs/: site/data.js "
                    "(scores with 95% intervals, paired comparisons, suite cost) and a page of data per published model "
                    "(site/models/<file name>.js, shown by site/model.html: each item's question, reply and verdict).")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true",
                      help="rewrite the files under site/ that changed, and remove the pages of models no longer published")
    mode.add_argument("--check", action="store_true", help="exit 1 if a file under site/ is stale (or a model page is left over)")
    parser.add_argument("--models", type=Path, metavar="PATH", help="models.json (default: data/models.json; when it does not exist, the board is empty)")
    parser.add_argument("--results", type=Path, default=RESULTS, metavar="DIR", help="results folder (default: data/results)")
    parser.add_argument("--runs", type=Path, metavar="DIR",
                        help="run folders, where the model pages read each question and reply (default: runs beside the results "
                             "folder, data/runs); an item whose run folder is not there shows its result row only")
    parser.add_argument("--site", type=Path, default=SITE, metavar="DIR", help="site folder (default: site)")
    args = parser.parse_args(argv)
    escape_unencodable(sys.stdout)  # a folder's name in a cp1252 pipe

    if args.models is not None and not args.models.is_file():
        print(f"build: {args.models}: no such models file", file=sys.stderr)
        return 2
    args.models = args.models or MODELS
    try:
        changes, count = _build(models_path=args.models, results_dir=args.results, runs_dir=args.runs, site_dir=args.site, write=args.write)
    except (DataFileError, ExtensionError) as error:  # ExtensionError: two installed packages claim one name, or one is broken
        print(printable(f"build: {error}"), file=sys.stderr)
        return 2
    except OSError as error:
        print(f"build: {error.filename}: {error.strerror}" if error.filename else f"build: {error}", file=sys.stderr)
        return 2
    models = f"{count} published model{'s' if count != 1 else ''}"
    written = [path for path, text in changes.items() if text is not None]
    removed = [path for path, text in changes.items() if text is None]
    if args.check:
        if changes:
            parts = [f"{_listed(written)} {'is' if len(written) == 1 else 'are'} stale"] if written else []
            parts += [f"{_listed(removed)} {'is the page' if len(removed) == 1 else 'are pages'} of no published model"] if removed else []
            print(f"{' and '.join(parts)}: run `uv run build --write`", file=sys.stderr)
            return 1
        print(f"{_shown(args.site)} is up to date ({models})")
        return 0
    if not changes:
        print(f"{_shown(args.site)} is up to date ({models}); nothing written")
        return 0
    done = [f"wrote {_listed(written)}"] if written else []
    done += [f"removed {_listed(removed)}"] if removed else []
    print(f"{'; '.join(done)} ({models})")
    return 0


def _listed(paths: list[Path]) -> str:
    """Paths for a one-line message, data.js first: all of up to three, else two and a count."""
    shown = [_shown(path) for path in sorted(paths, key=lambda path: (path.name != DATA_JS, str(path)))]
    if len(shown) > 3:
        return f"{shown[0]}, {shown[1]} and {len(shown) - 2} more"
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"


if __name__ == "__main__":
    sys.exit(main())
