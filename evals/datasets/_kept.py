"""Copies of local dataset files, kept in the data folder beside the results run on them.

A result file records a local dataset file only by its name and hash (`{"name", "sha256"}`),
which no one else can load again. Publishing a run on one copies the file into
`data/datasets/<sha256>/<name>` (`keep`): under its own name, so that loading the copy gives the
identity the run recorded, in a folder named by its content, so that two files of one name
never meet. Whoever verifies the run finds the copy by the digest the result file records
(`find_kept`), and checks that digest on the file found: a file of the right name with other
bytes is never used. Nothing is read or written through a symlink that leads out of the data
folder."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from evals.atomic import write_bytes_atomic
from evals.errors import DataFileError, DatasetError

from ._files import bytes_digest, dataset_bytes, file_digest

FOLDER = "datasets"  # under the data folder, beside results/ and runs/
_DIGEST = re.compile(r"[0-9a-f]{12}")  # `file_digest`'s form


def kept_folder(data: Path) -> Path:
    """Where the data folder `data` keeps its copies of local dataset files."""
    return data / FOLDER


def is_local_file(identity: dict[str, Any]) -> bool:
    """Whether a dataset identity is a local file's, known only by its name and hash (the
    bundled sets and the published ones name where they come from)."""
    return set(identity) == {"name", "sha256"} and identity["name"] != "bundled"


def kept_path(folder: Path, identity: dict[str, Any]) -> Path | None:
    """Where the copy of the file `identity` names belongs in `folder`; None when the
    identity cannot name a file there (a hand-edited name with a path in it, a digest that is
    not one)."""
    name, digest = identity.get("name"), identity.get("sha256")
    if not isinstance(name, str) or not isinstance(digest, str) or not _DIGEST.fullmatch(digest):
        return None
    if name in ("", ".", "..") or Path(name).name != name or "\\" in name:
        return None
    return folder / digest / name


def find_kept(identity: dict[str, Any], folder: Path) -> Path | None:
    """The copy in `folder` of the local dataset file `identity` names, when one is there
    with the digest it records; None otherwise."""
    path = kept_path(folder, identity) if is_local_file(identity) else None
    if path is None or not path.is_file() or not _inside(path, folder.parent):
        return None
    return path if file_digest(path) == identity["sha256"] else None


def keep(identity: dict[str, Any], source: Path, folder: Path) -> Path | None:
    """Copy the dataset file `source` of a run whose dataset is `identity` into `folder`,
    written atomically; the copy's path, or None when a copy with its digest is there
    already (it is reused). A `source` with other bytes than the run's is a DatasetError,
    a `folder` that leads out of its data folder a DataFileError."""
    if find_kept(identity, folder):
        return None
    path = kept_path(folder, identity)
    if path is None:
        raise DatasetError(f"the run's dataset {identity.get('name')!r} names no file")
    data = dataset_bytes(source)
    if bytes_digest(data) != identity["sha256"]:
        raise DatasetError(
            f"{source} is not the dataset file the run used (its sha256 differs); pass that file "
            "with --dataset"
        )
    for where in (folder, path.parent, path):  # checked before anything is made through them
        if (where.exists() or where.is_symlink()) and not _inside(where, folder.parent):
            raise DataFileError(
                f"{where} leads out of {folder.parent} (a symlink): dataset copies are kept in "
                "the data folder; remove the link"
            )
    path.parent.mkdir(parents=True, exist_ok=True)
    write_bytes_atomic(path, data)
    return path


def _inside(path: Path, data: Path) -> bool:
    """Whether `path`, its symlinks followed, is in the data folder `data`."""
    return path.resolve().is_relative_to(data.resolve())
