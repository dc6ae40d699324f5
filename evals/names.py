"""Names as file names: every id, role or other name the harness files something under becomes
a file name of its own, which stays inside its folder whatever the name holds.

A name that is already a plain file name is its own file name, as it always was: lowercase
ASCII letters, digits, `.`, `_` and `-`, starting with a letter, digit or `_`, not ending with
`.`, at most 120 characters, and not a Windows device name (`con`, `nul.txt`...). Any other
name (`/`, `..`, a NUL, spaces, unicode, capitals, 10,000 characters) becomes a readable prefix,
`~` and a hash of the exact name. No plain name holds a `~` and the hash is lowercase, so two
different names never share a file, not even on a case-insensitive filesystem (`Q1` and `q1`)."""

from __future__ import annotations

import hashlib
import re

PLAIN = re.compile(r"[a-z0-9_][a-z0-9._-]{0,119}")
DEVICES = re.compile(r"(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?")
READABLE = 100  # characters of a hashed name's readable prefix
DIGEST = 16  # hex digits of the hash: 64 bits


def file_name(name: str) -> str:
    """The file name (without extension) that `name`, and no other name, is filed under."""
    if PLAIN.fullmatch(name) and not name.endswith(".") and not DEVICES.fullmatch(name):
        return name
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", name).lstrip(".-")[:READABLE] or "_"
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:DIGEST]
    return f"{readable}~{digest}"


def attempt_key(item_id: str, epoch: int | None = None) -> str:
    """The item an answer is cached under: the question's id, and for `--epochs` the k-th
    answer (k > 1) under `id#k`, so each epoch has its own records and a one-epoch run's are
    where they always were."""
    return item_id if epoch in (None, 1) else f"{item_id}#{epoch}"


def row_key(row: dict) -> str:
    """What tells a result row from the others: its id, and its epoch under `--epochs`."""
    return attempt_key(row["id"], row.get("epoch"))
