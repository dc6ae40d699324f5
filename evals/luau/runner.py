"""Run a Jest Lua test file against a solution in a fresh, sandboxed Luau VM.

Limits, in the order they decide a verdict:
  * work budget -- deterministic, counted by the instrumented code (see
    instrument.py); the run stops at budget + 1 units;
  * wall clock  -- checked at the same points, and once more at the end;
  * memory      -- enforced by the VM's allocator; running out ends the run
    (the harness then borrows a small reserve to report what happened);
  * stack depth -- Luau's own "stack overflow" errors fail the test at hand.

This in-process runner cannot stop a single long call into C (for example a
catastrophically backtracking string pattern) before it returns, nor survive
a crash of the VM; run_tests_isolated (isolated.py) adds both.

Code the instrumenter cannot handle (it cannot split the source, or the split
source does not compile while the original does) is never held against its
author: the run goes on unmetered, both sources as they are, with no work
count and no work budget, the wall clock checked through the VM's interrupt
(about 2 us per call or loop iteration) unless the caller keeps the clock
itself (run_tests_isolated kills its worker); the TestRun says so in
`unmetered`.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
import time
from pathlib import Path

from pluau import Compiler, Function, Lua, String, Table, VmState

from .budget import WORK_BUDGET_FACTOR, WORK_BUDGET_FLOOR, work_budget_for
from .instrument import LexError, MeterNames, instrument
from .result import TestRun

__all__ = ["WORK_BUDGET_FACTOR", "WORK_BUDGET_FLOOR", "run_tests", "work_budget_for"]

TIMEOUT = 10.0  # seconds: the safety net behind the work budget
MEMORY_LIMIT = 256 * 2**20
OUTPUT_LIMIT = 64 * 1024

# Units between two calls from Luau into Python: rare enough to cost nothing,
# frequent enough that the wall clock is checked every few microseconds.
_UNITS_PER_CHECK = 1000

# Memory lent to the harness, once the code under test has used up its limit,
# to finish and report the run.
_HARNESS_RESERVE = 8 * 2**20

_JEST_SOURCE = Path(__file__).with_name("jest.luau").read_text()


def run_tests(
    solution: str,
    tests: str,
    *,
    work_budget: int | None = None,
    timeout: float = TIMEOUT,
    memory_limit: int = MEMORY_LIMIT,
    output_limit: int = OUTPUT_LIMIT,
    metered: bool = True,
    clock_kept_by_caller: bool = False,
) -> TestRun:
    """Run `tests` (a Jest Lua spec) against `solution` (a module source) in this process.

    Neither source can reach the host: see docs/luau-test-format.md for what
    they can use. `work_budget` None means unlimited (the timeout still holds).
    `metered=False` runs both sources as they are, as the fallback for code
    the instrumenter cannot handle does: no work count, the wall clock only.
    `clock_kept_by_caller`: an unmetered run does not check the clock (the
    caller stops the process at the timeout), so it runs at full speed.
    """
    started = time.perf_counter()
    meter = _Meter(work_budget, started + timeout, memory_limit)
    sandbox = _Sandbox(memory_limit)
    try:
        outcome = _run(
            sandbox.vm, meter, solution, tests, output_limit, metered, clock_kept_by_caller
        )
    finally:
        sandbox.close()
    elapsed = time.perf_counter() - started

    memory = f"memory limit {memory_limit / 2**20:g} MiB exceeded"
    exec_error = _limit_reached(meter, work_budget, timeout, elapsed, memory)
    if exec_error is None and outcome.exec_error is not None:
        exec_error = _resource_cause(outcome.exec_error, memory) or outcome.exec_error
    failure_cause = next(
        filter(
            None, (_resource_cause(m, memory) for t in outcome.tests for m in t["failureMessages"])
        ),
        None,
    )
    return TestRun.from_tests(
        outcome.tests,
        exec_error=exec_error,
        failure_cause=failure_cause,
        output=outcome.output,
        work=None if outcome.unmetered else meter.used,
        elapsed=elapsed,
        unmetered=outcome.unmetered,
    )


class _LimitReached(RuntimeError):
    """Raised into Luau when the work budget or the time is used up."""


class _Meter:
    """Accumulates the work the instrumented chunks report, and enforces the limits.

    Each chunk (solution, test file) counts in its own locals and checks in
    when it has used the allowance it was given. Allowances never add up to
    more than the budget left, so the run stops exactly at budget + 1 units.
    Once a limit is reached it stays reached: every later check-in raises
    again, so code that catches the error with pcall cannot run on.
    """

    def __init__(self, budget: int | None, deadline: float, memory_limit: int) -> None:
        self.budget = budget
        self.deadline = deadline
        self.memory_limit = memory_limit
        self.used = 0
        self.stopped: str | None = None  # "budget", "time" or "memory"
        self.counters: list[_Counter] = []

    def counter(self) -> _Counter:
        counter = _Counter()
        self.counters.append(counter)
        return counter

    def charge(self, counter: _Counter, units: int) -> int:
        """Add a chunk's `units`; return how many more it may run before checking in."""
        self.used += units
        counter.allowance = 0
        self._enforce()
        if self.budget is None:
            counter.allowance = _UNITS_PER_CHECK
            return counter.allowance
        free = self.budget - self.used - sum(c.allowance for c in self.counters)
        if free < _UNITS_PER_CHECK:
            # Near the end: take back the other chunks' allowances so that
            # what is left of the budget is counted unit by unit.
            self._collect()
            self._enforce()
            free = self.budget - self.used
        counter.allowance = min(_UNITS_PER_CHECK, free)
        return counter.allowance

    def unmetered(self) -> None:
        """From now on only the wall clock counts: no chunk checks in."""
        self.budget = None

    def interrupt(self, vm: Lua) -> VmState:
        """The VM's interrupt for an unmetered run: once past the deadline every
        interrupt ends the code at hand (a yield there is an error the code
        cannot catch; raising from an interrupt would crash pluau inside pcall)."""
        if self.stopped is None and time.perf_counter() > self.deadline:
            self.stopped = "time"
        return VmState.Continue if self.stopped is None else VmState.Yield

    def memory_exhausted(self, vm: Lua) -> None:
        self.stopped = self.stopped or "memory"
        vm.set_memory_limit(self.memory_limit + _HARNESS_RESERVE)

    def settle(self) -> None:
        """Add the units counted since each chunk last checked in, and let go of the chunks."""
        self._collect()
        self.counters.clear()  # their handles would keep the VM alive

    def _collect(self) -> None:
        for counter in self.counters:
            if counter.flush is not None:
                self.used += int(counter.flush()[0])
            counter.allowance = 0

    def _enforce(self) -> None:
        if self.stopped is None:
            if self.budget is not None and self.used > self.budget:
                self.stopped = "budget"
            elif time.perf_counter() > self.deadline:
                self.stopped = "time"
        if self.stopped == "budget":
            raise _LimitReached("work budget exceeded")
        if self.stopped == "time":
            raise _LimitReached("time limit exceeded")


class _Counter:
    """The host's side of one instrumented chunk's counter."""

    def __init__(self) -> None:
        self.allowance = 0
        self.flush: Function | None = None  # registered by the chunk's first statement


class _Sandbox:
    """Owns one VM and closes it without letting pluau's close notice reach stdout."""

    _stdout_lock = threading.Lock()

    def __init__(self, memory_limit: int) -> None:
        self.vm: Lua | None = Lua()
        self.vm.sandbox(True)
        self.vm.set_memory_limit(memory_limit)

    def close(self) -> None:
        # pluau prints "Lua VM is being closed" to file descriptor 1 when the
        # last handle goes; a harness may be writing results there.
        if sys.stdout is not None:
            sys.stdout.flush()
        with self._stdout_lock:
            try:
                saved = os.dup(1)
            except OSError:  # no stdout at all: nothing to protect
                self.vm = None
                return
            devnull = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(devnull, 1)
                self.vm = None
            finally:
                os.dup2(saved, 1)
                os.close(saved)
                os.close(devnull)


class _Outcome:
    def __init__(
        self, tests: list[dict], exec_error: str | None, output: str, unmetered: str | None = None
    ) -> None:
        self.tests = tests
        self.exec_error = exec_error
        self.output = output
        self.unmetered = unmetered


class _SourceRejected(Exception):
    pass


class _NotInstrumentable(Exception):
    pass


def _run(
    vm: Lua,
    meter: _Meter,
    solution: str,
    tests: str,
    output_limit: int,
    metered: bool,
    clock_kept_by_caller: bool,
) -> _Outcome:
    """Everything that holds Lua handles; they are all released when this returns."""
    config = vm.create_table()
    config.raw_set("outputLimit", output_limit)
    config.raw_set("shouldStop", vm.create_function(lambda lua, args: meter.stopped is not None))
    config.raw_set(
        "memoryExhausted", vm.create_function(lambda lua, args: meter.memory_exhausted(lua))
    )
    unmetered = None if metered else "metering was turned off"
    try:
        harness = vm.load_chunk(_jest_bytecode(), "=jest", is_binary_chunk=True)(config)[0]
        sources = [
            (solution, "solution", harness.raw_get("solutionEnv")),
            (tests, "test", harness.raw_get("testEnv")),
        ]
        try:
            try:
                if not metered:
                    raise _NotInstrumentable(unmetered)
                solution_chunk, test_chunk = _load_metered(vm, meter, sources)
            except _NotInstrumentable as why:
                unmetered = str(why)
                solution_chunk, test_chunk = (
                    _compile_or_reject(vm, source, name, env) for source, name, env in sources
                )
                meter.unmetered()
                if not clock_kept_by_caller:
                    vm.set_interrupt(meter.interrupt)
        except _SourceRejected as rejected:
            return _Outcome([], str(rejected), "")
        report = harness.raw_get("run")(test_chunk, solution_chunk)[0]
        return _Outcome(
            [_read_test(entry) for entry in _array(report.raw_get("tests"))],
            _optional_text(report.raw_get("execError")),
            _output(report, output_limit),
            unmetered,
        )
    except RuntimeError as error:  # the harness itself failed, e.g. out of memory
        return _Outcome([], f"the test harness failed: {error}", "", unmetered)
    finally:
        meter.settle()


def _load_metered(vm: Lua, meter: _Meter, sources: list[tuple[str, str, Table]]) -> list[Function]:
    """Each source instrumented and compiled, then hooked to the meter: all of them, or
    none (_NotInstrumentable says why; a real syntax error is _SourceRejected)."""
    compiled = []
    for source, name, env in sources:
        names = MeterNames.fresh()
        try:
            text = instrument(source).render(names)
        except LexError as error:
            _compile_or_reject(vm, source, name, env)
            raise _NotInstrumentable(
                f"the instrumenter could not read the {_label(name)} ({error})"
            ) from None
        except (
            Exception
        ) as error:  # a bug of the instrumenter's is never the model's: its code runs unmetered
            _compile_or_reject(vm, source, name, env)
            raise _NotInstrumentable(
                f"the instrumenter failed on the {_label(name)} ({type(error).__name__}: {error})"
            ) from None
        try:
            chunk = vm.load_chunk(text, "=" + name, env)
        except RuntimeError as error:
            _compile_or_reject(vm, source, name, env)
            message = str(error).removeprefix("syntax error: ")
            raise _NotInstrumentable(
                f"the instrumented {_label(name)} does not compile ({message})"
            ) from None
        compiled.append((chunk, names, env))
    for _, names, env in compiled:
        _hook(vm, meter, names, env)
    return [chunk for chunk, _, _ in compiled]


def _hook(vm: Lua, meter: _Meter, names: MeterNames, env: Table) -> None:
    """Lend the chunk its two hooks through `env`'s metatable, taken away again when the
    chunk registers (its first statement), so the environment table is never written."""
    counter = meter.counter()

    def register(lua: Lua, args: tuple) -> None:
        counter.flush = args[0]
        env.set_metatable(None)

    hooks = vm.create_table()
    hooks.raw_set(
        names.slow_global, vm.create_function(lambda lua, args: meter.charge(counter, int(args[0])))
    )
    hooks.raw_set(names.register_global, vm.create_function(register))
    metatable = vm.create_table()
    metatable.raw_set("__index", hooks)
    env.set_metatable(metatable)


def _label(name: str) -> str:
    return "solution" if name == "solution" else "test file"


def _compile_or_reject(vm: Lua, source: str, name: str, env: Table | None = None) -> Function:
    try:
        return vm.load_chunk(source, "=" + name, env)
    except RuntimeError as error:
        message = str(error).removeprefix("syntax error: ")
        raise _SourceRejected(f"syntax error in {_label(name)}: {message}") from None


@functools.cache
def _jest_bytecode() -> bytes:
    compiler = Compiler(optimization_level=1, debug_level=1, type_info_level=0, coverage_level=0)
    return bytes(compiler.compile(_JEST_SOURCE))


def _limit_reached(
    meter: _Meter, work_budget: int | None, timeout: float, elapsed: float, memory: str
) -> str | None:
    if meter.stopped == "budget":
        return f"work budget exceeded ({work_budget} units)"
    if meter.stopped == "time" or elapsed > timeout:
        return f"timed out after {timeout:.1f} s"
    if meter.stopped == "memory":
        return memory
    return None


def _resource_cause(message: str, memory: str) -> str | None:
    """Name the resource limit behind an error message, if any."""
    if "not enough memory" in message or "memory error" in message:
        return memory
    if "stack overflow" in message:
        return "stack overflow"
    return None


def _text(value: object) -> str:
    if isinstance(value, String):
        return value.as_bytes().decode("utf-8", "replace")
    return "" if value is None else str(value)


def _optional_text(value: object) -> str | None:
    return None if value is None else _text(value)


def _array(table: Table) -> list:
    return [table.raw_get(i) for i in range(1, table.raw_len() + 1)]


def _read_test(entry: Table) -> dict:
    return {
        "title": _text(entry.raw_get("title")),
        "fullName": _text(entry.raw_get("fullName")),
        "ancestorTitles": [_text(title) for title in _array(entry.raw_get("ancestorTitles"))],
        "status": _text(entry.raw_get("status")),
        "failureMessages": [_text(message) for message in _array(entry.raw_get("failureMessages"))],
    }


def _output(report: Table, output_limit: int) -> str:
    output = _text(report.raw_get("output"))
    dropped = int(report.raw_get("droppedBytes"))
    if dropped:
        output += f"\n[output truncated at {output_limit} bytes; {dropped} more bytes dropped]\n"
    return output
