"""Work metering: what a unit is, where counters go, and the budget helpers."""

import inspect
import sys

import pytest

from evals.luau import (
    WORK_BUDGET_FACTOR,
    WORK_BUDGET_FLOOR,
    measure_work,
    run_tests,
    work_budget_for,
)
from evals.luau.instrument import instrument
from tests.support.luau.specs import DOUBLER, DOUBLER_SPEC, solution, spec


def work_of(body: str) -> int:
    """Work of a solution whose `double` runs `body` first, with the doubler's tests."""
    run = run_tests(solution(f"function Solution.double(x) {body} return 2 * x end"), DOUBLER_SPEC)
    assert run.passed, run.reason
    return run.work


def test_a_unit_is_a_function_entry_or_a_loop_iteration():
    base = work_of("")
    assert work_of("for i = 1, 100 do end") - base == 2 * 100
    assert work_of("local i = 0 while i < 10 do i += 1 end") - base == 2 * 10
    assert work_of("local i = 0 repeat i += 1 until i == 10") - base == 2 * 10
    assert work_of("for _ in {1, 2, 3} do end") - base == 2 * 3
    assert work_of("local function f() end f() f()") - base == 2 * 2
    assert work_of("string.gsub('abc', '.', function() end)") - base == 2 * 3


def test_the_same_run_always_costs_the_same():
    assert len({run_tests(DOUBLER, DOUBLER_SPEC).work for _ in range(3)}) == 1


CHATTY_SPEC = spec("""
it("calls back and forth", function()
    for i = 1, 3000 do expect(Solution.double(i)).toBe(2 * i) end
end)
""")


@pytest.mark.parametrize("tests", [DOUBLER_SPEC, CHATTY_SPEC], ids=["small", "alternating chunks"])
def test_budget_is_exact(tests):
    reference = measure_work(DOUBLER, tests)
    assert run_tests(DOUBLER, tests, work_budget=reference).passed
    over = run_tests(DOUBLER, tests, work_budget=reference - 1)
    assert over.reason == f"work budget exceeded ({reference - 1} units)"
    assert over.work == reference


def test_work_budget_for_has_a_floor_and_a_factor():
    assert work_budget_for(0) == WORK_BUDGET_FLOOR
    assert work_budget_for(10 * WORK_BUDGET_FLOOR) == WORK_BUDGET_FACTOR * 10 * WORK_BUDGET_FLOOR


def test_measure_work_refuses_a_failing_reference():
    with pytest.raises(ValueError, match="does not pass its own tests: 1 of 2 tests failed"):
        measure_work(solution("function Solution.double(x) return x end"), DOUBLER_SPEC)


@pytest.mark.parametrize(
    "source",
    [
        "local s = 'while true do end' while true do end",
        'local s = "a\\" while true do end" while true do end',
        "local s = [==[ ]] while true do end ]==] while true do end",
        "--[[ while true do end ]] while true do end",
        "--[=[ ]] ]=] while true do end",
        "local x = 0xE--x [[\nwhile true do end\n-- ]]",
        "local x = 1e-5--[[\n]] while true do end",
        "local s = `{ `{'}'}` }` while true do end",
        "local s = `a{(function() while true do end end)()}b`",
        "local f = function(): (number) -> { [string]: number } while true do end end f()",
        "local function f<T>(x: T, ...: number): ...T while true do end end f(1)",
        "local function f(): typeof(setmetatable({}, {})) while true do end end f()",
        "local function f(n) (function() end)() return if n == 0 then 0 else f(n - 1) + f(n - 1) end f(60)",
        "local s = 'a\\z\n  ' while true do end",
        "local s = `\\z\n{1}\\z\r\n` while true do end",
        "local x = 1 -- a comment ends at a lone CR\rwhile true do end",
        "type function T(t) return t end while true do end",
        "local t = type\nfunction f() while true do end end f()",
        "local x = if true then 1 else 2 if x then while true do end end",
    ],
)
def test_no_loop_escapes_the_counter(source):
    # Every source loops forever in a place a careless tokenizer would miss.
    run = run_tests(
        source + "\nreturn {}", spec('it("t", function() end)'), work_budget=100_000, timeout=5
    )
    assert run.reason == "work budget exceeded (100000 units)"


def test_keywords_in_strings_and_comments_get_no_counter():
    source = "local s = 'do' -- repeat\nlocal t = [[function()]] local u = `do{1}`"
    assert len(instrument(source).pieces) == 1


def test_line_numbers_survive_instrumentation():
    source = solution(
        "\n\nfunction Solution.double(x)\n    for i = 1, 2 do end\n    error('here')\nend"
    )
    run = run_tests(source, DOUBLER_SPEC)
    assert run.tests[0]["failureMessages"] == ["solution:6: here"]


# Programs that nest as deep as Luau compiles (each a little under its limit), each with a loop
# of ten after the nesting that its counter must still see. Nested expressions stay further
# under their limit: the counter's own locals take four of the 255 registers.
DEEP = {
    "function-type chain": lambda: (
        "local function f(): " + "(number) -> " * 495 + "number return nil :: any end"
    ),
    "generic function-type chain": lambda: (
        "local function f(): " + "<T>(T) -> " * 200 + "number return nil :: any end"
    ),
    "type-pack chain": lambda: (
        "local function f(): " + "(...number) -> " * 495 + "number return nil :: any end"
    ),
    "function-type chain, anonymous": lambda: (
        "local f = function(): " + "(string) -> " * 495 + "string return nil :: any end"
    ),
    "union of function types": lambda: (
        "local function f(): " + "(number) -> number | " * 150 + "nil return nil end"
    ),
    "generic types": lambda: (
        "type Box<T> = { v: T }\nlocal function f(): "
        + "Box<" * 495
        + "number"
        + ">" * 495
        + " return nil :: any end"
    ),
    "parenthesized types": lambda: (
        "local function f(): " + "(" * 495 + "number" + ")" * 495 + " return 1 end"
    ),
    "nested tables": lambda: "local t = " + "{" * 200 + "1" + "}" * 200,
    "parentheses": lambda: "local x = " + "(" * 495 + "1" + ")" * 495,
    "a chain of ..": lambda: "local s = " + " .. ".join(["'a'"] * 200),
    "a chain of +": lambda: "local x = 1" + " + 1" * 200,
    "if/elseif": lambda: (
        "local x = 0\nif x == 1 then x = 1\n"
        + "".join(f"elseif x == {i} then x = {i}\n" for i in range(2, 497))
        + "end"
    ),
    "if-expressions": lambda: "local x = " + "if false then 0 else " * 495 + "1",
    "do blocks": lambda: "do " * 495 + "local x = 1 " + "end " * 495,
    "functions in functions": lambda: (
        "local g = "
        + "function() return " * 495
        + "1"
        + " end" * 495
        + "\nlocal h = g"
        + "()" * 494
    ),
}


@pytest.mark.parametrize("kind", DEEP)
def test_deep_but_valid_code_is_metered_without_recursing_on_its_depth(kind):
    """With only 150 Python frames to spare, as deep inside a harness as it may be: a walk of
    the source that recursed once per level of nesting would fail here."""
    source = solution(
        DEEP[kind]() + "\nfor i = 1, 10 do end\nfunction Solution.double(x) return 2 * x end"
    )
    limit = sys.getrecursionlimit()
    instrument.cache_clear()
    sys.setrecursionlimit(len(inspect.stack(0)) + 150)
    try:
        run = run_tests(source, DOUBLER_SPEC)
    finally:
        sys.setrecursionlimit(limit)
    assert (run.status, run.reason, run.unmetered) == ("passed", None, None)
    nested_units = {"do blocks": 495, "functions in functions": 494}.get(
        kind, 0
    )  # each do, each call
    assert run.work == run_tests(DOUBLER, DOUBLER_SPEC).work + 10 + nested_units


@pytest.mark.parametrize(
    "failure",
    [
        RecursionError("maximum recursion depth exceeded"),
        IndexError("list index out of range"),
        MemoryError(),
    ],
)
def test_a_failure_of_the_instrumenter_is_never_the_models_its_code_runs_unmetered(
    monkeypatch, failure
):
    """Whatever goes wrong inside the instrumenter (a bug of ours, or a limit of Python's), the
    model's correct code passes, unmetered, and the run says why."""
    import evals.luau.runner as runner

    def broken(source):
        raise failure

    monkeypatch.setattr(runner, "instrument", broken)
    run = run_tests(DOUBLER, DOUBLER_SPEC)
    assert (run.status, run.reason) == ("passed", None)
    assert (
        run.unmetered.startswith("the instrumenter failed on the solution")
        and type(failure).__name__ in run.unmetered
    )
