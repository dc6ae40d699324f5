"""The run folder's cache of model calls: the source of truth of a run.

Every call (candidate and judge) is one JSON record holding the request, the response text,
the reasoning text, usage, latency and finish reason, or the call's final error. Records are
written atomically; a corrupt one (cut short, or any field of the wrong type) is moved aside,
reported and redone, never a crash (records are not fsynced: see `evals.atomic`). A
per-record file lock makes concurrent processes ask each question once. Every record is scrubbed
(`evals.scrub`) before it is written, and what the
cache hands back is what it wrote, so a first run and its rerun see the same text."""

from __future__ import annotations

import json
import os
import re
import warnings
from pathlib import Path
from typing import Any

from evals import bounded
from evals.atomic import write_json_atomic
from evals.errors import CacheWarning, ProviderError, VerifyError
from evals.locks import RecordLock, record_lock
from evals.messages import Completion, kind_of
from evals.names import file_name, file_name_before
from evals.scrub import Scrub

FORMAT = 1


class RunCache:
    def __init__(
        self, root: Path, session: str | None, *, scrub: Scrub = Scrub(), published: bool = False
    ):
        self.root = root
        # A published run's folder is only read (verify, a reproduction): a corrupt record in
        # it is left where it is and named (`VerifyError`), never moved aside to be asked again.
        self.published = published
        # Errors recorded in this session are not retried in it; None replays every recorded
        # error (the offline rescoring of a published run).
        self.session = session
        self.scrub = scrub
        self._where: dict[tuple[str, str], list[Path]] = {}  # (item, role) -> `_paths`

    def record_path(self, item_id: str, role: str) -> Path:
        return self._paths(item_id, role)[0]

    def written_at(self, item_id: str, role: str) -> float | None:
        """When the record was written (its file's time), or None when there is none."""
        for path in self._paths(item_id, role):
            try:
                return path.stat().st_mtime
            except OSError:
                continue
        return None

    def lock(self, item_id: str, role: str) -> RecordLock:
        """The lock held while the record's call is made: on the item's folder, which its
        records are written into (`evals.locks`), or on a lock file where there is no flock.
        Lock files are all in one folder, so a record's first lock makes no folder of its
        own; a role holds no `.`, so no two records share a lock file."""
        return record_lock(
            self.record_path(item_id, role).parent,
            self.root / "locks" / f"{file_name(item_id)}.{file_name(role)}.lock",
        )

    def read(self, item_id: str, role: str, *, aside: bool = True) -> dict[str, Any] | None:
        """The usable record, or None when there is none (missing, corrupt, stale). A record
        is only ever its own item's and role's: each records both. `aside=False` leaves a
        corrupt record where it is, unreported: for readers that change nothing (the site)."""
        for path in self._paths(item_id, role):
            record = self._load(path, aside=aside)
            # Compared as stored: the record's item and role went through the scrub too.
            if (
                record is not None
                and record.get("item") == self.scrub.text(item_id)
                and record.get("role") == self.scrub.text(role)
            ):
                return record
        return None

    def _paths(self, item_id: str, role: str) -> list[Path]:
        """Where the record is, and where it was before: before hashed names kept off
        Windows' device names (`nul.txt~<hash>`, `names.file_name_before`), and before names
        were filed injectively (ids that were not plain file names were cut to 120
        characters, any other character `_`). Worked out once per record: a call reads it
        two or three times."""
        if (paths := self._where.get((item_id, role))) is None:
            calls, item, record = self.root / "calls", file_name(item_id), f"{file_name(role)}.json"
            names = [(item, record)]
            if (hashed := file_name_before(item_id)) is not None:
                names.append((hashed, record))
            before = (_before(item_id), f"{_before(role)}.json")
            if before not in names and before[0] not in ("", ".", ".."):
                names.append(before)
            paths = self._where[item_id, role] = [calls / folder / name for folder, name in names]
        return paths

    def _load(self, path: Path, *, aside: bool = True) -> dict[str, Any] | None:
        try:
            record = bounded.load_json(path)
            _check(record)
        except FileNotFoundError:
            return None
        except (ValueError, TypeError, KeyError, AttributeError) as error:
            if not aside:
                return None
            if self.published:
                raise VerifyError(
                    self.scrub.text(
                        f"{path}: corrupt cache record ({error}); a published run's records are "
                        "read, never moved or asked again: restore its run folder as published"
                    )
                ) from None
            moved = path.with_suffix(f".corrupt-{os.getpid()}")
            os.replace(path, moved)
            message = self.scrub.text(
                f"{path}: corrupt cache record ({error}); moved to {moved.name} and asking again"
            )
            warnings.warn(CacheWarning(message), stacklevel=3)
            return None
        return record

    def lookup(
        self, item_id: str, role: str, request: dict[str, Any]
    ) -> Completion | ProviderError | None:
        """A cached answer to exactly this request; a final error only if this session made it."""
        record = self.read(item_id, role)
        if record is None:
            return None
        record = self.scrub(
            record
        )  # a record written before keys were scrubbed hands on none either
        if record["request"] != self.scrub(request):
            return None
        if "error" in record and self.session is not None and record.get("session") != self.session:
            return None  # a new session retries what failed before
        return _outcome(record)

    def store(
        self, item_id: str, role: str, request: dict[str, Any], outcome: Completion | ProviderError
    ) -> Completion | ProviderError:
        """Write the record, scrubbed; the outcome as written, which is what later reads get."""
        record: dict[str, Any] = {
            "format": FORMAT,
            "item": item_id,
            "role": role,
            "request": request,
        }
        if isinstance(outcome, Completion):
            record["response"] = outcome.to_record()
        else:
            record["error"] = {
                "kind": outcome.kind,
                "status": outcome.status,
                "message": str(outcome),
            }
            record["session"] = self.session
        record = self.scrub(record)
        # The tree is --run-dir (the run folder is <run dir>/<eval>/<run>): a link in it leading
        # out is refused, never written through.
        write_json_atomic(
            self.record_path(item_id, role), record, durable=False, tree=self.root.parent.parent
        )
        return _outcome(record)


def _outcome(record: dict[str, Any]) -> Completion | ProviderError:
    if "error" in record:
        error = record["error"]
        return ProviderError(error["message"], kind=error["kind"], status=error.get("status"))
    return Completion.from_record(record["response"])


def _check(record: Any) -> None:
    """Raise ValueError unless `record` is a whole record of this harness version with every
    field of its type (a response that makes a Completion, an error with a string kind and
    message), so that no later step meets a null where it counts tokens."""
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise ValueError("not a cache record of this harness version")
    if ("response" in record) == ("error" in record):
        raise ValueError("a record holds either a response or an error")
    if not isinstance(record.get("request"), dict):
        raise ValueError(f"request is {kind_of(record.get('request'))}, not an object")
    if "response" in record:
        Completion.from_record(record["response"])
        return
    error = record["error"]
    if not isinstance(error, dict):
        raise ValueError(f"error is {kind_of(error)}, not an object")
    for name in ("kind", "message"):
        if not isinstance(error.get(name), str):
            raise ValueError(f"error.{name} is {kind_of(error.get(name))}, not a string")
    status = error.get("status")
    if status is not None and (isinstance(status, bool) or not isinstance(status, int)):
        raise ValueError(f"error.status is {kind_of(status)}, not an HTTP status")
    if not isinstance(record.get("session"), (str, type(None))):
        raise ValueError(f"session is {kind_of(record.get('session'))}, not a string")


def _before(name: str) -> str:
    """The file name of `name` in run folders written before `file_name` (lossy)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name)[:120]
