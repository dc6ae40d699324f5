"""From what a user asked for to the run of each eval: its samples and its `RunConfig`.

The pytest plugin, `evaluate` (for --dry-run and --status) and the verify mode all plan runs
here, so a run folder is named the same whoever asks. The identity itself, and the way back
from a result file's config to it, are declared in `evals.identity`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evals.config import RunConfig
from evals.identity import Identity, identity_from_config, to_flags
from evals.tasks import Attempt, Task

__all__ = ["Identity", "Planned", "identity_from_config", "plan", "to_flags"]


@dataclass(frozen=True)
class Planned:
    samples: list[Any]
    config: RunConfig


def plan(task: Task, ident: Identity) -> Planned:
    split = ident.split if task.has_splits else "test"
    samples, dataset = task.load(dict(ident.datasets).get(task.name, "bundled"), split)
    if ident.limit is not None:
        samples = samples[: ident.limit]
    extra = task.identity_extra(samples)
    if ident.epochs:  # each epoch of a sample is an item of its own
        samples = [
            Attempt(sample, epoch) for sample in samples for epoch in range(1, ident.epochs + 1)
        ]
    config = RunConfig(
        eval=task.name,
        identity=ident.replace(split=split),
        prompt_version=task.prompt_version,
        dataset=dataset,
        judges=tuple(j.identity() for j in ident.judges) if task.uses_judges else (),
        extra=extra,
    )
    return Planned(samples, config)
