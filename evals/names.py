"""Names as file names: every id, role or other name the harness files something under becomes
a file name of its own, which stays inside its folder whatever the name holds.

A name that is already a plain file name is its own file name, as it always was: lowercase
ASCII letters, digits, `.`, `_` and `-`, starting with a letter, digit or `_`, not ending with
`.`, at most 120 characters, and not a Windows device name (`con`, `nul.txt`...). Any other
name (`/`, `..`, a NUL, spaces, unicode, capitals, 10,000 characters) becomes a readable prefix,
`~` and a hash of the exact name; a prefix that Windows would take for a device (`nul.txt`,
`Lpt9.json`: the part before the first dot names one) starts with `_`. No plain name holds a `~` and
the hash is lowercase, so two
different names never share a file, not even on a case-insensitive filesystem (`Q1` and `q1`)."""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path

PLAIN = re.compile(r"[a-z0-9_][a-z0-9._-]{0,119}")
DEVICES = re.compile(r"(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?")
READABLE = 100  # characters of a hashed name's readable prefix
DIGEST = 16  # hex digits of the hash: 64 bits
# Windows' MAX_PATH, its closing NUL included: a longer path fails unless long paths are on.
WINDOWS_MAX_PATH = 260


def file_name(name: str) -> str:
    """The file name (without extension) that `name`, and no other name, is filed under."""
    if _plain(name):
        return name
    readable, digest = _readable(name), _digest(name)
    if _device_to_windows(readable):  # `nul.txt~...` is still the device NUL to Windows
        readable = f"_{readable}"
    return f"{readable}~{digest}"


def file_name_before(name: str) -> str | None:
    """Where `file_name` filed `name` before its hashed names kept off Windows' device names,
    when that differs (`nul.txt~<hash>`, now `_nul.txt~<hash>`): what a run filed there on
    another system is still found."""
    if _plain(name):  # filed under itself, then as now
        return None
    readable = _readable(name)
    return f"{readable}~{_digest(name)}" if _device_to_windows(readable) else None


def _plain(name: str) -> bool:
    return bool(PLAIN.fullmatch(name)) and not name.endswith(".") and not DEVICES.fullmatch(name)


def _device_to_windows(readable: str) -> bool:
    """Whether `<readable>~<hash>` names a device on Windows: the part before its first dot
    does (`nul.txt~...`, `Lpt9.json~...`); `CON~...`, without a dot, is an ordinary name."""
    return "." in readable and bool(DEVICES.fullmatch(readable.partition(".")[0].lower()))


def _readable(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).lstrip(".-")[:READABLE] or "_"


def _digest(name: str) -> str:
    return hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:DIGEST]


def windows_path_note(path: Path, platform: str = sys.platform) -> str:
    """What to add to a failed write's message when `path`, or the temporary file written
    beside it (`.<name>.<8 characters>.tmp`, `evals.atomic`), is too long for Windows: a
    long item id is filed under up to 120 characters, so deep folders can cross the limit."""
    longest = len(str(path.parent)) + len(path.name) + 15  # the separator, ".", ".xxxxxxxx.tmp"
    if platform != "win32" or longest < WINDOWS_MAX_PATH:
        return ""
    return (
        f"; its temporary file's path is {longest} characters, past Windows' {WINDOWS_MAX_PATH - 1}: enable long paths "
        "(LongPathsEnabled, then sign in again) or pass a shorter --run-dir=PATH"
    )


def attempt_key(item_id: str, epoch: int | None = None) -> str:
    """The item an answer is cached under: the question's id, and for `--epochs` the k-th
    answer (k > 1) under `id#k`, so each epoch has its own records and a one-epoch run's are
    where they always were."""
    return item_id if epoch in (None, 1) else f"{item_id}#{epoch}"


def row_key(row: dict) -> str:
    """What tells a result row from the others: its id, and its epoch under `--epochs`."""
    return attempt_key(row["id"], row.get("epoch"))
