"""Freeform grading by an ensemble of LLM judges: the prompt, verdict parsing, the vote.

A verdict is read however a judge states it, but never guessed: a reply that does not state
one verdict clearly is unparseable, counted, and never read as a pass: it simply is not a
CORRECT vote."""

from __future__ import annotations

import json
import re
import unicodedata

from evals import reasoning

# Which judges, the sampling they are pinned to and the version of the prompt below (bump it
# with the prompt): `judge_spec.py`, which the command line and the run identity read.
from .judge_spec import (
    DEFAULT_JUDGES,
    PROMPT_VERSION,
    REFERENCE_JUDGES,
    SEED,
    TEMPERATURE,
    JudgeSpec,
    default_judges,
)  # noqa: F401

_PROMPT = (
    """You are grading an answer to a question about Roblox game development and the Luau language.

Question:
{question}

Reference answer (correct by definition):
{reference}

Candidate answer:
{reply}

Decide whether the candidate answer is correct. """
    """It is correct when it states the same key facts as the reference answer: """
    """extra correct detail is fine, wording does not matter. """
    """It is incorrect when it contradicts the reference, misses a key point the question asks for, """
    """hedges between several answers, or does not answer.

Explain your reasoning in at most three sentences. Then end your reply with one final line that is exactly
VERDICT: CORRECT
or
VERDICT: INCORRECT"""
)


def judge_prompt(question: str, reference: str, reply: str) -> str:
    return _PROMPT.format(
        question=question.strip(), reference=reference.strip(), reply=reply.strip()
    )


def format_verdict(correct: bool) -> str:
    return f"VERDICT: {'CORRECT' if correct else 'INCORRECT'}"


# -- reading a verdict --------------------------------------------------------------------------
#
# The rule is parse_verdict's docstring. Every run of markup is possessive (*+): none gives back
# what the next token needs, so a long line that ends wrong fails at once. Each line is matched
# from its start, once; the reply is cut into lines only when it names a label at all.

# A verdict's words in the languages judges answer in (lowercase, as NFKC leaves them): the
# pass, then the fail. Chinese and Japanese ones are matched without word boundaries, their
# scripts having none; a fail word that holds a pass word (不正确) is tried first.
_PASS_WORDS = frozenset(
    "correct correcto correto corretto korrekt richtig верно правильно pass passed".split()
)
_FAIL_WORDS = frozenset(
    "incorrect incorrecto incorreto scorretto errato sbagliato inkorrekt falsch неверно "
    "неправильно fail failed".split()
)
_PASS_CJK, _FAIL_CJK = ("正确", "正解"), ("不正确", "不正解", "错误", "誤り")
# The labels, in those languages, and "Grade" (PASS / FAIL).
_LABELS = r"verdict|verdetto|veredicto|veredito|judge?ment|jugement|urteil|grade|вердикт|判定"


def _alternation(words) -> str:
    return "|".join(sorted(words, key=len, reverse=True))


_LATIN = _alternation(_PASS_WORDS | _FAIL_WORDS)
_CJK = _alternation(_FAIL_CJK + _PASS_CJK)

# What may surround a label or a verdict: emphasis, code, headings, quotes, bullets, brackets,
# a JSON object's braces and quotes, a tag's angle bracket, a table's bars, emoji (and their
# joiners).
_EMOJI = (
    "\u2190-\u21ff\u2300-\u23ff\u2460-\u24ff\u25a0-\u27bf\u2900-\u297f\u2b00-\u2bff\ufe0f\u200d"
    "\U0001f000-\U0001faff"
)
_OPEN = rf"[\s*_`#>~\"'“‘«(\[{{<|+•·\-{_EMOJI}]*+"
_OPENING = re.compile(_OPEN)
# A label at the start of a line (a table row's first cell too), then a separator (a colon,
# full-width ones read as colons, a dash, an equals sign, an arrow, "is", a table's bar) and
# the markup before what it labels; or the label alone on its line (a heading), whose verdict
# is the next line.
_LABEL = re.compile(
    _OPEN + r"(?:(?:the|my|our|final|overall)[\s*_`]++)*+(?:" + _LABELS + r")"
    r"(?:[\s*_`]++finale?(?![^\W_]))?+[\s*_`\"'”’»)\]]*+"
    r"(?:(?P<sep>:|=|\||[-–—>]|is(?![^\W_]))" + _OPEN + r")?+",
    re.IGNORECASE,
)
# A label's word anywhere: a reply without one (and without a JSON verdict) has no verdict. It
# starts with a class, not under IGNORECASE, so that the regex engine skips to those letters
# instead of trying every position.
_LABEL_WORD = re.compile(
    r"[VvJjGgUuВв判](?i:erd(?:ict|etto)|ered(?:icto|ito)|udge?ment|ugement|rade|rteil|ердикт|定)"
)
# The verdict right after its label, maybe negated ("NOT CORRECT", "NICHT KORREKT", "НЕ ВЕРНО").
_NEGATION = re.compile(r"(?:not|isn['’]t|nicht|non|no|não|не)[\s*_`]++", re.IGNORECASE)
_WORD = re.compile(rf"(?:{_LATIN})(?![^\W_])|{_CJK}", re.IGNORECASE)
_TERM = re.compile(rf"(?<![^\W_])(?:{_LATIN})(?![^\W_])|{_CJK}", re.IGNORECASE)  # anywhere
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")

# What qualifies a verdict in its own clause ("CORRECT, but ...", "CORRECT or INCORRECT",
# "CORRECT (partially)", "CORRECT?", "CORRECT ❌"): a hedge, the other verdict's words or emoji,
# and for CORRECT a negation ("CORRECT, not really"), unless it negates a fault ("CORRECT -
# nothing wrong with it", "INCORRECT (it is not right)").
_HEDGES = frozenset(
    "but however though although yet except unless if or nor partial partially partly mostly "
    "largely half somewhat almost nearly maybe perhaps possibly probably arguably ish mixed "
    "borderline unsure unclear uncertain debatable pero mas ma aber но parcialmente "
    "parzialmente partiellement teilweise частично".split()
)
_NEGATIONS = frozenset("not no nothing never none nicht non не".split())
_NO, _YES = "❌✗✘❎✖👎🚫⛔🔴", "✅✔☑✓👍🟢"
_UNSURE = "🤔❓❔"  # a hedge, whichever the verdict
_OTHER_WORDS = {True: _FAIL_WORDS | {"wrong"}, False: _PASS_WORDS | {"right"}}
_FAULTS = {
    True: _OTHER_WORDS[True]
    | set("error errors mistake mistakes issue issues problem problems flaw flaws".split()),
    False: _OTHER_WORDS[False],
}  # what a negation may negate and still agree
_AGAINST_WORDS = {
    True: _HEDGES | _OTHER_WORDS[True] | {"not", "no"},
    False: _HEDGES | _OTHER_WORDS[False],
}
_AGAINST_MARKS = {
    True: re.compile(f"[?{_NO}{_UNSURE}]|{_alternation(_FAIL_CJK)}|但|部分"),
    False: re.compile(f"[?{_YES}{_UNSURE}]|(?<!不)(?:{_alternation(_PASS_CJK)})|但|部分"),
}
_AGAINST_EMOJI = {
    True: re.compile(f"[{_NO}]"),
    False: re.compile(f"[{_YES}]"),
}  # before the label: "❌ VERDICT: CORRECT"
_WORDS = re.compile(r"[^\W\d_]++(?:['’][^\W\d_]++)?+")
_LETTER = re.compile(r"[^\W\d_]")
_PLAIN = " \t*_`~\"'”’»)]}|.,;:!-–—[({<>/\\"  # markup and punctuation, which qualify nothing

# What takes a verdict back when it opens the sentence or line after it ("VERDICT: CORRECT\nWait,
# ..."), and, after a verdict read from the first line or followed by fields, when it opens any
# later sentence or field ("Actually, ...").
_RETRACTIONS = (
    r"wait|actually|hmm+|oops|sorry|on second (?:thoughts?|look)|on reflection|"
    r"on closer (?:inspection|look|reading)|then again|"
    r"correction|scratch that|i take (?:that|it) back|i was wrong|i mean|"
    r"let me (?:re)?(?:check|consider|think)|reconsider(?:ing)?|"
    r"no(?=\s*+[,.!:;—–-])|not (?:really|quite|so|exactly)"
)
_RETRACTED = re.compile(_OPEN + r"(?:" + _RETRACTIONS + r")(?![^\W_])", re.IGNORECASE)
_RETRACTION = re.compile(
    r"(?:^|(?<=[.!?;:])[ \t]++)[ \t*_>#\-]*+(?:" + _RETRACTIONS + r")(?![^\W_])",
    re.IGNORECASE | re.MULTILINE,
)
# A sentence or line after the verdict that opens with a contrast ("However, ...") is a caveat,
# unless it names a fault: for CORRECT the other verdict, a negation, something missed, a
# partial answer, an issue ("But it misses InvokeServer", a field "Issues: ..."); for INCORRECT
# the other verdict.
_CONTRAST = re.compile(
    _OPEN + r"(?:but|however|though|although|yet|still|except|unless|nevertheless|nonetheless|"
    r"that said)(?![^\W_])",
    re.IGNORECASE,
)
# The other verdict: for CORRECT its words in any case; for INCORRECT the word as a verdict is
# written, in capitals (reasoning names "the correct answer").
_OTHER_NAMED = {
    True: re.compile(
        rf"(?<![^\W_])(?:{_alternation(_OTHER_WORDS[True])}|not correct|n['’]t correct)(?![^\W_])"
        rf"|{_alternation(_FAIL_CJK)}",
        re.IGNORECASE,
    ),
    False: re.compile(rf"(?<![^\W_])(?:{_alternation(w.upper() for w in _PASS_WORDS)})(?![^\W_])"),
}
_FAULT = {
    True: re.compile(
        _OTHER_NAMED[True].pattern
        + r"|(?<![^\W_])(?:not|no|never|miss(?:es|ed|ing)?|lacks?|lacking|fails?|incomplete|"
        r"inaccurate|partial(?:ly)?|partly|mostly|contradicts?|(?:error|mistake|issue|problem|flaw)s?+)"
        r"(?![^\W_])|n['’]t(?![^\W_])",
        re.IGNORECASE,
    ),
    False: _OTHER_NAMED[False],
}

# A line of markup alone (blank, a rule, a fence with its info string, a brace, a closing tag):
# not where a reader looks for the verdict.
_BARE = re.compile(
    r"[\s*_#>\-=+|{}\[\],.:;]*+(?:`{3,}+[^\s`]*+|~{3,}+[^\s~]*+|</[A-Za-z_]++>)?[\s*_`~#>\-=+|{}\[\],]*+"
)
# A field after the verdict ("Confidence: high", "| Confidence | High |"): a name of one to
# three words, then a colon or a table's bar.
_FIELD = re.compile(_OPEN + r"[^\W\d_]++(?:[ \t]++[^\W\d_]++){0,2}+[\s*_`]*+[:|]")
# Where str.splitlines splits a line.
_LINE_BREAK = re.compile("[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
# A JSON object's verdict fields (lowercase, without "_", "-" and spaces): a verdict's word or a
# boolean.
_JSON_KEYS = frozenset(
    "verdict finalverdict judgment judgement grade iscorrect correct passed".split()
)


class _Unclear:
    """A verdict named but not stated cleanly: the reply has none."""


_UNCLEAR = _Unclear()


def parse_verdict(text: str) -> bool | None:
    """True / False from a judge's reply, or None when it does not state one verdict clearly.

    A verdict is stated by a label (VERDICT, Final verdict, Judgment, Grade, and Veredicto,
    Veredito, Verdetto, Verdict final, Urteil, Вердикт, 判定; in any case), a separator (a
    colon, full-width or not, a dash, `=`, an arrow, "is", a table row's bar) and a verdict
    (CORRECT or INCORRECT, NOT CORRECT, PASS or FAIL, or their words in those languages:
    CORRECTO, KORREKT / FALSCH, ВЕРНО / НЕВЕРНО, 正确 / 错误, 正解 / 不正解, ...), markup aside
    (bold, code spans and fences, headings, quotes, bullets, a JSON object's quotes and braces,
    emoji); or the label alone on a line and the verdict on the next; or a verdict field of a
    JSON object that is the reply or its last fenced block (`verdict`, `final_verdict`, ...: a
    verdict's word; `is_correct`, `correct`, ... or any of them: a boolean). It is read where a
    reader looks: the reply's last line (as the prompt asks), its first, or a line followed
    only by fields ("Confidence: high", a table's next rows), blank and fence lines aside. What
    is read:

    - the text after a reasoning block at the reply's start (`evals.reasoning.split`, the rule
      every grader reads by): a draft inside it is not the verdict;
    - nothing when two statements disagree (a judge that wrote both is unparseable, never a
      pass), or a labeled line names a verdict without stating it cleanly ("PARTIALLY CORRECT",
      "NOT INCORRECT": a double negation is no pass, "CORRECT or INCORRECT");
    - nothing when a statement is qualified on its own clause (a hedge, "but", "or", "if", the
      other verdict's words or emoji, a question mark; for CORRECT a negation, though "nothing
      wrong" or "not right" after INCORRECT agree), or the sentence or line after it opens by
      taking it back ("Wait, ...", "Actually, ...") or opens with a contrast that names a fault
      ("But it misses ...", "However, it is wrong"); a verdict read from the first line or
      before fields also needs no later sentence to open so, nor to name the other verdict (the
      fields no fault either, nor a score saying the other thing: "Score: 0/10" after a pass,
      a pass scored half or less or a fail more than half).

    A sentence after the verdict, on its line or on the next ones, is the judge's reasoning
    ("However, it could be shorter" a caveat).
    Linear in the reply's length (`bench/parse.py`)."""
    text = unicodedata.normalize("NFKC", reasoning.split(text)[1]).strip()
    found, json_at = _json_verdict(text)
    if isinstance(found, _Unclear) or (found is None and not _LABEL_WORD.search(text)):
        return None
    lines = [line for line in _LINE_BREAK.split(text[:json_at]) if not _BARE.fullmatch(line)]
    verdicts = set() if found is None else {found}
    # Statements on the first line and the last statement: (its last line, the rest of it).
    lead: tuple[int, str] | None = None
    tail: tuple[int, str] | None = None
    for i in range(len(lines)):
        statement = _statement_at(lines, i)
        if statement is None:
            continue
        if isinstance(statement, _Unclear):
            return None
        end, verdict, rest = statement
        verdicts.add(verdict)
        follows = (
            rest
            if rest and _LETTER.search(rest)
            else (lines[end + 1] if end + 1 < len(lines) else "")
        )
        if len(verdicts) > 1 or _taken_back(follows, verdict):
            return None
        if i == 0:
            lead = (end, rest)
        tail = (end, rest)
    if len(verdicts) != 1:
        return None
    (verdict,) = verdicts
    return verdict if found is not None else _where_read(verdict, lines, lead, tail)


def _where_read(
    verdict: bool, lines: list[str], lead: tuple[int, str] | None, tail: tuple[int, str] | None
) -> bool | None:
    """The one verdict the lines state, when it is where a reader looks: the last line; a line
    followed only by fields that name no fault; the first line, when nothing after it takes it
    back or names the other verdict. `lead` and `tail`: the statements on the first line and
    the last one, as (its last line, the rest of that line)."""
    if tail is not None and tail[0] == len(lines) - 1:
        return verdict
    if tail is not None and all(_FIELD.match(line) for line in lines[tail[0] + 1 :]):
        return _kept(verdict, tail, lines, _FAULT[verdict])
    return None if lead is None else _kept(verdict, lead, lines, _OTHER_NAMED[verdict])


def _statement_at(lines: list[str], i: int) -> tuple[int, bool, str] | _Unclear | None:
    """The verdict labeled line `i` states, on that line or (a label alone on its line, a
    heading) the next: (the statement's last line, the verdict, the rest of its line after
    its sentence); _UNCLEAR when it names a verdict without stating it cleanly; None when the
    line has no label with a separator ("Verdict reasoning: ...") or names no verdict."""
    line = lines[i]
    label = _LABEL.match(line)
    if not label:
        return None
    at, end = label.end(), i
    if at == len(line) and i + 1 < len(lines) and not _LABEL.match(lines[i + 1]):
        end, line = i + 1, lines[i + 1]  # a heading: the verdict is the next line
        at = _opening_end(line)
    elif label.group("sep") is None:
        return None  # "Verdict reasoning: ..."
    said = _stated(line, at)
    if said is None or isinstance(said, _Unclear):
        return said
    return end, *said


def _taken_back(follows: str, verdict: bool) -> bool:
    """Whether the sentence or line after a verdict takes it back: it opens with a retraction,
    or with a contrast that names a fault."""
    return bool(
        _RETRACTED.match(follows) or (_CONTRAST.match(follows) and _FAULT[verdict].search(follows))
    )


def _kept(verdict: bool, at: tuple[int, str], lines: list[str], against: re.Pattern) -> bool | None:
    """A verdict read from the first line or before fields (`at`: its statement's last line and
    the rest of that line), when nothing after it takes it back (a sentence opening "Actually,
    ...") or matches `against`, and no score after it says the other thing; else None."""
    after = "\n".join([at[1], *lines[at[0] + 1 :]])
    if _RETRACTION.search(after) or against.search(after) or _scored_against(after, verdict):
        return None
    return verdict


# A score field ("Score: 0/10", "| Rating | 20% |", "Points = 3"): its figure, out of what.
_SCORE = re.compile(
    r"(?<![^\W_])(?:score|rating|points|marks?|accuracy|correctness)[\s*_`]*+[:|=][\s*_`]*+"
    r"(\d{1,9}(?:\.\d{1,9})?)[ \t]*+(?:/[ \t]*+(\d{1,9}(?:\.\d{1,9})?)|(%))?",
    re.IGNORECASE,
)


def _scored_against(text: str, verdict: bool) -> bool:
    """Whether a score in `text` says the other verdict: a pass scored half or less, a fail
    scored more than half (a bare figure other than 0 is read as no scale: it says nothing)."""
    for score in _SCORE.finditer(text):
        figure, scale, percent = score.groups()
        if scale:
            share = float(figure) / float(scale) if float(scale) else None
        elif percent:
            share = float(figure) / 100
        else:
            share = 0.0 if float(figure) == 0 else None
        if share is not None and (share <= 0.5 if verdict else share > 0.5):
            return True
    return False


def _stated(line: str, at: int) -> tuple[bool, str] | _Unclear | None:
    """What the text of `line` from `at` (after a label) states: (the verdict, the rest of the
    line after its sentence), _UNCLEAR when it names a verdict without stating it cleanly, or
    None when it names none."""
    negation = _NEGATION.match(line, at)
    word = _WORD.match(line, negation.end() if negation else at)
    if not word:
        return _UNCLEAR if _TERM.search(line, at) else None
    verdict = word.group().lower() in _PASS_WORDS or word.group() in _PASS_CJK
    if negation:
        if not verdict:
            return _UNCLEAR  # "NOT INCORRECT"
        verdict = False
    if not line.isascii() and _AGAINST_EMOJI[verdict].search(line, 0, at):
        return _UNCLEAR  # "❌ VERDICT: CORRECT"
    if word.end() == len(line):
        return verdict, ""
    end = _SENTENCE_END.search(line, word.end())
    cut = end.end() if end else len(line)
    clause = line[word.end() : cut]
    if clause.strip(_PLAIN) and _qualifies(clause, verdict):
        return _UNCLEAR
    return verdict, line[cut:]


def _opening_end(line: str) -> int:
    """Where the line's text starts after its markup (`_OPENING` matches at every line, if only the empty string)."""
    opening = _OPENING.match(line)
    return opening.end() if opening else 0


def _qualifies(clause: str, verdict: bool) -> bool:
    """Whether the clause after a verdict qualifies it: a hedge, the other verdict's words or
    emoji, a question mark, for CORRECT a negation; a negation and the fault it negates
    ("nothing wrong", "not right") agree."""
    if _AGAINST_MARKS[verdict].search(clause):
        return True
    negated = False  # the word before is a negation
    for word in _WORDS.findall(clause.lower()):
        if negated and word in _FAULTS[verdict]:
            negated = False  # "nothing wrong": it agrees
            continue
        if negated and verdict:
            return True  # a negation that negates no fault: "CORRECT, not really"
        negated = word in _NEGATIONS or word.endswith(("n't", "n’t"))
        if not negated and word in _AGAINST_WORDS[verdict]:
            return True
    return negated and verdict


def _json_verdict(text: str) -> tuple[bool | _Unclear | None, int]:
    """The verdict fields of a JSON object that is the reply (fenced or not) or its last fenced
    block, and where that object starts: (None, len(text)) when there is none."""
    start, end = 0, len(text)
    if text.endswith(("```", "~~~")):
        end = len(text.rstrip(text[-1]))
        opened = text.rfind(text[-1] * 3, 0, end)
        brace = text.find("{", opened, end)
        if opened < 0 or brace < 0 or not re.fullmatch(r"[`~]*+[\w-]*+\s*+", text[opened:brace]):
            return None, len(text)
        start, body = opened, text[brace:end]
    else:
        body = text
    if not (body.startswith("{") and body.rstrip().endswith("}")):
        return None, len(text)
    try:
        fields = json.loads(body)
    except (ValueError, RecursionError):
        return None, len(text)
    values = (
        [v for k, v in fields.items() if re.sub(r"[\W_]", "", k).lower() in _JSON_KEYS]
        if isinstance(fields, dict)
        else []
    )
    if not values:
        return None, len(text)
    said = [
        (v, "")
        if isinstance(v, bool)
        else _stated(v, _opening_end(v))
        if isinstance(v, str)
        else None
        for v in values
    ]
    verdicts = {s[0] for s in said if isinstance(s, tuple)}
    if len(verdicts) != 1 or not all(isinstance(s, tuple) for s in said):
        return (
            _UNCLEAR,
            start,
        )  # {"verdict": "PARTIALLY CORRECT"}, {"verdict": null}, two that disagree
    return verdicts.pop(), start


def majority(verdicts: list[bool | None]) -> bool:
    """Correct only when more than half of all judges said CORRECT."""
    return sum(v is True for v in verdicts) * 2 > len(verdicts)


def unanimous(verdicts: list[bool | None]) -> bool:
    return None not in verdicts and len(set(verdicts)) == 1
