"""The Luau module a model's reply holds: its fenced code block, or the reply itself when it
is bare code. No code at all is `None`, scored as "no code", never a crash."""

from __future__ import annotations

import re

_FENCE = re.compile(r"^[ \t]*```[ \t]*(?P<tag>[\w+-]*)[^\n]*\n(?P<code>.*?)^[ \t]*```[ \t]*$", re.MULTILINE | re.DOTALL)
_LUA_TAGS = {"lua", "luau", ""}


def extract_code(reply: str, entry_point: str) -> str | None:
    """The block that defines `entry_point`; else the last Lua-tagged or untagged block."""
    blocks = [(m.group("tag").lower(), m.group("code")) for m in _FENCE.finditer(reply)]
    lua = [code for tag, code in blocks if tag in _LUA_TAGS and code.strip()]
    if not lua:
        return reply.strip() + "\n" if _looks_like_a_module(reply) and "```" not in reply else None
    defining = [code for code in lua if _defines(code, entry_point)]
    return (defining or lua)[-1]


def _defines(code: str, entry_point: str) -> bool:
    name = re.escape(entry_point)
    return bool(re.search(rf"function\s+[\w.:]*\b{name}\s*\(|\b{name}\s*=\s*function\b|\blocal\s+{name}\b", code))


def _looks_like_a_module(text: str) -> bool:
    return bool(re.search(r"^\s*return\s+\w+\s*$", text, re.MULTILINE)) and "function" in text
