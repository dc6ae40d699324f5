"""The Luau module a model's reply holds: its fenced code block, or the reply itself when it
is bare code. No code at all is `None`, scored as "no code", never a crash.

Linear in the reply's length, whatever it holds (`bench/parse.py` measures it)."""

from __future__ import annotations

import functools
import re

# A fenced block: an opening line ("```", a tag, anything), the code (whole lines, as few as
# can be), up to the first closing line ("```" alone) after it. Possessive quantifiers (*+) on
# the opening line: one with no newline after it fails at once instead of trying every split
# of its line (quadratic in a long one).
_FENCE = re.compile(
    r"^[ \t]*```[ \t]*+(?P<tag>[\w+-]*+)[^\n]*+\n(?P<code>(?:[^\n]*+\n)*?)^[ \t]*```[ \t]*$",
    re.MULTILINE,
)
# A closing line. The pattern reads the same backwards, so searching the reversed reply with it
# finds the last closing line.
_CLOSING = re.compile(r"^[ \t]*```[ \t]*$", re.MULTILINE)
_LUA_TAGS = {"lua", "luau", ""}
# A "return Name" line; [^\S\n] keeps each try within one line (\s* ran on over every blank line).
_MODULE_RETURN = re.compile(r"^[^\S\n]*return\s+\w+\s*$", re.MULTILINE)


def extract_code(reply: str, entry_point: str) -> str | None:
    """The block that defines `entry_point`; else the last Lua-tagged or untagged block.
    Windows line endings are read as newlines: a closing fence followed by "\r" still closes."""
    reply = reply.replace("\r\n", "\n")
    lua = [code for tag, code in _fenced_blocks(reply) if tag in _LUA_TAGS and code.strip()]
    if not lua:
        return reply.strip() + "\n" if "```" not in reply and _looks_like_a_module(reply) else None
    return next((code for code in reversed(lua) if _defines(code, entry_point)), lua[-1])


def _fenced_blocks(reply: str) -> list[tuple[str, str]]:
    """(lowercase tag, code) of each fenced block.

    Searched only up to the end of the last closing line. An opening after it has no closing,
    and `_FENCE` would scan from each such opening to the end of the reply (the lazy code
    group), then from the next one again: quadratic in a reply of unclosed fences. Before
    it, every opening has a closing, so each match scans only its own block."""
    last = _CLOSING.search(reply[::-1])
    end = len(reply) - last.start() if last else 0
    return [(tag.lower(), code) for tag, code in _FENCE.findall(reply, 0, end)]


def _defines(code: str, entry_point: str) -> bool:
    return entry_point in code and _definition(entry_point).search(code) is not None


@functools.lru_cache(maxsize=64)
def _definition(entry_point: str) -> re.Pattern[str]:
    """ "function M.name(", "name = function" or "local name". Every branch starts with a
    letter (a leading \\b is checked by a lookbehind after the word instead), so the regex
    engine skips to those letters rather than trying the branches at every position."""
    name = re.escape(entry_point)
    return re.compile(
        rf"function\s+[\w.:]*\b{name}\s*+\(|{name}(?<=\b{name})\s*+=\s*+function\b|local(?<=\blocal)\s+{name}\b"
    )


def _looks_like_a_module(text: str) -> bool:
    return "function" in text and bool(_MODULE_RETURN.search(text))
