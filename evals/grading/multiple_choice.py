"""The answer letter a model finally commits to, parsed from its reply.

The last commitment wins ("The answer is (B)... no, the correct answer is (D)" is D). A reply
that commits to two letters at once, or to none, is unparseable: the harness counts it and
never guesses.

Linear in the reply's length, whatever it holds (`bench/parse.py` measures it): no regex
here can try every split of a run between two quantifiers that both take it (possessive
quantifiers, *+, where they follow each other), and the checks on each commitment look at
the text around it by position, never at a copy of the rest of the reply."""

from __future__ import annotations

import re
import string

LETTERS = string.ascii_uppercase


def _first_letters(*words: str) -> str:
    """A class of the words' first letters, then the \\b before that letter (a lookbehind).

    The regex engine tries a regex that starts with \\b, or with letters under IGNORECASE, at
    every position of the reply; one that starts with a class of letters, it skips to them
    (2-5x faster on prose, 8x on blank space). So the word-led regexes here start with this,
    and pick their word by the letter behind (`_words`). The class holds both cases and what
    else IGNORECASE takes for the letter."""
    letters = sorted({w[0].lower() for w in words})
    return "[" + "".join(c + c.upper() + _IGNORECASE_ALSO.get(c, "") for c in letters) + r"](?<=\b.)"


# The characters besides a letter's two cases that IGNORECASE matches it with (all of them:
# checked against `re` over every code point).
_IGNORECASE_ALSO = {"i": "\u0130\u0131", "k": "\u212a", "s": "\u017f"}


def _words(*words: str) -> str:
    """One of the words, after `_first_letters` took its first letter: (?<=f)inal is "final"."""
    return "(?:" + "|".join(f"(?<={w[0]}){w[1:]}" for w in words) + ")"


_MARKUP = r"[\s*_`#>]*+"
# What introduces a commitment: "the answer is", "Final answer:", "**Answer**: ", "### Answer\n",
# "the correct option is", "the closest one, which is (A)". A bare "option is" is not one:
# "the tempting wrong option is (A)" names a distractor. Case-insensitive.
_ADJECTIVES = ("final", "correct", "right", "best", "closest")
_LEAD = (
    _first_letters(*_ADJECTIVES, "answer", "which", "is")
    + rf"(?i:(?:{_words(*_ADJECTIVES)}\s+(?:answer|option|choice|one|expression)s?"
    rf"|{_words('answer')}s?)"
    rf"(?:{_MARKUP}(?::|=|\bis\b|\bwould\s+be\b|\bshould\s+be\b|\bwill\s+be\b)|[ \t*_`]*\n)"
    rf"|{_words('which')}\s+is(?=\s*\()"
    rf"|{_words('is')}(?=\s*\())"
)
# Words a reply puts between the lead and the letter: "Answer: Option B", "is clearly B".
_FILLER = r"(?:(?:option|choice|letter|clearly|definitely|actually|probably|likely|indeed|therefore)\s+)*"
# One letter, possibly wrapped: C, (C), **C**, **(C)**, [C], C., C), \textbf{C}
_LETTER = rf"(?P<open>[\s:*_`\[(]|\\textbf\{{)*+{_FILLER}(?P<open2>[*_`\[(]*+)(?P<letter>[A-Za-z])(?![A-Za-z0-9'])(?P<close>[)\]*_`.}}:]*)"
_COMMIT = re.compile(rf"(?:{_LEAD})(?i:{_LETTER})")
_LEAD_RE = re.compile(_LEAD)
# "Option C is correct": only "option" or "choice" case-insensitive.
_IS_CORRECT = re.compile(
    _first_letters("option", "choice")
    + rf"(?i:{_words('option', 'choice')})\s+\(?(?P<letter>[A-Z])\)?\s+is\s+(?:the\s+)?(?:correct|right|best)\b"
)
_BOXED = re.compile(r"\\boxed\{\s*+(?:\\text(?:bf)?\{\s*+)?\(?(?P<letter>[A-Za-z])\)?\s*\}")
_ALSO = re.compile(r"\s*(?:,|/|and|&|or|as well as)\s*[*_`(\[]*(?P<letter>[A-Z])(?![A-Za-z0-9])")
_BARE = re.compile(r"^[\s*_`(\[]*(?P<letter>[A-Za-z])[\s*_`)\].:]*$")
# A line that starts with a label, after blank space (not a newline) and markup: a run over
# several lines was taken again from each line start in it (quadratic), and finds no other
# label. Runs of one class at a time: quicker than an alternation per character.
_LABEL = re.compile(r"^(?:[^\S\n]*+[*_`]*+)*+\(?(?P<letter>[A-Z])[).:]\s+\S", re.MULTILINE)
_NEGATIVES = ("wrong", "incorrect", "tempting", "not", "distractor", "trap", "misleading")
_NEGATIVE = re.compile(_first_letters(*_NEGATIVES) + rf"(?i:{_words(*_NEGATIVES)})\b")
_WORD = re.compile(r"\s*([A-Za-z']+)")
_NEGATIONS = ("not", "rather than", "instead of", "but not")
_NEGATION = re.compile(_first_letters(*_NEGATIONS) + rf"(?i:{_words(*_NEGATIONS)})\b")
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
    sentences = _Sentences(text)
    for match in _COMMIT.finditer(text):
        letter, opening, opening2, closing = match.group("letter", "open", "open2", "close")
        if letter.upper() not in valid:
            continue
        end = match.end()
        wrapped = bool((opening or "").strip(" :\n\t") or opening2 or closing)
        at_end = end == len(text) or text[end] == "\n"
        if not (wrapped or at_end or _is_letter(letter, text, end)):
            continue
        if text[match.start() : match.start() + 2].lower() == "is" and sentences.names_a_wrong_option(match.start()):
            continue
        also = _ALSO.match(text, end)
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


def _is_letter(letter: str, text: str, end: int) -> bool:
    """Whether an unwrapped letter followed by `text[end:]` is a choice letter, not a word.

    Lowercase letters never are ("the answer is a matter of ..."); "A" and "I" are when
    punctuation or a conjunction follows ("A, since ...", not "I think ...")."""
    if letter.islower():
        return False
    word = _WORD.match(text, end)
    if letter not in "AI" or not word or text[end : end + 1] in ",.;:!?)":
        return True
    return word.group(1).lower() in _CONJUNCTIONS


class _Sentences:
    """Whether the sentence before a position (from the last ".", "!", "?" or newline) has a
    word like "wrong" or "tempting", asked for positions in increasing order. Each call reads
    only the text since the last one: rereading each sentence from its start was quadratic
    in a long sentence of "... is (A) ... is (B) ...". A position asked for follows a \\b
    (it starts a commitment), so no word runs across one."""

    def __init__(self, text: str):
        self.text = text
        self.read = 0  # the text before `read` is read
        self.start = 0  # where the sentence being read starts
        self.negative = False  # whether text[start:read] has a negative word

    def names_a_wrong_option(self, end: int) -> bool:
        text, read = self.text, self.read
        mark = max(text.rfind(".", read, end), text.rfind("!", read, end), text.rfind("?", read, end), text.rfind("\n", read, end))
        if mark >= 0:
            self.start, self.negative = mark + 1, False
        if not self.negative:
            self.negative = _NEGATIVE.search(text, max(self.start, read), end) is not None
        self.read = end
        return self.negative


def _quoted_choice(text: str, choices: list[str]) -> str | None:
    """A reply that states the choice's text instead of its letter: right after its last
    "the answer is" (up to a "not ..."), or in a short one-line reply ("Use typeof.")."""
    last = None
    for last in _LEAD_RE.finditer(text):
        pass
    if last:
        tail = text[last.end() :].strip().partition("\n\n")[0]
    elif "\n" not in text and len(text.split(maxsplit=SHORT_REPLY_WORDS)) <= SHORT_REPLY_WORDS:
        tail = text
    else:
        return None
    tail = _normalise(_NEGATION.split(tail, maxsplit=1)[0])
    hits = [i for i, choice in enumerate(choices) if (c := _normalise(choice)) and c in tail]
    # A longer choice can contain a shorter one ("Heartbeat" in "RunService.Heartbeat").
    hits = [i for i in hits if not any(j != i and _normalise(choices[i]) in _normalise(choices[j]) for j in hits)]
    return LETTERS[hits[0]] if len(hits) == 1 else None


def _normalise(text: str) -> str:
    return " ".join(text.lower().translate(_PUNCTUATION_TO_SPACE).split())


_PUNCTUATION_TO_SPACE = str.maketrans(dict.fromkeys("*_`\"'.,;:!?()", " "))
