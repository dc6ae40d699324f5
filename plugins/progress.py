"""The progress line of a run and its --max-cost cap (`evals.budget.Progress`), where the items'
reports arrive: the only process, or the xdist controller, whose workers' rows ride in their
reports as the results collector's do (`plugins.collector`).

On a terminal the line is redrawn in place under pytest's own progress, at most ten times a
second; in a log (a pipe, a file, `evaluate`'s children) it is a line of its own at each tenth of
the run, every EVERY seconds between, and at the end. It holds counts, times and dollars only,
never a row's text. Once the spend reaches --max-cost no new item is started: what is answered
is kept, one line says so, and the command exits CAPPED."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from evals.budget import CAPPED, Progress, planned_estimate, spent_before
from evals.cache import RunCache
from evals.config import run_dir
from evals.plan import Planned

from .collector import _Said
from .items import ROW_PROPERTY, loaded, published, selected_samples
from .options import settings
from .state import is_worker, session_of

EVERY = 10.0  # seconds between a log's lines, besides each tenth of the run
REDRAW = 0.1  # seconds between a terminal's redraws


def configure(config: pytest.Config) -> None:
    """Step 4 of `plugins.session`'s configure, beside the results collector."""
    s = session_of(config).settings
    if s is not None and not is_worker(config):
        config.pluginmanager.register(ProgressLine(config, s.spend_prices), "progress-line")


class ProgressLine:
    def __init__(self, config: pytest.Config, prices):
        self.config = config
        self.cap: float | None = config.getoption("max_cost", None)
        self.before = spent_before()  # what `evaluate`'s earlier evals spent, counted by the cap
        self.progress = Progress(0, prices)
        self.session: pytest.Session | None = None
        self.stopped: str | None = None  # the cap's line, once reached
        self.drawn_at = 0.0
        self.live = False  # a line is drawn under the cursor (a terminal)
        self.shown = 0  # the items done when the line was last shown
        self.dry_run: list[str] = []  # --dry-run's lines

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.session = session

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self._started(len(session.items))

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        if not self.progress.total:  # every worker collects the same items
            self._started(len(ids))

    @pytest.hookimpl(tryfirst=True)  # before the runs are built and asked (`plugins.items`)
    def pytest_collection_modifyitems(
        self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        """--dry-run: each selected eval's requests and budget, for the items not answered in
        its run folder; then no item runs and nothing is asked."""
        if not config.getoption("dry_run", False):
            return
        run_root = settings(config).run_root
        for name, samples in selected_samples(items).items():
            planned = loaded(config)[name]
            if published(config, name):
                self.dry_run.append(f"{name:<16} requests none (published: reproduced offline)")
                continue
            cache = RunCache(run_dir(run_root, planned.config), session=None)
            estimated = planned_estimate(
                Planned(samples, planned.config),
                lambda sample: "response" in (cache.read(sample.id, "candidate") or {}),
            )
            self.dry_run += [
                f"{name:<16} requests {estimated.requests_line()}",
                f"{'':<16} budget   {estimated.line(self.progress.prices)}",
            ]
        config.hook.pytest_deselected(items=list(items))
        items.clear()

    @pytest.hookimpl(trylast=True)  # under pytest's "collected N items"
    def pytest_report_collectionfinish(self) -> list[str]:
        return ["--dry-run: nothing asked", *self.dry_run] if self.dry_run else []

    def _started(self, total: int) -> None:
        self.progress.begin(total)  # the rate is the run's, not collection's

    @pytest.hookimpl(trylast=True)  # after pytest's own progress has been written
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "teardown":  # every phase's report carries the row: read it once
            return
        rows = [
            json.loads(value)["row"]
            for name, value in report.user_properties
            if name == ROW_PROPERTY and isinstance(value, str)
        ]
        for row in rows:
            self.progress.add(row)
        if not rows:
            return
        self._show()
        spent = self.progress.spent
        if spent is not None and self.cap is not None and not self.stopped:
            if (spent := spent + self.before) >= self.cap:
                self._stop(spent)

    def _show(self) -> None:
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is None:
            return
        if not reporter.isatty:
            # The last item's line waits for the session's end (`pytest_sessionfinish`): here
            # it would come before pytest's own `[100%]`, which would go on a line of its own.
            if self.progress.done < self.progress.total and self.progress.due(EVERY):
                self._line(reporter)
                self.shown = self.progress.done
            return
        if time.monotonic() - self.drawn_at < REDRAW and self.progress.done < self.progress.total:
            return
        self.drawn_at = time.monotonic()
        tw = reporter._tw
        text = self.progress.line()[: max(10, tw.fullwidth - 1)]
        # Below pytest's line, then back to where pytest writes next: its line's rest and the
        # row below cleared first, what pytest wrote over the last drawing gone.
        self._raw(tw, f"\x1b[K\n\x1b[K{text}\x1b[1A")
        self.live = True
        self.shown = self.progress.done

    def _line(self, reporter) -> None:
        """The line on a line of its own: pytest's dots go on below it."""
        tw = reporter._tw
        if tw.width_of_current_line:  # after pytest's dots: they go on below, without the file name
            tw.write("\n")
        tw.line(self.progress.line())

    @staticmethod
    def _raw(tw, text: str) -> None:
        """`text` and the cursor back at pytest's column, past its writer's count of the line."""
        column = tw.width_of_current_line
        tw._file.write(text + "\r" + (f"\x1b[{column}C" if column else ""))
        tw._file.flush()

    def _stop(self, spent: float) -> None:
        """No new item once the cap is reached: pytest ends after the items running now (with
        xdist, after those the workers were handed already)."""
        self.stopped = f"stopped at the --max-cost cap of ${self.cap:g}"
        dsession = self.config.pluginmanager.get_plugin("dsession")  # xdist's controller
        if dsession is not None:
            dsession.shouldstop = self.stopped
        elif self.session is not None:
            self.session.shouldstop = self.stopped
            # Nothing more asked ahead either: what is in flight is kept, as at Ctrl-C.
            if (asker := session_of(self.config).asker) is not None:
                asker.stop()

    @pytest.hookimpl(trylast=True)
    def pytest_keyboard_interrupt(self, excinfo) -> None:
        """The cap's one line, in place of pytest's (or xdist's) `Interrupted:` banner."""
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if self.stopped and reporter is not None and hasattr(reporter, "_keyboardinterrupt_memo"):
            reporter._keyboardinterrupt_memo = _Said(self._stopped_line())

    def _stopped_line(self) -> str:
        """What the run spent and kept once it stopped (every item running then has ended)."""
        p = self.progress
        of = f" of {p.total:,}" if p.total else ""
        return (
            f"stopped at ${(p.spent or 0) + self.before:,.4f} of ${self.cap:g} cap: {p.done:,}{of} "
            "answered and kept; raise --max-cost and the same command resumes"
        )

    @pytest.hookimpl(trylast=True)  # the last word on the exit status
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None and self.live:
            self._raw(reporter._tw, "\x1b[K\n\x1b[K\x1b[1A")  # the drawn line gone
        if reporter is not None and (self.live or self.shown != self.progress.done):
            self._line(reporter)  # where the run ended, kept in the log
        if self.stopped:
            session.exitstatus = CAPPED
        if self.dry_run and session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
            session.exitstatus = pytest.ExitCode.OK  # none was meant to run
