"""Hostile solutions end inside their limits with a reason, and leave the process fit for the next run."""

import time

import pytest

from evals.luau import TestRun, run_tests
from tests.support.luau.specs import (
    DOUBLER,
    DOUBLER_SPEC,
    messages,
    solution,
    spec,
    statuses,
)

BUDGET = 2_000_000


def run_then_check_next_run(source: str, tests: str = DOUBLER_SPEC, **limits) -> TestRun:
    run = run_tests(source, tests, **limits)
    assert run.status != "passed", run
    follow_up = run_tests(DOUBLER, DOUBLER_SPEC)
    assert follow_up.passed, follow_up.reason
    return run


def test_infinite_loop_ends_by_the_work_budget_deterministically():
    source = solution("function Solution.double(x) while true do end end")
    first = run_then_check_next_run(source, work_budget=BUDGET)
    second = run_then_check_next_run(source, work_budget=BUDGET)
    assert first.status == "error"
    assert first.reason == f"work budget exceeded ({BUDGET} units)"
    assert first.work == second.work
    assert (
        BUDGET < first.work < BUDGET + 100
    )  # the budget ended it, not the timeout (its reason would say so)


def test_catching_the_budget_error_does_not_help():
    source = solution("""
        function Solution.double(x)
            for _ = 1, 10 do pcall(function() while true do end end) end
            return 2 * x
        end
    """)
    run = run_then_check_next_run(source, work_budget=BUDGET)
    assert run.reason == f"work budget exceeded ({BUDGET} units)"


def test_a_loop_in_the_test_file_counts_too():
    run = run_then_check_next_run(
        DOUBLER, spec('it("spins", function() repeat until false end)'), work_budget=BUDGET
    )
    assert run.reason == f"work budget exceeded ({BUDGET} units)"


def test_infinite_loop_without_a_budget_ends_by_the_timeout():
    started = time.perf_counter()
    run = run_then_check_next_run(
        solution("function Solution.double(x) while true do end end"), timeout=0.3
    )
    assert run.status == "error" and run.reason == "timed out after 0.3 s"
    assert (
        time.perf_counter() - started < 30
    )  # not killed, the loop would run on: a bound only a hang reaches


@pytest.mark.parametrize(
    "body",
    [
        "function Solution.double(x) local s = string.rep('x', 2^30) return 2 * x end",
        "function Solution.double(x) local t = {} for i = 1, 1e9 do t[i] = {i} end return 2 * x end",
        "function Solution.double(x) local s = 'x' while true do s = s .. s end end",
    ],
    ids=["string.rep", "table growth", "string doubling"],
)
def test_memory_bombs_end_the_run_at_the_memory_limit(body):
    run = run_then_check_next_run(solution(body), memory_limit=32 * 2**20)
    assert run.status == "error"
    assert run.reason == "memory limit 32 MiB exceeded"
    assert statuses(run) == ["failed"]  # the run stops at the first test that ran out
    assert messages(run) == ["not enough memory"]


def test_memory_bomb_while_loading_is_a_suite_error():
    run = run_then_check_next_run(
        "local t = {} for i = 1, 1e9 do t[i] = i end", memory_limit=32 * 2**20
    )
    assert run.status == "error" and run.reason == "memory limit 32 MiB exceeded"


def test_deep_recursion_is_a_stack_overflow():
    source = solution(
        "local function down(n) return down(n + 1) + 1 end\nfunction Solution.double(x) return down(x) end"
    )
    run = run_then_check_next_run(source)
    assert run.reason == "stack overflow; 2 of 2 tests failed"


def test_yielding_out_of_a_test_fails_it():
    run = run_then_check_next_run(
        solution("function Solution.double(x) coroutine.yield(2 * x) end")
    )
    assert set(messages(run)) == {"the test yielded; asynchronous tests are not supported"}


def test_coroutines_of_its_own_are_fine_but_cannot_suspend_the_test():
    source = solution("""
        local parked
        function Solution.double(x)
            parked = parked or coroutine.running()  -- the first test's thread
            local co = coroutine.create(function() coroutine.yield() end)
            coroutine.resume(co)  -- never resumed again
            if coroutine.status(parked) == "suspended" then coroutine.resume(parked) end
            coroutine.yield()
        end
    """)
    run = run_then_check_next_run(source)
    assert statuses(run) == ["failed", "failed"]


def test_a_swallowed_assertion_still_fails_the_test():
    # The solution calls back into the test and hides the failing expect with pcall.
    tests = spec("""
        it("callback", function()
            Solution.forEach({1, 2}, function(v) expect(v).toBe(1) end)
        end)
    """)
    source = solution("function Solution.forEach(t, f) for _, v in t do pcall(f, v) end end")
    run = run_then_check_next_run(source, tests)
    assert statuses(run) == ["failed"]
    assert "Expected: 1\nReceived: 2" in messages(run)[0]


def test_rethrowing_a_captured_assertion_cannot_skip_a_later_test():
    tests = spec("""
        it("first", function() Solution.capture(function() expect(1).toBe(2) end) end)
        it("second", function() Solution.rethrow() expect(Solution.double(1)).toBe(2) end)
    """)
    source = solution("""
        local captured
        function Solution.capture(f) local _, e = pcall(f) captured = e end
        function Solution.rethrow() error(captured, 0) end
        function Solution.double(x) return 3 * x end
    """)
    run = run_then_check_next_run(source, tests)
    assert statuses(run) == ["failed", "failed"]


@pytest.mark.parametrize(
    "attack",
    [
        "getfenv(2).expect = function() return setmetatable({}, {__index = function() return function() end end}) end",
        "setfenv(2, {})",
        "loadstring('return 1')",
        "debug.info(2, 'f')",
        "require(script)",
        "os.exit(0)",
        "io.write('x')",
        "string.rep = function() return '' end",
        "getmetatable('').__index = {}",
        "table.insert = nil",
    ],
)
def test_escape_attempts_fail(attack):
    source = solution(f"function Solution.double(x) {attack} return 2 * x end")
    run = run_then_check_next_run(source)
    assert run.status == "failed", run.reason


def test_replacing_its_own_globals_does_not_reach_the_tests():
    source = solution("""
        expect, error, print, string, pcall = nil, nil, nil, nil, nil
        _G.expect = nil
        function Solution.double(x) return 3 * x end
    """)
    run = run_then_check_next_run(source)
    assert statuses(run) == ["failed", "passed"]


def test_metamethods_on_returned_values_cannot_fake_a_match():
    source = solution("""
        local liar = setmetatable({}, {
            __eq = function() return true end,
            __len = function() return 3 end,
            __index = function() return 42 end,
            __tostring = function() while true do end end,
            __lt = function() return true end,
            __le = function() return true end,
        })
        function Solution.double(x) return liar end
    """)
    tests = spec("""
        it("toBe", function() expect(Solution.double(1)).toBe(2) end)
        it("toEqual", function() expect(Solution.double(1)).toEqual({42}) end)
        it("toHaveLength", function() expect(Solution.double(1)).toHaveLength(3) end)
        it("toHaveProperty", function() expect(Solution.double(1)).toHaveProperty("a", 42) end)
        it("toBeGreaterThan", function() expect(Solution.double(1)).toBeGreaterThan(0) end)
        it("toContain", function() expect({Solution.double(1)}).toContain(2) end)
    """)
    run = run_then_check_next_run(source, tests, work_budget=BUDGET)
    assert statuses(run) == ["failed"] * 6
    assert run.status == "failed"


def test_printing_megabytes_is_capped():
    source = solution(
        "function Solution.double(x) for _ = 1, 200 do print(string.rep('y', 10000)) end return 3 * x end"
    )
    run = run_then_check_next_run(source, output_limit=4096)
    assert len(run.output) < 4096 + 200
    assert "[output truncated at 4096 bytes;" in run.output


def test_clock_and_randomness_are_deterministic():
    source = solution("""
        math.randomseed(os.time())
        function Solution.double(x)
            local spins = math.random(1, 1000) + os.clock()
            for _ = 1, spins do end
            return 2 * x
        end
    """)
    first, second = run_tests(source, DOUBLER_SPEC), run_tests(source, DOUBLER_SPEC)
    assert first.passed and first.work == second.work
