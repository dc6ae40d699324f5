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
placeholder ("EMPTY") would otherwise be cut out of every reply that says it."""

from __future__ import annotations

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


class Scrub:
    def __init__(self, secrets: Iterable[str] = ()):
        # Longest first: a key that contains another is redacted whole.
        self.secrets = tuple(sorted({s for s in secrets if s and len(s) >= MIN_SECRET}, key=len, reverse=True))

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
