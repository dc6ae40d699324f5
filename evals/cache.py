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
        return self.root / "calls" / item_file_name(item_id) / f"{_safe(role)}.json"

    def lock(self, item_id: str, role: str) -> FileLock:
        path = self.root / "locks" / f"{_safe(item_id)}.{_safe(role)}.lock"
        path.parent.mkdir(parents=True, exist_ok=True)
        return FileLock(path)

    def read(self, item_id: str, role: str) -> dict[str, Any] | None:
        """The usable record, or None when there is none (missing, corrupt, stale)."""
        path = self.record_path(item_id, role)
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
            warnings.warn(CacheWarning(f"{path}: corrupt cache record ({error}); moved to {aside.name} and asking again"), stacklevel=2)
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

def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name)[:120]


def item_file_name(item_id: str) -> str:
    """The file name an item's records go under. Two ids with the same name (up to case,
    for case-insensitive file systems) would share records: datasets refuse them at load."""
    return _safe(item_id)
