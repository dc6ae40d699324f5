"""The results collector: gathers every item's row from its test report and, at the end of
the session, writes one result file per eval and prints the summary.

It runs where the reports arrive: the only process, or the xdist controller. Rows travel in
the reports themselves, never through shared files."""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from evals.atomic import write_fix
from evals.budget import planned_estimate
from evals.cache import RunCache
from evals.command_line import how_to_run
from evals.config import results_path, run_dir
from evals.errors import EvalError
from evals.identity import to_flags
from evals.names import row_key
from evals.publish import Stamp, add_command, finished_results, note_written, publish, stamp
from evals.results import read_result, result_of_run, without_timing, write_result
from evals.run import forced_in
from evals.scrub import escape_surrogates, printable
from evals.tasks import TASKS, Task, graded_with
from evals.words import either
from evals.verify import REGRADE, judge

from .items import ROW_PROPERTY, WAITING_PROPERTY, eval_flags, explanation, loaded, published
from .options import settings
from .state import is_worker, session_of

WRONG_SHOWN = 20  # wrong answers listed at the end of a run, one line each


def configure(config: pytest.Config) -> None:
    """Step 4 of `plugins.session`'s configure."""
    if session_of(config).settings is not None and not is_worker(config):
        config.pluginmanager.register(ResultsCollector(config), "results-collector")


class ResultsCollector:
    def __init__(self, config: pytest.Config):
        self.config = config
        self.rows: dict[str, dict[str, dict[str, Any]]] = {}
        # eval -> the batch each waiting item waits in (None: not yet submitted), and since when
        self.waiting: dict[str, list[tuple[str | None, str | None]]] = {}
        self.started = time.monotonic()
        self.started_at = time.time()  # a candidate record older than this was read back
        self.items = 0  # the items this session collected, for the line an interrupt ends with
        self.lines: list[str] = []
        self.reproduced = True
        self.written: dict[
            Path, Stamp | None
        ] = {}  # the result files this session wrote, as it wrote them
        self.unwritten = False
        self.wrong: list[
            tuple[str, str, dict[str, Any]]
        ] = []  # (node id, eval, row) of the first wrong answers
        self.wrong_count = 0

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.items = len(session.items)

    @pytest.hookimpl(trylast=True)
    def pytest_keyboard_interrupt(self, excinfo) -> None:
        """Ctrl-C ends the run in one line, what was kept and how to go on, in place of
        pytest's banner and the line of `threading.py` it was waiting in (--full-trace keeps
        pytest's)."""
        if type(excinfo.value) is not KeyboardInterrupt:
            return  # a run that stopped itself (a rejected key, a dead endpoint, a worker's usage error): its own line
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is None or self.config.option.fulltrace:
            return
        answered = sum(len(rows) for rows in self.rows.values())
        of = (
            f" of {self.items}" if self.items and self.items >= answered else ""
        )  # an xdist controller collects none
        line = (
            f"interrupted: {answered}{of} items answered and kept in their run folders; the "
            "same command resumes, asking only the rest"
        )
        if hasattr(reporter, "_keyboardinterrupt_memo"):  # what pytest prints at the end
            reporter._keyboardinterrupt_memo = _Said(line)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "teardown":  # every phase's report carries the row: read it once
            return
        for name, value in report.user_properties:
            if name == ROW_PROPERTY and isinstance(value, str):  # ours are JSON text
                data = json.loads(value)
                row = data["row"]
                self.rows.setdefault(data["eval"], {})[row_key(row)] = row
                if not row["correct"] and row["status"] not in ("apiError", "datasetError"):
                    self.wrong_count += 1
                    if len(self.wrong) < WRONG_SHOWN:
                        self.wrong.append((report.nodeid, data["eval"], row))
            elif name == WAITING_PROPERTY and isinstance(value, str):
                data = json.loads(value)
                self.waiting.setdefault(data["eval"], []).append((data["batch"], data.get("since")))

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        s = settings(self.config)
        for name, item in loaded(self.config).items():
            self.lines.extend(self._finish(name, item, s))

        # An API-bound run gains nothing from workers (bench/workers.py), yet -n is a habit of pytest users.
        local = (
            either([task.title or task.name for task in TASKS.values() if task.grades_locally])
            or "an eval that grades locally"
        )
        why = (
            "their items wait on the model, --concurrency calls at a time whatever -n, and each "
            "worker would start pytest again; "
            f"-n helps {local}, whose grading runs in each worker"
        )
        if self.config.getoption("dry_run", False):
            pass  # nothing ran: no word on how it would have
        elif (skipped := session_of(self.config).workers_skipped) is not None:
            self.lines.append(f"-n {skipped}: these evals ran in one process ({why})")
        elif (
            (workers := self.config.getoption("numprocesses", None))
            and self.rows
            and not any(TASKS[name].grades_locally for name in self.rows)
        ):
            self.lines.append(
                f"-n {workers}: xdist does not speed up these evals ({why}): run them without -n"
            )
        if s.publish:
            self.lines.extend(f"publish: {line}" for line in self._publish(s))
        if not self.reproduced or self.unwritten:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def _finish(self, name: str, item, s) -> list[str]:
        """The lines of eval `name` at the session's end: its items still waiting in batches; a
        partial run (no result file); or its result file, written (a published one is never
        rewritten: `_reproduce`) and described. Nothing when none of its items ran."""
        rows = self.rows.get(name)
        label = f"{name:<16}"
        if waiting := self.waiting.get(name):
            batches = [
                f"{printable(batch)} since {_when(since)}"
                if batch
                else f"a submission prepared {_when(since)}, not yet known to the API"
                for batch, since in sorted(set(waiting), key=lambda w: (w[0] or "", w[1] or ""))
            ]
            return [
                f"{label} {len(waiting)} items wait in batches "
                f"({'; '.join(batches[:3])}{'; ...' * (len(batches) > 3)}): "
                "no result file yet; run the same command again to collect them (evaluate NAME "
                "--status shows their progress)"
            ]
        if not rows:
            return []
        lines = []
        if kept := forced_in(run_dir(s.run_root, item.config), s.session):
            lines.append(f"{label} --force: the previous run folder is kept as {kept}")
        expected = {escape_surrogates(sample.id) for sample in item.samples}  # as rows carry them
        if read_back := _read_back(run_dir(s.run_root, item.config), self.started_at, rows):
            lines.append(
                f"{label} {read_back} of {len(rows)} answers read back from the run folder, "
                f"{max(0, len(rows) - read_back)} asked now"
            )
        if set(rows) != expected:
            return [
                *lines,
                f"{label} partial run: {len(rows)} of {len(expected)} items answered, no result file written "
                "(answers are cached; run every item of the eval to finish it)",
            ]
        timing = {
            "wallSeconds": round(time.monotonic() - self.started, 3),
            "finishedAt": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        }
        result = result_of_run(
            TASKS[name],
            item.config.to_dict(),
            list(rows.values()),
            prices=s.prices,
            timing=timing,
            graded_with=graded_with(TASKS[name], eval_flags(self.config, name)),
        )
        meter = self.config.pluginmanager.get_plugin("energy-meter")
        if meter and (
            measured := meter.energy_of(run_dir(s.run_root, item.config), TASKS[name].bands)
        ):
            result["energy"] = measured
        path = results_path(s.results_root, item.config)
        if published(self.config, name):
            return [*lines, *self._reproduce(label, path, result, TASKS[name])]
        try:
            write_result(path, result)
            self.written[path] = stamp(path)
            note_written(path, self.written[path])  # for `evaluate`, which started this pytest
        except OSError as error:
            self.unwritten = True
            return [
                *lines,
                f"{label} cannot write the result file {path} ({error.strerror or error}): every answer is "
                f"cached in its run folder; {write_fix(error)}, which asks nothing again",
            ]
        estimated = planned_estimate(item).cost(s.prices) if s.prices else None
        return [*lines, *_describe(label, result, path, estimated)]

    def _reproduce(self, label: str, path: Path, result: dict[str, Any], task: Task) -> list[str]:
        """A published result file is never rewritten: the run either reproduces it (in the
        file's own format), or only today's graders score its records differently (a regrade,
        which `evaluate --regrade` applies), or the session fails, naming what differs."""
        try:
            verdict = judge(task, without_timing(read_result(path)), without_timing(result))
            diffs = verdict.differences
        except EvalError as error:
            verdict, diffs = None, [str(error)]
        if verdict and verdict.status == "ok":
            return [f"{label} reproduces the published result file {path} (left as it is)"]
        if verdict and verdict.status == REGRADE:
            return [
                f"{label} regrade available: the records of the published result file {path} (left "
                "as it is) are intact, "
                f"{verdict.detail}; `evaluate --regrade` rescores it"
            ]
        self.reproduced = False
        shown = "; ".join(diffs[:5]) + (f"; and {len(diffs) - 5} more" if len(diffs) > 5 else "")
        return [
            f"{label} DIFF: differs from the published result file {path}, which is left as it is: {shown}"
        ]

    def _publish(self, s) -> list[str]:
        """The results of this identity's board evals that their run folders reproduce:
        this session's, written just now from the records it read (not rescored again), or
        earlier ones, rescored offline (an eval off the board is never published)."""
        from evals.site import rebuild_site  # only when publishing: the site brings pydantic

        files = {
            TASKS[name].key: results_path(s.results_root, item.config)
            for name, item in loaded(self.config).items()
            if TASKS[name].on_board
        }
        datasets = {TASKS[name].key: source for name, source in s.identity.datasets}
        finished, notes = finished_results(
            files, run_root=s.run_root, written=self.written, datasets=datasets
        )  # this session's not rescored
        # The flags a resume needs are those evaluate must be given to send the run's requests alike.
        given = {
            flag: self.config.getoption(flag.dest)
            for flag in how_to_run()
            if flag.resume and flag.pytest
        }
        how = [
            part
            for flag, value in given.items()
            if value != flag.default
            for part in flag.forwarded(value)
        ]
        hint = add_command(s.publish, [*to_flags(s.identity), *how], s.results_root.parent)
        try:
            return notes + publish(
                s.publish,
                finished,
                allow_errors=s.allow_errors,
                results_dir=s.results_root,
                models_path=s.results_root.parent / "models.json",
                rebuild=rebuild_site(s.results_root.parent),
                add_hint=hint,
                datasets=datasets,
            )
        except EvalError as error:
            return [*notes, f"not published: {error}"]

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_terminal_summary(self, terminalreporter):
        """Wrong answers are the collector's to report (`_wrong_answers`), out of pytest's
        FAILURES section and short summary while they are written: those would repeat each
        one, and the FAILURES section looks up each failed item's teardown among every
        report, quadratic in a run's size (seconds at 2,000 items). The final counts still
        include them."""
        reports = terminalreporter.stats.get("failed")
        if reports:
            terminalreporter.stats["failed"] = [
                r for r in reports if not getattr(r, "wrong_answer", False)
            ]
        try:
            return (yield)
        finally:
            if reports:
                terminalreporter.stats["failed"] = reports
            self._write_summary(terminalreporter)  # last, just above pytest's counts

    def _write_summary(self, terminalreporter) -> None:
        if self.wrong:
            terminalreporter.section("wrong answers")
            for line in self._wrong_answers():
                terminalreporter.write_line(line)
        if self.lines:
            terminalreporter.section("eval results")
            for line in self.lines:
                terminalreporter.write_line(
                    printable(line)
                )  # verify's differences and publish's notes quote rows

    def _wrong_answers(self) -> list[str]:
        """One line for each of the first wrong answers; every row is in the result files."""
        lines = [f"WRONG {nodeid} - {explanation(name, row)}" for nodeid, name, row in self.wrong]
        if self.wrong_count > len(self.wrong):
            lines.append(
                f"... and {self.wrong_count - len(self.wrong)} more: every answer is a row of its eval's result file"
            )
        return lines


def _describe(
    label: str, result: dict[str, Any], path: Path, estimated: float | None = None
) -> list[str]:
    """The eval's lines of results; its cost beside what the dry run's estimate (`evals.budget`)
    says of all its items, when prices are given."""
    overall = result["summary"].get("overall", result["summary"])
    low, high = overall["ci95"]
    parts = [
        f"accuracy {overall['accuracy']:.2%} ({overall['correct']}/{overall['n']}, 95% CI {low:.1%}-{high:.1%})"
    ]
    if "epochs" in overall:
        parts.append(f"{overall['epochs']} epochs of {overall['questions']} questions")
    for k, value in overall.get("passAt", {}).items():
        parts.append(f"pass@{k} {value:.2%}")
    parts.append(f"apiErrors {overall['apiErrors']}")
    for key in ("unparseable", "judgeUnparseable"):
        if key in overall:
            parts.append(f"{key} {overall[key]}")
    if overall.get("datasetErrors"):
        parts.append(f"datasetErrors {overall['datasetErrors']} (not scored: fix the dataset)")
    if overall.get("judgeAgreement") is not None and len(result["config"].get("judges", ())) > 1:
        # one judge always agrees with itself: no figure to print
        parts.append(f"judges agreed {overall['judgeAgreement']:.0%}")
    tokens = overall["tokens"]
    parts.append(f"tokens in {tokens['input']:,} out {tokens['output']:,}")
    if batch := overall.get("batch"):
        parts.append(
            f"{batch['calls']} answered by a Batch API (at {batch['priceFactor']:.0%} of the price)"
        )
    if "cost" in overall:
        parts.append(
            f"cost ${overall['cost']:.4f}"
            + (f" (estimated ${estimated:.4f})" if estimated is not None else "")
        )
    if measured := result.get("energy"):
        parts.append(f"energy {measured['kWh']:.6f} kWh ({measured['source']})")
    lines = [f"{label} " + "  ".join(parts), f"{'':<16} result file: {path}"]
    if result["publishable"]:
        lines.append(f"{'':<16} publishable")
    else:
        lines.extend(f"{'':<16} not publishable: {reason}" for reason in result["notPublishable"])
    return lines


def _read_back(folder: Path, before: float, answered: Iterable[str]) -> int:
    """Of the items `answered` (their row keys, which are the items their answers are cached
    under), those whose answer the run folder held from before this session: read back, not
    asked. Not the folder's every record: a run of some items (`-k`) reads back no more."""
    cache = RunCache(folder, None)
    return sum(
        1
        for key in answered
        if (written := cache.written_at(key, "candidate")) is not None and written < before
    )


class _Said:
    """A line in the shape of the interrupt pytest reports (`reprcrash.message`): printed as
    its banner, with no traceback location under it (the message names no KeyboardInterrupt)."""

    def __init__(self, message: str):
        self.reprcrash = self
        self.message = message


def _when(iso: str | None) -> str:
    """A ledger's time (ISO 8601, UTC) as a line shows it: `2026-05-01 14:03:09 UTC`."""
    try:
        return dt.datetime.fromisoformat(iso or "").strftime("%Y-%m-%d %H:%M:%S UTC")
    except ValueError:
        return "at a time not recorded"
