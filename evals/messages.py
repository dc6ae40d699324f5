"""The messages every part speaks: one `Request` to a model, one `Completion` back, its
`Usage` in tokens. A provider translates them to and from its SDK (`evals.providers`); an eval
makes requests and scores completions (`evals.tasks`); the cache keeps them. They live here,
below both, so that an eval names no provider and a provider no eval."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from evals.reasoning import merged, split as split_reasoning


def is_count(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def kind_of(value: Any) -> str:
    """What a value is, for a message that must not repeat the value itself."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return (
            "a negative number"
            if value < 0
            else "a number"
            if isinstance(value, int)
            else "a decimal number"
        )
    return _KINDS.get(type(value), type(value).__name__)


_KINDS: dict[type, str] = {str: "a string", list: "a list", dict: "an object"}


@dataclass(frozen=True)
class Request:
    """One model call. `context` never goes over the wire: only the offline `reference`
    provider reads it (the gold answer, or the reply a reference judge compares)."""

    prompt: str
    system: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    seed: int | None = None
    context: dict[str, str] = field(default_factory=dict, compare=False)

    def to_record(self) -> dict[str, Any]:
        record = dataclasses.asdict(self)
        del record["context"]
        return {k: v for k, v in record.items() if v is not None}


@dataclass(frozen=True)
class Usage:
    """Token counts, each a non-negative int: a Usage of any other values cannot be made, so
    none reaches a cache record or the token totals."""

    input: int = 0
    output: int = 0
    reasoning: int = 0
    cached: int = 0

    def __post_init__(self) -> None:
        for name, value in dataclasses.asdict(self).items():
            if not is_count(value):
                raise ValueError(f"usage.{name} is {kind_of(value)}, not a token count")

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            *(a + b for a, b in zip(dataclasses.astuple(self), dataclasses.astuple(other)))
        )


# The most characters of a reply's text (and of its reasoning) the harness keeps: 1 MB, the
# length its reply parsers are measured at (tests/{unit,e2e}/test_parsing_linear.py), far beyond any
# answer an eval asks for.
REPLY_LIMIT = 1_000_000


@dataclass(frozen=True)
class Completion:
    """One reply, checked when made (a ValueError names the field of the wrong type), so a
    cache record that does not make one is corrupt, and a provider cannot hand on a wrong one."""

    text: str
    reasoning: str | None = None
    usage: Usage = Usage()
    finish_reason: str | None = None
    model: str | None = None
    latency: float = 0.0
    batch: str | None = None  # the Batch API batch that answered it, if one did
    cut: bool = False  # the text or the reasoning was longer than REPLY_LIMIT and is kept cut there (`kept`)

    def __post_init__(self) -> None:
        fields = (
            ("text", self.text, False),
            ("reasoning", self.reasoning, True),
            ("finish_reason", self.finish_reason, True),
            ("model", self.model, True),
            ("batch", self.batch, True),
        )
        for name, value, optional in fields:
            if not (isinstance(value, str) or (optional and value is None)):
                raise ValueError(f"{name} is {kind_of(value)}, not a string")
        if not isinstance(self.usage, Usage):
            raise ValueError(f"usage is {kind_of(self.usage)}, not token counts")
        if (
            isinstance(self.latency, bool)
            or not isinstance(self.latency, (int, float))
            or not 0 <= self.latency < math.inf
        ):
            raise ValueError(f"latency is {kind_of(self.latency)}, not a number of seconds")
        if not isinstance(self.cut, bool):
            raise ValueError(f"cut is {kind_of(self.cut)}, not a boolean")

    def to_record(self) -> dict[str, Any]:
        record = dataclasses.asdict(self)
        if record["batch"] is None:
            del record["batch"]  # records of calls made directly stay as they were
        if not record["cut"]:
            del record["cut"]  # so does every reply within the limit
        return record

    def kept(self) -> Completion:
        """The reply as the harness keeps it: a reasoning block in its text kept as its
        reasoning (`apart`), and a text or reasoning longer than REPLY_LIMIT cut there and
        marked `cut`, so one answer cannot blow up a cache record that every rerun reads
        back. It is scored as it is kept, like any reply."""
        reply = self.apart()
        if len(reply.text) <= REPLY_LIMIT and len(reply.reasoning or "") <= REPLY_LIMIT:
            return reply
        return dataclasses.replace(
            reply,
            text=reply.text[:REPLY_LIMIT],
            cut=True,
            reasoning=None if reply.reasoning is None else reply.reasoning[:REPLY_LIMIT],
        )

    def apart(self) -> Completion:
        """The reply with the reasoning block at the start of its text (`evals.reasoning`)
        moved to its reasoning, after a server's own: what graders read. Itself when the
        text holds none, as every reply kept by this version."""
        thought, answer = split_reasoning(self.text)
        if thought is None and answer == self.text:
            return self
        return dataclasses.replace(self, text=answer, reasoning=merged(self.reasoning, thought))

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Completion:
        if not isinstance(record, dict) or not isinstance(record.get("usage"), dict):
            raise ValueError("the response is not an object with a usage object")
        return cls(**{**record, "usage": Usage(**record["usage"])})
