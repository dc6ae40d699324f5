"""Run specs the tests build runs (and asking children's work) from, answered offline."""

from __future__ import annotations

from pathlib import Path

from evals.grading.judges import JudgeSpec
from evals.identity import from_values
from evals.plan import plan
from evals.run import RunSpec
from evals.tasks import TASKS


def reference_run(
    eval: str,
    folder: Path,
    *,
    model: str = "gold",
    judges: tuple[JudgeSpec, ...] = (),
    items: int = 3,
) -> RunSpec:
    """The first `items` items of `eval`, answered by the offline reference provider (and
    judged by it, under the names `judges` give), into the run folder `folder`."""
    ident = from_values({"provider": "reference", "model": model}, judges=judges)
    planned = plan(TASKS[eval], ident)
    return RunSpec(
        eval=eval,
        config=planned.config,
        samples=planned.samples[:items],
        candidate=ident.spec,
        judges=[(j.name, j.provider_spec()) for j in ident.judges],
        redacted=(),
        folder=folder,
        session="s",
        concurrency=2,
    )
