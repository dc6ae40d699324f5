"""The command's state in this process, one object on the pytest config (`EvalSession`, as
syrupy keeps its `SnapshotSession`): made empty by `plugins.session`'s configure hook, then
filled by its steps in their written order; every plugin reads it through `session_of`. Its
`Settings` (how to run) are made from the flags by `plugins.options`, which imports this
module, never the other way."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pathlib import Path

    from evals.identity import Identity
    from evals.plan import Planned
    from evals.providers import Provider
    from evals.results import TokenPrices
    from evals.askers import Asker
    from evals.run import EvalRun
    from evals.verify import PublishedRun


@dataclass(frozen=True)
class Settings:
    """How this command runs the evals: its flags, checked and made (`plugins.options.settings`)."""

    identity: Identity
    candidate: Provider | None  # None in an xdist controller, which asks nothing (its workers do)
    concurrency: int
    batch: str | None  # None, "submit" (end once submitted) or "wait"
    force: bool
    allow_errors: bool
    run_root: Path
    results_root: Path
    prices: TokenPrices | None
    spend_prices: TokenPrices | None  # what the progress line and --max-cost count at
    request_timeout: float
    # Each eval's own flags' values (`Task.flags`), by eval name, then the flag's dest: what
    # its `Task.resources` is made from, and what its result file records (`graded_with`).
    eval_flags: dict[str, dict[str, Any]]
    energy: str | None  # the power source measured (--energy-source), or None
    publish: str | None
    session: str


@dataclass
class EvalSession:
    # plugins.options: how to run (None: no eval items are run, e.g. the harness's own tests
    # or --verify-published), and the -n N this command did not use (API-bound)
    settings: Settings | None = None
    workers_skipped: int | None = None
    # plugins.verify: the published runs --verify-published checks
    published_runs: list[PublishedRun] = field(default_factory=list)
    # plugins.items: the evals -m can reach, planned; those published (only reproduced); how
    # this process's runs ask ahead; the runs, built on first use
    planned: dict[str, Planned] | None = None
    published: set[str] = field(default_factory=set)
    asker: Asker | None = None
    runs: dict[str, EvalRun] = field(default_factory=dict)


session_key = pytest.StashKey[EvalSession]()


def session_of(config: pytest.Config) -> EvalSession:
    """This command's state; an empty one before configure made it (an early hook)."""
    return config.stash.get(session_key, None) or EvalSession()


def is_worker(config: pytest.Config) -> bool:
    """Whether this process is an xdist worker (its controller writes the results)."""
    return hasattr(config, "workerinput")
