"""Offline rescoring of a published run from its run folder, with no model call.

Each eval's `score` runs again on the cached replies: a judged eval re-reads and re-votes the
cached verdicts, an eval that runs code runs it again in the sandbox its `resources` make from
the values of its own flags the result file recorded (`gradedWith`; the defaults without it).
`verify_published` is `evaluate --verify [NAME]`; `pytest --verify-published[=NAME]` runs the
same `rescore` and `judge` as one snapshot test per published run (plugins/verify.py);
`evals.evaluate.regrade` is `evaluate --regrade [NAME]`.

How a rescoring is judged against its file (`judge`), timing aside:
1. Today's rescoring is cut down to the file's own format (`results.in_format`: what later
   formats added is dropped), so a field added since never makes an older file differ.
2. Nothing else differs (the file's `graders` aside): `ok`.
3. A difference in a field that does not come from grading is `DIFF`: the file or the
   records changed. Such are the config, prices, token counts and cost, a row missing or
   added, and (format 2 on) a row's `records` digest, which binds it to what its cache
   records hold (each call's request and answer) as it was scored.
4. Every difference is in what graders write (status, correct, the eval's
   `Task.graded_fields`, the summary's scores, counts and intervals, publishable): `REGRADE`
   when some part that graded the file has another version today (`results.graders_recorded`:
   a format-1 file, which records none, was graded by version "1" of every part), else
   `DIFF`: same graders, same records, so the same scores, or the file was edited. A summary
   that differs while every row is the same is a regrade only under new statistics ("stats").
5. Every difference is in what graders write, under the very versions that graded the file:
   `UNVERSIONED` (naming the parts and their versions) when the file is as its run wrote it:
   its rows bound to their records (format 2 on, the `records` digests matched) and its
   summary the one its own rows give. Today's graders read the same records otherwise under
   the same version: a grading change slipped in without moving its part's version, a bug of
   the harness, not of the run or of whoever published it (tests/graders/ pins each part's
   readings to its version, so that the harness's own parts cannot). `evaluate --regrade`
   accepts today's reading, as for a REGRADE. Otherwise `DIFF`: a summary that is not its
   rows' is an edit, and so is a summary alone that differs (new statistics under the same
   version cannot be told from it; tests/graders/ pins the statistics too). A row edited
   along with every summary figure it changes cannot be told from a slipped grading change.
A format-2 file is bound to its records, so an edited record is always `DIFF`. A format-1
file has no digests: there only step 3's fields (the token counts of every call, above all)
bind it to its records, and an edited reply that changes graded fields alone cannot be told
from a regrade once a grader's version has moved on. `evaluate --regrade` then writes it in
today's format, bound to its records from then on. `ok` and `REGRADE` exit 0: a regrade is
not a broken file; the published scores stand until `evaluate --regrade` replaces them.
`UNVERSIONED` exits 1, as `DIFF` does: the published scores are not what the versions they
name read today, which a maintainer gating on verify must see (the fix is the harness's: move
the part's version, or accept today's reading with `evaluate --regrade`); its line says which."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evals import models_file
from evals.config import run_name
from evals.datasets import kept_folder
from evals.errors import EvalError, RescoreFailed, VerifyError
from evals.names import row_key
from evals.plan import identity_from_config, plan
from evals.providers import Completion, Provider, Request
from evals.results import (
    TokenPrices,
    graders_of,
    graders_recorded,
    in_format,
    read_result,
    result_format,
    result_of_run,
    summarize,
    without_timing,
)
from evals.run import RunSpec, build_run
from evals.scrub import printable
from evals.tasks import TASKS, Task, graded_with, recorded_values

SHOWN_FIELDS = 4  # differing field paths a DIFF line names before "(+N more)"
SHOWN_ITEMS = 5  # items a REGRADE line names before "(+N more)"
REGRADE = "REGRADE"
UNVERSIONED = "UNVERSIONED"  # the records intact, read otherwise by graders of the same versions
# Summary fields read from the records (their usage), not from grading.
RECORDED_SUMMARY = frozenset({"tokens", "judgeTokens", "batch", "cost"})
GRADED_ROW = frozenset({"status", "correct"})


class CachedOnly(Provider):
    """Stands in for a provider during verify: every answer must come from the cache."""

    def complete(self, request: Request, *, timeout: float) -> Completion:
        raise VerifyError(
            f"a {self.spec.provider}:{self.spec.model} call is not in the run folder; verify makes no model calls"
        )


def rescore(result_file: Path, *, run_root: Path) -> dict[str, Any]:
    """The result file the run folder reproduces today, in today's format, without timing fields."""
    return without_timing(
        _rescore(read_result(result_file), run_root=run_root, datasets=kept_beside(result_file))
    )


def kept_beside(result_file: Path) -> Path:
    """The copies of local dataset files (`evals.datasets.keep`) of the data folder that holds
    `result_file` (as `<data>/results/<eval>/<run>.json`): where publishing keeps them."""
    return kept_folder(result_file.resolve().parent.parent.parent)


def _rescore(
    published: dict[str, Any],
    *,
    run_root: Path,
    datasets: Path | None = None,
    dataset: str | None = None,
) -> dict[str, Any]:
    """`dataset`: the --dataset source the run was given, when its caller knows it (else the
    config names it again, a local file by its copy in `datasets`)."""
    config = published["config"]
    task = TASKS[config["eval"]]
    ident = identity_from_config(config, dataset, datasets=datasets)
    folder = run_root / task.name / run_name(config)
    if not folder.is_dir():
        raise VerifyError(
            f"the run folder {folder} is missing: verify rescores from it; restore it (or --run-dir=PATH)"
        )
    planned = plan(task, ident)
    spec = RunSpec(
        eval=task.name,
        config=planned.config,
        samples=planned.samples,
        candidate=ident.spec,
        judges=[(j.name, j.provider_spec()) for j in ident.judges],
        redacted=(),
        folder=folder,
        session=None,
        published=True,
    )
    values = recorded_values(
        task, published
    )  # the eval's own flags as the run set them (the defaults: none recorded)
    run = build_run(
        spec, lambda provider, role: CachedOnly(provider), resources=task.resources(values)
    )
    rows = [run.answer(sample) for sample in planned.samples]
    prices = TokenPrices(**published["prices"]) if published.get("prices") else None
    return result_of_run(
        task,
        planned.config.to_dict(),
        rows,
        prices=prices,
        timing={},
        graded_with=graded_with(task, values),
    )


def differences(published: dict[str, Any], rescored: dict[str, Any]) -> list[str]:
    """Every field that differs, as `path: published -> rescored`; result rows are named by id."""
    return [f"{'.'.join(path)}: {what}" for path, what in _differences(published, rescored, ())]


def differing_fields(published: dict[str, Any], rescored: dict[str, Any]) -> list[str]:
    """The paths of the fields that differ (`summary.correct`, `results.mc-002.answer`)."""
    return [".".join(path) for path, _ in _differences(published, rescored, ())]


def _differences(
    published: Any, rescored: Any, path: tuple[str, ...]
) -> list[tuple[tuple[str, ...], str]]:
    if isinstance(published, dict) and isinstance(rescored, dict):
        found = []
        for key in sorted(set(published) | set(rescored), key=str):
            where = (*path, str(key))
            if key in published and key in rescored:
                found += _differences(published[key], rescored[key], where)
            else:
                found.append((where, "only published" if key in published else "only rescored"))
        return found
    if (
        isinstance(published, list)
        and isinstance(rescored, list)
        and all(isinstance(r, dict) and "id" in r for r in published + rescored)
    ):
        return _differences(
            {row_key(r): r for r in published}, {row_key(r): r for r in rescored}, path
        )
    return (
        []
        if published == rescored
        else [(path, f"published {published!r} -> rescored {rescored!r}")]
    )


@dataclass(frozen=True)
class Verdict:
    """How a rescoring compares with its file: `status` ok, DIFF, REGRADE or UNVERSIONED (see the module's
    rule), the differences (`path: published -> rescored`), and for a regrade the parts whose
    version changed and the items whose score changes."""

    status: str
    differences: list[str] = field(default_factory=list)
    fields: list[str] = field(default_factory=list)
    graders: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)
    items: list[str] = field(default_factory=list)  # the rows whose `correct` changes
    regraded_rows: int = 0  # the rows with any graded field changed
    accuracy: tuple[float, float] | None = None

    @property
    def detail(self) -> str:
        if self.status == "ok":
            return ""
        if self.status not in (REGRADE, UNVERSIONED):
            more = (
                f" (+{len(self.fields) - SHOWN_FIELDS} more)"
                if len(self.fields) > SHOWN_FIELDS
                else ""
            )
            return ", ".join(self.fields[:SHOWN_FIELDS]) + more
        return regrade_detail(
            self.graders, self.items, self.regraded_rows, self.accuracy, self.status == UNVERSIONED
        )


def regrade_detail(
    graders: dict[str, tuple[str | None, str | None]],
    items: list[str],
    rows: int,
    accuracy: tuple[float, float] | None,
    unversioned: bool = False,
) -> str:
    """`today's graders differ (letters 1 -> 2): 3 items score differently (mc-001, mc-006,
    mc-011); accuracy 80.00% -> 65.00%`; `unversioned`: the same versions read otherwise."""
    if unversioned:
        parts = ", ".join(f"{part} {old}" for part, (old, _) in sorted(graders.items()))
    else:
        parts = ", ".join(
            f"{part} {old or 'none'} -> {new or 'none'}"
            for part, (old, new) in sorted(graders.items())
        )
    more = f" (+{len(items) - SHOWN_ITEMS} more)" if len(items) > SHOWN_ITEMS else ""
    scored = (
        f"{len(items)} item{'s' * (len(items) != 1)} score{'s' * (len(items) == 1)} differently "
        f"({', '.join(items[:SHOWN_ITEMS])}{more})"
        if items
        else "no item's score changes"
    )
    others = rows - len(items)
    graded = f", {others}{' more' * bool(items)} graded differently" if others > 0 else ""
    change = (
        f"; accuracy {accuracy[0]:.2%} -> {accuracy[1]:.2%}"
        if accuracy and accuracy[0] != accuracy[1]
        else ""
    )
    if unversioned:
        return (
            f"today's graders read the intact records otherwise under the same versions "
            f"({parts or 'none declared'}): {scored}{graded}{change}; a grading change that did "
            "not move its part's version (a harness bug, not the run's): `evaluate --regrade` "
            "accepts today's reading"
        )
    return f"today's graders differ ({parts}): {scored}{graded}{change}"


def judge(task: Task, published: dict[str, Any], rescored: dict[str, Any]) -> Verdict:
    """`published` (a result file) against `rescored` (today's rescoring of its run folder, in
    today's format), both without timing: the rule of the module's docstring."""
    shaped = in_format(rescored, result_format(published))
    found = [
        (path, what) for path, what in _differences(published, shaped, ()) if path[0] != "graders"
    ]
    if not found:
        return Verdict("ok")
    # What grading does not write first: the cause a DIFF line names (an edited record's
    # digest), before the graded fields that follow from it.
    found.sort(key=lambda difference: _graded(task, difference[0]))
    lines = [f"{'.'.join(path)}: {what}" for path, what in found]
    fields = [".".join(path) for path, _ in found]
    before, today = graders_recorded(task, published), graders_of(task)
    changed = {
        part: (before.get(part), today.get(part))
        for part in sorted(set(before) | set(today))
        if before.get(part) != today.get(part)
    }
    changed_rows = sorted({path[1] for path, _ in found if path[0] == "results"})
    if not all(_graded(task, path) for path, _ in found):
        return Verdict("DIFF", lines, fields)
    if not changed:
        if not _unversioned(task, published, changed_rows):
            return Verdict("DIFF", lines, fields)
        # Today's graders, under the versions that graded the file, read its intact records otherwise.
        changed = {part: (version, version) for part, version in sorted(before.items())}
        status = UNVERSIONED
    elif changed_rows or "stats" in changed:
        status = REGRADE
    else:  # without a row that scores differently, only new statistics can change the summary
        return Verdict("DIFF", lines, fields)
    rows = {row_key(r): r for r in published["results"]}
    redone = {row_key(r): r for r in shaped["results"]}
    items = [key for key in changed_rows if rows[key]["correct"] != redone[key]["correct"]]
    accuracy = (overall(published)["accuracy"], overall(shaped)["accuracy"])
    return Verdict(status, lines, fields, changed, items, len(changed_rows), accuracy)


def _unversioned(task: Task, published: dict[str, Any], changed_rows: list[str]) -> bool:
    """Whether a file whose graded fields alone differ from today's reading under the same
    versions was left as its run wrote it: its rows are bound to their records (format 2 on:
    the `records` digests matched, or the difference would not be graded fields alone), and
    its summary is the one its own rows give, so neither its rows nor its scores were edited
    apart. Then the graders moved without their version: a harness bug, not the file's."""
    if result_format(published) < 2 or not all("records" in r for r in published["results"]):
        return False
    if not changed_rows:  # a summary edited cannot be told from statistics changed: an edit
        return False
    prices = TokenPrices(**published["prices"]) if published.get("prices") else None
    own = in_format(
        {**published, "summary": summarize(task, published["results"], prices)},
        result_format(published),
    )
    return not [
        p
        for p, _ in _differences(published["summary"], own["summary"], ("summary",))
        if _graded(task, p)
    ]


def _graded(task: Task, path: tuple[str, ...]) -> bool:
    """Whether the field at `path` is one the graders write (and may change in a regrade)."""
    top = path[0]
    if top == "results":  # a row's field; a row of its own (len 2) appearing or going is no grading
        return len(path) > 2 and path[2] in GRADED_ROW | set(task.graded_fields)
    if top == "summary":
        return not RECORDED_SUMMARY & set(path[1:3])
    return top in ("publishable", "notPublishable")


def overall(result: dict[str, Any]) -> dict[str, Any]:
    return result["summary"].get("overall", result["summary"])


# -- the published runs ------------------------------------------------------------------------


@dataclass(frozen=True)
class PublishedRun:
    """One result file a models.json entry names."""

    model: str
    key: str  # its resultFiles key (`Task.key`)
    path: Path

    def __str__(self) -> str:
        return f"{self.model} [{self.key}] {self.path.name}"

    @property
    def id(self) -> str:
        """Its pytest id, which `-k` can select: spaces and punctuation in the name become `_`."""
        return re.sub(r"[^A-Za-z0-9_.+-]", "_", f"{self.model}-{self.key}")

    def result(self) -> dict[str, Any]:
        return without_timing(read_result(self.path))


def published_runs(
    models_path: Path, results_dir: Path, name: str | None = None
) -> list[PublishedRun]:
    """Every result file of every published model in models.json, or only of the model `name`
    (an unknown or unpublished name is a VerifyError listing the published names). A
    malformed models.json is a DataFileError."""
    published = [
        m for m in models_file.load_models(models_path, results=results_dir) if m.get("resultFiles")
    ]
    if name is not None:
        chosen = [m for m in published if m["name"] == name]
        if not chosen:
            names = ", ".join(repr(m["name"]) for m in published) or "none yet"
            raise VerifyError(f"{name!r} is not published in {models_path}; published: {names}")
        published = chosen
    return [
        PublishedRun(m["name"], key, models_file.result_path(m, key, results_dir))
        for m in published
        for key in models_file.RESULT_KEYS
    ]


@dataclass(frozen=True)
class CheckedRun:
    run: PublishedRun
    # "ok", "DIFF" (rescored, and some fields differ), "FAIL" (cannot be rescored), "REGRADE"
    # or "UNVERSIONED"
    status: str
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.status} {self.run}" + (f": {self.detail}" if self.detail else "")


def check(run: PublishedRun, *, run_root: Path) -> CheckedRun:
    """Rescore one published run and compare it with its file."""
    return CheckedRun(run, *compare(run.path, run_root=run_root))


def compare(path: Path, *, run_root: Path, dataset: str | None = None) -> tuple[str, str]:
    """("ok", ""), ("DIFF", the differing fields), ("REGRADE" or "UNVERSIONED", the graders and items) or
    ("FAIL", why it cannot be rescored): the result file at `path` against what its run
    folder reproduces now, offline. `dataset`: the --dataset source the run was given, when
    the caller knows it (a run's own plan)."""
    try:
        verdict, _ = verdict_of(path, run_root=run_root, dataset=dataset)
    except RescoreFailed as failed:
        return "FAIL", failed.detail
    return verdict.status, verdict.detail


def verdict_of(
    path: Path, *, run_root: Path, dataset: str | None = None
) -> tuple[Verdict, dict[str, Any]]:
    """The verdict on the result file at `path`, and today's rescoring (in today's format,
    with empty timing); RescoreFailed (one line) when it cannot be rescored. A local dataset
    file is `dataset`, or the copy the data folder of `path` keeps (`kept_beside`)."""
    try:
        published = read_result(path)
        rescored = _rescore(
            published, run_root=run_root, datasets=kept_beside(path), dataset=dataset
        )
        return judge(
            TASKS[published["config"]["eval"]], without_timing(published), without_timing(rescored)
        ), rescored
    except EvalError as error:
        raise RescoreFailed(" ".join(str(error).split())) from None
    except (
        Exception
    ) as error:  # a hand-edited config this code cannot read: this run fails, the others still run
        raise RescoreFailed(" ".join(f"{type(error).__name__}: {error}".split())) from None


def verify_published(
    models_path: Path, results_dir: Path, run_root: Path, name: str | None = None
) -> int:
    """`evaluate --verify [NAME]`: one line per published run (ok, REGRADE, UNVERSIONED, DIFF or
    FAIL) as it is checked, then the tally. The exit code: 0 all reproduce or only regrade (or
    nothing is published), 1 some do not (DIFF, FAIL) or are unversioned, 2 models.json or NAME
    is wrong, 130 interrupted (the lines so far are printed)."""
    runs: list[PublishedRun] = []
    checked = failed = regrades = unversioned = 0
    try:
        runs = published_runs(models_path, results_dir, name)
        if not runs:
            print(f"nothing published in {models_path}: nothing to verify")
            return 0
        for run in runs:
            outcome = check(run, run_root=run_root)
            print(printable(str(outcome)), flush=True)
            checked += 1
            failed += outcome.status in ("DIFF", "FAIL")
            regrades += outcome.status == REGRADE
            unversioned += outcome.status == UNVERSIONED
        print(tally(len(runs), failed, regrades, name, unversioned))
    except EvalError as error:
        print(printable(f"error: {error}"), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"interrupted: {checked} of {len(runs)} runs checked", file=sys.stderr)
        return 130
    return 1 if failed or unversioned else 0


def tally(
    runs: int, failed: int, regrades: int, name: str | None = None, unversioned: int = 0
) -> str:
    """The last line of a verify: what reproduces, and the regrades there are."""
    line = f"{failed} of {runs} runs do not reproduce" if failed else f"all {runs} runs reproduce"
    if not regrades and not unversioned:
        return line
    if not failed:
        line = f"{runs - regrades - unversioned} of {runs} runs reproduce"
    command = "evaluate --regrade" + (f" {_quoted(name)}" if name else "")
    if regrades:
        line += (
            f"; {regrades} regrade{'s' * (regrades != 1)} available (records intact, scored "
            "differently by today's graders): "
            f"`{command}` rescores {'them' if regrades != 1 else 'it'}"
        )
    if unversioned:
        line += (
            f"; {unversioned} unversioned (records intact, read otherwise under the same grader "
            f"versions: a harness bug; `{command}` accepts today's reading)"
        )
    return line


def _quoted(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z0-9_.+-]+", name) else repr(name)
