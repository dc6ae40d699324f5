"""describe / it / each / hooks / focus and skip, requires, output, and the TestRun shape."""

import json

from evals.luau import run_tests
from tests.support.luau.specs import (
    DOUBLER,
    DOUBLER_SPEC,
    PRELUDE,
    messages,
    spec,
    statuses,
)


def test_a_passing_run_is_shaped_like_jest_results():
    run = run_tests(DOUBLER, DOUBLER_SPEC)
    assert run.status == "passed" and run.reason is None
    assert run.aggregated == {
        "numTotalTests": 2,
        "numPassedTests": 2,
        "numFailedTests": 0,
        "numPendingTests": 0,
        "testExecError": None,
    }
    assert run.tests[0] == {
        "title": "doubles two",
        "fullName": "double doubles two",
        "ancestorTitles": ["double"],
        "status": "passed",
        "failureMessages": [],
    }
    assert run.work > 0 and run.elapsed > 0
    assert json.loads(json.dumps(run.to_dict()))["status"] == "passed"


def test_failed_tests_are_counted_in_the_reason():
    run = run_tests(
        DOUBLER,
        spec("""
        it("a", function() expect(Solution.double(1)).toBe(2) end)
        it("b", function() expect(Solution.double(1)).toBe(3) end)
        it("c", function() error("oops") end)
    """),
    )
    assert run.status == "failed"
    assert run.reason == "2 of 3 tests failed"
    assert run.aggregated["numFailedTests"] == 2
    assert messages(run)[1] == f"test:{PRELUDE.count(chr(10)) + 4}: oops"


def test_nested_describe_builds_full_names():
    run = run_tests(
        DOUBLER,
        spec("""
        describe("outer", function()
            describe("inner", function()
                test("leaf", function() end)
            end)
            it("sibling", function() end)
        end)
    """),
    )
    assert [t["fullName"] for t in run.tests] == ["outer inner leaf", "outer sibling"]
    assert run.tests[0]["ancestorTitles"] == ["outer", "inner"]


def test_each_formats_titles_like_jest():
    run = run_tests(
        DOUBLER,
        spec("""
        it.each({ {1, 2}, {2.5, 5} })("double(%d) = %i, case %#, %s", function(x, y)
            expect(Solution.double(x)).toBe(y)
        end)
        test.each({ {x = 3, y = 6} })("keyed $x -> $y", function(row)
            expect(Solution.double(row.x)).toBe(row.y)
        end)
        it.each("x | y", {4, 8}, {5, 10})("headings $x", function(row)
            expect(Solution.double(row.x)).toBe(row.y)
        end)
        it.each({ "a", "b" })("single %s", function(v) expect(type(v)).toBe("string") end)
        describe.each({ {1}, {2} })("block %d", function(n)
            it("runs", function() expect(Solution.double(n)).toBe(2 * n) end)
        end)
    """),
    )
    assert [t["fullName"] for t in run.tests] == [
        "double(1) = 2, case 0, %s",
        "double(2.5) = 5, case 1, %s",
        "keyed 3 -> 6",
        "headings 4",
        "headings 5",
        "single a",
        "single b",
        "block 1 runs",
        "block 2 runs",
    ]
    assert run.passed, messages(run)


def test_hooks_run_in_jest_order():
    run = run_tests(
        DOUBLER,
        spec("""
        beforeAll(function() print("beforeAll outer") end)
        afterAll(function() print("afterAll outer") end)
        beforeEach(function() print("beforeEach outer") end)
        afterEach(function() print("afterEach outer") end)
        describe("block", function()
            beforeEach(function() print("beforeEach inner") end)
            afterEach(function() print("afterEach inner") end)
            it("one", function() print("test one") end)
        end)
        it("two", function() print("test two") end)
    """),
    )
    assert run.passed
    assert run.output.splitlines() == [
        "beforeAll outer",
        "beforeEach outer",
        "beforeEach inner",
        "test one",
        "afterEach inner",
        "afterEach outer",
        "beforeEach outer",
        "test two",
        "afterEach outer",
        "afterAll outer",
    ]


def test_failing_hooks_fail_their_tests():
    run = run_tests(
        DOUBLER,
        spec("""
        describe("each", function()
            beforeEach(function() error("setup broke") end)
            afterEach(function() print("cleanup ran") end)
            it("skipped body", function() print("body ran") end)
        end)
        describe("all", function()
            beforeAll(function() error("once broke") end)
            it("a", function() end)
        end)
    """),
    )
    assert statuses(run) == ["failed", "failed"]
    assert run.output == "cleanup ran\n"
    assert "setup broke" in messages(run)[0]
    assert messages(run)[1].startswith("beforeAll hook failed:")


def test_skip_and_focus():
    skipped = run_tests(
        DOUBLER,
        spec("""
        xit("x", function() error("ran") end)
        it.skip("skip", function() error("ran") end)
        xdescribe("xd", function() it("inside", function() error("ran") end) end)
        it.todo("later")
        it("runs", function() end)
    """),
    )
    assert statuses(skipped) == ["pending", "pending", "pending", "pending", "passed"]
    assert skipped.passed and skipped.aggregated["numPendingTests"] == 4

    focused = run_tests(
        DOUBLER,
        spec("""
        it("not focused", function() error("ran") end)
        fit("focused", function() end)
        describe.only("block", function() it("inside", function() end) end)
        fdescribe("other", function() it.skip("still skipped", function() error("ran") end) end)
    """),
    )
    assert statuses(focused) == ["pending", "passed", "passed", "pending"]


def test_no_tests_and_all_skipped_are_errors():
    none = run_tests(DOUBLER, spec(""))
    assert none.status == "error" and none.reason == "no tests found"
    assert none.aggregated["testExecError"] == "no tests found"
    all_skipped = run_tests(DOUBLER, spec('xit("a", function() end)'))
    assert all_skipped.status == "error" and all_skipped.reason == "no tests ran (all 1 skipped)"


def test_tests_cannot_be_nested_in_tests():
    run = run_tests(DOUBLER, spec('it("outer", function() it("inner", function() end) end)'))
    assert statuses(run) == ["failed"]
    assert "tests cannot be nested" in messages(run)[0]


def test_every_documented_require_form_works():
    body = """
        local Other = require("@DevPackages/JestGlobals")
        local Same = require(game.ReplicatedStorage.DevPackages.JestGlobals)
        local Capital = require(script.Parent.Solution)
        local Found = require(script.Parent:FindFirstChild("solution"))
        Other.it("same module everywhere", function()
            Other.expect(Other).toBe(JestGlobals)
            Other.expect(Same).toBe(JestGlobals)
            Other.expect(Capital).toBe(Solution)
            Other.expect(Found).toBe(Solution)
        end)
    """
    run = run_tests(DOUBLER, spec(body))
    assert run.passed, messages(run)


def test_other_requires_are_refused():
    run = run_tests(DOUBLER, spec('local x = require(game:GetService("ReplicatedStorage"))'))
    assert run.status == "error"
    assert "only JestGlobals and script.Parent.solution can be required" in run.reason
    run = run_tests(DOUBLER, spec('local x = game:GetService("HttpService")'))
    assert "HttpService is not available" in run.reason


def test_errors_while_loading_are_suite_errors():
    syntax = run_tests("local Solution = {} function Solution.f( return Solution", DOUBLER_SPEC)
    assert syntax.status == "error"
    assert syntax.reason.startswith("syntax error in solution: solution:1:")
    assert syntax.aggregated["testExecError"] == syntax.reason

    test_syntax = run_tests(DOUBLER, DOUBLER_SPEC + "\nit(")
    assert test_syntax.reason.startswith("syntax error in test file: test:")

    throws = run_tests("error('broken module')", DOUBLER_SPEC)
    assert throws.reason == "error in solution: solution:1: broken module"

    nothing = run_tests("local Solution = {}", DOUBLER_SPEC)
    assert "returned nothing" in nothing.reason

    broken_test = run_tests(DOUBLER, spec('error("bad test file")'))
    assert broken_test.reason.startswith("error in test file: test:")


def test_output_is_captured_and_capped_with_a_marker():
    run = run_tests(
        DOUBLER,
        spec("""
        it("prints", function()
            print("a", 1, nil, true)
            for i = 1, 100 do print(string.rep("x", 99)) end
        end)
    """),
        output_limit=1000,
    )
    assert run.passed
    assert run.output.startswith("a\t1\tnil\ttrue\n")
    printed = len("a\t1\tnil\ttrue\n") + 100 * len("x" * 99 + "\n")
    marker = f"\n[output truncated at 1000 bytes; {printed - 1000} more bytes dropped]\n"
    assert run.output == run.output[:1000] + marker


def test_solution_prints_are_captured_too():
    solution = "local S = {} function S.double(x) print('doubling', x) return 2 * x end return S"
    run = run_tests(solution, DOUBLER_SPEC)
    assert run.output == "doubling\t2\ndoubling\t0\n"


def test_the_prelude_names_what_a_test_file_may_use():
    # Keeps specs.PRELUDE honest: every name it binds exists.
    run = run_tests(
        DOUBLER,
        PRELUDE
        + """
        for _, f in {describe, it, test, expect, jest, xit, fit, xdescribe, fdescribe,
                     beforeAll, beforeEach, afterAll, afterEach} do
            assert(f ~= nil)
        end
        it("ok", function() end)
    """,
    )
    assert run.passed, run.reason
