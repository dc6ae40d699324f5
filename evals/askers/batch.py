"""`--batch`: a run's model calls through the providers' Batch APIs, at half the price.

The cache stays the source of truth: a batch's answers become cache records like any call's,
and the items then read them. What batching adds is the run folder's `batches/` ledger, one
JSON file per submission. It is written before the requests leave (status "prepared", with
every custom id and the call it stands for) and again the moment the API answers the create
call, so no kill at any point submits the same requests twice: the next run finds the
submission recorded, polls its batch and collects it (or, killed before the answer, submits
it again under the same name, which the API side recognises where it keeps names).

A pass (`Batcher.run`) does, for every eval run of the command, under the run folder's ledger
lock (so xdist workers take turns and each request is submitted once):

1. polls each recorded batch not yet collected, and collects the ended ones into the cache;
2. works out the calls the selected items still need: a candidate reply, or, once it is
   cached, the judges' verdicts (a judged eval is two rounds);
3. submits them, one batch per provider, split by the API's request and size limits.

With `wait` it polls (backing off) and repeats until nothing is needed or waiting; without,
it stops after one pass and the items whose calls wait in a batch are reported as waiting.
A request the batch did not run (expired, cancelled, a failed batch) or the API answered with
a 429 or 5xx is submitted again in a later batch, up to `RetryPolicy.batch_attempts` times;
then, like a final error, it is recorded as the item's API error.

A refusal is never asked again: a refused submission made no batch, so its record is removed
before the run ends (a later run, with --batch or without, finds nothing to submit again); a
batch the API refuses to retrieve or to hand the results of settles its requests with that
refusal. A run without --batch submits nothing: a submission a killed run left unanswered is
looked up by name, collected if the API made it, or removed and its calls asked directly. A
record says whether a call that may make something went out (`sent`): one that never did (the
Batch API kept failing at the lookup, or a kill came first) is removed, never waited on.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import hashlib
import json
import os
import random
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from filelock import FileLock

from evals import bounded
from evals.askers.threads import Threads
from evals.atomic import write_json_atomic
from evals.errors import BatchUnsupported, FatalError, LedgerWarning, ProviderError, TransientError
from evals.providers import Completion, Provider, Request, RetryPolicy
from evals.providers._batch import BatchAPI, BatchState, RequestOutcome, not_run
from evals.run import Call, EvalRun
from evals.scrub import printable

FORMAT = 1
ATTEMPTS = "attempts.json"  # per call: batches it failed in since its last recorded outcome


@dataclass(frozen=True)
class Waiting:
    """Where an item's call waits: told to the item, which reports it."""

    batch: str | None
    status: str
    since: str | None = None  # when it was submitted (or, not yet, prepared): ISO 8601, UTC


class Ledger:
    """A run folder's `batches/`: one file per submission, written whole (atomically)."""

    def __init__(
        self,
        run_folder: Path,
        storing: Callable[[Path], contextlib.AbstractContextManager[Any]] = lambda path: (
            contextlib.nullcontext()
        ),
    ):
        self.folder = run_folder / "batches"
        self._tree = run_folder.parent.parent  # --run-dir: no link in it leads out
        self._storing = (
            storing  # EvalRun.storing: a write that fails ends the run with a clear line
        )

    def lock(self) -> FileLock:
        self.folder.mkdir(parents=True, exist_ok=True)
        return FileLock(self.folder / ".lock")

    def entries(self) -> list[dict[str, Any]]:
        entries = []
        for path in sorted(self.folder.glob("*.json")) if self.folder.is_dir() else ():
            if path.name == ATTEMPTS:
                continue
            try:
                entry = bounded.load_json(path)
                if not (
                    isinstance(entry, dict)
                    and entry.get("format") == FORMAT
                    and isinstance(entry.get("calls"), dict)
                ):
                    raise ValueError("not a batch record of this harness version")
            except (OSError, ValueError) as error:
                aside = path.with_suffix(f".corrupt-{os.getpid()}")
                os.replace(path, aside)
                warnings.warn(
                    LedgerWarning(
                        f"{path}: unreadable batch record ({error}); moved to {aside.name}; "
                        "its requests are submitted again"
                    ),
                    stacklevel=2,
                )
                continue
            entries.append(entry)
        return entries

    def write(self, entry: dict[str, Any]) -> None:
        with self._storing(self.folder):
            write_json_atomic(self.folder / f"{entry['name']}.json", entry, tree=self._tree)

    def remove(self, entry: dict[str, Any]) -> None:
        """Forget a submission the API never made a batch of: its calls are needed again."""
        with self._storing(self.folder):
            (self.folder / f"{entry['name']}.json").unlink(missing_ok=True)

    def attempts(self) -> dict[str, int]:
        try:
            return bounded.load_json(self.folder / ATTEMPTS)
        except (OSError, ValueError):
            return {}

    def write_attempts(self, attempts: dict[str, int]) -> None:
        with self._storing(self.folder):
            write_json_atomic(self.folder / ATTEMPTS, attempts, tree=self._tree)


class WaitingCalls:
    """What an item asks before making a call itself: does it wait in a batch? Read from the
    ledger under its lock (so never in the middle of another process's pass, which may be
    collecting the reply and submitting the next call), re-read only when the ledger changed."""

    def __init__(self, run_folder: Path):
        self.ledger = Ledger(run_folder)
        self._seen: list[tuple[str, int]] | None = None
        self._waiting: dict[tuple[str, str], Waiting] = {}

    def get(self, key: tuple[str, str]) -> Waiting | None:
        with self.ledger.lock():
            # Every write replaces a file by renaming a new one over it: a new inode.
            seen = sorted(
                (path.name, path.stat().st_ino) for path in self.ledger.folder.glob("*.json")
            )
            if seen != self._seen:
                self._waiting = waiting_calls(self.ledger.entries())
                self._seen = seen
        return self._waiting.get(key)


def has_batches(run_folder: Path) -> bool:
    """Whether an earlier --batch run left batches in the folder that are not yet collected."""
    return any(not entry.get("collected") for entry in Ledger(run_folder).entries())


def waiting_calls(entries: Sequence[dict[str, Any]]) -> dict[tuple[str, str], Waiting]:
    """(item, role) -> its batch, for every call in a submission not yet collected."""
    return {
        (call["item"], call["role"]): Waiting(
            entry.get("batch"),
            entry.get("status", "prepared"),
            entry.get("submittedAt") or entry.get("preparedAt"),
        )
        for entry in entries
        if not entry.get("collected")
        for call in entry["calls"].values()
    }


class Batches:
    """The `Asker` of a process whose runs may use Batch APIs: with --batch (`mode` "submit",
    or "wait" for --batch-wait) every run not published; without, only the runs whose folder
    holds batches an earlier run left (they are collected, and their calls never asked
    directly: that would pay twice). Those runs pass through a `Batcher` pass, then ask the
    rest on threads; every other run is handed to `otherwise` (threads, child processes)."""

    def __init__(
        self, mode: str | None, otherwise: Any, *, say: Callable[[str], None] = lambda line: None
    ):
        self.mode = mode
        self.otherwise = otherwise
        self.say = say
        self._waiting: dict[int, WaitingCalls] = {}  # id(run) -> its ledger, read by its items
        self._threads: Threads | None = None

    def start(self, runs: Sequence[tuple[EvalRun, Sequence[Any]]]) -> None:
        batched = [
            (run, samples)
            for run, samples in runs
            if not run.published and (self.mode or has_batches(run.folder))
        ]
        if batched:
            Batcher(
                batched, wait=self.mode == "wait", submit=self.mode is not None, say=self.say
            ).run()
            self._waiting = {id(run): WaitingCalls(run.folder) for run, _ in batched}
            self._threads = Threads()
            self._threads.start(batched)
        self.otherwise.start(
            [(run, samples) for run, samples in runs if id(run) not in self._waiting]
        )

    def wait(self, run: EvalRun, item_id: str) -> None:
        if id(run) not in self._waiting:
            self.otherwise.wait(run, item_id)

    def waiting(self, run: EvalRun, key: tuple[str, str]) -> Waiting | None:
        calls = self._waiting.get(id(run))
        return calls.get(key) if calls is not None else self.otherwise.waiting(run, key)

    def stop(self) -> str | None:
        if self._threads is not None:
            self._threads.stop()
        return self.otherwise.stop()


class Batcher:
    def __init__(
        self,
        runs: Sequence[tuple[EvalRun, Sequence[Any]]],
        *,
        wait: bool,
        submit: bool = True,
        say: Callable[[str], None] = lambda line: None,
        policy: RetryPolicy = RetryPolicy(),
        sleep: Callable[[float], None] = time.sleep,
        first_poll: float = 0.5,
        max_poll: float = 30.0,
    ):
        self.runs = [(run, list(samples), Ledger(run.folder, run.storing)) for run, samples in runs]
        self.wait = wait
        self.submit = (
            submit  # False: only finish what earlier --batch runs began (a run without --batch)
        )
        self.say = say
        self.policy = policy
        self.sleep = sleep
        self.first_poll = first_poll
        self.max_poll = max_poll
        self._apis: dict[str, BatchAPI] = {}
        self._shown: dict[str, str] = {}

    def run(self) -> None:
        """One pass, or with `wait` passes until nothing waits (then each run's items ask the
        ledger before making a call themselves: `Batches`)."""
        with contextlib.ExitStack() as locks:
            for _, _, ledger in sorted(self.runs, key=lambda r: str(r[2].folder)):
                locks.enter_context(ledger.lock())
            if not self.submit:
                self._adopt_unanswered()
            delay, first = self.first_poll, True
            while True:
                changed, collected = self._poll_and_collect()
                if (
                    first or collected
                ):  # only a collected reply can make a new call needed (a judge's)
                    changed |= self._submit_needed()
                first = False
                waiting = {id(run): waiting_calls(ledger.entries()) for run, _, ledger in self.runs}
                if not self.wait or not any(waiting.values()):
                    break
                delay = self.first_poll if changed else min(self.max_poll, delay * 1.5)
                self.sleep(delay)

    # -- 1. poll and collect --------------------------------------------------------------

    def _poll_and_collect(self) -> tuple[bool, bool]:
        """(whether any batch changed, whether any was collected)."""
        changed = collected = False
        for run, _, ledger in self.runs:
            for entry in ledger.entries():
                if entry.get("collected") or entry.get("batch") is None:
                    continue
                api = self._api(run, entry)
                if api is None:
                    continue
                try:
                    state = self._call(lambda: api.retrieve(entry["batch"]))
                except ProviderError as error:
                    # refused for good (gone, not the account's): it will answer nothing more
                    self._lost(
                        run, ledger, entry, [], f"batch {entry['batch']} cannot be retrieved", error
                    )
                    collected = True
                    continue
                if state is None:
                    continue  # the API is unwell: asked again at the next poll
                if state.status != entry["status"] or state.counts != entry.get("counts"):
                    changed = True
                    self._record_state(ledger, entry, state)
                if state.ended:
                    collected |= self._collect(run, ledger, entry, api, state)
        return changed or collected, collected

    def _record_state(self, ledger: Ledger, entry: dict[str, Any], state: BatchState) -> None:
        entry.update(
            status=state.status, ended=state.ended, counts=state.counts, problem=state.problem
        )
        ledger.write(entry)
        counts = state.counts
        line = (
            f"batch {state.id}: {state.status}, {counts.get('completed', 0)} completed, "
            f"{counts.get('failed', 0)} failed of {counts.get('total', 0)}"
        )
        if self._shown.get(state.id) != line:
            self._shown[state.id] = line
            self.say(line)

    def _collect(
        self, run: EvalRun, ledger: Ledger, entry: dict[str, Any], api: BatchAPI, state: BatchState
    ) -> bool:
        """Every request of an ended batch becomes a cache record, or is left to be submitted
        again (not run, or refused with a 429 or 5xx) until its attempts are spent."""
        results: list[tuple[str, RequestOutcome]] = []

        def download() -> bool:
            results.clear()
            for result in api.results(state):  # one by one: what came before a refused file is kept
                results.append(result)
            return True

        try:
            if self._call(download) is None:
                return False  # the results cannot be fetched now: collected at the next poll
        except (
            ProviderError
        ) as error:  # refused for good: asked again at every poll, it would be refused forever
            self._lost(
                run,
                ledger,
                entry,
                results,
                f"the results of batch {state.id} cannot be downloaded",
                error,
            )
            return True
        self._settle(
            run, ledger, entry, results, not_run(state.problem or f"the batch ended {state.status}")
        )
        return True

    def _lost(
        self,
        run: EvalRun,
        ledger: Ledger,
        entry: dict[str, Any],
        results: Sequence[tuple[str, RequestOutcome]],
        what: str,
        error: ProviderError,
    ) -> None:
        """The API refused for good to tell how the requests ended: each one without a result
        has that refusal as its outcome, which, like any refusal that is not a 429 or 5xx, is
        its item's API error. One line says so."""
        missing = len(set(entry["calls"]) - {custom_id for custom_id, _ in results})
        self.say(
            run.scrub.text(
                printable(
                    f"{what} ({error}); its {missing} requests without a result are recorded as their items' API errors"
                )
            )
        )
        self._settle(
            run,
            ledger,
            entry,
            results,
            ProviderError(f"{what} ({error})", kind=error.kind, status=error.status),
        )

    def _settle(
        self,
        run: EvalRun,
        ledger: Ledger,
        entry: dict[str, Any],
        results: Sequence[tuple[str, RequestOutcome]],
        without: ProviderError,
    ) -> None:
        """The submission is done with: each call becomes its outcome's cache record (`without`
        for a call that has no result), or, a 429, a 5xx or not run, is left to be submitted
        again while its attempts last."""
        outcomes: dict[str, Completion | ProviderError] = {}
        for custom_id, outcome in results:
            # Lines are keyed on custom_id (never the line's id, which repeats); a request
            # with several lines keeps an answer over an error.
            if custom_id in entry["calls"] and not isinstance(outcomes.get(custom_id), Completion):
                outcomes[custom_id] = outcome
        attempts = ledger.attempts()
        for custom_id, call in entry["calls"].items():
            outcome = outcomes.get(custom_id) or without
            key = f"{call['role']}\0{call['item']}"
            if isinstance(outcome, TransientError):
                attempts[key] = attempts.get(key, 0) + 1
                if attempts[key] < self.policy.batch_attempts:
                    continue  # needed again: the next submission carries it
                outcome = ProviderError(
                    f"{outcome} (in {attempts[key]} batches)",
                    kind=outcome.kind,
                    status=outcome.status,
                )
            elif isinstance(outcome, Completion):
                outcome = dataclasses.replace(
                    outcome.kept(), batch=entry["batch"]
                )  # cut at the limit, as a direct reply is
            attempts.pop(key, None)
            path = run.cache.record_path(call["item"], call["role"])
            with run.storing(path):
                run.cache.store(call["item"], call["role"], call["request"], outcome)
        ledger.write_attempts(attempts)
        entry["collected"] = True
        ledger.write(entry)

    # -- 2. and 3. what is needed, submitted ----------------------------------------------

    def _submit_needed(self) -> bool:
        progressed = False
        for run, samples, ledger in self.runs:
            entries = ledger.entries()
            if not self.submit:
                continue
            for (
                entry
            ) in entries:  # prepared by a run killed before the API answered the create call
                if entry.get("batch") is None and not entry.get("collected"):
                    progressed |= self._submit(run, ledger, entry)
            waiting = waiting_calls(entries)
            needed = [
                call
                for sample in samples
                for call in run.needed_calls(sample)
                if (call.item, call.role) not in waiting
            ]
            groups: dict[str, list[Call]] = {}
            for call in needed:
                groups.setdefault(_provider_key(call.provider), []).append(call)
            for calls in groups.values():
                api = self._provider_api(calls[0].provider)
                if api is None:
                    continue  # no Batch API: the items ask these directly
                for chunk in _chunks(api, calls):
                    entry = self._prepare(run, ledger, chunk, sequence=_next_sequence(entries))
                    entries.append(entry)
                    progressed |= self._submit(run, ledger, entry)
        return progressed

    def _prepare(
        self, run: EvalRun, ledger: Ledger, chunk: list[tuple[str, Call]], *, sequence: int
    ) -> dict[str, Any]:
        calls = {
            custom_id: {
                "item": call.item,
                "role": call.role,
                "request": run.call_record(call.provider, call.request),
            }
            for custom_id, call in chunk
        }
        content = hashlib.sha256(
            json.dumps(calls, sort_keys=True).encode("utf-8", "surrogatepass")
        ).hexdigest()
        entry = {
            "format": FORMAT,
            "name": f"{run.folder.name[-10:]}-{sequence:04d}-{content[:12]}",
            "provider": chunk[0][1].provider.spec.identity(),
            "responsesApi": chunk[0][1].provider.spec.responses_api,
            "session": run.cache.session,
            "preparedAt": _now(),
            "status": "prepared",
            "batch": None,
            "sent": False,  # until a call that may make something goes out (`_submit`)
            "collected": False,
            "calls": calls,
        }
        ledger.write(entry)  # before anything leaves: a kill from here on never submits these twice
        return entry

    def _submit(self, run: EvalRun, ledger: Ledger, entry: dict[str, Any]) -> bool:
        api = self._api(run, entry)
        if api is None:
            return False
        lines = [
            api.line(custom_id, _request_of(call["request"]))
            for custom_id, call in entry["calls"].items()
        ]

        def sending() -> None:
            if entry.get("sent") is False:
                entry["sent"] = True
                ledger.write(entry)  # before the call: a kill from here on may leave a batch

        try:
            state = self._call(
                lambda: api.submit(entry["name"], lines, since=_since(entry), sending=sending),
                failing=lambda error: self._unsubmitted(run, ledger, entry, error),
            )
        except (ProviderError, BatchUnsupported) as refused:
            # The API made no batch of them: a record left behind would have every later run,
            # with --batch or without, submit them again and end the same way.
            ledger.remove(entry)
            if isinstance(refused, BatchUnsupported):
                raise
            raise FatalError(
                run.scrub.text(
                    printable(
                        f"--batch: the API refused the batch ({refused}); nothing was submitted"
                    )
                )
            ) from None
        self._adopted(ledger, entry, state)
        return True

    def _unsubmitted(
        self, run: EvalRun, ledger: Ledger, entry: dict[str, Any], error: TransientError
    ) -> FatalError:
        """The line a submission that kept failing ends the run with. One that never sent a
        call that may make something (the API failed already at the lookup by name) left
        nothing there: its record goes, so that no later run waits on it."""
        if entry.get("sent") is False:
            ledger.remove(entry)
            return FatalError(
                run.scrub.text(
                    printable(
                        f"--batch: the Batch API keeps failing ({error}; {self.policy.attempts} attempts); "
                        "nothing was submitted: run without --batch, or with --batch once it answers"
                    )
                )
            )
        return FatalError(
            run.scrub.text(
                printable(
                    f"--batch: cannot submit ({error}); what was asked so far is recorded in the run folder: "
                    "run the same command again later"
                )
            )
        )

    def _adopt_unanswered(self) -> None:
        """A run without --batch never submits: a submission a killed run left unanswered is
        the batch the API made of it, if it has one of that name (then polled and collected),
        or else is forgotten and its calls are asked directly."""
        for run, _, ledger in self.runs:
            for entry in ledger.entries():
                if (
                    entry.get("batch") is None
                    and not entry.get("collected")
                    and (api := self._api(run, entry))
                ):
                    self._adopt(ledger, entry, api)

    def _adopt(self, ledger: Ledger, entry: dict[str, Any], api: BatchAPI) -> None:
        try:
            found = (
                (None,)  # nothing of it ever left: there is no batch to look for
                if entry.get("sent") is False
                else self._call(lambda: (api.find(entry["name"], since=_since(entry)),))
            )  # a tuple: None is "the API is unwell"
        except (
            ProviderError,
            BatchUnsupported,
        ):  # no Batch API, or none that will look: it made nothing of them
            found = (None,)
        if found is None:
            return  # looked for again by the next run; meanwhile its calls wait
        (state,) = found
        if state is None:
            ledger.remove(entry)
            self.say(
                f"{entry['name']}: never submitted; its {len(entry['calls'])} requests are asked directly"
            )
        else:
            self._adopted(ledger, entry, state)

    def _adopted(self, ledger: Ledger, entry: dict[str, Any], state: BatchState) -> None:
        entry.update(batch=state.id, submittedAt=_now())
        self._record_state(
            ledger, entry, state
        )  # at once: the batch id is on disk before anything else happens

    # -- providers --------------------------------------------------------------------------

    def _provider_api(self, provider: Provider) -> BatchAPI | None:
        key = _provider_key(provider)
        if key not in self._apis:
            self._apis[key] = provider.batch_api()
        return self._apis[key]

    def _api(self, run: EvalRun, entry: dict[str, Any]) -> BatchAPI | None:
        """The API of the provider a recorded submission went to: the candidate's or a judge's."""
        for provider in (run.candidate, *(p for _, p in run.judges)):
            if provider.spec.identity() == entry[
                "provider"
            ] and provider.spec.responses_api == entry.get("responsesApi", False):
                return self._provider_api(provider)
        return None

    def _call(
        self,
        make: Callable[[], Any],
        *,
        failing: Callable[[TransientError], FatalError] | None = None,
    ) -> Any:
        """`make()`, retried on transient errors with the retry policy's backoff; None when
        they persist (a poll is simply tried again later), unless `failing` says the fatal
        error that ends the pass then (a submission must go through). A refusal that ends the
        run (the key) ends it; any other is raised, for the caller to settle."""
        rng = random.Random()
        for attempt in range(1, self.policy.attempts + 1):
            try:
                return make()
            except TransientError as error:
                if attempt == self.policy.attempts:
                    if failing is not None:
                        raise failing(error) from None
                    return None
                self.sleep(
                    error.retry_after
                    if error.retry_after is not None
                    else self.policy.backoff(attempt, rng)
                )
            except FatalError as error:
                raise FatalError(f"--batch: {error}") from None
        raise AssertionError("unreachable: the last attempt returns or raises")


def _chunks(api: BatchAPI, calls: list[Call]) -> Iterator[list[tuple[str, Call]]]:
    """The calls with their custom ids, in batches within the API's request and byte limits."""
    chunk: list[tuple[str, Call]] = []
    size = 0
    for call in calls:
        custom_id = _custom_id(call)
        line_size = len(json.dumps(api.line(custom_id, call.request)).encode()) + 1
        if chunk and (len(chunk) >= api.max_requests or size + line_size > api.max_bytes):
            yield chunk
            chunk, size = [], 0
        chunk.append((custom_id, call))
        size += line_size
    if chunk:
        yield chunk


def _next_sequence(entries: Sequence[dict[str, Any]]) -> int:
    """Submissions are numbered, so that one made again after its batches failed has another name."""
    numbers = [
        int(part)
        for entry in entries
        if len(parts := str(entry["name"]).split("-")) > 1 and (part := parts[1]).isdigit()
    ]
    return max(numbers, default=-1) + 1


def _custom_id(call: Call) -> str:
    """Short, of the characters every Batch API takes, and distinct per call."""
    key = json.dumps([call.item, call.role], ensure_ascii=True)
    return "c" + hashlib.sha256(key.encode()).hexdigest()[:40]


def _provider_key(provider: Provider) -> str:
    return json.dumps([provider.spec.identity(), provider.spec.responses_api], sort_keys=True)


def _request_of(record: dict[str, Any]) -> Request:
    return Request(**{k: v for k, v in record.items() if k != "provider"})


def _since(entry: dict[str, Any]) -> float:
    """When the submission was prepared: what the API made of it is not older."""
    try:
        return dt.datetime.fromisoformat(entry["preparedAt"]).timestamp()
    except (KeyError, TypeError, ValueError):
        return 0.0  # a record without the time: every page a lookup may read


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def describe(run_folder: Path, api_for: Callable[[dict[str, Any]], BatchAPI | None]) -> list[str]:
    """One line per recorded batch of the run, its state as the API reports it now (asked
    once per batch not yet collected; `api_for(entry)` gives its provider's API, or None)."""
    lines = []
    for entry in Ledger(run_folder).entries():
        if entry.get("batch") is None:
            lines.append(
                f"{entry['name']}: prepared, not yet submitted ({len(entry['calls'])} requests)"
            )
            continue
        state = entry
        if not entry.get("collected") and (api := api_for(entry)):
            try:
                fresh = api.retrieve(entry["batch"])
                state = {"status": fresh.status, "ended": fresh.ended, "counts": fresh.counts}
            except ProviderError as error:
                state = {
                    **entry,
                    "status": f"{entry['status']} (as last seen; asking now failed: {error})",
                }
        counts = state.get("counts") or {}
        done = (
            "collected"
            if entry.get("collected")
            else "to collect"
            if state.get("ended")
            else "waiting"
        )
        lines.append(
            f"batch {entry['batch']}: {state.get('status')}, {counts.get('completed', 0)} completed, "
            f"{counts.get('failed', 0)} failed of {counts.get('total', len(entry['calls']))}; {done}"
        )
    return lines
