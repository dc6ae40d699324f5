"""--verify-published[=NAME]: every published result file is a snapshot test.

One item per result file named in data/models.json (or only model NAME's), with an id `-k`
can select (`MODEL-KEY`, as `Student_1-` and the eval's resultFiles key). The item rescores the run offline from its run
folder and compares it with the published file through a syrupy extension whose snapshot
*is* that file, so a difference shows field by field. Published files never change: the
snapshot-update flags are refused, and the extension refuses to write or delete.

The rescoring is compared in the file's own format, and judged by `evals.verify.judge`: a run
whose intact records today's graders score differently is no failure but a regrade: its
item passes with the status REGRADE (in pytest's tally too), and a line at the end names
the graders and the items."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import pytest
from syrupy.data import SnapshotCollections
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from evals.errors import EvalError, RescoreFailed
from evals.results import in_format, read_result, result_format, without_timing
from evals.scrub import printable
from evals.verify import REGRADE, UNVERSIONED, PublishedRun, published_runs, verdict_of

from .options import ROOT, results_root, run_root, verified_name, verifying
from .state import is_worker, session_of

# nodeid -> the published result file that is its snapshot
_SNAPSHOT_FILES: dict[str, Path] = {}
REGRADE_PROPERTY = "regrade"  # a user property: the item's run is a regrade, and how
SNAPSHOT_WRITERS = {
    "update_snapshots": "--snapshot-update",
    "update_new_snapshots_only": "--snapshot-update-new-only",
}
IMMUTABLE = (
    "published result files never change; a different result is a new run, published with "
    "`uv run evaluate NAME`"
)


def configure(config: pytest.Config) -> None:
    """Step 2 of `plugins.session`'s configure. In verify mode: refuse the snapshot writers, read
    models.json (a bad file or an
    unknown NAME is one line, before collection), and on the controller report the cases
    with no item to run."""
    if not verifying(config):
        if session_of(config).settings is not None:
            _without_snapshots(config)
        return
    for dest, flag in SNAPSHOT_WRITERS.items():
        if config.getoption(dest, default=False):
            raise pytest.UsageError(f"{flag} is refused with --verify-published: {IMMUTABLE}")
    try:
        session_of(config).published_runs = published_runs(
            _models_path(config), results_root(config), verified_name(config)
        )
    except EvalError as error:
        raise pytest.UsageError(printable(str(error))) from None
    if not is_worker(config):
        config.pluginmanager.register(NothingToVerify(config), "verify-nothing-to-verify")
        config.pluginmanager.register(Regrades(), "verify-regrades")


def _without_snapshots(config: pytest.Config) -> None:
    """An eval run compares no snapshot: syrupy's report ("snapshot report summary") and its
    xdist warning ("received 0 of 2 worker snapshot reports") would be noise at its end. Its
    plugin leaves before its own configure runs (this one runs first), so none of its hooks do."""
    for name, plugin in config.pluginmanager.list_name_plugin():
        if name == "syrupy" or getattr(type(plugin), "__module__", "").startswith("syrupy"):
            config.pluginmanager.unregister(plugin)


def _models_path(config: pytest.Config) -> Path:
    return results_root(config).parent / "models.json"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "published_run" not in metafunc.fixturenames:
        return
    runs = session_of(metafunc.config).published_runs
    if runs:
        params = [pytest.param(r, id=r.id) for r in runs]
    else:
        params = [
            pytest.param(
                None,
                marks=pytest.mark.skip(
                    reason=f"nothing published in {_models_path(metafunc.config)}"
                ),
                id="nothing-published",
            )
        ]
    metafunc.parametrize("published_run", params)


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: Any) -> list | None:
    """In verify mode only the verify items are made, otherwise only the eval items: the other
    mode's test function makes none. (Deselected, they left "collected 43 items / 3
    deselected" for a user to wonder about.)"""
    if not (
        inspect.isfunction(obj)
        and collector.path.is_relative_to(ROOT / "tests_evals")
        and _is_test(collector, name)
    ):
        return None
    is_verify = "published_run" in inspect.signature(obj).parameters
    return [] if is_verify != verifying(collector.config) else None


def _is_test(collector: pytest.Collector, name: str) -> bool:
    return isinstance(collector, pytest.Module | pytest.Class) and collector.funcnamefilter(name)


class NothingToVerify:
    """A line at the end when there was nothing to check: nothing is published, or the
    selection (-k, -m) left no published run."""

    def __init__(self, config: pytest.Config):
        self.config = config

    def pytest_terminal_summary(self, terminalreporter, exitstatus: int) -> None:
        runs = session_of(self.config).published_runs
        if not runs:
            terminalreporter.write_line(
                f"nothing published in {_models_path(self.config)}: nothing to verify"
            )
        elif exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
            ids = ", ".join(r.id for r in runs)
            terminalreporter.write_line(
                f"no published run matched the selection; the published runs are: {ids}"
            )


class Regrades:
    """The REGRADE status: a passed item whose run today's graders score differently."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def pytest_report_teststatus(self, report: pytest.TestReport, config: pytest.Config):
        detail = next(
            (value for name, value in report.user_properties if name == REGRADE_PROPERTY), None
        )
        if detail is not None and report.when == "call" and report.passed:
            return "regrade", "R", (REGRADE, {"yellow": True})
        return None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call" and report.passed:
            self.lines.extend(
                f"{REGRADE} {value}"
                for name, value in report.user_properties
                if name == REGRADE_PROPERTY
            )

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if self.lines:
            terminalreporter.section("regrades")
            for line in self.lines:
                terminalreporter.write_line(
                    printable(line)
                )  # it names the items that score differently, by their dataset ids
            terminalreporter.write_line(
                f"{len(self.lines)} regrade{'s' * (len(self.lines) != 1)} available: the records are intact, "
                "today's graders score them differently; `evaluate --regrade` rescores them"
            )


class PublishedResultFile(SingleFileSnapshotExtension):
    """A snapshot stored in the published result file itself, compared without timing."""

    _write_mode = WriteMode.TEXT
    file_extension = "json"

    @classmethod
    def get_location(cls, *, test_location, index) -> str:
        return str(_SNAPSHOT_FILES[test_location.nodeid])

    def discover_snapshots(self, *, test_location, ignore_extensions=None) -> SnapshotCollections:
        # The files belong to data/results: never list them as unused snapshots to delete.
        return SnapshotCollections()

    def serialize(self, data: Any, **kwargs: Any) -> str:
        return _canonical(data)

    def read_snapshot_data_from_location(
        self, *, snapshot_location: str, snapshot_name: str, session_id: str
    ) -> str | None:
        try:
            return _canonical(read_result(Path(snapshot_location)))
        except EvalError:
            return None

    # The second guard, should a snapshot writer get past pytest_configure. pytest.fail, not
    # an Exception: syrupy swallows those into a plain mismatch.
    @classmethod
    def write_snapshot_collection(cls, *, snapshot_collection, name_order=None) -> None:
        pytest.fail(f"{snapshot_collection.location}: not rewritten: {IMMUTABLE}", pytrace=False)

    def delete_snapshots(self, *, snapshot_location: str, snapshot_names: set[str]) -> None:
        pytest.fail(f"{snapshot_location}: not deleted: {IMMUTABLE}", pytrace=False)


def _canonical(result: dict[str, Any]) -> str:
    return json.dumps(without_timing(result), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


@pytest.fixture
def published_snapshot(request: pytest.FixtureRequest, snapshot, published_run: PublishedRun):
    _SNAPSHOT_FILES[request.node.nodeid] = published_run.path
    return snapshot.use_extension(PublishedResultFile)


@pytest.fixture
def rescored(request: pytest.FixtureRequest, published_run: PublishedRun) -> dict[str, Any]:
    """Today's rescoring in the published file's own format: the snapshot it must equal. A
    regrade is the published file as it stands (the published scores stand until `evaluate
    --regrade`), the item marked REGRADE."""
    try:
        verdict, rescoring = verdict_of(published_run.path, run_root=run_root(request.config))
    except RescoreFailed as failed:
        pytest.fail(printable(f"{published_run}: {failed.detail}"), pytrace=False)
    if verdict.status == UNVERSIONED:  # a failure, as `evaluate --verify` exits 1 for it
        pytest.fail(printable(f"{UNVERSIONED} {published_run}: {verdict.detail}"), pytrace=False)
    if verdict.status == REGRADE:
        request.node.user_properties.append(
            (REGRADE_PROPERTY, f"{published_run}: {verdict.detail}")
        )
        return published_run.result()
    published = published_run.result()
    shaped = in_format(without_timing(rescoring), result_format(published))
    if (
        "graders" in published
    ):  # no other difference (ok) is a regrade either: the graders as recorded
        shaped["graders"] = published["graders"]
    return shaped
