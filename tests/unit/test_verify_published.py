"""Verifying the published runs, as a user runs it: `evaluate --verify [NAME]` and
`pytest --verify-published[=NAME]` on a board with two published models (one name with a
space), every refusal one line, nothing ever written to a published file."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evals import registry
from tests.support.board import META, evaluate, model_flags
from tests.support.harness import Student
from tests.support.loopback import OpenAIServer

NAME = "Student 1"
OTHER = "Other Model"  # published with the same result files, so both reproduce


@pytest.fixture(scope="module")
def board(tmp_path_factory) -> Path:
    """The data folder of a board with NAME and OTHER published."""
    data = tmp_path_factory.mktemp("verify") / "data"
    with OpenAIServer(Student()) as server:
        done = evaluate(data, NAME, *model_flags(server), *META)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    files = _entry(data, NAME)["resultFiles"]
    registry.update_entry(OTHER, lambda e: {**_entry(data, NAME), "name": OTHER, "resultFiles": files},
                          data / "models.json", results=data / "results")
    return data


@pytest.fixture
def copy(board, tmp_path) -> Path:
    """A copy of the board to damage."""
    target = tmp_path / "data"
    shutil.copytree(board, target, ignore=shutil.ignore_patterns("locks"))
    return target


def _entry(data: Path, name: str) -> dict:
    return registry.find_entry(registry.load_models(data / "models.json", results=data / "results"), name)


# -- evaluate --verify -------------------------------------------------------------------------


# -- pytest --verify-published -------------------------------------------------------------------


def test_the_snapshot_extension_never_writes_or_deletes_a_published_file(tmp_path):
    """The second guard, should a snapshot writer ever get past the first."""
    from syrupy.data import Snapshot, SnapshotCollection

    from plugins.verify import PublishedResultFile

    path = tmp_path / "published.json"
    path.write_text('{"config": {}, "summary": {}, "results": []}\n')
    before = path.read_bytes()
    collection = SnapshotCollection(location=str(path))
    collection.add(Snapshot(name="test_published_run[Student_1-leetcode]", data="{}\n"))

    with pytest.raises(pytest.fail.Exception, match="published result files never change"):
        PublishedResultFile.write_snapshot_collection(snapshot_collection=collection)
    with pytest.raises(pytest.fail.Exception, match="published result files never change"):
        PublishedResultFile().delete_snapshots(snapshot_location=str(path), snapshot_names={"x"})
    assert path.read_bytes() == before


# -- a broken models.json, in every command ------------------------------------------------------


