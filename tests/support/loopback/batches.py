"""Batch APIs for the loopback servers: the provider-neutral machinery.

Both providers' batch APIs work the same way underneath: a list of (custom_id, request body)
lines is accepted, sits in a queue for a while, and ends with one result per line, in no
particular order. This module keeps that part once:

  * `Batch`: one batch, its lines and its state, named in OpenAI's vocabulary
    (validating -> in_progress -> finalizing -> completed | failed | expired,
    and cancelling -> cancelled). AnthropicServer maps these to its own three statuses.
  * `BatchBook`: all batches of one server. The state machine runs lazily, from the time since
    create, whenever a batch is read or listed: no background thread, so a test controls time
    through `batch_seconds`, `hold()` / `release()`, and nothing happens between reads.
  * `BatchServing`: the mixin that gives a provider server the book and the test-facing methods
    (`batch_outcome_when`, `next_batch_ends`, `hold_batches`, counters).

Each line's reply is produced by running its body through the server's own route handler (the
one the live endpoint uses, with the server's responder), so a batch answer equals the live
answer for the same body. Those synthesized requests are not recorded, logged or delayed: the
request log is for HTTP requests only.

The providers only render shapes: OpenAI writes output and error files, Anthropic a JSONL
results stream.
"""

from __future__ import annotations

import json
import random
import threading
import time
from dataclasses import dataclass, field
from itertools import count
from typing import Any, Callable

from .core import Reply, Request

# Shares of `batch_seconds` at which a batch leaves a stage.
VALIDATING_SHARE = 0.2  # validating -> in_progress
PROCESSING_SHARE = 0.8  # in_progress -> finalizing (or its injected fate)

ENDED = frozenset({"completed", "failed", "expired", "cancelled"})

# The `errors` entry of a batch failed by next_batch_ends("failed") (OpenAI's shape: only
# OpenAI batches fail as a whole).
INJECTED_FAILURE = {
    "code": "batch_failed",
    "message": "The batch failed (injected by the loopback server's next_batch_ends).",
    "param": None,
    "line": None,
}

# What can befall one line: an int is an HTTP status (the line's reply is that error).
LineOutcome = int | str  # 400, 429, 500, ... | "expired" | "cancelled"
LinePredicate = Callable[[str, Any], bool]  # (custom_id, body) -> applies?


def canonical_outcome(outcome: LineOutcome) -> LineOutcome:
    """OpenAI spells it "cancelled", Anthropic "canceled": both mean the same here."""
    if outcome == "canceled":
        return "cancelled"
    if isinstance(outcome, int) or outcome in ("expired", "cancelled", "failed"):
        return outcome
    raise ValueError(f"unknown batch outcome {outcome!r}")


@dataclass
class LineResult:
    """How one line ended. `reply` is the endpoint's reply for succeeded and errored lines."""

    custom_id: str
    kind: str  # "succeeded" | "errored" | "expired" | "cancelled"
    reply: Reply | None = None
    number: int = 0  # a per-server serial, for ids such as batch_req_...


@dataclass
class Batch:
    """One batch. `lines` keep input order; `results` do not (see `BatchBook._finish`)."""

    id: str
    endpoint: str  # the path each line is POSTed to, e.g. /v1/chat/completions
    lines: list[tuple[str, Any]]  # (custom_id, body)
    created_at: float
    attributes: dict = field(default_factory=dict)  # provider fields: metadata, input_file_id
    problems: list[dict] = field(default_factory=list)  # validation errors: the batch fails
    fate: str | None = None  # "failed" | "expired" | "cancelled", from next_batch_ends
    status: str = "validating"
    entered: dict[str, float] = field(default_factory=dict)  # status -> time it was entered
    done: int | None = None  # lines processed before an early stop (cancel, expiry)
    results: list[LineResult] | None = None  # once ended (empty if it failed)

    @property
    def ended(self) -> bool:
        return self.status in ENDED

    def count(self, kind: str) -> int:
        return sum(r.kind == kind for r in self.results or ())

    def snapshot(self) -> dict:
        return {
            "id": self.id,
            "status": self.status,
            "endpoint": self.endpoint,
            "custom_ids": [custom_id for custom_id, _ in self.lines],
        }


class BatchBook:
    """The batches of one server and the rules that decide how they end.

    `run_line(endpoint, body)` answers one line as the live endpoint would; `error_reply(status)`
    is the provider's error for an injected status; `on_end(batch)` lets the provider store
    what it serves afterwards (OpenAI's output files). All state sits behind one lock; the
    lock is held while lines run, so a slow responder slows batch reads, never corrupts them.
    """

    def __init__(
        self,
        id_prefix: str,
        seconds: float,
        run_line: Callable[[str, Any], Reply],
        error_reply: Callable[[int], Reply],
        on_end: Callable[[Batch], None] | None = None,
    ):
        self.id_prefix = id_prefix
        self.seconds = seconds
        self._run_line = run_line
        self._error_reply = error_reply
        self._on_end = on_end or (lambda batch: None)
        self._lock = threading.RLock()
        self._batches: dict[str, Batch] = {}  # insertion order = creation order
        self._rules: list[list] = []  # [predicate, outcome, remaining times or None]
        self._fates: list[str] = []
        self._held = False
        self._serial = count(1)
        self.creates = 0

    # -- test controls -----------------------------------------------------------------------

    def outcome_when(
        self, predicate: LinePredicate, outcome: LineOutcome, times: int | None = None
    ) -> None:
        with self._lock:
            self._rules.append([predicate, canonical_outcome(outcome), times])

    def next_ends(self, fate: str, possible: tuple[str, ...]) -> None:
        fate = canonical_outcome(fate)
        if fate not in possible:
            raise ValueError(f"a batch here can end {' or '.join(possible)}, not {fate!r}")
        with self._lock:
            self._fates.append(fate)

    def hold(self) -> None:
        with self._lock:
            self._held = True

    def release(self) -> None:
        with self._lock:
            self._held = False

    # -- the API's operations ----------------------------------------------------------------

    def create(
        self,
        endpoint: str,
        lines: list[tuple[str, Any]],
        attributes: dict | None = None,
        problems: list[dict] | None = None,
    ) -> Batch:
        """A new batch, counted in `creates`. With `problems`, it fails when validated."""
        with self._lock:
            number = next(self._serial)
            batch = Batch(
                f"{self.id_prefix}loopback{number:06d}",
                endpoint,
                lines,
                time.time(),
                attributes or {},
                problems or [],
                self._fates.pop(0) if self._fates else None,
            )
            batch.entered["validating"] = batch.created_at
            self._batches[batch.id] = batch
            self.creates += 1
            return batch

    def get(self, batch_id: str) -> Batch | None:
        """The batch, advanced to now; None for an unknown id."""
        with self._lock:
            batch = self._batches.get(batch_id)
            if batch:
                self._advance(batch)
            return batch

    def all(self) -> list[Batch]:
        """Every batch, advanced to now, newest first (as both list endpoints order them)."""
        with self._lock:
            batches = list(self._batches.values())[::-1]
            for batch in batches:
                self._advance(batch)
            return batches

    def backdate(self, seconds: float) -> None:
        with self._lock:
            for batch in self._batches.values():
                batch.created_at -= seconds
                batch.entered = {status: at - seconds for status, at in batch.entered.items()}
                self._advance(batch)

    def snapshot(self) -> list[dict]:
        with self._lock:
            return [batch.snapshot() for batch in self._batches.values()]

    # -- the state machine -------------------------------------------------------------------

    def _advance(self, batch: Batch) -> None:
        now = time.time()
        elapsed = now - batch.created_at
        if batch.status == "cancelling":  # shown once, by the reply that started it
            self._finish(batch, "cancelled")
            return
        if batch.status == "validating" and elapsed >= self.seconds * VALIDATING_SHARE:
            if batch.fate == "failed" and not batch.problems:
                batch.problems.append(INJECTED_FAILURE)
            if batch.problems:
                self._finish(batch, "failed")
                return
            self._enter(batch, "in_progress")
        if (
            batch.status == "in_progress"
            and not self._held
            and elapsed >= self.seconds * PROCESSING_SHARE
        ):
            if batch.fate in ("expired", "cancelled"):
                batch.done = (len(batch.lines) + 1) // 2  # the first half made it
                if batch.fate == "expired":
                    self._finish(batch, "expired")
                else:
                    self._enter(batch, "cancelling")
                return
            self._enter(batch, "finalizing")
        if batch.status == "finalizing" and elapsed >= self.seconds:
            self._finish(batch, "completed")

    def _enter(self, batch: Batch, status: str) -> None:
        batch.status = status
        batch.entered[status] = time.time()

    def _finish(self, batch: Batch, status: str) -> None:
        """End the batch: run the lines that got done, mark the others, shuffle, store."""
        results = []
        if status != "failed":
            done = len(batch.lines) if batch.done is None else batch.done
            stopped = "expired" if status == "expired" else "cancelled"
            for index, (custom_id, body) in enumerate(batch.lines):
                kind, reply = (
                    self._run(custom_id, body, batch.endpoint) if index < done else (stopped, None)
                )
                results.append(LineResult(custom_id, kind, reply, next(self._serial)))
        batch.results = out_of_order(results, batch.id)
        self._enter(batch, status)
        self._on_end(batch)

    def _run(self, custom_id: str, body: Any, endpoint: str) -> tuple[str, Reply | None]:
        outcome = self._take_outcome(custom_id, body)
        if outcome in ("expired", "cancelled"):
            return outcome, None
        reply = self._error_reply(outcome) if outcome else self._run_line(endpoint, body)
        return ("succeeded" if reply.status == 200 else "errored"), reply

    def _take_outcome(self, custom_id: str, body: Any) -> LineOutcome | None:
        for rule in self._rules:
            predicate, outcome, times = rule
            if times != 0 and predicate(custom_id, body):
                if times is not None:
                    rule[2] = times - 1
                return outcome
        return None


def out_of_order(results: list, seed: str) -> list:
    """A deterministic shuffle that never leaves two or more results in input order: neither
    provider promises order, and a client that relies on it must fail here, not in production."""
    shuffled = list(results)
    random.Random(seed).shuffle(shuffled)
    if len(shuffled) > 1 and shuffled == results:
        shuffled = shuffled[1:] + shuffled[:1]
    return shuffled


def page(
    items: list,
    id_of: Callable[[Any], str],
    limit: int,
    *,
    after: str | None = None,
    before: str | None = None,
) -> tuple[list, bool]:
    """Cursor pagination over `items` in list order: the `limit` items right after the one with
    id `after`, or right before the one with id `before`. Returns (page, has_more)."""
    ids = [id_of(item) for item in items]
    if before and before in ids:
        end = ids.index(before)
        start = max(0, end - limit)
        return items[start:end], start > 0
    start = ids.index(after) + 1 if after and after in ids else 0
    return items[start : start + limit], start + limit < len(items)


class BatchServing:
    """Mixin for a RoutedServer: the batch book and the controls tests use.

    Constructor keywords: `batch_seconds` (create -> ended, default 2.0; 0 ends a batch at its
    first read), `batch_max_requests` and `batch_max_bytes` (the provider's limits by default),
    `list_page_limit` (the most objects one page of a list holds, whatever `limit` the client
    asks: some servers serve pages far smaller than asked).
    """

    batch_id_prefix = "batch_"
    batch_limits = (50_000, 200 * 1024 * 1024)  # (requests, bytes) the real API accepts
    batch_fates = ("failed", "expired", "cancelled")  # what next_batch_ends accepts

    def __init__(
        self,
        *args,
        batch_seconds: float = 2.0,
        batch_max_requests: int | None = None,
        batch_max_bytes: int | None = None,
        list_page_limit: int | None = None,
        **kwargs,
    ):
        super().__init__(*args, **kwargs)
        self.list_page_limit = list_page_limit
        self.batch_max_requests = batch_max_requests or self.batch_limits[0]
        self.batch_max_bytes = batch_max_bytes or self.batch_limits[1]
        self.book = BatchBook(
            self.batch_id_prefix, batch_seconds, self.run_line, self.error_reply, self.batch_ended
        )
        self._line_requests = count(1_000_000)  # request indexes, far from the live ones

    # -- test controls -----------------------------------------------------------------------

    def batch_outcome_when(
        self, predicate: LinePredicate, outcome: LineOutcome, times: int | None = None
    ) -> None:
        """Lines for which `predicate(custom_id, body)` holds end with `outcome` instead of the
        endpoint's reply: an HTTP status (the provider's error for it), "expired" or
        "cancelled"/"canceled". At most `times` lines, if given."""
        self.book.outcome_when(predicate, outcome, times)

    def next_batch_ends(self, fate: str) -> None:
        """The next batch created ends `fate` instead of completing (fates queue up)."""
        self.book.next_ends(fate, self.batch_fates)

    def hold_batches(self) -> None:
        """Keep every batch in progress (cancel still works) until `release_batches()`."""
        self.book.hold()

    def release_batches(self) -> None:
        self.book.release()

    def backdate(self, seconds: float) -> None:
        """Every batch made so far, as if made `seconds` earlier (it ends, if it had not)."""
        self.book.backdate(seconds)

    def page_limit(self, params: dict[str, str], default: int) -> int:
        """How many objects a list page holds: the client's `limit`, within `list_page_limit`."""
        limit = int(params.get("limit", default))
        return min(limit, self.list_page_limit) if self.list_page_limit else limit

    @property
    def batch_seconds(self) -> float:
        """Seconds from create to end; settable, and applies to batches already running."""
        return self.book.seconds

    @batch_seconds.setter
    def batch_seconds(self, seconds: float) -> None:
        self.book.seconds = seconds

    @property
    def batch_creates(self) -> int:
        """Successful create calls so far."""
        return self.book.creates

    @property
    def batches(self) -> list[dict]:
        """Snapshot, oldest first: {id, status, endpoint, custom_ids (input order)}."""
        return self.book.snapshot()

    # -- hooks for the book ------------------------------------------------------------------

    def run_line(self, endpoint: str, body: Any) -> Reply:
        """One batch line answered by the live route's handler. Not recorded, logged, delayed
        or faulted: only HTTP requests are."""
        raw = json.dumps(body).encode()
        request = Request(
            next(self._line_requests), "POST", endpoint, "", {}, body, raw, time.time()
        )
        return self.handle_safely(request)

    def batch_ended(self, batch: Batch) -> None:
        """Called once when a batch ends; providers store their result files here."""


def reply_json(reply: Reply) -> Any:
    """A reply's body as a JSON value, for embedding in a result line."""
    if isinstance(reply.body, (dict, list)):
        return reply.body
    text = reply.body.decode("utf-8", "replace") if isinstance(reply.body, bytes) else reply.body
    try:
        return json.loads(text)
    except ValueError:
        return text
