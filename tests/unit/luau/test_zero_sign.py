"""0, -0 and NaN in every matcher that compares values, as Jest Lua treats them.

Jest Lua (jsdotlua/jest-lua) compares with luau-polyfill's `Object.is`: in
toBe, and for every number its deep equality meets (toEqual, toStrictEqual,
toContainEqual, toMatchObject, toHaveProperty's value, toHaveBeenCalledWith),
at the top level and inside tables. There NaN is NaN, and 0 and -0 differ.
toContain looks an element up with `table.find` (`==`): 0 and -0 match, NaN
never does. toBeCloseTo subtracts: -0 is close to 0, NaN is close to nothing.
"""

import pytest

from evals.luau import run_tests
from tests.support.luau.specs import DOUBLER, both_ways, messages, spec, statuses

# (an expectation that holds, one that does not), written without `.never`.
# `0 * -1` is a -0 computed at run time, `-0` one written in the source.
CASES = {
    "toBe": ("expect(0 * -1).toBe(-0)", "expect(0 * -1).toBe(0)"),
    "toBe positive zero": ("expect(0).toBe(0 * -1 * -1)", "expect(0).toBe(-0)"),
    "toEqual": ("expect(-0).toEqual(0 * -1)", "expect(0 * -1).toEqual(0)"),
    "toEqual nested": (
        "expect({a = {-0}}).toEqual({a = {0 * -1}})",
        "expect({a = {0 * -1}}).toEqual({a = {0}})",
    ),
    "toEqual NaN nested": (
        "expect({x = {0/0}}).toEqual({x = {0/0}})",
        "expect({x = {0/0}}).toEqual({x = {0}})",
    ),
    "toStrictEqual": (
        "expect({x = -0}).toStrictEqual({x = -0})",
        "expect({x = -0}).toStrictEqual({x = 0})",
    ),
    "toStrictEqual top level": ("expect(-0).toStrictEqual(-0)", "expect(0).toStrictEqual(-0)"),
    "toContain": ("expect({-0}).toContain(0)", "expect({-0}).toContain(1)"),
    "toContain NaN": ("expect({0/0, 1}).toContain(1)", "expect({0/0, 1}).toContain(0/0)"),
    "toContainEqual": ("expect({{-0}}).toContainEqual({-0})", "expect({{-0}}).toContainEqual({0})"),
    "toContainEqual top level": (
        "expect({1, -0}).toContainEqual(-0)",
        "expect({1, -0}).toContainEqual(0)",
    ),
    "toContainEqual NaN": (
        "expect({1, 0/0}).toContainEqual(0/0)",
        "expect({1, 0/0}).toContainEqual(2)",
    ),
    "toMatchObject": (
        "expect({a = -0, b = 1}).toMatchObject({a = -0})",
        "expect({a = -0, b = 1}).toMatchObject({a = 0})",
    ),
    "toMatchObject array": ("expect({0}).toMatchObject({0})", "expect({0}).toMatchObject({-0})"),
    "toHaveProperty value": (
        "expect({a = {b = -0}}).toHaveProperty('a.b', -0)",
        "expect({a = {b = -0}}).toHaveProperty('a.b', 0)",
    ),
    "toHaveBeenCalledWith": (
        "expect(calledWithMinusZero).toHaveBeenCalledWith(-0)",
        "expect(calledWithMinusZero).toHaveBeenCalledWith(0)",
    ),
    "toHaveBeenCalledWith nested": (
        "expect(calledWithMinusZero).toHaveBeenCalledWith({-0})",
        "expect(calledWithMinusZero).toHaveBeenCalledWith({0})",
    ),
    "toBeCloseTo": ("expect(-0).toBeCloseTo(0)", "expect(-0).toBeCloseTo(1)"),
    "toBeCloseTo NaN": ("expect(0).toBeCloseTo(0)", "expect(0/0).toBeCloseTo(0/0)"),
    "toBeCloseTo infinity": (
        "expect(math.huge).toBeCloseTo(math.huge)",
        "expect(math.huge).toBeCloseTo(-math.huge)",
    ),
    # 10^-400 / 2 is 0: no difference is below it, so only equal infinities pass.
    "toBeCloseTo no tolerance left": (
        "expect(-math.huge).toBeCloseTo(-math.huge, 400)",
        "expect(1).toBeCloseTo(1, 400)",
    ),
    "expect.anything": (
        "expect({-0}).toEqual({expect.anything()})",
        "expect({}).toEqual({expect.anything()})",
    ),
}

FIXTURES = """
local calledWithMinusZero = jest.fn()
calledWithMinusZero(-0)
calledWithMinusZero({-0})
"""


@pytest.mark.parametrize("name", CASES)
def test_zero_sign_and_nan_as_jest_lua(name):
    run = both_ways(*CASES[name], FIXTURES)
    assert statuses(run) == ["passed", "failed", "failed", "passed"], messages(run)


def test_a_minus_zero_answer_fails_where_zero_is_expected():
    negate = "local Solution = {}\nfunction Solution.negate(x) return -x end\nreturn Solution\n"
    run = run_tests(
        negate, spec('it("negates zero", function() expect(Solution.negate(0)).toBe(0) end)')
    )
    assert run.status == "failed"


def test_messages_show_the_sign_of_a_zero():
    run = run_tests(
        DOUBLER,
        spec("""
        it("toBe", function() expect(0 * -1).toBe(0) end)
        it("toEqual", function() expect({a = 0 * -1}).toEqual({a = 0}) end)
        it("never", function() expect(-0).never.toEqual(-0) end)
        it("toContainEqual", function() expect({-0}).toContainEqual(0) end)
        it("toHaveBeenCalledWith", function()
            local f = jest.fn()
            f(-0)
            expect(f).toHaveBeenCalledWith(0)
        end)
    """),
    )
    to_be, to_equal, never, contain, called = messages(run)
    # Deep equality tells the zeros apart too, so no "replace toBe with toEqual" hint.
    assert to_be == "expect(received).toBe(expected)\n\nExpected: 0\nReceived: -0"
    assert to_equal == "expect(received).toEqual(expected)\n\nExpected: {a = 0}\nReceived: {a = -0}"
    assert never == "expect(received).never.toEqual(expected)\n\nExpected: never -0\nReceived: -0"
    assert "Expected value: 0\nReceived array: {-0}" in contain
    assert "Expected: {0}\nReceived calls: {-0}" in called
