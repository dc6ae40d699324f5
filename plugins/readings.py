"""Graders' readings pinned to their versions (`evals.grading.readings`), for the harness's own
tests and any eval's: the `pinned_readings` fixture and the `graders` marker.

    @pytest.mark.graders
    def test_rubric_readings(pinned_readings):
        pinned_readings({"rubric": MyEval.graders["rubric"]}, {case: read(reply) for case, reply in CORPUS})

The table is kept as a JSON snapshot beside the test (syrupy's `__snapshots__/`), written by
`pytest -m graders --snapshot-update`, committed with the grading change that moved the version."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from evals import bounded
from evals.grading.readings import history, problems, table

MARKER = "graders: a grading part's readings over its corpus, pinned to its version"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER)


@pytest.fixture
def pinned_readings(request: pytest.FixtureRequest, snapshot) -> Callable[..., None]:
    """pin(versions, readings): fails, in one line per cause, when a reading changed under the
    same versions (than the snapshot, or than any committed version of it), or when the
    versions moved and the snapshot was not updated with them."""

    def pin(versions: Mapping[str, str], readings: Mapping[str, Any]) -> None:
        from syrupy.extensions.json import (
            JSONSnapshotExtension,
        )  # a graders test's, not every run's

        assertion = snapshot.use_extension(JSONSnapshotExtension)
        path = Path(
            assertion.extension.get_location(
                test_location=assertion.test_location, index=assertion.index
            )
        )
        now = table(versions, readings)
        stored = _stored(path)
        earlier = [
            (commit, kept)
            for commit, kept in history(path)
            if stored is None or kept.get("digest") != stored.get("digest")
        ]
        found = problems(request.node.name, now, stored, earlier)
        if found:
            if (
                stored is not None
            ):  # kept as it is: `--snapshot-update` deletes a snapshot no test used
                assertion == stored  # noqa: B015 (compared for its side effect: marked used)
            pytest.fail("\n".join(found), pytrace=False)
        if not assertion == now:
            moved = stored is not None and stored.get("versions") != now["versions"]
            pytest.fail(
                f"{request.node.name}: "
                + (
                    f"the versions moved ({stored['versions']} -> {now['versions']}) and the"
                    " readings with them"
                    if moved and stored is not None
                    else "the readings are not the snapshot's (cases added or removed)"
                    if stored is not None
                    else "no snapshot yet"
                )
                + f": record them with `pytest -m graders --snapshot-update` ({path.name})",
                pytrace=False,
            )

    return pin


def _stored(path: Path) -> dict[str, Any] | None:
    try:
        kept = bounded.load_json(path)
    except (OSError, ValueError):
        return None
    return kept if isinstance(kept, dict) else None
