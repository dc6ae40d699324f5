"""Building blocks shared by the Luau runner tests."""

import multiprocessing

from evals.luau import TestRun, run_tests

PRELUDE = """\
local JestGlobals = require(game:GetService("ReplicatedStorage").DevPackages.JestGlobals)
local describe, it, test, expect, jest = JestGlobals.describe, JestGlobals.it, JestGlobals.test, \
JestGlobals.expect, JestGlobals.jest
local xit, fit, xdescribe, fdescribe = JestGlobals.xit, JestGlobals.fit, JestGlobals.xdescribe, JestGlobals.fdescribe
local beforeAll, beforeEach = JestGlobals.beforeAll, JestGlobals.beforeEach
local afterAll, afterEach = JestGlobals.afterAll, JestGlobals.afterEach
local Solution = require(script.Parent.solution)
"""


def spec(body: str) -> str:
    """A test file: the usual requires, then `body`."""
    return PRELUDE + body


def solution(body: str) -> str:
    """A solution module: `local Solution = {}`, then `body`, then `return Solution`."""
    return f"local Solution = {{}}\n{body}\nreturn Solution\n"


DOUBLER = solution("function Solution.double(x: number): number return 2 * x end")

DOUBLER_SPEC = spec("""
describe("double", function()
    it("doubles two", function() expect(Solution.double(2)).toBe(4) end)
    it("doubles zero", function() expect(Solution.double(0)).toBe(0) end)
end)
""")


def statuses(run: TestRun) -> list[str]:
    return [test["status"] for test in run.tests]


def messages(run: TestRun) -> list[str]:
    return [message for test in run.tests for message in test["failureMessages"]]


def negated(expectation: str) -> str:
    """`expect(x).toY(...)` as `expect(x).never.toY(...)`."""
    return expectation.replace(").to", ").never.to", 1)


def both_ways(holds: str, fails: str, fixtures: str) -> TestRun:
    """Four tests against DOUBLER, after `fixtures`: `holds`, `fails`, then each under `.never`.
    A matcher that works gives the statuses passed, failed, failed, passed."""
    body = fixtures + "\n".join(
        f'it("{title}", function() {expectation} end)'
        for title, expectation in [
            ("holds", holds),
            ("fails", fails),
            ("never holds", negated(holds)),
            ("never fails", negated(fails)),
        ]
    )
    return run_tests(DOUBLER, spec(body))


def workers() -> list[multiprocessing.process.BaseProcess]:
    return [p for p in multiprocessing.active_children() if p.name == "luau-test-worker"]


# Backtracks through ~30^30 states inside one C call: no counter runs meanwhile.
BACKTRACKING = solution(
    "function Solution.double(x) return ('a'):rep(30):find(('a*'):rep(30) .. 'b') end"
)
