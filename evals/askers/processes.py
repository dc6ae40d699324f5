"""The `Asker` of child processes: children of pytest's process that make a run's model calls.
Both sides are here: the parent's (`Fetcher`, one child; `Fetchers`, this process's children;
`ChildProcesses`, the `Asker`) and the child's (`main`, run as `python -P -m evals.askers.processes`).

pytest runs items one at a time on one thread, and every reply costs some CPU (the SDK's
request and parsing, the cache record): under one GIL, at 64 requests in flight, the items'
own work and the replies' work take turns. So the calls are made by child processes, on the
other cores: each answers its items ahead of pytest, in their order, through the same
`EvalRun` code and into the same run folder, and tells the parent each item it is done with.
The parent's items wait for that line, then read their answers from the cache, which stays
the source of truth: a call a child did not make (busy in another process, or the child gone)
is made by the item itself, as without children.

They also take the SDK's import (0.7 s to 2 s) off pytest's start-up: the first child is
started before pytest parses its command line (`prestart`, from `plugins`' earliest hook) and
imports the SDK while pytest starts, plans and collects.

Wire protocol, all in memory: the child's command line names the SDK modules to import
first; the parent writes to its stdin, pickled, the `ProviderSpec`s it will call (with the
credentials their URLs were given, `evals.urls`, and the entry points it found, so the child
imports the extensions its run uses without a scan of every distribution), then,
once collected, one pickled list of `RunSpec` in which each of those specs is a reference to
the one sent (`_Sender`: a spec crosses the pipe once, and the child's run calls the very
provider it made for it), and keeps
stdin open (its end is the child's signal to stop); the child writes one JSON array per line
to stdout: `["done", eval, item_id]`, `["fatal", eval, class, message, kind, status]` or
`["warning", category, message]` (scrubbed, as everything the harness writes). No key crosses
the pipe: the child reads the same environment.
"""

from __future__ import annotations

import atexit
import dataclasses
import json
import os
import pickle
import signal
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evals.askers.protocol import GRACE, KEEPING, once
from evals.askers.threads import Threads
from evals.entry_points import entry_points_found, load_named
from evals.errors import FatalError, FatalProviderError, QuotaExhausted, StorageError

# pytest's process imports this module to start the child before it parses its command line
# (`prestart`), and a child's first job is to import the SDK: the rest of the harness (the
# providers, the endpoints' URLs, the engine) is imported where it is used.
if TYPE_CHECKING:
    from evals.providers import ProviderSpec
    from evals.run import EvalRun, RunSpec

CHILD_MODULE = (
    "evals.askers.processes"  # what the child runs: `python -P -m CHILD_MODULE` (its `main`, below)
)
REQUESTS_PER_PROCESS = 32  # one process's threads keep up with ~32 replies of 200 ms on one core
# The fatal errors a run can end with, rebuilt on the parent's side by name.
_FATAL: dict[str, type[FatalError]] = {
    cls.__name__: cls for cls in (FatalProviderError, QuotaExhausted, StorageError)
}


class Fetcher:
    """The parent's side: starts the child, hands it the work, and lets items wait for it."""

    def __init__(self, sdks: Sequence[str] = ()):
        """Start the child: it imports the SDK modules `sdks` at once, makes the providers
        `prepare` sends, and then waits for its work."""
        self._lock = threading.Lock()
        self._done: set[tuple[str, str]] = set()
        self._ended: set[str] = set()  # evals the child stopped working on (a fatal error)
        self._waiters: dict[tuple[str, str], threading.Event] = {}
        self._gone = threading.Event()
        self._fatal: dict[str, Callable[[FatalError], Any]] = {}
        self._stderr: list[str] = []
        self._stderr_reader = threading.Thread(
            target=self._read_stderr, name="fetcher-stderr", daemon=True
        )
        self._prepared: dict[
            ProviderSpec, int
        ] = {}  # the specs `prepare` sent, by their place in that list
        self.started = False
        package_root = str(Path(__file__).resolve().parents[2])
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(
                filter(None, [package_root, os.environ.get("PYTHONPATH")])
            ),
        }
        # -P: the working folder is not put on the child's path (a folder of the user's named
        # `evals` would be imported instead of this package); PYTHONPATH names this one first.
        self._child = subprocess.Popen(
            [sys.executable, "-P", "-m", CHILD_MODULE, *sdks],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            close_fds=True,
        )
        to_child, from_child, child_stderr = (
            self._child.stdin,
            self._child.stdout,
            self._child.stderr,
        )
        assert to_child and from_child and child_stderr  # all three are pipes (PIPE above)
        self._to_child, self._from_child, self._child_stderr = to_child, from_child, child_stderr
        self._stderr_reader.start()

    def prepare(self, providers: Sequence[ProviderSpec]) -> Fetcher:
        """The providers the child will call: it makes them (their SDKs, their clients) while
        this process plans and collects."""
        # With the endpoints' URLs as given (`evals.urls`): the child may have started before
        # this process read them off its command line. The entry points too: this process
        # has read every distribution, and so spares the child the scan.
        from evals import urls

        specs = list(dict.fromkeys(providers))
        self._send((urls.given(), specs, entry_points_found()))
        self._prepared = {spec: index for index, spec in enumerate(specs)}
        return self

    def start(
        self, work: Sequence[RunSpec], on_fatal: dict[str, Callable[[FatalError], Any]]
    ) -> None:
        """Hand the child its work; `on_fatal[eval]` ends that eval's run in this process."""
        self._fatal = dict(on_fatal)
        self.started = True
        if not self._send(
            list(work), refer=self._prepared
        ):  # the child is gone already: the items ask themselves
            self._gone.set()
            return
        threading.Thread(target=self._read, name="fetcher-reader", daemon=True).start()

    def _send(self, value: Any, refer: dict[ProviderSpec, int] | None = None) -> bool:
        try:
            _Sender(self._to_child, refer or {}).dump(value)
            self._to_child.flush()
        except OSError:
            return False
        return True

    def wait(self, eval: str, item_id: str) -> None:
        """Return once the child is done with the item's calls (or will make none)."""
        key = (eval, item_id)
        with self._lock:
            if key in self._done or eval in self._ended or self._gone.is_set():
                return
            event = self._waiters.setdefault(key, threading.Event())
        event.wait()

    def stop(self, say: Callable[[str], None] | None = None) -> str | None:
        """End the child; what went wrong with it, if anything did (one line)."""
        ended_by_itself = self.close()
        try:
            return self.ended(ended_by_itself, time.monotonic() + GRACE + 2, once(say))
        except KeyboardInterrupt:  # the user's "leave them"
            self.kill()
            return None

    def kill(self) -> None:
        self._child.kill()
        self._child.wait()

    def close(self) -> bool:
        """Tell the child to end (stdin closed): it starts no new call, and gives those in
        flight `GRACE` seconds to be stored. Whether it had ended by itself already."""
        if not self.started:  # no work was handed over: nothing of the run's is in it
            self._child.kill()
        self._release_all()
        ended_by_itself = self._child.poll() is not None
        try:
            self._to_child.close()
        except OSError:
            pass
        return ended_by_itself

    def ended(
        self, ended_by_itself: bool, deadline: float, say: Callable[[str], None]
    ) -> str | None:
        """Wait until the child `close`d has ended (killed at `deadline`); what went wrong
        with it, if anything did (one line). `say` is told when the child is still storing its
        last replies a second later. A Ctrl-C meanwhile is the caller's (`KeyboardInterrupt`)."""
        code = _ended(self._child, deadline, say)
        if not (self.started and ended_by_itself and code):
            return None
        if self._stderr_reader.is_alive():
            self._stderr_reader.join(timeout=1)  # its last words, the reason
        how = (
            f"was killed by signal {-code}"
            if code < 0
            else f"ended with exit code {code} ({self._stderr[-1] if self._stderr else 'no message'})"
        )
        return f"the process asking the model {how}; pytest's process asked what it had not"

    def _read(self) -> None:
        for raw in self._from_child:
            try:
                message = json.loads(raw)
            except ValueError:
                continue
            if message[0] == "done":
                self._mark((message[1], message[2]))
            elif message[0] == "warning":
                from evals.errors import CacheWarning

                warnings.warn(
                    CacheWarning(message[2])
                    if message[1] == "CacheWarning"
                    else UserWarning(message[2]),
                    stacklevel=1,
                )
            elif message[0] == "fatal":
                _, eval, name, text, kind, status = message
                cls = _FATAL.get(name, FatalError)
                error = (
                    cls(text, kind=kind, status=status)
                    if issubclass(cls, FatalProviderError)
                    else cls(text)
                )
                if eval in self._fatal:
                    self._fatal[eval](error)
                with self._lock:
                    self._ended.add(eval)
                    for (waiting_eval, _), event in self._waiters.items():
                        if waiting_eval == eval:
                            event.set()
        self._release_all()

    def _read_stderr(self) -> None:
        for line in self._child_stderr:
            text = line.decode(errors="replace").strip()
            if text:
                self._stderr = [*self._stderr[-19:], text]

    def _mark(self, key: tuple[str, str]) -> None:
        with self._lock:
            self._done.add(key)
            event = self._waiters.pop(key, None)
        if event is not None:
            event.set()

    def _release_all(self) -> None:
        with self._lock:
            self._gone.set()
            for event in self._waiters.values():
                event.set()
            self._waiters.clear()


class Fetchers:
    """This process's asking children: one per `REQUESTS_PER_PROCESS` requests allowed in flight
    (up to one per core), each asking every n-th item of each eval with its part of the limit.
    One child asking 64 replies' worth of 200 ms requests is itself bound by its CPU (the
    request phase at 2,000 items took ~1.65 x ideal with one, ~1.26 with two, `bench/cpu.py`)."""

    def __init__(self, providers: Sequence[ProviderSpec], concurrency: int):
        from evals.providers import PROVIDERS

        cores = (
            len(os.sched_getaffinity(0))
            if hasattr(os, "sched_getaffinity")
            else os.cpu_count() or 1
        )  # the cores it may use
        count = max(1, min(cores, -(-concurrency // REQUESTS_PER_PROCESS)))
        sdks = sorted({module for spec in providers for module in PROVIDERS[spec.provider].sdk})
        self._children = [
            fetcher_for(providers),
            *(Fetcher(sdks).prepare(providers) for _ in range(count - 1)),
        ]
        self._owner: dict[tuple[str, str], Fetcher] = {}

    def start(
        self, work: Sequence[RunSpec], on_fatal: dict[str, Callable[[FatalError], Any]]
    ) -> None:
        from evals.providers import limit_share

        count = len(self._children)
        for index, child in enumerate(self._children):
            part = [
                dataclasses.replace(
                    each,
                    samples=each.samples[index::count],
                    concurrency=limit_share(each.concurrency, index, count),
                )
                for each in work
            ]
            for each in part:
                self._owner.update({(each.eval, sample.id): child for sample in each.samples})
            child.start(part, on_fatal)

    def wait(self, eval: str, item_id: str) -> None:
        """Return once the child asking the item's calls is done with them."""
        if (child := self._owner.get((eval, item_id))) is not None:
            child.wait(eval, item_id)

    def stop(self, say: Callable[[str], None] | None = None) -> str | None:
        """End the children (all told at once: their graces overlap); what went wrong with
        them, if anything did (one line)."""
        ended = [child.close() for child in self._children]
        deadline, notice = time.monotonic() + GRACE + 2, once(say)
        try:
            problems = [
                problem
                for child, by_itself in zip(self._children, ended)
                if (problem := child.ended(by_itself, deadline, notice))
            ]
        except KeyboardInterrupt:  # the user's "leave them": every child, not the one waited for
            for child in self._children:
                child.kill()
            return None
        return "; ".join(dict.fromkeys(problems)) or None


def _ended(child: subprocess.Popen[bytes], deadline: float, say: Callable[[str], None]) -> int:
    """The exit code of `child`, once it ends by itself, or once it is killed at `deadline`;
    `say` is told KEEPING when it is still at work a second in."""
    try:
        try:
            return child.wait(timeout=max(0.0, min(1.0, deadline - time.monotonic())))
        except subprocess.TimeoutExpired:
            say(KEEPING)
            return child.wait(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        child.kill()
        return child.wait()


class ChildProcesses:
    """The `Asker` that hands a process's runs to its asking children (`Fetchers`); a published
    run (only read from its folder) is asked on threads of this process."""

    def __init__(self, children: Fetchers, say: Callable[[str], None] | None = None):
        self._children = children
        self._say = say
        self._handed: dict[int, str] = {}  # id(run) -> eval, of the runs the children ask
        self._threads: Threads | None = None

    def start(self, runs: Sequence[tuple[EvalRun, Sequence[Any]]]) -> None:
        # A child builds each run again from its spec; a published run (only read from its
        # folder), or one made without a spec, is asked on threads here.
        handed = [
            (run, run.spec, samples)
            for run, samples in runs
            if not run.published and run.spec is not None
        ]
        self._handed = {id(run): spec.eval for run, spec, _ in handed}
        self._threads = Threads()
        self._threads.start(
            [(run, samples) for run, samples in runs if id(run) not in self._handed]
        )
        if handed:
            self._children.start(
                [dataclasses.replace(spec, samples=list(samples)) for _, spec, samples in handed],
                on_fatal={spec.eval: run.end_with for run, spec, _ in handed},
            )

    def wait(self, run: EvalRun, item_id: str) -> None:
        if (eval := self._handed.get(id(run))) is not None:
            self._children.wait(eval, item_id)

    def waiting(self, run: EvalRun, key: tuple[str, str]) -> None:
        return None

    def stop(self) -> str | None:
        if self._threads is not None:
            self._threads.stop()
        return self._children.stop(self._say)


class _Sender(pickle.Pickler):
    """Pickles a message with each spec of `refer` (the ones `prepare` sent) as a reference to
    its place in that list, which the child's `_Receiver` reads back as the spec it has."""

    def __init__(self, file: Any, refer: dict[ProviderSpec, int]):
        super().__init__(file)
        self._refer = refer
        self._kinds = {type(spec) for spec in refer}

    def persistent_id(self, obj: Any) -> int | None:
        return self._refer.get(obj) if type(obj) in self._kinds else None


class _Receiver(pickle.Unpickler):
    """Unpickles a message `_Sender` wrote: a reference is the spec of that place in `specs`."""

    def __init__(self, file: Any, specs: Sequence[ProviderSpec]):
        super().__init__(file)
        self._specs = specs

    def persistent_load(self, pid: Any) -> ProviderSpec:
        return self._specs[pid]


_prestarted: Fetcher | None = None


def prestart(provider: str) -> None:
    """Start the child before the command line is parsed, when the provider it names asks
    over the network: the child imports that SDK (the longest step before a run's first
    request) while pytest starts. Only a head start: the provider really used is the one
    parsed later (`fetcher_for`); a child nobody takes is ended at exit."""
    global _prestarted
    from evals.providers import provider_ahead

    # Its own entry point only: the other extensions load while the child starts.
    info = provider_ahead(provider)
    if _prestarted is None and info is not None and info.network:
        _prestarted = Fetcher(info.sdk)
        atexit.register(discard_prestarted)


def fetcher_for(providers: Sequence[ProviderSpec]) -> Fetcher:
    """The child that will call `providers`: the one started ahead, or a new one."""
    global _prestarted
    fetcher, _prestarted = _prestarted or Fetcher(), None
    return fetcher.prepare(providers)


def discard_prestarted() -> None:
    """End the child started ahead, when this process will not use it."""
    global _prestarted
    if _prestarted is not None:
        _prestarted.stop()
        _prestarted = None


# -- the child's side ----------------------------------------------------------------------


def main(sdks: Sequence[str]) -> None:
    signal.signal(
        signal.SIGINT, signal.SIG_IGN
    )  # Ctrl-C is the parent's to handle: it closes stdin
    for module in sdks:  # the SDK first, while the parent starts
        __import__(module)  # as an import statement does (what audit hooks see)
    # A warning (a corrupt cache record moved aside) is the user's to see: the parent repeats it.
    warnings.showwarning = lambda message, category, *_, **__: _say(
        ["warning", category.__name__, str(message)]
    )
    from evals import urls
    from evals.providers import make_provider

    try:
        given, specs, found = pickle.load(sys.stdin.buffer)
        urls.remember(given)

        # Of the extensions, only the ones the run uses (those providers, then its evals and
        # judges): the parent has loaded every one.
        load_named([spec.provider for spec in specs], found)
        # The SDKs, while the parent plans and collects; by identity: the work names these very specs.
        providers = {id(spec): make_provider(spec) for spec in specs}
        work: list[RunSpec] = _Receiver(sys.stdin.buffer, specs).load()
    except EOFError:  # the parent needed no calls
        return
    load_named(
        [
            name
            for each in work
            for name in (
                each.eval,
                each.candidate.provider,
                *(judge.provider for _, judge in each.judges),
                *(spec.provider for spec in each.redacted),
            )
        ],
        found,
    )
    answering = [_answer(each, providers) for each in work]
    threading.Thread(target=_exit_when_parent_leaves, args=(answering,), daemon=True).start()
    for _, threads in answering:
        for thread in threads:
            thread.join()


def _answer(spec: RunSpec, providers: dict[int, Any]) -> tuple[EvalRun, list[threading.Thread]]:
    """Answer the run `spec` ahead of its items: the run, and the threads answering it;
    `providers`: those made for the specs `prepare` sent, by the id of the spec (the work
    refers to those very objects)."""
    from evals.providers import deferred_provider, make_provider
    from evals.run import build_run

    def provider(wanted: ProviderSpec, role: str) -> Any:
        if id(wanted) in providers:
            return providers[id(wanted)]
        # A judge is made at its first call: its SDK (anthropic's takes ~2 s) is imported while
        # the candidate's requests are already in flight, and only by a run that asks a judge.
        return make_provider(wanted) if role == "candidate" else deferred_provider(wanted)

    run = build_run(spec, provider, items_here=False)
    told_fatal = threading.Lock()

    def done(sample: Any) -> None:
        if run.fatal is not None and told_fatal.acquire(blocking=False):
            error = run.fatal
            _say(
                [
                    "fatal",
                    spec.eval,
                    type(error).__name__,
                    str(error),
                    getattr(error, "kind", None),
                    getattr(error, "status", None),
                ]
            )
        _say(["done", spec.eval, sample.id])

    return run, run.prefetch(spec.samples, threads=spec.concurrency, done=done)


_say_lock = threading.Lock()


def _say(message: list[Any]) -> None:
    line = (json.dumps(message) + "\n").encode()
    with _say_lock:
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()


def _exit_when_parent_leaves(answering: list[tuple[EvalRun, list[threading.Thread]]]) -> None:
    """The parent closes stdin when its session ends (or dies): no new call is started, and
    the calls in flight get `GRACE` seconds to be stored (none, for a run that ended with a
    fatal error: its endpoint answers nothing worth keeping); an early end (Ctrl-C) then costs
    the rerun only what was never asked."""
    while os.read(0, 65536):  # the raw descriptor: a buffered read here would hold its lock at exit
        pass
    for run, _ in answering:
        run.stop()
    deadline = time.monotonic() + GRACE
    for run, threads in answering:
        for thread in threads if run.fatal is None else ():
            thread.join(max(0.0, deadline - time.monotonic()))
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
