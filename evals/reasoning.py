"""A reply's reasoning apart from its answer, whichever provider sent it.

Models that think aloud put their thoughts in a block at the start of the reply, `<think>`
(Qwen3, DeepSeek-R1, QwQ), `<thinking>` or `<reasoning>`, and a chat template may open it in the
prompt, so the reply holds only its end (`...</think>`). The block is the reply's reasoning: a
draft in it ("the answer is A", a first try at the code) is not the answer, and no grader reads
it. Every reply is kept with it as its reasoning (`Completion.kept`, whichever provider sent
it), and the letter extractor, the code extraction and the verdict parser split it off again
(`Completion.apart`), so that a reply an older version recorded with the block in its text is
read the same way. (The judges are shown the record's text: see a judged eval's `judge_request`.)

The rule, in order:
- an opening tag at the start (after white space) runs to its closing tag (any case);
- with no opening there, everything before the first `</think>` is reasoning, unless a
  `<think>` comes before it (the template opened the block; only `think`, the tag templates
  open: a block later in the reply is left in it);
- blocks and stray closing tags right after it are reasoning too;
- a block that never closes is all reasoning: the reply has no answer (a reply cut while
  thinking);
- the plain-text markers some local servers print in place of tags (Ollama's `Thinking...` on
  the first line, `...done thinking.` on a line of its own) are a block too, but only when both
  are there: a reply that merely opens with the word "Thinking..." is left whole, since a model
  may write that as prose.

Linear in the reply's length: each search starts where the last one ended, and one that
finds nothing ends the split (`bench/parse.py` measures it)."""

from __future__ import annotations

import re

_NAMES = ("think", "thinking", "reasoning")
_TAGS = "|".join(_NAMES)
# The next tag, after white space (possessive: nothing to give back): an opening (its name in
# group 1) or a stray closing (a model that closed twice).
_NEXT = re.compile(rf"\s*+(?:<({_TAGS})>|</(?:{_TAGS})>)", re.IGNORECASE)
_CLOSING = {name: re.compile(f"</{name}>", re.IGNORECASE) for name in _NAMES}
_THINK = re.compile("<think>", re.IGNORECASE)
# Ollama's plain-text markers ("..." or the one-character ellipsis), each on a line of its own.
_PLAIN_OPENING = re.compile(r"\s*+thinking(?:\.\.\.|\u2026)[ \t]*\r?\n", re.IGNORECASE)
_PLAIN_CLOSING = re.compile(
    r"^[ \t]*(?:\.\.\.|\u2026)done thinking\.?[ \t\r]*$", re.IGNORECASE | re.MULTILINE
)


def split(text: str) -> tuple[str | None, str]:
    """(reasoning, answer) of a reply's text: reasoning None when it has no block (or only
    empty ones); the answer is the text after the block, without the white space before it
    ("" after an unclosed one)."""
    thoughts: list[str] = []
    at = 0
    first = _NEXT.match(text)
    plain = _PLAIN_OPENING.match(text) if first is None else None
    closing = _PLAIN_CLOSING.search(text, plain.end()) if plain else None
    if plain and closing:
        thoughts.append(text[plain.end() : closing.start()])
        at = closing.end()
    elif (
        first is None or first.group(1) is None
    ):  # no opening at the start: did a template open one?
        end = _CLOSING["think"].search(text)
        if end is None or _THINK.search(text, 0, end.start()):  # no, or a block later in the reply
            return None, text
        thoughts.append(text[: end.start()])
        at = end.end()
    while tag := _NEXT.match(text, at):
        at = tag.end()
        if tag.group(1) is not None:  # an opening: the block runs to its own closing tag
            closing = _CLOSING[tag.group(1).lower()].search(text, at)
            if closing is None:  # never closed: all of the rest is reasoning
                thoughts.append(text[at:])
                return _joined(thoughts), ""
            thoughts.append(text[at : closing.start()])
            at = closing.end()
    return _joined(thoughts), text[at:].lstrip()


def merged(*parts: str | None) -> str | None:
    """Reasonings from several places (a server's own field, a block in the text), as one."""
    kept = [part for part in parts if part]
    return "\n\n".join(kept) if kept else None


def _joined(thoughts: list[str]) -> str | None:
    return merged(*(thought.strip() for thought in thoughts))
