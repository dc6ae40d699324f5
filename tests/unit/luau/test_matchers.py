"""Every matcher, passing and failing, with and without `.never`; 0, -0 and NaN in test_zero_sign.py."""

import pytest

from evals.luau import run_tests
from tests.support.luau.specs import DOUBLER, both_ways, messages, spec, statuses

# (an expectation that holds, one that does not), written without `.never`.
CASES = {
    "toBe": ("expect(3).toBe(3)", "expect(3).toBe(4)"),
    "toBe identity": ("expect(shared).toBe(shared)", "expect(shared).toBe({1})"),
    "toBe NaN": ("expect(0/0).toBe(0/0)", "expect(0/0).toBe(1)"),
    "toEqual deep": (
        "expect({1, {a = 2}, b = {3}}).toEqual({1, {a = 2}, b = {3}})",
        "expect({1, {a = 2}, b = {3}}).toEqual({1, {a = 2}, b = {4}})",
    ),
    "toEqual nil fields": (
        "expect({a = 1, b = nil}).toEqual({a = 1})",
        "expect({a = 1}).toEqual({a = 1, c = 2})",
    ),
    "toEqual ignores metatables": (
        "expect(setmetatable({x = 1}, Point)).toEqual({x = 1})",
        "expect({x = 1}).toEqual({x = 2})",
    ),
    "toStrictEqual": (
        "expect(setmetatable({x = 1}, Point)).toStrictEqual(setmetatable({x = 1}, Point))",
        "expect(setmetatable({x = 1}, Point)).toStrictEqual({x = 1})",
    ),
    # Jest Lua's typeEquality: a class is its metatable's __index, not the metatable itself.
    "toStrictEqual same class, other metatables": (
        "expect(setmetatable({x = 1}, {__index = Point})).toStrictEqual(setmetatable({x = 1}, {__index = Point}))",
        "expect(setmetatable({x = 1}, {__index = Point})).toStrictEqual(setmetatable({x = 1}, {__index = {}}))",
    ),
    "toStrictEqual nested class": (
        "expect({p = setmetatable({}, Point)}).toStrictEqual({p = setmetatable({}, Point)})",
        "expect({p = setmetatable({}, Point)}).toStrictEqual({p = {}})",
    ),
    "toStrictEqual no __index is no class": (
        "expect(shared).toStrictEqual(shared)",
        "expect(bare).toStrictEqual(bare)",
    ),
    "toBeCloseTo": (
        "expect(0.1 + 0.2).toBeCloseTo(0.3, 5)",
        "expect(0.1 + 0.2).toBeCloseTo(0.31, 5)",
    ),
    "toBeCloseTo two digits": ("expect(1.004).toBeCloseTo(1)", "expect(1.006).toBeCloseTo(1)"),
    "toBeNil": ("expect(nil).toBeNil()", "expect(false).toBeNil()"),
    "toBeDefined": ("expect(false).toBeDefined()", "expect(nil).toBeDefined()"),
    "toBeTruthy": ("expect(0).toBeTruthy()", "expect(false).toBeTruthy()"),
    "toBeTruthy empty string": ("expect('').toBeTruthy()", "expect(nil).toBeTruthy()"),
    "toBeFalsy": ("expect(nil).toBeFalsy()", "expect(0).toBeFalsy()"),
    "toBeGreaterThan": ("expect(2).toBeGreaterThan(1)", "expect(1).toBeGreaterThan(1)"),
    "toBeGreaterThanOrEqual": (
        "expect(1).toBeGreaterThanOrEqual(1)",
        "expect(0).toBeGreaterThanOrEqual(1)",
    ),
    "toBeLessThan": ("expect(1).toBeLessThan(2)", "expect(2).toBeLessThan(2)"),
    "toBeLessThanOrEqual": ("expect(2).toBeLessThanOrEqual(2)", "expect(3).toBeLessThanOrEqual(2)"),
    "toBeNaN": ("expect(0/0).toBeNaN()", "expect(1).toBeNaN()"),
    "toContain element": ("expect({1, 2, 3}).toContain(2)", "expect({1, 2, 3}).toContain(4)"),
    "toContain substring": ("expect('hello').toContain('ell')", "expect('hello').toContain('l.')"),
    "toContainEqual": (
        "expect({{a = 1}, {b = 2}}).toContainEqual({b = 2})",
        "expect({{a = 1}}).toContainEqual({a = 2})",
    ),
    "toHaveLength": ("expect({1, 2}).toHaveLength(2)", "expect('abc').toHaveLength(2)"),
    "toHaveProperty path": (
        "expect({a = {b = {7, 8}}}).toHaveProperty('a.b.2', 8)",
        "expect({a = {}}).toHaveProperty('a.b')",
    ),
    "toHaveProperty keys": (
        "expect({a = {b = 1}}).toHaveProperty({'a', 'b'})",
        "expect({a = {b = 1}}).toHaveProperty({'a', 'b'}, 2)",
    ),
    "toMatch": ("expect('abc123').toMatch('%d+$')", "expect('abc').toMatch('^b')"),
    "toMatchObject": (
        "expect({a = 1, b = {c = 2, d = 3}}).toMatchObject({b = {c = 2}})",
        "expect({a = 1}).toMatchObject({a = 1, b = 2})",
    ),
    "toThrow": (
        "expect(function() error('boom!') end).toThrow('boom')",
        "expect(function() end).toThrow()",
    ),
    "toThrow message": (
        "expect(function() error('boom') end).toThrow()",
        "expect(function() error('x') end).toThrow('y')",
    ),
    "toBeInstanceOf": (
        "expect(setmetatable({}, Point)).toBeInstanceOf(Point)",
        "expect({}).toBeInstanceOf(Point)",
    ),
    "expect.anything": (
        "expect({a = 1}).toEqual({a = expect.anything()})",
        "expect({}).toEqual({a = expect.anything()})",
    ),
    "expect.any": (
        "expect({1, 's'}).toEqual({expect.any('number'), expect.any('string')})",
        "expect({1}).toEqual({expect.any('string')})",
    ),
    "toHaveBeenCalledWith": (
        "expect(called).toHaveBeenCalledWith(1, 'a')",
        "expect(called).toHaveBeenCalledWith(2)",
    ),
    "toHaveBeenCalledTimes": (
        "expect(called).toHaveBeenCalledTimes(2)",
        "expect(called).toHaveBeenCalledTimes(1)",
    ),
    "toHaveBeenCalled": (
        "expect(called).toHaveBeenCalled()",
        "expect(jest.fn()).toHaveBeenCalled()",
    ),
}

FIXTURES = """
local shared = {1}
local bare = setmetatable({}, {})
local Point = {}
Point.__index = Point
local called = jest.fn()
called(1, "a")
called()
"""


@pytest.mark.parametrize("name", CASES)
def test_matcher_passes_and_fails_with_and_without_never(name):
    run = both_ways(*CASES[name], FIXTURES)
    assert statuses(run) == ["passed", "failed", "failed", "passed"], messages(run)


def test_failure_messages_show_expected_and_received_like_jest():
    run = run_tests(
        DOUBLER,
        spec("""
        it("toBe", function() expect(Solution.double(2)).toBe(3) end)
        it("never", function() expect(4).never.toBe(4) end)
        it("toEqual", function() expect({1, 2, x = "a"}).toEqual({1, 3}) end)
    """),
    )
    to_be, never, to_equal = messages(run)
    assert to_be == "expect(received).toBe(expected)\n\nExpected: 3\nReceived: 4"
    assert never == "expect(received).never.toBe(expected)\n\nExpected: never 4\nReceived: 4"
    assert to_equal.endswith('Expected: {1, 3}\nReceived: {1, 2, x = "a"}')


def test_toBe_suggests_toEqual_only_when_deep_equality_would_pass():
    run = run_tests(
        DOUBLER,
        spec("""
        it("equal tables", function() expect({1}).toBe({1}) end)
        it("functions that print alike", function() expect(function() end).toBe(function() end) end)
        it("tables that print alike", function() expect({{{{{1}}}}}).toBe({{{{{2}}}}}) end)
    """),
    )
    tables, functions, deep = messages(run)
    hint = 'replace "toBe" with "toEqual"'
    assert hint in tables and hint not in functions and hint not in deep


def test_toBeCloseTo_reports_precision():
    run = run_tests(DOUBLER, spec('it("t", function() expect(0.5).toBeCloseTo(0.6) end)'))
    assert "Expected precision:    2" in messages(run)[0]


def test_misused_matcher_fails_even_under_never():
    run = run_tests(
        DOUBLER,
        spec("""
        it("string compared as number", function() expect("a").never.toBeGreaterThan(1) end)
        it("length of a number", function() expect(5).never.toHaveLength(1) end)
    """),
    )
    assert statuses(run) == ["failed", "failed"]
    assert all("Matcher error: received value must be" in m for m in messages(run))


def test_unknown_matcher_fails_the_test():
    run = run_tests(DOUBLER, spec('it("t", function() expect(1).toBeOne() end)'))
    assert "toBeOne is not a supported matcher" in messages(run)[0]


def test_matchers_may_be_called_with_a_colon():
    run = run_tests(
        DOUBLER, spec('it("t", function() expect(2):toBe(2) expect(2).never:toBe(3) end)')
    )
    assert run.passed, run.reason


def test_deep_equality_handles_cycles():
    run = run_tests(
        DOUBLER,
        spec("""
        it("cycles", function()
            local a, b = {}, {}
            a.self, b.self = a, b
            expect(a).toEqual(b)
            b.extra = 1
            expect(a).never.toEqual(b)
        end)
    """),
    )
    assert run.passed, messages(run)
