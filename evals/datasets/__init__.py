"""Datasets of every eval, and which evals a `--dataset` source serves: each eval says which
published datasets serve it (`Task.named_datasets`), which files' columns are its
(`Task.serves`) and how it recognises its own published files (`Task.dataset_source`)."""

from __future__ import annotations

from pathlib import Path

from evals.entry_points import Registry
from evals.tasks import tasks

from ._files import read_records


def _named() -> dict[str, set[str]]:
    named: dict[str, set[str]] = {}
    for task in tasks().values():
        for source in task.named_datasets:
            named.setdefault(source, set()).add(task.name)
    return named


# Published datasets by name -> the evals they serve.
NAMED: Registry[set[str]] = Registry(_named)


def evals_served(source: str) -> set[str]:
    """The evals a bare `--dataset SOURCE` applies to, judged by name or by the file's columns."""
    if source in NAMED:
        return NAMED[source]
    if source == "bundled":
        return set(tasks())
    records = read_records(Path(source))
    columns = set(records[0][1]) if records else set()
    return {task.name for task in tasks().values() if task.serves(columns)}


def source_of(identity: dict) -> str | None:
    """The `--dataset` source a result file's dataset identity came from, or None for a
    local file, which is known only by its name and hash."""
    if identity["name"] == "bundled":
        return "bundled"
    return next(
        (source for task in tasks().values() if (source := task.dataset_source(identity))), None
    )
