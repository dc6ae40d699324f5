"""The answer letter a model finally commits to, parsed from its reply.

The last commitment wins ("The answer is (B)... no, the correct answer is (D)" is D). A reply
that commits to two letters at once, or to none, is unparseable: the harness counts it and
never guesses."""

from __future__ import annotations

import re
import string

LETTERS = string.ascii_uppercase

_MARKUP = r"[\s*_`#>]*"
# What introduces a commitment: "the answer is", "Final answer:", "**Answer**: ", "### Answer\n",
# "the correct option is", "the closest one, which is (A)". A bare "option is" is not one:
# "the tempting wrong option is (A)" names a distractor.
_LEAD = (
    r"(?:\b(?:final|correct|right|best|closest)\s+(?:answer|option|choice|one|expression)s?"
    r"|\banswers?)"
    rf"(?:{_MARKUP}(?::|=|\bis\b|\bwould\s+be\b|\bshould\s+be\b|\bwill\s+be\b)|[ \t*_`]*\n)"
    r"|\bwhich\s+is(?=\s*\()"
    r"|\bis(?=\s*\()"
)
# Words a reply puts between the lead and the letter: "Answer: Option B", "is clearly B".
_FILLER = r"(?:(?:option|choice|letter|clearly|definitely|actually|probably|likely|indeed|therefore)\s+)*"
# One letter, possibly wrapped: C, (C), **C**, **(C)**, [C], C., C), \textbf{C}
_LETTER = rf"(?P<open>[\s:*_`\[(]|\\textbf\{{)*{_FILLER}(?P<open2>[*_`\[(]*)(?P<letter>[A-Za-z])(?![A-Za-z0-9'])(?P<close>[)\]*_`.}}:]*)"
_COMMIT = re.compile(rf"(?:{_LEAD}){_LETTER}", re.IGNORECASE)
_IS_CORRECT = re.compile(r"\b(?i:option|choice)\s+\(?(?P<letter>[A-Z])\)?\s+is\s+(?:the\s+)?(?:correct|right|best)\b")
_BOXED = re.compile(r"\\boxed\{\s*(?:\\text(?:bf)?\{)?\s*\(?(?P<letter>[A-Za-z])\)?\s*\}")
_ALSO = re.compile(r"\s*(?:,|/|and|&|or|as well as)\s*[*_`(\[]*(?P<letter>[A-Z])(?![A-Za-z0-9])")
_BARE = re.compile(r"^[\s*_`(\[]*(?P<letter>[A-Za-z])[\s*_`)\].:]*$")
_LABEL = re.compile(r"^[\s*_`]*\(?(?P<letter>[A-Z])[).:]\s+\S", re.MULTILINE)
_NEGATIVE = re.compile(r"\b(?:wrong|incorrect|tempting|not|distractor|trap|misleading)\b", re.IGNORECASE)
_NEGATION = re.compile(r"\b(?:not|rather than|instead of|but not)\b", re.IGNORECASE)
# After an unwrapped "A" or "I", words that show it is the letter and not the article or pronoun.
SHORT_REPLY_WORDS = 12  # longer one-line replies mention choices while weighing them
_CONJUNCTIONS = {"because", "since", "as", "and", "or", "but", "which", "with", "for", "given", "so"}


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
        wrapped = bool((match.group("open") or "").strip(" :\n\t") or match.group("open2") or match.group("close"))
        rest = text[match.end() :]
        at_end = not rest or rest[0] == "\n"
        if letter.upper() not in valid or not (wrapped or at_end or _is_letter(letter, rest)):
            continue
        if match.group(0).lower().startswith("is") and _NEGATIVE.search(_sentence_before(text, match.start())):
            continue
        also = _ALSO.match(text, match.end())
        several = bool(also and also.group("letter") in valid)
        found.append((match.start(), None if several else letter.upper()))
    for match in _IS_CORRECT.finditer(text):
        if match.group("letter") in valid:
            found.append((match.start(), match.group("letter")))
    for match in _BOXED.finditer(text):
        letter = match.group("letter").upper()
        if letter in valid:
            found.append((match.start(), letter))
    return sorted(found)


def _is_letter(letter: str, rest: str) -> bool:
    """Whether an unwrapped letter followed by `rest` is a choice letter, not a word.

    Lowercase letters never are ("the answer is a matter of ..."); "A" and "I" are when
    punctuation or a conjunction follows ("A, since ...", not "I think ...")."""
    if letter.islower():
        return False
    word = re.match(r"\s*([A-Za-z']+)", rest)
    if letter not in "AI" or not word or rest[:1] in ",.;:!?)":
        return True
    return word.group(1).lower() in _CONJUNCTIONS


def _sentence_before(text: str, end: int) -> str:
    start = max(text.rfind(mark, 0, end) for mark in ".!?\n")
    return text[start + 1 : end]


def _quoted_choice(text: str, choices: list[str]) -> str | None:
    """A reply that states the choice's text instead of its letter: right after its last
    "the answer is" (up to a "not ..."), or in a short one-line reply ("Use typeof.")."""
    leads = list(re.finditer(_LEAD, text, re.IGNORECASE))
    if leads:
        tail = text[leads[-1].end() :].strip().split("\n\n")[0]
    elif "\n" not in text and len(text.split()) <= SHORT_REPLY_WORDS:
        tail = text
    else:
        return None
    tail = _normalise(_NEGATION.split(tail)[0])
    hits = [i for i, choice in enumerate(choices) if (c := _normalise(choice)) and c in tail]
    # A longer choice can contain a shorter one ("Heartbeat" in "RunService.Heartbeat").
    hits = [i for i in hits if not any(j != i and _normalise(choices[i]) in _normalise(choices[j]) for j in hits)]
    return LETTERS[hits[0]] if len(hits) == 1 else None


def _normalise(text: str) -> str:
    return " ".join(re.sub(r"[*_`\"'.,;:!?()]", " ", text.lower()).split())
