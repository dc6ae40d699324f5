"""The answer letter a model finally commits to, parsed from its reply.

The last commitment wins ("The answer is (B)... no, the correct answer is (D)" is D). A reply
that commits to two letters at once, or to none, is unparseable: the harness counts it and
never guesses."""

from __future__ import annotations

import re
import string

LETTERS = string.ascii_uppercase

# "the answer is", "final answer:", "correct option is", "the closest one, which is" ...
_LEAD = (
    r"(?:(?:final|correct|right|best|closest)\s+)?"
    r"(?:answer|option|choice|one|expression)s?"
    r"(?:\s+(?:is|would\s+be|should\s+be|will\s+be|=)|\s*:|\s+is\s*:)"
    r"|which\s+is|\bis\s*(?=\()"
)
# One letter, possibly wrapped: C, (C), **C**, **(C)**, [C], C., C), \textbf{C}
_LETTER = r"(?P<open>[\s:*_`\[(]|\\textbf\{)*(?P<letter>[A-Za-z])(?![A-Za-z0-9'])(?P<close>[)\]*_`.}:]*)"
_COMMIT = re.compile(rf"(?:{_LEAD}){_LETTER}", re.IGNORECASE)
_BOXED = re.compile(r"\\boxed\{\s*(?:\\text(?:bf)?\{)?\s*\(?(?P<letter>[A-Za-z])\)?\s*\}")
_ALSO = re.compile(r"\s*(?:,|and|&|or|as well as)\s*[*_`(\[]*(?P<letter>[A-Z])(?![A-Za-z0-9])")
_BARE = re.compile(r"^[\s*_`(\[]*(?P<letter>[A-Za-z])[\s*_`)\].:]*$")
_LABEL = re.compile(r"^[\s*_`]*\(?(?P<letter>[A-Z])[).:]\s+\S", re.MULTILINE)


def extract_letter(reply: str, choices: list[str]) -> str | None:
    valid = LETTERS[: len(choices)]
    text = reply.strip()
    if not text:
        return None
    commitments = _commitments(text, valid)
    if commitments:
        return commitments[-1][1]
    if bare := _BARE.match(text):
        letter = bare.group("letter").upper()
        return letter if letter in valid else None
    labels = {m.group("letter") for m in _LABEL.finditer(text) if m.group("letter") in valid}
    if len(labels) == 1:
        return labels.pop()
    return _quoted_choice(text, choices)


def _commitments(text: str, valid: str) -> list[tuple[int, str | None]]:
    """(position, letter) of every commitment; the letter is None for "(F) and (G)"."""
    found = []
    for match in _COMMIT.finditer(text):
        letter = match.group("letter")
        wrapped = bool(match.group("open").strip(" :") or match.group("close"))
        at_end = match.end() == len(text) or text[match.end()] in "\n"
        # A lowercase letter counts only where it cannot be an English word: "Answer: c",
        # "(b)", but not "the answer is a matter of ...".
        if letter.islower() and not (wrapped or at_end):
            continue
        if letter.upper() not in valid or (letter == "I" and not (wrapped or at_end)) or (letter == "A" and not (wrapped or at_end)):
            continue
        also = _ALSO.match(text, match.end())
        several = bool(also and also.group("letter") in valid)
        found.append((match.start(), None if several else letter.upper()))
    for match in _BOXED.finditer(text):
        letter = match.group("letter").upper()
        if letter in valid:
            found.append((match.start(), letter))
    return sorted(found)


def _quoted_choice(text: str, choices: list[str]) -> str | None:
    """A reply that states the choice's text instead of its letter: right after its last
    "the answer is", or as the whole of a one-line reply."""
    leads = list(re.finditer(_LEAD, text, re.IGNORECASE))
    if leads:
        tail = text[leads[-1].end() :].strip().split("\n\n")[0]
    elif "\n" not in text:
        tail = text
    else:
        return None
    tail = _normalise(tail)
    hits = [i for i, choice in enumerate(choices) if (c := _normalise(choice)) and c in tail]
    # A longer choice can contain a shorter one ("Heartbeat" in "RunService.Heartbeat").
    hits = [i for i in hits if not any(j != i and _normalise(choices[i]) in _normalise(choices[j]) for j in hits)]
    return LETTERS[hits[0]] if len(hits) == 1 else None


def _normalise(text: str) -> str:
    return " ".join(re.sub(r"[*_`\"'.,;:!?()]", " ", text.lower()).split())
