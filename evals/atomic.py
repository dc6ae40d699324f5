"""Writing files so that a reader sees the old file or the new one, never half of one.

Each file is written to a temporary file beside it and renamed over it: a process killed at
any moment leaves the old file or the new one. What a rename does not cover is a power cut
(or a kernel crash): the data may not be on the disk yet when the rename is. Result files,
`models.json` and the like are flushed to the disk (fsync) before the rename, so they survive
one too. Cache records are not (`durable=False`): fsync costs ~6 ms of waiting and ~0.5 ms of
CPU per record, as much as the rest of storing an answer, and a power cut can only lose the
last records, never corrupt a run: a record it leaves empty or cut short fails its check when
read (`evals.cache`), is moved aside and asked again, like a missing one."""

from __future__ import annotations

import errno
import json
import math
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# What `write_text_atomic` names its temporary file: `.<name>.<8 random characters>.tmp`.
TEMP_FILE = re.compile(r"\..+\.[a-z0-9_]{8}\.tmp")
STALE_AFTER = 600.0  # seconds; a live write takes milliseconds


def write_text_atomic(
    path: Path, text: str, *, durable: bool = True, tree: Path | None = None
) -> None:
    """Write to a temporary file beside `path`, then rename over it, so a process killed
    mid-write leaves the previous file intact; `durable`: fsync before the rename, so a power
    cut does too (see the module's docstring for what may skip it). `tree`: the folder the
    user named that `path` is under (see `check_inside`); a link at `path` itself is replaced,
    never followed (the rename replaces the link)."""
    write_bytes_atomic(path, text.encode("utf-8"), durable=durable, tree=tree)


def write_bytes_atomic(
    path: Path, content: bytes, *, durable: bool = True, tree: Path | None = None
) -> None:
    """`write_text_atomic` for bytes (a dataset file kept as it is, say). The temporary file is
    made by mkstemp: O_EXCL and, where there is one, O_NOFOLLOW, so it is a new file in the
    folder checked."""
    if tree is not None:
        check_inside(path.parent, tree)
    try:
        fd, tmp = tempfile.mkstemp(
            dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"
        )  # TEMP_FILE
    except (
        FileNotFoundError
    ):  # the folder's first file: made now (not before every write, as it mostly exists)
        path.parent.mkdir(parents=True, exist_ok=True)
        if tree is not None:  # a folder made meanwhile could be a link
            check_inside(path.parent, tree)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        try:
            data = memoryview(content)
            while data:
                data = data[os.write(fd, data) :]
            if durable:
                os.fsync(fd)
            if sys.platform != "win32":  # Windows has no mode bits to set: the folder's ACL decides
                os.fchmod(fd, 0o644)  # mkstemp makes it private; these files are meant to be read
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json_atomic(
    path: Path,
    data: Any,
    *,
    indent: int | None = None,
    durable: bool = True,
    tree: Path | None = None,
) -> None:
    text = to_json(data, path, indent=indent)
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate (valid in JSON, say in a dataset id): escaped
            text = json.dumps(data, indent=indent, allow_nan=False)
    write_text_atomic(path, text + "\n" if indent is not None else text, durable=durable, tree=tree)


def check_inside(folder: Path, tree: Path) -> None:
    """Raise OSError (ELOOP) naming the link when `folder`, below `tree`, leads out of it through
    a symlink: what the harness writes under a folder the user named (`--run-dir`,
    `--results-dir`, the site) stays in it. `tree` itself may be a link (the user chose it),
    and a link that stays inside it is followed; a `folder` not below `tree` is not checked.
    (Checked before each write: a link swapped in between the check and the write is not seen.)"""
    real_tree, real = os.path.realpath(tree), os.path.realpath(folder)
    try:
        if os.path.commonpath([real, real_tree]) == real_tree:
            return
        below = Path(os.path.abspath(folder)).relative_to(os.path.abspath(tree))
    except ValueError:  # another drive, or not below the tree
        return
    link = Path(tree)
    for part in below.parts:
        link = link / part
        if link.is_symlink():
            break
    raise OSError(
        errno.ELOOP,
        f"{link} is a symlink that leads out of {tree}, and the harness writes only inside it; "
        "replace the link with a folder",
        str(link),
    )


def write_fix(error: OSError) -> str:
    """What to do about a write that failed with `error`, as a message's last clause says it,
    then again: a link out of the tree (`check_inside`, whose message says how to replace it),
    a read-only folder, anything else (a full disk first)."""
    if error.errno == errno.ELOOP:
        return "run the same command again once the link is replaced"
    if error.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return "make the folder writable and run the same command again"
    return "free space (or fix the folder) and run the same command again"


def to_json(data: Any, path: Path | str, *, indent: int | None = None) -> str:
    """`data` as JSON. NaN and Infinity are not JSON (the board's JSON.parse fails on them):
    a ValueError names the file and the field instead, and nothing is written."""
    try:
        return json.dumps(data, indent=indent, ensure_ascii=False, allow_nan=False)
    except ValueError:
        where = _non_finite(data)
        if where is None:
            raise
        raise ValueError(
            f"{path}: {where or 'the value'} is not a finite number, which JSON cannot hold; nothing was written"
        ) from None


def _non_finite(value: Any, where: str = "") -> str | None:
    """The path ("summary.cost", "rows[3].latency") to the first NaN or infinity in `value`."""
    if isinstance(value, float) and not math.isfinite(value):
        return where
    items = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, (list, tuple))
        else ()
    )
    for key, item in items:
        found = _non_finite(
            item,
            f"{where}[{key}]" if isinstance(key, int) else f"{where}.{key}" if where else str(key),
        )
        if found is not None:
            return found
    return None


def why_unwritable(folder: Path) -> str | None:
    """Why no file can be written in `folder` (made when missing), or None: a file in the
    way, no permission, a read-only or full filesystem. Probed by writing a small temporary
    file in the folder, or in its nearest existing parent, which is removed at once."""
    existing = folder
    try:
        while not existing.exists() and existing != existing.parent:
            existing = existing.parent
        if not existing.is_dir():
            return (
                f"{existing} is a file, not a folder"
                if existing == folder
                else f"{existing} is a file, so {folder} cannot be a folder"
            )
        fd, probe = tempfile.mkstemp(dir=existing, prefix=".write-check.", suffix=".tmp")
        try:
            os.write(fd, bytes(4096))
            os.fsync(fd)
        finally:
            os.close(fd)
            os.unlink(probe)
    except OSError as error:
        return f"cannot write in {existing} ({error.strerror or error})"
    return None


def remove_stale_temp_files(
    folder: Path, *, recursive: bool = False, older_than: float = STALE_AFTER
) -> int:
    """Remove the temporary files that writes killed midway (SIGKILL, a power cut) left in
    `folder`: only those named as `write_text_atomic` names them, and only those untouched for
    `older_than` seconds, never one that another process is writing now. How many it removed."""
    cutoff = time.time() - older_than
    removed = 0
    for path in folder.rglob(".*.tmp") if recursive else folder.glob(".*.tmp"):
        try:
            if TEMP_FILE.fullmatch(path.name) and path.is_file() and path.stat().st_mtime < cutoff:
                path.unlink()
                removed += 1
        except OSError:  # gone meanwhile, or not ours to remove: left as it is
            pass
    return removed
