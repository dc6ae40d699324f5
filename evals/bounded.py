"""Reading the harness's files within limits: every JSON and JSONL file the harness reads
(result files, models.json, cache records, datasets, saved plans, ledgers, notes) goes through
here, so a hostile or broken one is one line naming it, never a RecursionError, a MemoryError
or a read that never ends.

The limits (README, "Files the harness reads"):

* a regular file only: a FIFO, a device (`/dev/zero`), a folder is refused before it is read;
* size: `MAX_BYTES` (256 MiB) for a JSON file, `MAX_DATASET_BYTES` (2 GiB) for a dataset file,
  `MAX_LINE_BYTES` (64 MiB) for each line of a JSONL file;
* depth: `MAX_DEPTH` (100) arrays and objects inside one another. The harness's own files nest
  under 10 deep; what walks a value (scrubbing keys, the schema, rendering the site) recurses,
  so a deeper one is refused before `json.loads` sees it, by a scan that counts brackets
  outside strings (linear, no recursion).

Past a limit, `FileLimitError` (a ValueError, so a reader that reports a corrupt file reports
this one too) says what is wrong without the path, which its caller's message names."""

from __future__ import annotations

import json
import os
import re
import stat
from itertools import accumulate
from pathlib import Path
from typing import Any

from evals.errors import FileLimitError

MAX_BYTES = 256 * 2**20
MAX_DATASET_BYTES = 2 * 2**30
MAX_LINE_BYTES = 64 * 2**20
MAX_DEPTH = 100

# A JSON string, once its escapes are gone (so an escaped quote never ends it): what the depth
# scan removes, the brackets inside strings being text. Without a backslash in it, matching is
# linear: a pattern that walks escapes itself backtracks over an unterminated string of them
# (80 KB of `\"` took 20 s).
_STRING = re.compile(r'"[^"]*"')
_NOT_BRACKETS = bytes(c for c in range(256) if c not in b"[]{}")
_STEP = [0] * 256  # a bracket's step of the depth
_STEP[ord("[")] = _STEP[ord("{")] = 1
_STEP[ord("]")] = _STEP[ord("}")] = -1
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO opened without it waits for a writer
_BINARY = getattr(os, "O_BINARY", 0)  # Windows: no newline translation


def read_bytes(path: Path, *, limit: int = MAX_BYTES) -> bytes:
    """The content of the regular file at `path`, at most `limit` bytes; FileNotFoundError when
    there is none, FileLimitError for anything else that is no such file or is larger."""
    try:
        kind = os.stat(path).st_mode
    except NotADirectoryError:
        raise FileNotFoundError(2, "No such file or directory", str(path)) from None
    if not stat.S_ISREG(kind):
        raise FileLimitError(f"not a regular file ({_kind(kind)}), so not one the harness reads")
    fd = os.open(path, os.O_RDONLY | _NONBLOCK | _BINARY)
    try:
        opened = os.fstat(fd)  # what was opened, had it been swapped since the stat
        if not stat.S_ISREG(opened.st_mode):
            raise FileLimitError(
                f"not a regular file ({_kind(opened.st_mode)}), so not one the harness reads"
            )
        chunks, size = [], 0
        # The whole file in one read (and a byte more, to see it grew), not a 16 MiB buffer a read.
        while chunk := os.read(fd, min(limit + 1 - size, max(opened.st_size + 1 - size, 2**16))):
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise FileLimitError(
                    f"larger than {_size(limit)}, the limit of a file the harness reads"
                )
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_text(path: Path, *, limit: int = MAX_BYTES) -> str:
    """`read_bytes` decoded as UTF-8 (UnicodeDecodeError when it is not)."""
    return read_bytes(path, limit=limit).decode("utf-8")


def load_json(path: Path, *, limit: int = MAX_BYTES) -> Any:
    """The JSON value in the file at `path`, within the size and depth limits; the errors of
    `read_text`, json.JSONDecodeError, or FileLimitError."""
    return loads(read_text(path, limit=limit))


def loads(text: str | bytes) -> Any:
    """`json.loads` of a text checked first to nest at most `MAX_DEPTH` deep."""
    check_depth(text)
    return json.loads(text)


def check_depth(text: str | bytes, *, limit: int = MAX_DEPTH) -> None:
    """FileLimitError when arrays and objects nest more than `limit` deep in `text`: the
    brackets outside strings counted, each step linear and done by the regex engine or in C
    (an 11 MB result file: about 1.4 times what json.loads takes, on top of it)."""
    if isinstance(text, bytes):
        text = text.decode("latin-1")  # a character a byte: the quotes and brackets are ASCII
    if text.count("[") + text.count("{") <= limit:
        return  # too few to nest deeper: no scan
    unescaped = text.replace("\\\\", "").replace('\\"', "")
    brackets = (
        _STRING.sub("", unescaped).encode("utf-8", "surrogatepass").translate(None, _NOT_BRACKETS)
    )
    if max(accumulate(map(_STEP.__getitem__, brackets)), default=0) > limit:
        raise FileLimitError(
            f"nested more than {limit} levels deep, the limit of a file the harness reads"
        )


def lines(data: bytes, *, limit: int = MAX_LINE_BYTES) -> list[tuple[int, bytes]]:
    """The lines of a JSONL file's content, numbered from 1; FileLimitError naming the first
    line longer than `limit` bytes."""
    numbered = list(enumerate(data.split(b"\n"), start=1))
    for number, line in numbered:
        if len(line) > limit:
            raise FileLimitError(
                f"line {number} is larger than {_size(limit)}, the limit of a line the harness reads"
            )
    return numbered


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a file"


def _size(limit: int) -> str:
    return f"{limit // 2**30} GiB" if limit >= 2**30 else f"{limit // 2**20} MiB"
