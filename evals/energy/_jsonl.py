"""The JSONL files energy is kept in (a run's spans, a counter source's store): appended a
line at a time and flushed, read back skipping a line a kill cut short."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from evals import bounded
from evals.atomic import check_inside
from evals.errors import StorageError


def json_lines(path: Path) -> Iterator[dict[str, Any]]:
    """The JSON objects of a JSONL file, skipping what is not one: a line cut short by a
    kill or being written now."""
    for _, raw in bounded.lines(bounded.read_bytes(path, limit=bounded.MAX_DATASET_BYTES)):
        try:
            record = bounded.loads(raw.decode("utf-8", errors="replace"))
        except ValueError:
            continue
        if isinstance(record, dict):
            yield record


def open_append(path: Path) -> BinaryIO:
    """`path` opened to append lines, after a newline if a killed writer left a line cut
    short, so the next line is not glued to it. A ledger is at `<run dir>/energy/<file>`: no
    link there leads out of the run dir, and a link at the file itself is refused (ELOOP)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    check_inside(path.parent, path.parent.parent)
    flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0)
    handle = os.fdopen(os.open(path, flags | getattr(os, "O_BINARY", 0), 0o644), "a+b")
    if handle.tell() > 0:
        handle.seek(-1, os.SEEK_END)
        if handle.read(1) != b"\n":
            handle.write(b"\n")
    return handle


def unwritable(path: Path, error: OSError) -> StorageError:
    return StorageError(
        f"cannot write {path} ({error.strerror or error}): free space on its disk, or run elsewhere"
    )


def write_line(handle: BinaryIO, path: Path, record: dict[str, Any]) -> None:
    try:
        handle.write(json.dumps(record, allow_nan=False).encode() + b"\n")
        handle.flush()
    except OSError as error:
        raise unwritable(path, error) from error
