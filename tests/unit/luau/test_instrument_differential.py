"""The instrumenter against Luau's own grammar, differentially: every program below, and every
bundled problem's solutions with their tests, must behave exactly the same instrumented (the
work count, the default) as bare (`metered=False`, the sources as they are), both run in the
real VM by the runner, and the instrumented run must really be metered.

A difference is a bug of the instrumenter (a string or comment it reads one character too
long or too short, a counter where Luau takes it for part of an expression); an instrumented
run that falls back to unmetered means the instrumenter could not read valid Luau."""

from __future__ import annotations

import json

import pytest

from evals.luau import TestRun, run_tests
from tests.support.harness import ROOT
from tests.support.luau.specs import spec

CR, LF = "\r", "\n"

# Each program prints what it computes; none prints a table's or function's address.
PROGRAMS: dict[str, str] = {
    # -- string escapes -------------------------------------------------------------------
    "escapes-named": r"""print("a\a|b\b|f\f|n\n|r\r|t\t|v\v|bs\\|dq\"|sq\'|end")""",
    "escapes-single-quoted": r"""print('it\'s "quoted" \\ \n', #'\a\b\f\n\r\t\v')""",
    "escape-z": 'print("a\\z     b", "c\\z\n\n\t   d", "e\\z")\nfor i = 1, 2 do print("loop\\z\n   ", i) end',
    "escape-z-before-code": 'local s = "x\\z\n  " while #s < 3 do s ..= "y" end print(s)',
    "escape-hex": r"""print("\x41\x62\x7A\x7e", #"\x00\xff")""",
    "escape-decimal": r"""print("\65\066\0677|\9|\255" == "AB" .. "C7|\t|\xff", #"\0\1\12\123")""",
    "escape-unicode": r"""print("\u{48}\u{E9}\u{20AC}\u{1F600}", #"\u{0}\u{7FF}\u{10FFFF}")""",
    "escaped-newline-lf": "print(\"one\\\ntwo\", 'three\\\nfour')",
    "escaped-newline-crlf": 'print("one\\' + CR + LF + 'two")',
    "escaped-newline-cr": 'print("one\\' + CR + 'two")',
    "keywords-in-strings": """print("while true do end", 'repeat until false', "function() end", 'do')
print("--[[ not a comment", ']] -- nor this')""",
    "brackets-in-strings": r"""print("[[", "]]", '[==[', "`{", "}`", "\"]]\"")""",
    # -- long strings and comments -------------------------------------------------------
    "long-strings": "print([[a]] .. [=[ ]] ]=] .. [==[ ]=] ]] ]==] .. [[\nfirst newline dropped]])",
    "long-string-levels": "local s = [===[\n]]\n]=]\n]==]\n]===] print(#s, s)",
    "long-comments": (
        "--[[ while true do end ]] print(1)\n--[==[ ]] ]=] while "
        "true do end ]==] print(2)\n--[[\nmulti\nline\n]] print(3)"
    ),
    "line-comments": (
        "print(1) -- while true do end\n-- repeat\nprint(2) --[=x "
        "not a long comment\nprint(3) ---[[ nor this\nprint(4)\n--]]"
    ),
    "comment-ends-at-cr": "local n = 0 -- a comment" + CR + "for i = 1, 3 do n += i end print(n)",
    "comment-ends-at-crlf": "local n = 0 -- a comment"
    + CR
    + LF
    + "while n < 4 do n += 1 end print(n)",
    "hot-comments": "--!strict\n--!optimize 2\nlocal function f(x: number): number return x + 1 end\nprint(f(1))",
    # -- interpolated strings ---------------------------------------------------------------
    "interpolation": 'local a, b = 2, "x" print(`a={a} b={b} sum={a + 3}`, `plain`, ``)',
    "interpolation-braces": 'print(`{ #{1, 2, 3} } { ({n = 4}).n } { (function() return "}" end)() }`)',
    "interpolation-escapes": r"""print(`\{not an expression\} \` \u{41}\u{1F600} \x41 \65 \z   z {1}`)""",
    "interpolation-nested": "local x = 5 print(`outer {`inner {x} {`deep {x * 2}`}`} done`)",
    "interpolation-strings-inside": """print(`{"}"} {'{'} {[[}]]} {"`"}`)""",
    "interpolation-loop-inside": "print(`{(function() local s = 0 for i = 1, 4 do s += i end return s end)()}`)",
    "interpolation-escaped-newline": "print(`a\\\nb{1}`)",
    "interpolation-if-expression": 'local x = 3 print(`{if x > 2 then "big" else "small"}`)',
    # -- numbers ------------------------------------------------------------------------------
    "numbers": "print(0xff, 0XFF, 0b1010, 0B11, 1_000_000, 0x_FF_FF, 0b_1_0, 1e3, 1E-2, 2.5e+2, .5, 5., 3.14_15)",
    "number-then-operator": "local x = 0xE-1 local y = 1e-5--[[\n]] print(x, y, 1 .. 2, 2^-1)",
    # -- types ---------------------------------------------------------------------------------
    "type-annotations": """type Point = { x: number, y: number }
export type Pair<T> = { first: T, second: T }
type Fn<A..., R...> = (A...) -> R...
type Box<T = number> = { read v: T }
local p: Point = { x = 1, y = 2 }
local function len(q: Point?): number return if q then q.x + q.y else 0 end
print(len(p), len(nil))""",
    "generic-functions": """local function first<T>(xs: { T }): T? return xs[1] end
local function pack<T...>(...: T...): (number, T...) return select("#", ...), ... end
local id = function<T>(x: T): T return x end
print(first({ "a" }), pack(1, nil, 3), id(7))""",
    "return-types": """local function f(): (number, string) return 1, "a" end
local function g(): (number) -> { [string]: number } return function(n) return { n = n } end end
local function h(): typeof(setmetatable({}, {})) while false do end return setmetatable({}, {}) end
local function k(): ...number return 1, 2 end
local function s(): "ok" | "no" return "ok" end
local function o(): { x: number }? return nil end
local function u(): (() -> ())? return nil end
print(f(), g()(3).n, type(h()), k(), s(), o(), u())""",
    "type-casts": (
        'local a = ("5" :: any) :: string local b = (1 :: '
        "number) + 2 print(a, b, (({ 1 }) :: { number })[1])"
    ),
    "type-function": (
        "type function Id(t) local n = 0 while n < 1 do n += 1 end return "
        "t end\ntype X = Id<number>\nprint('type functions do not run')"
    ),
    "type-as-a-value": (
        "local t = type\nfunction f() return t(1) end print(f())\nlocal r = "
        "{ type = 2 } local v = r.type\nfunction g() return v end print(g())"
    ),
    "attributes": (
        "@native local function f(n) local s = 0 for i = 1, n do s += i end "
        "return s end\n@checked function g() return f(3) end\nprint(f(10), g())"
    ),
    # -- statements -------------------------------------------------------------------------
    "continue": """for i = 1, 6 do if i % 2 == 0 then continue end print(i) end
local j = 0 while j < 5 do j += 1 if j == 3 then continue end print(j) end
local continue = "a name too" print(continue)""",
    "compound-assignment": """local a = 1 a += 2 a -= 1 a *= 6 a /= 4 a //= 1 a %= 2 a ^= 3
local s = "x" s ..= "y" s ..= 1
local t = { n = 1, [2] = "b" } t.n += 10 t[2] ..= "!" t["n"] //= 2
print(a, s, t.n, t[2])""",
    "if-expressions": """local function sign(x) return if x > 0 then 1 elseif x < 0 then -1 else 0 end
local y = if sign(-2) < 0 then if true then "neg" else "?" else "pos"
local t = { if false then 1 else 2, (if true then 3 else 4) }
if y == "neg" then print(sign(5), sign(-5), sign(0), y, t[1], t[2]) else print("no") end""",
    "varargs": """local function f(...) local a, b = ... return select("#", ...), a, b, ... end
local function g(...: number) return (...) end
print(f(1, nil, 3)) print(g(4, 5)) print(select("#", ...))""",
    "methods": """local Obj = {} Obj.__index = Obj
function Obj.new(v) return setmetatable({ v = v }, Obj) end
function Obj:get() return self.v end
function Obj:add(n: number): number self.v += n return self.v end
local ns = { inner = { deep = {} } }
function ns.inner.deep.f() return "deep" end
function ns.inner.deep:g() return self == ns.inner.deep end
local o = Obj.new(1) o:add(2)
print(o:get(), ns.inner.deep.f(), ns.inner.deep:g(), ("x"):rep(3), #"abc", print ~= nil)""",
    "call-forms": 'local function f(t) return type(t) end print(f"str", f{1, 2}, f[[long]], (f)("x"))',
    "nested-functions": """local function counter()
    local n = 0
    return function() n += 1 return function() return n end end
end
local c = counter() c() c()
local fib fib = function(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
local t = { f = function(x) return x * 2 end, [1] = function() return "one" end }
print(c()(), fib(15), t.f(4), t[1](), (function(...) return select("#", ...) end)(1, 2))""",
    "repeat-until-locals": """local i = 0
repeat local j = i * 2 i += 1 until j >= 6
local k = 0
repeat k += 1 local done = k == 3 if not done then continue end until done
print(i, k)""",
    "loops": """local s = 0
for i = 10, 1, -3 do s += i end
for _, v in { 1, 2, 3 } do s += v end
for k, v in pairs({ a = 1 }) do s += v end
for i, v in ipairs({ 5, 6 }) do s += i * v end
while s > 100 do s -= 100 end
do local inner = 1 s += inner end
print(s)""",
    "statement-starting-with-paren": (
        'local function f() (print)("paren first") end f()\nlocal '
        'function g(): number ("x"):upper() return 1 end print(g())'
    ),
    "semicolons": "local a = 1; local b = 2; do local c = 3; print(a, b, c); end; for i = 1, 2 do local d = i; end;",
    "one-liners": (
        "local f = function() end local g = function() return "
        "end print(f(), g(), (function() return 1 end)())"
    ),
    "errors-keep-lines": """local ok, e = pcall(function()
    for i = 1, 2 do end
    error("boom")
end)
print(ok, e)
print(select(2, pcall(error, { code = 1 })).code)
print(debug.traceback("where"))""",
    "error-while-loading": "local x = 1\nfor i = 1, 2 do x += i end\nerror(`failed at {x}`)",
    "keyword-boundaries": (
        "local do_ = 1 local _end = 2 local functional = 3 local repeated = 4 "
        "local whiled = 5\nprint(do_ + _end + functional + repeated + whiled)"
    ),
    "env-untouched": """local keys = {}
for k in pairs(_G) do table.insert(keys, k) end
print(table.concat(keys, ","), getmetatable(_G))""",
}

# Not Luau: the instrumented run must report the same syntax error as the bare one.
INVALID: dict[str, str] = {
    "unterminated-string": 'print("abc)',
    "newline-in-string": 'print("abc\ndef")',
    "cr-in-string": 'print("abc' + CR + 'def")',
    "unterminated-long-string": "print([==[ abc ]=])",
    "unterminated-long-comment": "--[[ abc\nprint(1)",
    "bad-long-delimiter": "local s = [=x]",
    "double-brace": "print(`{{1}}`)",
    "unterminated-interpolation": "print(`abc {1}",
    "hex-float": "print(0x1p4)",
    "hex-fraction": "print(0x1.8)",
    "malformed-number": "print(1..2)",
    "bad-hex-escape": r'print("\xZZ")',
    "bad-unicode-escape": r'print("\u{110000}")',
    "bad-decimal-escape": r'print("\256")',
    "empty-statement": "do ; end",
}


def observable(run: TestRun) -> tuple:
    return run.status, run.reason, run.tests, run.output


def assert_same(solution: str, tests: str) -> None:
    metered = run_tests(solution, tests)
    bare = run_tests(
        solution, tests, metered=False, clock_kept_by_caller=True
    )  # trusted code: full speed
    assert metered.unmetered is None, metered.unmetered
    assert observable(metered) == observable(bare)


def test_the_bare_baseline_runs():
    run = run_tests("print('hi')\nreturn {}", spec('it("t", function() end)'), metered=False)
    assert (run.status, run.output, run.work, run.unmetered) == (
        "passed",
        "hi\n",
        None,
        "metering was turned off",
    )


@pytest.mark.parametrize("source", PROGRAMS.values(), ids=PROGRAMS.keys())
@pytest.mark.parametrize("role", ["solution", "test file"])
def test_a_program_prints_the_same_instrumented(source, role):
    if role == "solution":
        assert_same(source + "\nreturn {}", spec('it("runs", function() end)'))
    else:
        assert_same("return {}", source + "\n" + spec('it("runs", function() end)'))


def test_the_environment_table_is_never_written():
    """The counter's hooks have random names: were they ever stored in the environment, the
    order `pairs` visits it in would change from run to run."""
    source = PROGRAMS["env-untouched"] + "\nreturn {}"
    tests = spec('it("runs", function() end)')
    outputs = {run_tests(source, tests).output for _ in range(12)}
    assert outputs == {run_tests(source, tests, metered=False).output}


@pytest.mark.parametrize("source", INVALID.values(), ids=INVALID.keys())
def test_invalid_luau_is_the_same_syntax_error(source):
    metered = run_tests(source + "\nreturn {}", spec('it("runs", function() end)'))
    assert metered.reason.startswith("syntax error in solution: solution:"), metered.reason
    assert_same(source + "\nreturn {}", spec('it("runs", function() end)'))


PROBLEMS = [
    json.loads(line)
    for line in (ROOT / "data" / "leetcode" / "problems.jsonl").read_text().splitlines()
]


@pytest.mark.parametrize("problem", PROBLEMS, ids=[p["task_id"] for p in PROBLEMS])
def test_bundled_solutions_give_the_same_results_instrumented(problem):
    for solution in (problem["solution"], problem["wrong_solution"], problem["starter_code"]):
        assert_same(solution, problem["test"])
