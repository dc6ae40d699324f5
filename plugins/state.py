"""The command's state in this process, one object on the pytest config (`EvalSession`, as
syrupy keeps its `SnapshotSession`): made empty by `plugins.session`'s configure hook, then
filled by its steps in their written order; every plugin reads it through `session_of`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from evals.askers import Asker
    from evals.plan import Planned
    from evals.run import EvalRun
    from evals.verify import PublishedRun

    from .options import Settings


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
