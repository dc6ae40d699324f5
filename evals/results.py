"""Result files: `config`, `summary` and one row per question, written atomically.

A result file is the published record of a run. Its `summary` is derived from its rows, so
`--verify-published` can rescore a run folder and compare the two exactly.

The file's layout has a version of its own, `resultFormat`, apart from the run's identity
(`config.harnessVersion`, hashed into run folder names, never bumped for a new field), so a
field added to result files orphans no run folder and leaves every older file readable:
- format 1 (no `resultFormat`): config, summary, prices, publishable, timing, rows;
- format 2: also `graders` (the version of each part that graded it, `graders_of`) and each
  row's `records`, a digest of the cache records it was scored from (`run.records_digest`);
- format 3: a row whose judge call failed (an `apiError` after the candidate answered) keeps
  the candidate's `usage` and `finishReason`, so the summary's tokens and cost count them.
Any format may hold `gradedWith`: the eval's own flags that can change a grade (`Flag.graded`)
as the run set them, when not their defaults (`{"--my-limit": 20.0}`); verify rescores with
them, and a file without it was graded with the defaults.
`FORMATS` lists what each format added; `in_format` drops it, so today's rescoring compares
with an older file field for field (evals/verify.py)."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evals import bounded
from evals import stats
from evals.atomic import write_json_atomic
from evals.errors import DataFileError, FileLimitError
from evals.tasks import GRADED_WITH, TASKS, Task

RESULT_FORMAT = 3
# What each format added to the one before: top-level keys, and keys of every row.
FORMATS: dict[int, tuple[frozenset[str], frozenset[str]]] = {
    2: (frozenset({"resultFormat", "graders"}), frozenset({"records"})),
    3: (frozenset(), frozenset()),
}
# What format 3 added to a failed row (one whose candidate answered), and the summary counts.
FAILED_ROW_USAGE = ("usage", "finishReason", "batched", "latency")
MAX_ERROR_RATE = 0.05
TOKEN_KINDS = ("input", "output", "reasoning", "cached")
# Fields that measure the machine, not the model: excluded when two runs are compared.
TIMING_FIELDS = frozenset({"latency", "timing", "energy"})
# What the 5% gate counts, as the original harness did.
GATED = ("apiErrors", "judgeUnparseable")
# The share of the listed token prices a Batch API call costs: half, at OpenAI and Anthropic alike.
BATCH_PRICE = 0.5


@dataclass(frozen=True)
class TokenPrices:
    """USD per million tokens."""

    input: float
    output: float

    def cost(self, tokens: dict[str, int], batched: dict[str, int] | None = None) -> float:
        """USD for `tokens`, of which `batched` were Batch API calls at `BATCH_PRICE`."""
        batched = batched or dict.fromkeys(tokens, 0)
        listed = {k: tokens[k] - (1 - BATCH_PRICE) * batched[k] for k in ("input", "output")}
        return round((listed["input"] * self.input + listed["output"] * self.output) / 1e6, 6)


def summarize(
    task: Task, rows: list[dict[str, Any]], prices: TokenPrices | None = None
) -> dict[str, Any]:
    """The summary of a run's rows; with bands (`Task.bands`) an `overall` summary
    and one per band."""
    if not task.bands:
        return _summary(task, rows, prices)
    summary = {"overall": _summary(task, rows, prices)}
    for band in task.bands:
        summary[band] = _summary(task, [r for r in rows if task.band(r) == band], prices)
    return summary


def _summary(task: Task, rows: list[dict[str, Any]], prices: TokenPrices | None) -> dict[str, Any]:
    # Items the dataset itself broke (a reference failing its own tests) are not scored:
    # neither in n nor against the model; counted apart when there are any. Their tokens
    # were spent all the same.
    tokens = _token_totals(r.get("usage") for r in rows)
    all_rows = rows
    dataset_errors = sum(r["status"] == "datasetError" for r in rows)
    rows = [r for r in rows if r["status"] != "datasetError"]
    n = len(rows)
    correct = sum(bool(r["correct"]) for r in rows)
    by_question = stats.per_question(rows)
    summary: dict[str, Any] = {
        "n": n,
        "correct": correct,
        "accuracy": round(correct / n, 4) if n else 0.0,
        "ci95": stats.accuracy_interval(by_question),
        **_epochs(rows, by_question),
        "apiErrors": sum(r["status"] == "apiError" for r in rows),
        **task.summarize(rows),
        "tokens": tokens,
    }
    if dataset_errors:
        summary["datasetErrors"] = dataset_errors
    judge_tokens = [r["judgeUsage"] for r in rows if "judgeUsage" in r]
    if judge_tokens:
        summary["judgeTokens"] = _token_totals(judge_tokens)
    batched = [r.get("usage") for r in all_rows if "candidate" in r.get("batched", ())]
    if batched:  # the run went through a Batch API: its candidate tokens there cost BATCH_PRICE of the list price
        summary["batch"] = {
            "calls": len(batched),
            "tokens": _token_totals(batched),
            "priceFactor": BATCH_PRICE,
        }
    if prices:
        summary["cost"] = prices.cost(tokens, summary["batch"]["tokens"] if batched else None)
    return summary


def _epochs(rows: list[dict[str, Any]], by_question: dict[str, list[bool]]) -> dict[str, int]:
    """With --epochs K: K and the number of questions (n counts every answer, and accuracy is
    their mean: the mean over epochs)."""
    epochs = max((r.get("epoch", 1) for r in rows), default=1)
    return {"epochs": epochs, "questions": len(by_question)} if epochs > 1 else {}


def failed_answers(summary: dict[str, Any]) -> int:
    """Answers the run failed to get or to grade: API errors plus unparseable judge verdicts.
    A reply a grader finds no answer in is the model's own wrong answer, not a failure."""
    summary = summary.get("overall", summary)
    return sum(summary.get(k) or 0 for k in GATED)


def over_error_gate(summary: dict[str, Any]) -> bool:
    overall = summary.get("overall", summary)
    return failed_answers(summary) > MAX_ERROR_RATE * overall["n"]


def failures(summary: dict[str, Any]) -> str:
    """`6 of 25 answers failed (6 API errors)`: what the gate counts, in words."""
    overall = summary.get("overall", summary)
    errors, verdicts = (overall.get(k) or 0 for k in GATED)
    parts = [f"{errors} API error{'s' * (errors != 1)}"] if errors else []
    parts += [f"{verdicts} unparseable judge verdict{'s' * (verdicts != 1)}"] if verdicts else []
    return f"{failed_answers(summary)} of {overall['n']} answers failed ({', '.join(parts)})"


def gate_reason(summary: dict[str, Any]) -> str:
    """Why a run is over the gate, and what a rerun can and cannot do about it."""
    overall = summary.get("overall", summary)
    errors, verdicts = (overall.get(k) or 0 for k in GATED)
    advice = ["rerunning retries the API errors"] if errors else []
    advice += ["the cached verdicts stay as they are"] if verdicts else []
    return (
        f"{failures(summary)}, over the {MAX_ERROR_RATE:.0%} gate: {'; '.join(advice)}; "
        "--allow-errors publishes it anyway"
    )


def not_publishable_reasons(
    config: dict[str, Any], summary: dict[str, Any], *, allow_errors: bool
) -> list[str]:
    reasons = []
    if config["provider"] == "reference":
        reasons.append("the reference provider answers with the gold answers")
    if config.get("limit") is not None:
        reasons.append(f"--limit {config['limit']} makes it a smoke test")
    if config.get("split", "test") != "test":
        reasons.append(f"the {config['split']} split is for smoke tests and generation, not scores")
    if over_error_gate(summary) and not allow_errors:
        reasons.append(gate_reason(summary))
    return reasons


def build_result(
    config: dict[str, Any],
    summary: dict[str, Any],
    rows: list[dict[str, Any]],
    *,
    prices: TokenPrices | None,
    timing: dict[str, Any],
    graders: dict[str, str] | None = None,
    graded_with: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """`publishable` says whether the run passes every rule by itself; --allow-errors is a
    decision taken when publishing, recorded in models.json, never in the result file, so
    that rerunning an identity reproduces its file whatever the flags of the day.
    `graded_with`: the eval's own graded flags set to other than their defaults
    (`tasks.graded_with`), kept as `gradedWith` only when there is one."""
    reasons = not_publishable_reasons(config, summary, allow_errors=False)
    return {
        "resultFormat": RESULT_FORMAT,
        "config": config,
        "graders": graders or {},
        **({GRADED_WITH: graded_with} if graded_with else {}),
        "summary": summary,
        "prices": dataclasses.asdict(prices) if prices else None,
        "publishable": not reasons,
        "notPublishable": reasons,
        "timing": timing,
        "results": sorted(rows, key=lambda r: (r["id"], r.get("epoch", 1))),
    }


def result_of_run(
    task: Task,
    config: dict[str, Any],
    rows: list[dict[str, Any]],
    *,
    prices: TokenPrices | None,
    timing: dict[str, Any],
    graded_with: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The result file of a run's rows: what a session writes and what verify recomputes.
    Each row is bound to the records it was scored from by `EvalRun.answer` (`records`)."""
    return build_result(
        config,
        summarize(task, rows, prices),
        rows,
        prices=prices,
        timing=timing,
        graders=graders_of(task),
        graded_with=graded_with,
    )


def graders_of(task: Task) -> dict[str, str]:
    """What grades a run of `task` today: its parts' versions and the summary statistics'."""
    return {**task.graders, "stats": stats.VERSION}


def graders_recorded(task: Task, result: dict[str, Any]) -> dict[str, str]:
    """What graded a result file: its `graders`; a format-1 file, which does not say, was
    graded by the first version, "1", of every part (as every part was when format 2 came)."""
    if "graders" in result:
        return result["graders"]
    return dict.fromkeys(graders_of(task), "1")


def result_format(result: dict[str, Any]) -> int:
    return result.get("resultFormat", 1)


def in_format(result: dict[str, Any], version: int) -> dict[str, Any]:
    """`result` (of today's format) as a file of format `version` holds it: without what
    later formats added."""
    top = frozenset().union(*(added for v, (added, _) in FORMATS.items() if v > version))
    row = frozenset().union(*(added for v, (_, added) in FORMATS.items() if v > version))
    shaped = {k: v for k, v in result.items() if k not in top}
    if "resultFormat" in shaped:
        shaped["resultFormat"] = version
    if row and isinstance(shaped.get("results"), list):
        shaped["results"] = [
            {k: v for k, v in r.items() if k not in row} for r in shaped["results"]
        ]
    if version < 3:
        shaped = _without_failed_rows_usage(shaped)
    return shaped


def _without_failed_rows_usage(result: dict[str, Any]) -> dict[str, Any]:
    """Before format 3, a row whose judge call failed dropped the candidate's usage, and the
    summary did not count it: today's rescoring, as such a file holds it."""
    rows = result.get("results") or []
    failed = [r for r in rows if r.get("status") == "apiError" and "usage" in r]
    if not failed:
        return result
    rows = [
        {k: v for k, v in r.items() if k not in FAILED_ROW_USAGE}
        if r.get("status") == "apiError"
        else r
        for r in rows
    ]
    prices = TokenPrices(**result["prices"]) if result.get("prices") else None
    return {
        **result,
        "results": rows,
        "summary": summarize(TASKS[result["config"]["eval"]], rows, prices),
    }


def write_result(path: Path, result: dict[str, Any]) -> None:
    """At `<results dir>/<eval>/<file>`: the results folder is the tree it stays in."""
    write_json_atomic(path, result, indent=2, tree=path.parent.parent)


def read_result(path: Path) -> dict[str, Any]:
    """The result file at `path`, checked (`schema.Result`, or for an eval with bands its
    `schema.BANDED_RESULTS` model): a file that is missing, not JSON or of the wrong shape is a
    DataFileError, one line naming the file, the field and what it must be."""
    try:
        result = bounded.load_json(path)
    except FileNotFoundError:
        raise DataFileError(f"{path}: result file not found") from None
    except FileLimitError as error:
        raise DataFileError(f"{path}: {error}; rerun its eval to write it again") from None
    except json.JSONDecodeError as error:
        raise DataFileError(
            f"{path}: truncated or corrupt result file ({error.msg}); rerun its eval to write it again"
        ) from None
    except UnicodeDecodeError:
        raise DataFileError(
            f"{path}: not a text file, so not a result file; rerun its eval to write it again"
        ) from None
    except ValueError as error:  # e.g. a number of more than 4300 digits
        raise DataFileError(
            f"{path}: corrupt result file ({error}); rerun its eval to write it again"
        ) from None
    version = result.get("resultFormat", 1) if isinstance(result, dict) else 1
    if not (isinstance(version, int) and not isinstance(version, bool) and 1 <= version):
        raise DataFileError(
            f"{path}: resultFormat must be a format number from 1 (got {version!r}); rerun its eval to write it again"
        )
    if version > RESULT_FORMAT:
        raise DataFileError(
            f"{path}: a result file of format {version}, newer than this code reads (up to "
            f"{RESULT_FORMAT}); update the harness"
        )
    from evals import schema

    if problem := schema.problem(schema.result_model(result), result):
        raise DataFileError(f"{path}: {problem}; rerun its eval to write it again")
    return result


def without_timing(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_timing(v) for k, v in value.items() if k not in TIMING_FIELDS}
    if isinstance(value, list):
        return [without_timing(v) for v in value]
    return value


def _token_totals(usages) -> dict[str, int]:
    totals = dict.fromkeys(TOKEN_KINDS, 0)
    for usage in usages:
        for kind in TOKEN_KINDS:
            totals[kind] += (usage or {}).get(kind, 0)
    return totals
