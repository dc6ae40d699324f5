"""What the harness writes, made safe to write: no API key, and nothing that cannot be encoded.

`Scrub` is applied where cache records and result rows are made (`RunCache.store` and
`lookup`, `EvalRun.answer`), so every file, report and message derived from them is clean:
- every configured key (the candidate's and every judge's, `Provider.secrets`) is replaced by
  `<redacted>`, wherever it appears: a reply that echoes the key, its reasoning, an error
  message, a request built from such a reply;
- a lone surrogate (a reply cut in the middle of an emoji's UTF-16 pair, "\\ud83d") cannot be
  written as UTF-8; it is kept as the six characters of its escape, a backslash and `ud83d`,
  so the text is never lost and the write never fails. The same reply always reads the same,
  so a rerun scores it from the cache exactly as the first run did.

A value shorter than `MIN_SECRET` characters is not treated as a key: a local server's
placeholder ("EMPTY") would otherwise be cut out of every reply that says it.

And what the harness prints, made safe to show: `printable` is applied to every line that
carries text a model, a server or a dataset wrote (a wrong answer's note, an API error, a
dataset's error, a verify line). Files keep the text as it was; only what reaches a terminal
is escaped, so a reply can neither drive the terminal (ESC sequences that set its title, clear
it or write the clipboard) nor forge lines of the report (a newline then `PASSED`)."""

from __future__ import annotations

import io
import unicodedata
from collections.abc import Iterable
from typing import Any, TypeVar

from evals.errors import ProviderError

REDACTED = "<redacted>"
MIN_SECRET = 8

E = TypeVar("E", bound=ProviderError)


def redact(text: str, secrets: Iterable[str]) -> str:
    for secret in secrets:
        if secret and len(secret) >= MIN_SECRET:
            text = text.replace(secret, REDACTED)
    return text


def escape_surrogates(text: str) -> str:
    """Lone surrogates as their backslash escape; any other text unchanged."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


# Invisible characters that join or shape the script of the text around them (emoji
# sequences, Persian, Indic scripts), not the terminal: shown as they are.
_SHAPING = frozenset("\u200c\u200d")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def printable(text: str, limit: int | None = None) -> str:
    """`text` as one line that shows what it says and does nothing else: control characters
    (C0, DEL, C1), line and paragraph separators and invisible format characters (bidi
    overrides that reorder what a reader sees, zero-width and tag characters) as their escapes
    (`\\n`, `\\x1b`, `\\u202e`). Beyond `limit` characters it is cut, saying how much more
    there was."""
    if not text.isprintable():  # fast path: printable text has none of these (spaces aside)
        text = "".join(_escape(c) for c in text)
    if limit is not None and len(text) > limit:
        text = f"{text[:limit]}... ({len(text) - limit:,} more characters)"
    return text


def escape_unencodable(stream: object, *, line_buffering: bool | None = None) -> None:
    """Make `stream` write what its encoding cannot hold as escapes (`\\u7b54`, `\\U0001f44d`)
    instead of raising UnicodeEncodeError mid-run: a Windows pipe or file is cp1252, which has
    no CJK and no emoji, and a reply may hold both. stderr does so already; stdout does not.
    `line_buffering`: set in the same `reconfigure` (None: left as it is)."""
    if isinstance(stream, io.TextIOWrapper):
        stream.reconfigure(errors="backslashreplace", line_buffering=line_buffering)


def _escape(c: str) -> str:
    if c in _NAMED:
        return _NAMED[c]
    if c in _SHAPING or unicodedata.category(c)[0] not in "CZ" or unicodedata.category(c) == "Zs":
        return c
    code = ord(c)
    return (
        f"\\x{code:02x}"
        if code < 0x100
        else f"\\u{code:04x}"
        if code < 0x10000
        else f"\\U{code:08x}"
    )


class Scrub:
    def __init__(self, secrets: Iterable[str] = ()):
        # Longest first: a key that contains another is redacted whole.
        self.secrets = tuple(
            sorted({s for s in secrets if s and len(s) >= MIN_SECRET}, key=len, reverse=True)
        )

    def text(self, text: str) -> str:
        return redact(escape_surrogates(text), self.secrets)

    def __call__(self, value: Any) -> Any:
        """`value` (JSON-like: dicts, lists, strings, numbers) with every string scrubbed."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self(k): self(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self(v) for v in value]
        return value

    def error(self, error: E) -> E:
        """The same error with its message scrubbed."""
        message = str(error)
        clean = self.text(message)
        if clean == message:
            return error
        return type(error)(clean, kind=error.kind, status=error.status)
