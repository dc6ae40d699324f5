"""The run folder's cache of model calls: the source of truth of a run.

Every call (candidate and judge) is one JSON record holding the request, the response text,
the reasoning text, usage, latency and finish reason, or the call's final error. Records are
written atomically; a corrupt one is moved aside, reported and redone, never a crash. A
per-record file lock makes concurrent processes ask each question once."""

from __future__ import annotations

import json
import os
import re
import warnings
from pathlib import Path
from typing import Any

from filelock import FileLock

from evals.atomic import write_json_atomic
from evals.errors import ProviderError
from evals.names import file_name
from evals.providers import Completion

FORMAT = 1


class CacheWarning(UserWarning):
    """A cache record could not be used and is being redone."""


class RunCache:
    def __init__(self, root: Path, session: str | None):
        self.root = root
        # Errors recorded in this session are not retried in it; None replays every recorded
        # error (the offline rescoring of a published run).
        self.session = session

    def record_path(self, item_id: str, role: str) -> Path:
        return self.root / "calls" / file_name(item_id) / f"{file_name(role)}.json"

    def lock(self, item_id: str, role: str) -> FileLock:
        path = self.root / "locks" / file_name(item_id) / f"{file_name(role)}.lock"
        path.parent.mkdir(parents=True, exist_ok=True)
        return FileLock(path)

    def read(self, item_id: str, role: str) -> dict[str, Any] | None:
        """The usable record, or None when there is none (missing, corrupt, stale). A record
        is only ever its own item's and role's: each records both."""
        for path in self._paths(item_id, role):
            record = self._load(path)
            if record is not None and record.get("item") == item_id and record.get("role") == role:
                return record
        return None

    def _paths(self, item_id: str, role: str) -> list[Path]:
        """Where the record is, and where it was before names were filed injectively: ids
        that were not plain file names were cut to 120 characters, any other character `_`."""
        path = self.record_path(item_id, role)
        before = self.root / "calls" / _before(item_id) / f"{_before(role)}.json"
        return [path] if before == path or _before(item_id) in ("", ".", "..") else [path, before]

    def _load(self, path: Path) -> dict[str, Any] | None:
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            if record.get("format") != FORMAT or not ("response" in record or "error" in record):
                raise ValueError("not a cache record of this harness version")
            if "response" in record:
                Completion.from_record(record["response"])
        except FileNotFoundError:
            return None
        except (ValueError, TypeError, KeyError, AttributeError) as error:
            aside = path.with_suffix(f".corrupt-{os.getpid()}")
            os.replace(path, aside)
            warnings.warn(CacheWarning(f"{path}: corrupt cache record ({error}); moved to {aside.name} and asking again"), stacklevel=3)
            return None
        return record

    def lookup(self, item_id: str, role: str, request: dict[str, Any]) -> Completion | ProviderError | None:
        """A cached answer to exactly this request; a final error only if this session made it."""
        record = self.read(item_id, role)
        if record is None or record["request"] != request:
            return None
        if "error" in record:
            if self.session is not None and record.get("session") != self.session:
                return None  # a new session retries what failed before
            error = record["error"]
            return ProviderError(error["message"], kind=error["kind"], status=error.get("status"))
        return Completion.from_record(record["response"])

    def store(self, item_id: str, role: str, request: dict[str, Any], outcome: Completion | ProviderError) -> None:
        record: dict[str, Any] = {"format": FORMAT, "item": item_id, "role": role, "request": request}
        if isinstance(outcome, Completion):
            record["response"] = outcome.to_record()
        else:
            record["error"] = {"kind": outcome.kind, "status": outcome.status, "message": str(outcome)}
            record["session"] = self.session
        write_json_atomic(self.record_path(item_id, role), record)


def _before(name: str) -> str:
    """The file name of `name` in run folders written before `file_name` (lossy)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name)[:120]
