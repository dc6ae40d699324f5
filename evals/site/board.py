"""The board's model: what data/models.json and the result files it names put on the
leaderboard, before any of it is text (`evals.site.rendering` makes the files of it).

The published entries, read and checked by the publish rules (`_published`: each a
`Published`; bad data is a DataFileError, one line naming the file), in the board's order
(`ranked`, by `average`); the scores each eval on the board gives (`_columns`, `SCORES`);
data.js's content (`site_data`: a row per model with its scores, intervals and suite cost,
the paired `comparisons`, the evals and their scores described for the pages); and a model
page's (`model_page`: its row, each eval's result file and cost, an item per result row with
the question and reply its run folder holds)."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evals import stats
from evals.cache import RunCache
from evals.errors import DataFileError
from evals.entry_points import Registry
from evals.names import attempt_key, file_name
from evals.publish import board_refusals, identity_mismatch
from evals.models_file import RESULT_KEYS, RESULTS
from evals.results import failures, over_error_gate, read_result
from evals.tasks import Column, Task, on_board
from evals.words import in_words

SCORE_DIGITS = 4  # accuracies are fractions, as in the result files (0.8125)
COST_DIGITS = 6  # USD, as in result summaries
# The board's evals, read from the registry when asked (a Mapping): resultFiles key -> the
# eval's results folder; and each score on the board: its key -> (resultFiles key, band or None).
SCORES: Registry[tuple[str, str | None]] = Registry(
    lambda: {column.key: (task.key, column.band) for task, column in _columns()}
)
COMPARISON_FIELDS = (
    "a",
    "b",
    "difference",
    "low",
    "high",
    "distinguishable",
    "shared",
    "onlyA",
    "onlyB",
    "mcnemarP",
)
# A board row's own fields (and a model page's), which no score's key may take.
ROW_FIELDS = (
    "name",
    "page",
    "provider",
    "url",
    "releaseDate",
    "size",
    "sizeLabel",
    "average",
    "ci95",
    "cost",
    "costBasis",
    "price",
    "gateWaived",
    "kilowattHour",
    "allowErrors",
    "evals",
    "items",
)
# A row's fields a model page shows, beside its id, status and band.
ITEM_FIELDS = (
    "epoch",
    "correct",
    "expected",
    "answer",
    "verdicts",
    "agreed",
    "tests",
    "note",
    "error",
    "finishReason",
    "unmetered",
    "usage",
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


def site_data(models: list[dict[str, Any]], *, results_dir: Path = RESULTS) -> dict[str, Any]:
    """data.js's content for a (validated) models list: `models`, one row per published model
    (one with resultFiles), best average first, then by name; `comparisons` and
    `comparisonFields`. Every result file must be able to be on the board (see `_published`)."""
    return _site_data(_published(models, Path(results_dir)))


def _site_data(board: list[Published]) -> dict[str, Any]:
    return {
        "models": [_row(p) for p in board],
        "comparisons": _comparisons(board),
        "comparisonFields": list(COMPARISON_FIELDS),
        "evals": [_described(task) for task in on_board().values()],
        "scores": [
            {
                "key": column.key,
                "eval": task.key,
                "label": column.label,
                "band": column.band,
                "averaged": column.averaged,
            }
            for task, column in _columns()
        ],
    }


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
                raise DataFileError(
                    f"entry {entry['name']!r}: resultFiles.{key}: missing, and the {folder} eval is on the board; "
                    f"publish its result or take the eval off the board"
                )
            path = paths[key] = results_dir / folder / entry["resultFiles"][key]
            result = results[key] = read_result(path)
            reasons = board_refusals(
                key, path, result, allow_errors=entry.get("allowErrors", False)
            )
            if reasons:
                raise DataFileError(
                    f"{path}: cannot be on the board as resultFiles.{key} of {entry['name']!r}: {'; '.join(reasons)}"
                )
        mismatch = identity_mismatch({key: result["config"] for key, result in results.items()})
        if mismatch:
            key, how = mismatch
            raise DataFileError(
                f"{paths[key]}: not the same run as the other result files of {entry['name']!r} "
                f"({how}); its {in_words(len(paths))} result files must come from one run"
            )
        board.append(Published(entry, paths, results))
    return ranked(board)


def ranked(board: list[Published]) -> list[Published]:
    """The board's order: best average first, then by name."""
    return sorted(board, key=lambda p: (-average(p), p.entry["name"]))


def _described(task: Task) -> dict[str, Any]:
    """What the pages need to know of an eval on the board (data.js's `evals`)."""
    title = task.title or task.name
    return {
        "key": task.key,
        "name": task.name,
        "title": title,
        "description": task.description or title,
        "bands": list(task.bands),
        "kilowattHour": list(task.kilowatt_hour_keys()),
        "judged": task.uses_judges,
    }


def _columns() -> list[tuple[Task, Column]]:
    """Every score on the board, each with its eval, in the registry's order: each eval's
    columns (its own score, or its overall score and one per band)."""
    columns: list[tuple[Task, Column]] = []
    owners: dict[str, str] = {}  # column key -> its eval
    for task in on_board().values():
        for column in task.columns():
            owner = owners.setdefault(column.key, task.name)
            if (
                owner != task.name
                or column.key in ROW_FIELDS
                or (column.band is not None and column.band not in task.bands)
            ):
                why = (
                    f"is {owner!r}'s already"
                    if owner != task.name
                    else "is a field of every board row"
                    if column.key in ROW_FIELDS
                    else f"reads band {column.band!r}, not one of its bands"
                )
                raise DataFileError(
                    f"eval {task.name!r} ({type(task).__module__}): its board column {column.key!r} {why}; "
                    "give it another key or band"
                )
            columns.append((task, column))
    return columns


def _score(published: Published, task: Task, column: Column) -> dict[str, Any]:
    """The summary a board score is read from: its eval's; of an eval with bands, the column's
    band's, or the overall one."""
    summary = published.results[task.key]["summary"]
    return summary[column.band or "overall"] if task.bands else summary


def average(published: Published) -> float:
    """A model's average over the board's averaged columns: what the board is ranked by."""
    averaged = [
        _accuracy(_score(published, task, column)) for task, column in _columns() if column.averaged
    ]
    return round(math.fsum(averaged) / len(averaged), SCORE_DIGITS) if averaged else 0.0


def _row(published: Published) -> dict[str, Any]:
    entry = published.entry
    columns = _columns()
    scores = {column.key: _accuracy(_score(published, task, column)) for task, column in columns}
    intervals = {column.key: _interval(_score(published, task, column)) for task, column in columns}
    intervals["average"] = stats.average_interval(
        [(scores[column.key], intervals[column.key]) for _, column in columns if column.averaged]
    )
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
    return {
        key: failures(result["summary"])
        for key, result in sorted(published.results.items())
        if over_error_gate(result["summary"])
    }


def _comparisons(board: list[Published]) -> dict[str, list[list[Any]]]:
    """For each score, a row per pair of models (a < b, indexes into the board) whose result
    files used the same dataset: `stats.paired` over their answers to each question."""
    comparisons = {}
    for task, column in _columns():
        key, result_key = column.key, task.key
        answers = [
            question_answers(task, p.results[result_key]["results"], column.band) for p in board
        ]
        rows = []
        for a, b in itertools.combinations(range(len(board)), 2):
            dataset = board[a].results[result_key]["config"].get("dataset")
            if dataset is None or dataset != board[b].results[result_key]["config"].get("dataset"):
                continue
            paired = stats.paired(answers[a], answers[b])
            if paired is not None:
                rows.append(
                    [
                        a,
                        b,
                        paired["difference"],
                        *paired["ci95"],
                        paired["distinguishable"],
                        paired["shared"],
                        paired.get("onlyA"),
                        paired.get("onlyB"),
                        paired.get("mcnemarP"),
                    ]
                )
        comparisons[key] = rows
    return comparisons


def question_answers(
    task: Task, rows: list[dict[str, Any]], band: str | None = None
) -> dict[str, list[bool]]:
    """Each question's answers, `correct` of its rows (its epochs; their mean is its score), of
    the rows in `band` (one of the eval's bands; None: all); rows the dataset broke
    (datasetError) left out, as the summary leaves them out."""
    kept = [
        r
        for r in rows
        if r["status"] != "datasetError" and (band is None or _band(task, r) == band)
    ]
    return stats.per_question(kept)


# ---- a model's page ------------------------------------------------------------------------


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
        items += _items(
            task, result["results"], RunCache(folder, None) if folder.is_dir() else None
        )
    return {
        **row,
        "kilowattHour": entry.get("kilowattHour"),
        "allowErrors": entry.get("allowErrors", False),
        "evals": evals,
        "items": items,
    }


def _items(task: Task, rows: list[dict[str, Any]], cache: RunCache | None) -> list[dict[str, Any]]:
    """A page item per row, by id then epoch: its eval (resultFiles key), id, status, band (of
    an eval with bands) and `ITEM_FIELDS`, and from the candidate's cache record (when the run
    folder is here) the question (the prompt asked), the reply and its reasoning; `stored` says
    whether it was found."""
    items = []
    for row in sorted(rows, key=lambda r: (r["id"], r.get("epoch") or 1)):
        item = {
            "eval": task.key,
            "id": row["id"],
            "status": row["status"],
            **{f: row[f] for f in ITEM_FIELDS if f in row},
        }
        band = _band(task, row)
        if band is not None:
            item["band"] = band
        record = (
            cache.read(attempt_key(row["id"], row.get("epoch")), "candidate", aside=False)
            if cache
            else None
        )
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


def _costs(
    entry: dict[str, Any], results: dict[str, dict[str, Any]]
) -> tuple[dict[str, float | None], str]:
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
                costs[key] = (
                    math.fsum(kwh[part] for part in parts) * price["electricity"]
                    if all(part in kwh for part in parts)
                    else None
                )
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
        raise DataFileError(
            f"models.json: {entry['name']!r}: the suite's cost at price {entry['price']} "
            "is too large to be a number; fix the price"
        )
    return round(total, COST_DIGITS)


def _interval(summary: dict[str, Any]) -> list[float]:
    return [round(float(bound), SCORE_DIGITS) for bound in summary["ci95"]]


def _accuracy(summary: dict[str, Any]) -> float:
    return round(float(summary["accuracy"]), SCORE_DIGITS)
