"""Work metering by source instrumentation.

Why not the VM interrupt: pluau calls a Python callable at every function call
and loop back-edge, and each call costs ~270 ns inside pluau itself (it builds
a `Lua` handle per call), which makes tight loops ~30x slower even with a
C-level callable. Instead we insert a counter at exactly those places -- the
start of every function body and of every loop body -- as plain Luau on
upvalue locals (a few ns), and only every thousand units or so does the counter
call into Python, which checks the work budget and the wall clock.

One unit of work is one function entry or one loop iteration. The count
depends only on the program, never on machine speed.

The inserted names are random per run, so code under test cannot refer to
them (it cannot read its own source, and the two hooks it reads from its
environment are only lent through the environment's metatable, taken away by
its first statement). Insertions contain no newline, so error line numbers
stay those of the original source. The bodies of type functions get no
counter: they run in the type checker, never in the VM.
"""

from __future__ import annotations

import functools
import itertools
import re
import secrets
from dataclasses import dataclass

__all__ = ["Instrumented", "LexError", "instrument"]


class LexError(ValueError):
    """The source is not lexically valid Luau (unterminated string or comment)."""


# The lexer below follows Luau's own (Ast/src/Lexer.cpp) rule for rule: a string
# or comment that ends one character early or late would hide a loop from its
# counter, or put a counter inside a string.
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Luau's readNumber: digits, dots and underscores, then an optional exponent
# marker with its sign, then letters and digits. So `0xE-1` is `0xE`, `-`, `1`.
_NUMBER = re.compile(r"[0-9.][0-9._]*(?:[eE][+-]?)?[0-9A-Za-z_]*")
_SPACE = re.compile(r"[ \t\r\n\v\f]*")
_LONG_OPEN = re.compile(r"\[(=*)\[")
_LINE_END = re.compile(r"[\r\n]")  # a line comment ends at a lone carriage return too
_DIGITS = "0123456789"
_SYMBOLS = (
    "...",
    "//=",
    "..=",
    "..",
    "==",
    "~=",
    "<=",
    ">=",
    "->",
    "::",
    "+=",
    "-=",
    "*=",
    "/=",
    "%=",
    "^=",
    "//",
)


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str  # "name", "symbol" or "literal" (strings and numbers)
    text: str
    end: int  # offset just past the token


def _tokens(source: str) -> list[_Token]:
    """Split Luau source into tokens, dropping whitespace and comments.

    Only what decides where statements can start matters here, but it must
    match Luau's lexer exactly on valid programs: a keyword wrongly taken to be
    inside a string would leave a loop without its counter.
    """
    source = source.split("\0", 1)[0]  # Luau reads a NUL character as the end of the source
    tokens: list[_Token] = []
    # One entry per open interpolated string: the brace depth inside its
    # current `{...}` expression.
    interpolations: list[int] = []
    i, n = 0, len(source)
    while i < n:
        c = source[i]
        if c in " \t\r\n\v\f":
            i = _end(_SPACE, source, i)
        elif source.startswith("--", i):
            long = _LONG_OPEN.match(source, i + 2)
            if long:
                i = _long_bracket_end(source, long)
            else:
                line_end = _LINE_END.search(source, i)
                i = n if line_end is None else line_end.start()
        elif c in "\"'":
            i = _quoted_end(source, i + 1, c)
            tokens.append(_Token("literal", c, i))
        elif c == "`" or (c == "}" and interpolations and interpolations[-1] == 0):
            if c == "}":
                interpolations.pop()
            i, opens_expression = _interpolated_segment_end(source, i + 1)
            if opens_expression:
                interpolations.append(0)
            tokens.append(_Token("literal", "`{" if opens_expression else "`", i))
        elif c == "[" and (long := _LONG_OPEN.match(source, i)):
            i = _long_bracket_end(source, long)
            tokens.append(_Token("literal", "[[", i))
        elif source.startswith("[=", i):
            raise LexError("invalid long string delimiter")
        elif m := _NAME.match(source, i):
            i = m.end()
            tokens.append(_Token("name", m.group(), i))
        elif c in _DIGITS or (c == "." and i + 1 < n and source[i + 1] in _DIGITS):
            i = _end(_NUMBER, source, i)
            tokens.append(_Token("literal", "0", i))
        else:
            symbol = next((s for s in _SYMBOLS if source.startswith(s, i)), c)
            if interpolations and symbol == "{":
                interpolations[-1] += 1
            elif interpolations and symbol == "}":
                interpolations[-1] -= 1
            i += len(symbol)
            tokens.append(_Token("symbol", symbol, i))
    if interpolations:
        raise LexError("unterminated interpolated string")
    return tokens


def _long_bracket_end(source: str, opening: re.Match[str]) -> int:
    closing = "]" + opening.group(1) + "]"
    end = source.find(closing, opening.end())
    if end < 0:
        raise LexError("unterminated long string or comment")
    return end + len(closing)


def _quoted_end(source: str, i: int, quote: str) -> int:
    n = len(source)
    while i < n:
        c = source[i]
        if c == "\\":
            i = _escape_end(source, i)
        elif c == quote:
            return i + 1
        elif c in "\r\n":
            break
        else:
            i += 1
    raise LexError("unterminated string")


def _end(pattern: re.Pattern[str], source: str, i: int) -> int:
    """Where `pattern`, one that matches wherever the caller uses it (the empty string, or
    the character at `i`), ends."""
    m = pattern.match(source, i)
    assert m is not None
    return m.end()


def _escape_end(source: str, backslash: int) -> int:
    """Luau's readBackslashInString: where the escape starting at `backslash` ends. Its
    validity (\\x, \\u{...}, \\ddd) is the compiler's to judge; only its length matters here."""
    escaped = source[backslash + 1 : backslash + 2]
    if escaped == "\r":  # a line break, CRLF or a lone CR, continues the string
        return backslash + (3 if source.startswith("\n", backslash + 2) else 2)
    if escaped == "z":  # skips the whitespace after it, line breaks included
        return _end(_SPACE, source, backslash + 2)
    return backslash + 1 + len(escaped)


def _interpolated_segment_end(source: str, i: int) -> tuple[int, bool]:
    """Scan string text after "`" or "}"; return (end, whether a `{` expression follows)."""
    n = len(source)
    while i < n:
        c = source[i]
        if c == "\\":
            # A `\u{` escape is not the start of an expression: Luau skips those three characters.
            i = i + 3 if source.startswith("u{", i + 1) else _escape_end(source, i)
        elif c == "`":
            return i + 1, False
        elif c == "{":
            if source.startswith("{", i + 1):
                raise LexError("'{{' in an interpolated string")
            return i + 1, True
        elif c in "\r\n":
            break
        else:
            i += 1
    raise LexError("unterminated interpolated string")


# Tokens after which an expression, never a statement, comes next: an `if` there is an
# if-expression (it has no `end`), a `type` there is a value (not `type function`).
_EXPRESSION_FOLLOWS = frozenset(
    {
        "=",
        "(",
        ",",
        "{",
        "[",
        "`{",
        "return",
        "in",
        "while",
        "until",
        "if",
        "elseif",
        "not",
        "and",
        "or",
        "#",
        "+",
        "-",
        "*",
        "/",
        "//",
        "%",
        "^",
        "..",
        "==",
        "~=",
        "<",
        "<=",
        ">",
        ">=",
        "+=",
        "-=",
        "*=",
        "/=",
        "//=",
        "%=",
        "^=",
        "..=",
    }
)


class _Parser:
    """Finds the offsets where a statement may be inserted at the start of a body.

    It follows the blocks (`function`/`do`/`if` ... `end`, `repeat` ... `until`) only
    as far as needed to leave out the bodies of type functions (`type function f()`):
    they run in the type checker only, and cannot see the counter's locals.
    """

    def __init__(self, tokens: list[_Token]) -> None:
        self.tokens = tokens
        self.pos = 0

    def peek(self, text: str) -> bool:
        return self.pos < len(self.tokens) and self.tokens[self.pos].text == text

    def peek_name(self) -> bool:
        return self.pos < len(self.tokens) and self.tokens[self.pos].kind == "name"

    def body_starts(self) -> list[int]:
        offsets: list[int] = []
        blocks: list[str] = []  # the open blocks, innermost last
        branch_is_expression = False  # whether the last `then`/`else` was an if-expression's
        due_before = False  # whether an expression was due at the previous token
        while self.pos < len(self.tokens):
            previous = self.tokens[self.pos - 1] if self.pos else None
            token = self.tokens[self.pos]
            self.pos += 1
            due = previous is not None and (
                previous.text in _EXPRESSION_FOLLOWS
                or previous.text in ("then", "else")
                and branch_is_expression
            )
            counted = "type function" not in blocks
            if token.kind != "name":
                pass
            elif token.text == "function":
                # `type function`, unless that `type` is a value (`local t = type`) or a field (`a.type`).
                before = self.tokens[self.pos - 3].text if self.pos >= 3 else None
                typed = (
                    previous is not None
                    and previous.text == "type"
                    and not due_before
                    and before not in (".", ":")
                )
                start = self.function_body_start()
                blocks.append("type function" if typed else "function")
                if counted and not typed:
                    offsets.append(start)
            elif token.text in ("do", "repeat"):
                if token.text == "do" and blocks and blocks[-1] in ("while", "for"):
                    blocks.pop()
                blocks.append(token.text)
                if counted:
                    offsets.append(token.end)
            elif token.text in ("while", "for"):
                blocks.append(token.text)
            elif token.text == "if":
                blocks.append("if-expression" if due else "if")
            elif token.text in ("then", "else"):
                branch_is_expression = bool(blocks) and blocks[-1] == "if-expression"
                if token.text == "else" and branch_is_expression:
                    blocks.pop()  # an if-expression ends with its else branch
            elif token.text in ("end", "until") and blocks:
                blocks.pop()
            due_before = due
        return offsets

    def function_body_start(self) -> int:
        # Statement form: `function a.b:c<T>(...)`; expression form: `function<T>(...)`.
        while self.peek_name() or self.peek(".") or self.peek(":"):
            self.pos += 1
        if self.peek("<"):
            self.skip_balanced("<", ">")
        if not self.peek("("):
            raise LexError("expected '(' after 'function'")
        self.skip_balanced("(", ")")
        if self.peek(":"):
            self.pos += 1
            self.skip_type()
        return self.tokens[self.pos - 1].end

    def skip_balanced(self, opening: str, closing: str) -> None:
        depth = 0
        while self.pos < len(self.tokens):
            text = self.tokens[self.pos].text
            self.pos += 1
            if text == opening:
                depth += 1
            elif text == closing:
                depth -= 1
                if depth == 0:
                    return
        raise LexError(f"unbalanced '{opening}'")

    def skip_type(self) -> None:
        """Skip a return type annotation: the body begins right after it.

        A loop, not a recursive descent: a chain of function types `(A) -> (B) -> ... -> Z`
        (or of type packs, or of generic function types) nests as deep as it is long, and
        Luau compiles chains deeper than Python's recursion limit. What follows each form
        that ends in another type (`->`, `...`, a generic's `<T>`) is read by the same loop.
        """
        type_starts = True  # where a whole type (a union or intersection) starts
        while True:
            if type_starts and (self.peek("|") or self.peek("&")):
                self.pos += 1
            type_starts = False
            if self.peek("..."):  # a type pack: its type follows
                self.pos += 1
                type_starts = True
                continue
            if self.peek("<"):  # generic function type: <T>(T) -> T
                self.skip_balanced("<", ">")
                continue
            if self.peek("("):
                self.skip_balanced("(", ")")
                if self.peek("->"):  # a function type: its return type follows
                    self.pos += 1
                    type_starts = True
                    continue
            elif self.peek("{"):
                self.skip_balanced("{", "}")
            elif self.peek("typeof"):
                self.pos += 1
                self.skip_balanced("(", ")")
            elif self.pos < len(self.tokens):
                self.pos += 1  # a name, `nil`, `true`, `false` or a string literal type
                while self.peek(".") and self.pos + 1 < len(self.tokens):
                    self.pos += 2
                if self.peek("<"):
                    self.skip_balanced("<", ">")
                if self.peek("..."):
                    self.pos += 1
            else:
                raise LexError("expected a type")
            while self.peek("?"):
                self.pos += 1
            if not (self.peek("|") or self.peek("&")):
                return
            self.pos += 1


@dataclass(frozen=True)
class Instrumented:
    """A source split at every body start, ready to be rendered with fresh names."""

    pieces: tuple[str, ...]

    def render(self, names: MeterNames) -> str:
        n, limit, slow, tick = names.count, names.limit, names.slow, names.tick
        prelude = (
            # The two hooks are read through the environment's metatable, which
            # the host removes when the chunk registers: the environment table
            # itself is never written, so nothing (not even the order `pairs`
            # visits it in) tells an instrumented run from a bare one.
            f"local {n}, {limit}, {slow} = 0, 0, {names.slow_global}; "
            # The host calls this to collect the count; the zeroed limit makes
            # the chunk check in again before its next unit.
            f"{names.register_global}(function() local c = {n}; {n} = 0; {limit} = 0; return c end); "
            # Zero the limit before calling out: if the call raises (budget or
            # time exhausted) every later unit comes straight back here.
            f"local function {tick}() local c = {n}; {n} = 0; {limit} = 0; {limit} = {slow}(c) end "
        )
        counter = f" {n} += 1; if {n} > {limit} then {tick}() end; "
        return prelude + counter.join(self.pieces)


@dataclass(frozen=True)
class MeterNames:
    """Random identifiers for one run's counter locals and environment hooks."""

    count: str
    limit: str
    slow: str
    tick: str
    slow_global: str
    register_global: str

    @classmethod
    def fresh(cls) -> MeterNames:
        stem = "_W" + secrets.token_hex(8)
        return cls(*(f"{stem}_{part}" for part in ("n", "l", "s", "t", "S", "R")))


@functools.lru_cache(maxsize=256)
def instrument(source: str) -> Instrumented:
    """Split `source` at the start of every function and loop body.

    Raises LexError when the source cannot be tokenized; the caller then lets
    the Luau compiler report the real syntax error.
    """
    offsets = _Parser(_tokens(source)).body_starts()
    bounds = [0, *offsets, len(source)]
    return Instrumented(tuple(source[a:b] for a, b in itertools.pairwise(bounds)))
