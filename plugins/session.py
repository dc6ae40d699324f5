"""The one `pytest_configure` of the harness: it makes the command's state (`EvalSession`)
and configures each plugin in this order, each step reading what the earlier ones set:

1. options: the markers, the flags' checks, the settings (none: no eval items run here);
2. verify: with --verify-published, the published runs to check (models.json read);
3. energy: with --energy, the power source, checked before anything is asked;
4. collector: the results collector, where the reports arrive (not in an xdist worker), and
   beside it the progress line and its --max-cost cap (`plugins.progress`);
5. items: how the runs ask ahead (child processes start here, to make the candidate's
   provider while this process plans and collects), the planned evals, the published ones.

It runs first (tryfirst): option 1 decides `-n` before xdist starts its workers."""

from __future__ import annotations

import pytest

from . import collector, energy, items, options, progress, verify
from .state import EvalSession, session_key


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    config.stash[session_key] = EvalSession()
    options.configure(config)
    verify.configure(config)
    energy.configure(config)
    collector.configure(config)
    progress.configure(config)
    items.configure(config)
