"""One eval run: its samples, its providers, its run folder, and the work of answering items.

`answer(sample)` is everything an item does: the candidate call, then scoring (which may
call the judges), every call read from the run folder's cache when it is there. A run is
built in one place, `build_run`, from a `RunSpec` (picklable: a child process builds the
same run), and is handed at construction how its calls are asked ahead of the items: an
`Asker` (`evals.askers`), chosen once per process as pytest-xdist chooses a scheduler: on
background threads of this process (`Threads`, the default), from child processes, or through
the providers' Batch APIs. The per-record locks in the cache make several processes (xdist
workers, children) share the work without asking anything twice."""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import datetime as dt
import hashlib
import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


from evals import bounded
from evals.askers.protocol import Asker
from evals.askers.threads import Threads
from evals.atomic import write_fix, write_json_atomic
from evals.cache import RunCache
from evals.config import RunConfig
from evals.energy.spans import Span, SpanLog
from evals.errors import BatchWaiting, FatalError, FatalProviderError, ProviderError, StorageError
from evals.names import windows_path_note
from evals.providers import (
    PROVIDERS,
    Completion,
    Provider,
    ProviderSpec,
    Request,
    RetryPolicy,
    Throttle,
    call_with_retries,
    configured_secrets,
    endpoint_throttle,
)
from evals.scrub import Scrub
from evals.tasks import TASKS, Attempt, Task, row_identity


FORCED = "forced.json"  # in a run folder --force started: by which command, and what it set aside


class _Busy(Exception):
    """Another thread or process is making this call right now."""


@dataclass(frozen=True, kw_only=True)
class RunSpec:
    """What a run is built from, without a key (every process reads the same environment):
    picklable, so a child process asking ahead of the items builds the same run. Built by
    keyword only: twelve fields, several of one type, are too many to tell apart by position."""

    eval: str
    config: RunConfig
    samples: Sequence[Any]
    candidate: ProviderSpec
    judges: Sequence[tuple[str, ProviderSpec]]  # the judges this eval calls, by name
    redacted: Sequence[ProviderSpec]  # whose keys are redacted though this eval does not call them
    folder: Path
    session: str | None  # None: recorded errors are replayed too (a published run)
    concurrency: int = 8
    energy: bool = False
    published: bool = False  # every answer comes from the run folder: nothing is asked ahead
    request_timeout: float = (
        RetryPolicy.timeout
    )  # one attempt of a model call, connect to last byte


def build_run(
    spec: RunSpec,
    providers: Callable[[ProviderSpec, str], Provider],
    *,
    asker: Asker[EvalRun] | None = None,
    resources: Mapping[str, Any] = {},
    items_here: bool = True,
    policy: RetryPolicy | None = None,
) -> EvalRun:
    """The run `spec` describes; `providers(spec, role)` makes the provider of the candidate
    (role "candidate") or of a judge ("judge-0"...). `items_here`: False where no item runs
    (a child asking ahead), so no answer is kept in memory for one."""
    return EvalRun(
        TASKS[spec.eval],
        spec.config,
        spec.samples,
        candidate=providers(spec.candidate, "candidate"),
        judges=[
            (name, providers(judge, f"judge-{index}"))
            for index, (name, judge) in enumerate(spec.judges)
        ],
        folder=spec.folder,
        session=spec.session,
        concurrency=spec.concurrency,
        policy=policy or RetryPolicy(timeout=spec.request_timeout),
        resources=resources,
        secrets=[key for redacted in spec.redacted for key in configured_secrets(redacted)],
        spans=SpanLog(spec.folder) if spec.energy else None,
        asker=asker,
        items_here=items_here,
        spec=spec,
    )


def judge_request(judge: Provider, request: Request) -> Request:
    """What a judge is asked: the task's question, with the judge's cap on its verdict's tokens
    (--judge-max-tokens) when it has one; without, the request carries none (the server's default)."""
    cap = judge.spec.max_tokens
    return request if cap is None else dataclasses.replace(request, max_tokens=cap)


@dataclass(frozen=True)
class Call:
    """A model call an item needs: its item, its role (`candidate`, `judge-0`), whom it asks, what."""

    item: str
    role: str
    provider: Provider
    request: Request


class EvalRun:
    def __init__(
        self,
        task: Task,
        config: RunConfig,
        samples: Sequence[Any],
        *,
        candidate: Provider,
        judges: Sequence[tuple[str, Provider]] = (),
        folder: Path,
        session: str | None,  # None: recorded errors are replayed too (a published run)
        concurrency: int = 8,
        policy: RetryPolicy = RetryPolicy(),
        resources: Mapping[str, Any] = {},
        secrets: Sequence[str] = (),
        spans: SpanLog | None = None,
        asker: Asker[EvalRun] | None = None,
        items_here: bool = True,
        spec: RunSpec | None = None,
    ):
        self.task = task
        self.spec = spec  # what `build_run` built it from: a child asking ahead builds the same run
        self.published = spec is not None and spec.published
        self.config = config
        self.samples = list(samples)
        self.candidate = candidate
        self.judges = list(judges)
        self.judge_names = [name for name, _ in self.judges]
        self.folder = folder
        # Every configured key, the candidate's and each judge's (`secrets`: also those of judges
        # this eval does not call): none is written, whoever echoes it.
        self.scrub = Scrub(
            [
                *secrets,
                *(
                    secret
                    for provider in (candidate, *(p for _, p in self.judges))
                    for secret in provider.secrets
                ),
            ]
        )
        self.cache = RunCache(folder, session, scrub=self.scrub, published=self.published)
        self.policy = policy
        self.concurrency = concurrency
        # What the command configured for the task to score with, by kind (`Scoring.resource`):
        # opaque to the run (a sandbox an eval runs the model's code in).
        self.resources = dict(resources)
        self._stop = threading.Event()
        self._asking: dict[tuple[str, str], threading.Event] = {}  # calls in flight in this process
        # What this process stored, kept for the item that reads it next (a prefetch thread
        # asked, the item takes it): the answer as the cache wrote it, without reading it back.
        self._stored: dict[tuple[str, str], tuple[dict[str, Any], Completion | ProviderError]] = {}
        self._hands_over = (
            items_here  # False where no item runs (a child asking ahead): nothing is kept
        )
        self.fatal: FatalError | None = None
        # --energy: takes the wall-clock span of each candidate request
        self.spans = spans
        self._bands = (
            {sample.id: task.band(task.sample_fields(sample)) for sample in self.samples}
            if spans and task.bands
            else {}
        )
        # How calls are asked ahead of the items: waited for before an item's first cache
        # read, and asked where a call waits in a Batch API batch before making it directly.
        self.asker: Asker[EvalRun] = asker if asker is not None else Threads()

    # -- what an item does -------------------------------------------------------------

    def answer(self, sample: Any, *, wait: bool = True) -> dict[str, Any]:
        """The item's result row, scrubbed: the one place rows are made, so the result file,
        the item's report and its junit properties carry no key. Raises `FatalError`
        (scrubbed too) when the run must end."""
        if self.fatal:
            raise self.fatal
        return self.scrub(self._row(sample, wait))

    def _row(self, sample: Any, wait: bool) -> dict[str, Any]:
        scoring = _Scoring(self, wait)
        request = self._candidate_request(sample)
        completion = None
        try:
            completion = self._call(sample.id, "candidate", self.candidate, request, wait=wait)
            scoring.calls.append(
                ("candidate", self.call_record(self.candidate, request), completion)
            )
            scored = self.task.score(sample, completion, scoring)
        except FatalError:
            raise
        except ProviderError as error:
            scoring.calls.append(("error", {}, error))
            scored = {"status": "apiError", "correct": False, "error": f"{error.kind}: {error}"}
            if (
                completion is None
            ):  # the candidate's own call failed: nothing was answered, nothing is counted
                return {
                    **row_identity(sample),
                    **self.task.sample_fields(sample),
                    **scored,
                    "records": records_digest(scoring.calls),
                }
            # A later call failed (a judge's): the candidate's answer was paid for all the same, and is counted.
        batched = ["candidate"] * bool(completion.batch) + scoring.batched
        return {
            **row_identity(sample),
            **self.task.sample_fields(sample),
            **scored,
            "finishReason": completion.finish_reason,
            "usage": dataclasses.asdict(completion.usage),
            "latency": completion.latency,
            **(
                {"batched": batched} if batched else {}
            ),  # the calls a Batch API answered, at its price
            "records": records_digest(
                scoring.calls
            ),  # what it was scored from: verify tells a changed record from a regrade
        }

    def needed_calls(self, sample: Any) -> list[Call]:
        """The calls the item needs next that are not cached: its candidate's, or, once that
        reply is cached, its judges' (what `--batch` submits)."""
        request = self._candidate_request(sample)
        reply = self.cache.lookup(sample.id, "candidate", self.call_record(self.candidate, request))
        if reply is None:
            return [Call(sample.id, "candidate", self.candidate, request)]
        if (
            isinstance(reply, ProviderError)
            or not self.judges
            or (judged := self.task.judge_request(sample, reply)) is None
        ):
            return []
        asked = [
            (i, provider, judge_request(provider, judged))
            for i, (_, provider) in enumerate(self.judges)
        ]
        return [
            Call(sample.id, f"judge-{i}", provider, request)
            for i, provider, request in asked
            if self.cache.lookup(sample.id, f"judge-{i}", self.call_record(provider, request))
            is None
        ]

    @staticmethod
    def call_record(provider: Provider, request: Request) -> dict[str, Any]:
        """What a call's cache record holds as its request: who was asked, and what."""
        return {"provider": provider.spec.identity(), **request.to_record()}

    def _candidate_request(self, sample: Any) -> Request:
        request = self.task.request(
            sample,
            system_prompt_prefix=self.config.identity.system_prompt_prefix,
            max_tokens=self.config.identity.spec.max_tokens,
        )
        info = PROVIDERS.get(self.candidate.spec.provider)
        if (
            isinstance(sample, Attempt) and info and info.sampling
        ):  # each epoch its own seed, where the API takes one
            request = dataclasses.replace(request, seed=sample.epoch)
        return request

    def judge(self, item_id: str, index: int, request: Request, *, wait: bool = True) -> Completion:
        _, provider = self.judges[index]
        return self._call(
            item_id, f"judge-{index}", provider, judge_request(provider, request), wait=wait
        )

    def _call(
        self, item_id: str, role: str, provider: Provider, request: Request, *, wait: bool
    ) -> Completion:
        """The answer to `request`: looked up where it may be already, else asked and stored.
        `wait`: False on a thread asking ahead, which skips a call someone else is making."""
        record = self.call_record(provider, request)
        key = (item_id, role)
        answer = self._look_up(key, record, wait=wait)
        if answer is None:
            answer = self._ask_and_store(key, record, provider, request, wait=wait)
        if isinstance(answer, ProviderError):
            raise answer
        return answer

    def _look_up(
        self, key: tuple[str, str], record: dict[str, Any], *, wait: bool
    ) -> Completion | ProviderError | None:
        """The answer to `record` already made, or None: once whoever asks ahead of the items is
        done with the item (`wait`), the answer this process stored, else the cache's; for a
        call that waits in a Batch API batch, the cache's or `BatchWaiting`; for one a thread
        of this process is making (`wait`), its answer once made."""
        item_id, role = key
        if wait:
            self.asker.wait(self, item_id)  # whoever asks ahead of the items is done with it
            if self.fatal:
                raise self.fatal
        answer = self._stored_here(key, record)
        if answer is None:
            answer = self.cache.lookup(item_id, role, record)
        if answer is not None:
            return answer
        if waiting := self.asker.waiting(self, key):
            answer = self.cache.lookup(
                item_id, role, record
            )  # collected meanwhile, by another process
            if answer is None:
                raise BatchWaiting(waiting.batch, waiting.status, waiting.since)
            return answer
        if wait and (asking := self._asking.get(key)):
            asking.wait()  # a prefetch thread of this process is asking: no need to take the file lock
            answer = self._stored_here(key, record)
            if answer is None:
                answer = self.cache.lookup(item_id, role, record)
        return answer

    def _ask_and_store(
        self,
        key: tuple[str, str],
        record: dict[str, Any],
        provider: Provider,
        request: Request,
        *,
        wait: bool,
    ) -> Completion | ProviderError:
        """Ask `provider` under the record's lock (the cache's answer, if another process
        stored one while the lock was waited for) and store the answer: from then on, the
        answer as the cache wrote it, the same text a rerun reads. `_Busy` when not `wait` and
        another thread or process holds the lock; a fatal error ends the run."""
        item_id, role = key
        path = self.cache.record_path(item_id, role)
        lock = self.cache.lock(item_id, role)
        with self.storing(path):
            acquired = lock.acquire(wait=wait)
        if not acquired:
            raise _Busy
        done = self._asking.setdefault(key, threading.Event())
        try:
            answer = self.cache.lookup(item_id, role, record)
            if answer is not None:
                return answer
            started = time.time()
            answer = self._ask(provider, request)
            if self.spans is not None and role == "candidate":
                self._record_span(self.spans, item_id, started)
            if isinstance(
                answer, FatalProviderError
            ):  # the run's end: this error, or the one that ended it first
                raise self.end_with(self.scrub.error(answer))
            with self.storing(path):
                answer = self.cache.store(item_id, role, record, answer)
            if self._hands_over:
                self._stored[key] = (record, answer)
            return answer
        finally:
            lock.release()
            self._asking.pop(key, None)
            done.set()

    def _stored_here(
        self, key: tuple[str, str], record: dict[str, Any]
    ) -> Completion | ProviderError | None:
        """The answer to `record` this process stored, taken once."""
        stored = self._stored.pop(key, None)
        return stored[1] if stored is not None and stored[0] == record else None

    def _record_span(self, spans: SpanLog, item_id: str, started: float) -> None:
        with self.storing(self.folder):
            spans.record(
                Span(started, time.time(), self.energy_label(self.folder), self._bands.get(item_id))
            )

    @staticmethod
    def energy_label(folder: Path) -> str:
        """How a run's energy spans are told apart from other runs' (other evals, other identities)."""
        return f"{folder.parent.name}/{folder.name}"

    def end_with(self, error: FatalError) -> FatalError:
        """End the run: every later item meets the same error, prefetching stops."""
        self.fatal = self.fatal or error
        self._stop.set()
        return self.fatal

    @contextlib.contextmanager
    def storing(self, path: Path) -> Iterator[None]:
        """Around a write into the run folder (`path`, named in the message): failing (a full
        disk, a read-only folder), it ends the run. What was written before stays: each
        record is written whole or not."""
        try:
            yield
        except OSError as error:
            raise self.end_with(
                StorageError(
                    f"cannot write {path} ({error.strerror or error}{windows_path_note(path)}): every answer "
                    f"kept so far is in {self.folder}; {write_fix(error)}"
                )
            ) from None

    def _ask(self, provider: Provider, request: Request) -> Completion | ProviderError:
        try:
            return call_with_retries(
                provider, request, throttle=self._throttle(provider), policy=self.policy
            )
        except ProviderError as error:
            return error

    def _throttle(self, provider: Provider) -> Throttle:
        return endpoint_throttle(provider.spec, self.concurrency)

    # -- ahead of the items ------------------------------------------------------------

    def prefetch(
        self, samples: Sequence[Any], *, threads: int, done: Callable[[Any], None] | None = None
    ) -> list[threading.Thread]:
        """Answer `samples` on background threads; items then find their calls cached.
        `done(sample)` is told of each sample once its calls are made, failed or skipped.
        Returns the thread that ends once every sample is answered (or the run stopped)."""
        pending = collections.deque(samples)

        def work() -> None:
            while not self._stop.is_set():
                try:
                    sample = pending.popleft()
                except IndexError:
                    return
                try:
                    self._prefetch_one(sample)
                except Exception:  # noqa: BLE001 - busy, failed or fatal: the item meets and reports it
                    pass
                if done is not None:
                    done(sample)

        # A quarter more threads than requests allowed in flight, and one more for each request
        # that keeps a thread without holding a slot (stalled, or a retry sleeping out its
        # backoff: `Throttle.set_aside`), so neither leaves a free slot unused. Not a fixed
        # reserve: every idle thread takes its turn at the GIL and at the kernel's locks (twice
        # as many threads made the request phase at 2,000 items and 64 in flight 1.9 x ideal
        # instead of 1.5-1.6, `bench/cpu.py`; too few made a storm of 30 s stalls 25% slower,
        # `bench/storm.py`).
        base = threads + threads // 4 + 1
        throttles = {
            id(t): t
            for t in (self._throttle(p) for p in (self.candidate, *(p for _, p in self.judges)))
        }.values()

        def supervise() -> None:
            workers: list[threading.Thread] = []
            while pending and not self._stop.is_set():
                alive = sum(worker.is_alive() for worker in workers)
                for _ in range(base + sum(t.set_aside() for t in throttles) - alive):
                    workers.append(
                        threading.Thread(target=work, name=f"prefetch-{len(workers)}", daemon=True)
                    )
                    workers[-1].start()
                self._stop.wait(0.25)
            for worker in workers:
                worker.join()

        supervisor = threading.Thread(target=supervise, name="prefetch", daemon=True)
        supervisor.start()
        return [supervisor]

    def _prefetch_one(self, sample: Any) -> None:
        """The item's model calls only: the candidate, then each judge, asked what the task's
        `judge_request` makes of the reply, in the order its score asks them (one failing, the
        next is not asked, as there). Scoring, and local grading (running code), stays with
        the item, off these threads: it reads these calls from the cache."""
        reply = self._call(
            sample.id, "candidate", self.candidate, self._candidate_request(sample), wait=False
        )
        if self.judges and (judged := self.task.judge_request(sample, reply)) is not None:
            for index in range(len(self.judges)):
                if self._stop.is_set():  # the session is ending: no new call (the item makes it)
                    return
                self.judge(sample.id, index, judged, wait=False)

    def stop(self) -> None:
        self._stop.set()


def start_over(folder: Path, result_file: Path, session: str) -> Path | None:
    """--force: set the run folder and its result file aside (renamed, never deleted) and
    start an empty folder, once per command however many processes ask; the folder kept,
    or None when there was none or a sibling process of this command already did it."""
    from filelock import FileLock  # here: the asking child imports this module, and never this

    folder.parent.mkdir(parents=True, exist_ok=True)
    marker = folder / FORCED
    with FileLock(folder.parent / f".{folder.name}.force.lock"):
        try:
            if bounded.load_json(marker)["session"] == session:
                return None
        except (FileNotFoundError, ValueError, KeyError, TypeError):
            pass
        stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S.%fZ")
        kept = None
        if folder.exists():
            kept = folder.with_name(f"{folder.name}.replaced-{stamp}")
            folder.rename(kept)
        if result_file.exists():
            result_file.rename(result_file.with_name(f"{result_file.name}.replaced-{stamp}"))
        write_json_atomic(
            marker,
            {"session": session, "kept": str(kept) if kept else None},
            tree=folder.parent.parent,  # --run-dir
        )
    return kept


def forced_in(folder: Path, session: str) -> Path | None:
    """The folder --force set aside in this session, if it did."""
    try:
        record = bounded.load_json(folder / FORCED)
    except (FileNotFoundError, ValueError):
        return None
    return (
        Path(record["kept"])
        if isinstance(record, dict) and record.get("session") == session and record.get("kept")
        else None
    )


class _Scoring:
    """What a task scores with: judge calls that wait (items) or skip when busy (prefetch),
    the run folder for what the task keeps of its own, and the resources the command
    configured for it."""

    def __init__(self, run: EvalRun, wait: bool):
        self._run = run
        self._wait = wait
        self.judge_names = run.judge_names
        self.folder = run.folder
        self.batched: list[str] = []  # the judge calls a Batch API answered
        self.calls: list[
            tuple[str, dict[str, Any], Completion | ProviderError]
        ] = []  # what the row is scored from

    def judge(self, item_id: str, index: int, request: Request) -> Completion:
        completion = self._run.judge(item_id, index, request, wait=self._wait)
        provider = self._run.judges[index][1]
        self.calls.append(
            (
                f"judge-{index}",
                self._run.call_record(provider, judge_request(provider, request)),
                completion,
            )
        )
        if completion.batch:
            self.batched.append(f"judge-{index}")
        return completion.apart()  # a verdict is read without the judge's reasoning, as a reply is

    def storing(self, path: Path) -> contextlib.AbstractContextManager[None]:
        return self._run.storing(path)

    def resource(self, kind: str) -> Any:
        return self._run.resources.get(kind)


DIGEST_DIGITS = 16  # hex digits of a row's `records` digest: 64 bits


def records_digest(calls: list[tuple[str, dict[str, Any], Completion | ProviderError]]) -> str:
    """A row's `records`: a digest of the calls it was scored from (each role, what was asked
    and what was answered, as the cache records hold them). Any change to a record that is
    read changes it; what only measures the machine (a call's latency) or says how it was
    answered (the batch) does not, so two runs that got the same answers bind alike. Made from
    the answers in hand, where the row is made: no record is read twice."""
    digest = hashlib.sha256()
    for role, request, outcome in calls:
        if isinstance(outcome, Completion):
            answer = {k: v for k, v in outcome.to_record().items() if k not in ("latency", "batch")}
        else:
            answer = {
                "error": {"kind": outcome.kind, "status": outcome.status, "message": str(outcome)}
            }
        line = json.dumps(
            [role, request, answer], sort_keys=True, ensure_ascii=False, separators=(",", ":")
        )
        digest.update(line.encode("utf-8", "surrogatepass") + b"\n")
    return digest.hexdigest()[:DIGEST_DIGITS]
