"""--verify-published: every published result file is a snapshot test.

One item per result file named in data/models.json (`-k` selects a model). The item rescores
the run offline from its run folder and compares it with the published file through a syrupy
extension whose snapshot *is* that file, so a difference shows field by field, and
`--snapshot-update` would republish a deliberate change."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from syrupy.data import SnapshotCollections
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from evals.errors import EvalError
from evals.results import read_result, without_timing
from evals.verify import PublishedRun, published_runs, rescore

from .options import ROOT, results_root, run_root, verifying

# nodeid -> the published result file that is its snapshot
_SNAPSHOT_FILES: dict[str, Path] = {}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "published_run" not in metafunc.fixturenames:
        return
    runs = _published_runs(metafunc.config) if verifying(metafunc.config) else []
    if not runs:
        runs = [pytest.param(None, marks=pytest.mark.skip(reason="no published runs in models.json"), id="nothing-published")]
    else:
        runs = [pytest.param(r, id=f"{r.model}-{r.key}") for r in runs]
    metafunc.parametrize("published_run", runs)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In verify mode only the verify items run; otherwise only the eval items."""
    keep, drop = [], []
    for item in items:
        is_verify = "published_run" in getattr(item, "fixturenames", ())
        if item.path.is_relative_to(ROOT / "tests_evals") and is_verify != verifying(config):
            drop.append(item)
        else:
            keep.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def _published_runs(config: pytest.Config) -> list[PublishedRun]:
    results = results_root(config)
    try:
        return published_runs(results.parent / "models.json", results)
    except EvalError as error:
        raise pytest.UsageError(str(error)) from None


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

    def read_snapshot_data_from_location(self, *, snapshot_location: str, snapshot_name: str, session_id: str) -> str | None:
        try:
            return _canonical(read_result(Path(snapshot_location)))
        except EvalError:
            return None


def _canonical(result: dict[str, Any]) -> str:
    return json.dumps(without_timing(result), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


@pytest.fixture
def published_snapshot(request: pytest.FixtureRequest, snapshot, published_run: PublishedRun):
    _SNAPSHOT_FILES[request.node.nodeid] = published_run.path
    return snapshot.use_extension(PublishedResultFile)


@pytest.fixture
def rescored(request: pytest.FixtureRequest, published_run: PublishedRun) -> dict[str, Any]:
    try:
        return rescore(published_run.path, run_root=run_root(request.config))
    except EvalError as error:
        pytest.fail(f"{published_run}: {error}", pytrace=False)
