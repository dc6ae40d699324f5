"""The hooks the harness's plugins offer other plugins (and conftest files)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from evals.askers import Asker


@pytest.hookspec(firstresult=True)
def pytest_evals_make_asker(config: pytest.Config) -> Asker | None:
    """How this process's eval runs ask their calls ahead of the items (`evals.askers.Asker`):
    on threads, from child processes, through Batch APIs. Called once per process, as the
    command is configured; the first implementation that returns one decides (the harness's
    own comes last), as pytest-xdist's `pytest_xdist_make_scheduler`."""
