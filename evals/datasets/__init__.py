"""Datasets of every eval, and which evals a `--dataset` source serves: each eval says which
published datasets serve it (`Task.named_datasets`), which files' columns are its
(`Task.serves`) and how it recognises its own published files (`Task.dataset_source`); and the
copies of local dataset files a data folder keeps for the runs published on them (`_kept`)."""

from __future__ import annotations

from pathlib import Path

from evals.entry_points import Registry
from evals.tasks import tasks

from ._files import read_records
from ._kept import find_kept, is_local_file, keep, kept_folder

__all__ = [
    "NAMED",
    "evals_served",
    "find_kept",
    "is_local_file",
    "keep",
    "kept_folder",
    "source_of",
]


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


def source_of(identity: dict, datasets: Path | None = None) -> str | None:
    """The `--dataset` source a result file's dataset identity came from: a bundled or
    published set by its name, a local file by its copy in the data folder's `datasets`
    (`find_kept`: its digest checked); None for a local file with no such copy."""
    if identity["name"] == "bundled":
        return "bundled"
    named = next(
        (source for task in tasks().values() if (source := task.dataset_source(identity))), None
    )
    if named is None and datasets is not None and (kept := find_kept(identity, datasets)):
        return str(kept)
    return named
