"""Benchmark: the sandboxed runner against the same code in a bare pluau VM.

    uv run python bench/luau.py [--repeat 3] [--problems data/leetcode/problems.jsonl] [--limit N]
                                [--start-methods] [--smoke]

Each problem's reference solution and tests run three ways:
  * runner: evals.luau.run_tests in this process (fresh sandboxed VM, metering,
            limits, results), as references were measured until they moved to the worker;
  * worker: evals.luau.measure_work, the same run in the sandbox's worker process
            (a round trip over a pipe), as the harness measures references;
  * bare:   a fresh `Lua()` with no sandbox, no memory limit and no metering,
            running the same Jest Lua runtime, test file and solution.
Prints per-problem times, the overall ratio runner/bare (target: at most 3),
the ratio worker/runner (what measuring a reference in the worker costs) and
problems per second through the runner. Then, per start method of the worker
(forkserver, the default where there is one; spawn, Windows' only one, forced
with EVALS_START_METHOD=spawn): a new worker's first problem, start-up included
(median of --repeat), and every problem through a reused worker (best of
--repeat each), so what spawn costs per problem with the pool and without it.
`--start-methods` runs only that part. Besides the bundled problems (when
the file exists; `--limit N`: its first N) it runs a few CPU-heavy problems of
its own: a tight loop, recursion, table-heavy work and string building.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import multiprocessing
import os
import statistics
import sys
import time
from pathlib import Path

from pluau import Compiler, Lua

from bench._common import ROOT, parse_args
from evals.luau import measure_work, run_tests
from evals.luau.isolated import START_METHOD, stop_idle_workers

# Compiled once, as the runner does, so that neither side pays for it per run.
JEST_BYTECODE = bytes(
    Compiler(1, 1, 0, 0).compile((ROOT / "evals" / "luau" / "jest.luau").read_text())
)
PROBLEMS = ROOT / "data" / "leetcode" / "problems.jsonl"
SMOKE = {"repeat": 1, "limit": 2}

HEADER = """\
local JestGlobals = require(game:GetService("ReplicatedStorage").DevPackages.JestGlobals)
local describe, it, expect = JestGlobals.describe, JestGlobals.it, JestGlobals.expect
local Solution = require(script.Parent.solution)
"""

CPU_HEAVY = {
    "tight-loop": (
        """
local Solution = {}
function Solution.mix(n: number): number
    local acc = 0
    for i = 1, n do
        acc = (acc * 31 + i) % 1000000007
    end
    return acc
end
return Solution
""",
        HEADER
        + """
describe("tight loop", function()
    it("mixes", function() expect(Solution.mix(3000000)).toBeGreaterThan(0) end)
end)
""",
    ),
    "recursion": (
        """
local Solution = {}
local function fib(n: number): number
    if n < 2 then return n end
    return fib(n - 1) + fib(n - 2)
end
Solution.fib = fib
return Solution
""",
        HEADER
        + """
describe("recursion", function()
    it.each({ {20, 6765}, {25, 75025} })("fib(%d)", function(n, expected)
        expect(Solution.fib(n)).toBe(expected)
    end)
end)
""",
    ),
    "tables": (
        """
local Solution = {}
function Solution.primes(n: number): number
    local composite = table.create(n, false)
    local count = 0
    for i = 2, n do
        if not composite[i] then
            count += 1
            for j = i * i, n, i do composite[j] = true end
        end
    end
    return count
end
function Solution.topWords(count: number): { string }
    local seen = {}
    for i = 1, count do
        local word = "w" .. (i * 7919) % 1000
        seen[word] = (seen[word] or 0) + 1
    end
    local words = {}
    for word in seen do table.insert(words, word) end
    table.sort(words, function(a, b)
        if seen[a] ~= seen[b] then return seen[a] > seen[b] end
        return a < b
    end)
    return { words[1], words[2] }
end
return Solution
""",
        HEADER
        + """
describe("tables", function()
    it("counts primes", function() expect(Solution.primes(1000000)).toBe(78498) end)
    it("ranks words", function() expect(Solution.topWords(200000)).toEqual({"w0", "w1"}) end)
end)
""",
    ),
    "strings": (
        """
local Solution = {}
function Solution.rle(s: string): string
    local parts = {}
    local i = 1
    while i <= #s do
        local c = string.sub(s, i, i)
        local j = i
        while j < #s and string.sub(s, j + 1, j + 1) == c do j += 1 end
        table.insert(parts, `{j - i + 1}{c}`)
        i = j + 1
    end
    return table.concat(parts)
end
return Solution
""",
        HEADER
        + """
describe("strings", function()
    it("encodes", function()
        local input = string.rep("aaabccdddd", 20000)
        expect(#Solution.rle(input)).toBe(20000 * 8)
    end)
end)
""",
    ),
}


def run_bare(solution: str, tests: str) -> None:
    """The same Jest runtime, test file and solution in a bare VM."""
    vm = Lua()
    config = vm.create_table()
    config.raw_set("outputLimit", 64 * 1024)
    config.raw_set("shouldStop", vm.create_function(lambda lua, args: False))
    config.raw_set("memoryExhausted", vm.create_function(lambda lua, args: None))
    harness = vm.load_chunk(JEST_BYTECODE, "=jest", is_binary_chunk=True)(config)[0]
    solution_chunk = vm.load_chunk(solution, "=solution", harness.raw_get("solutionEnv"))
    test_chunk = vm.load_chunk(tests, "=test", harness.raw_get("testEnv"))
    report = harness.raw_get("run")(test_chunk, solution_chunk)[0]
    results = report.raw_get("tests")
    statuses = {str(results.raw_get(i).raw_get("status")) for i in range(1, results.raw_len() + 1)}
    if report.raw_get("execError") is not None or statuses != {"passed"}:
        raise SystemExit("a reference solution fails in the bare VM")


@contextlib.contextmanager
def stdout_silenced():
    """pluau prints a line to file descriptor 1 whenever a VM closes."""
    sys.stdout.flush()
    saved, devnull = os.dup(1), os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    try:
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)


def best_of(repeat: int, action) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return min(times)


def load_problems(path: Path, limit: int | None = None) -> dict[str, tuple[str, str]]:
    """The CPU-heavy problems, then the file's (its first `limit`, or all)."""
    problems = dict(CPU_HEAVY)
    if path.exists():
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        for row in rows[:limit]:
            problems[row["task_id"]] = (row["solution"], row["test"])
    return problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs per problem and side; the best counts"
    )
    parser.add_argument(
        "--problems", type=Path, default=PROBLEMS, help="JSONL with solution and test columns"
    )
    parser.add_argument("--limit", type=int, help="only the file's first N problems (default: all)")
    parser.add_argument(
        "--start-methods", action="store_true", help="only the start methods' figures"
    )
    args = parse_args(parser, SMOKE)

    problems = load_problems(args.problems, args.limit)
    if not args.start_methods:
        compare(problems, args.repeat)
    by_start_method(problems, args.repeat)


def compare(problems: dict[str, tuple[str, str]], repeat: int) -> None:
    print(
        f"{'problem':44} {'runner ms':>10} {'worker ms':>10} {'bare ms':>9} {'ratio':>6} {'work':>10}"
    )
    total_runner = total_worker = total_bare = 0.0
    for name, (solution, tests) in problems.items():
        check = run_tests(solution, tests, timeout=60)
        if not check.passed:
            raise SystemExit(f"{name}: the reference solution does not pass: {check.reason}")
        measure_work(
            solution, tests, timeout=60
        )  # the worker (and the forkserver, the first time) started
        runner = best_of(repeat, functools.partial(run_tests, solution, tests, timeout=60))
        worker = best_of(repeat, functools.partial(measure_work, solution, tests, timeout=60))
        with stdout_silenced():
            bare = best_of(repeat, functools.partial(run_bare, solution, tests))
        total_runner += runner
        total_worker += worker
        total_bare += bare
        print(
            f"{name[:44]:44} {runner * 1000:10.1f} {worker * 1000:10.1f} "
            f"{bare * 1000:9.1f} {runner / bare:6.2f} {check.work:10}"
        )
    print(
        f"\n{len(problems)} problems: runner {total_runner:.3f} s, bare {total_bare:.3f} s, "
        f"ratio {total_runner / total_bare:.2f} (target <= 3), "
        f"{len(problems) / total_runner:.1f} problems/s through the runner"
    )
    print(
        f"references measured in the worker {total_worker:.3f} s vs in this process {total_runner:.3f} s: "
        f"ratio {total_worker / total_runner:.2f}, "
        f"{(total_worker - total_runner) / len(problems) * 1000:+.1f} ms per problem"
    )


def by_start_method(problems: dict[str, tuple[str, str]], repeat: int) -> None:
    """A new worker's first problem, and each problem through a reused worker, per start method."""
    first_solution, first_tests = next(iter(problems.values()))
    print(
        f"\n{'start method':14} {'new worker, 1st problem ms':>27} "
        f"{'reused worker, per problem ms':>30} {'start-up per worker ms':>23}"
    )
    for method in [
        m for m in ("forkserver", "spawn") if m in multiprocessing.get_all_start_methods()
    ]:
        os.environ[START_METHOD] = method
        stop_idle_workers()
        measure_work(
            first_solution, first_tests, timeout=60
        )  # the forkserver itself, once per process, is not a worker's cost
        cold = []
        for _ in range(max(repeat, 3)):
            stop_idle_workers()
            started = time.perf_counter()
            measure_work(first_solution, first_tests, timeout=60)
            cold.append(time.perf_counter() - started)
        first = best_of(
            repeat, functools.partial(measure_work, first_solution, first_tests, timeout=60)
        )
        total = first + sum(
            best_of(repeat, functools.partial(measure_work, solution, tests, timeout=60))
            for solution, tests in list(problems.values())[1:]
        )
        new = statistics.median(cold)
        print(
            f"{method:14} {new * 1000:27.1f} {total / len(problems) * 1000:30.1f} {(new - first) * 1000:23.1f}"
        )
        stop_idle_workers()


if __name__ == "__main__":
    main()
