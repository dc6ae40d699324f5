"""The answer letter a model finally commits to, parsed from its reply.

A scorer over the reply's letter mentions: each place where a letter may be an answer is
found by what marks it there, then weighed by its context.

- Explicit commitments: a cue before the letter, which is a lead ("the answer is", "Answer:",
  "my pick:", `<answer>`, "Answer →"), a choosing verb ("I'd go with", "I choose", "Pick") or
  a closing word ("so", "I think it's", "I'd say", "that makes it", "→") or a correction
  ("actually,", "no,", "I mean", "scratch that:"), these only when the letter ends its
  clause; a cue after it ("C is correct", "Option C is the one", "C it is"); \\boxed{C}; a letter
  alone on the reply's last line, after the reasoning ("**C**").
- Plain commitments: a letter alone on another line ("C", then the why), a letter in a short
  one-line reply ("Option C", "Probably C."), a line's label ("C) delay()", "C — because").

Context vetoes a mention: a doubt in its clause ("not", "wrong", "eliminate", "unlike", "if you
pick", "maybe"), a rejection or a description after it ("A is wrong", "C is deprecated"), a
question mark ("B?"), a list (labels or letter lines of several letters), a later "no" or
"actually" in a short reply ("C... no, B"). A mention joined to another letter ("B or C",
"(F) and (G)", "either B or C"), or hedged on its own ("it could be D", "maybe C"), commits to
none; letters listed as the subject of what follows ("so A, C and D are out") are no mention.
A word is no letter: "A" and "I" followed by a word ("A RemoteEvent", "I think"), a lowercase
letter that does not end its clause ("a matter of").

A commitment under a condition is none: a condition in its sentence before it ("If you need X,
A would be best", "For the opposite direction, C is ...", "otherwise", "in that case", "unless";
a bare "if" only before a hypothetical, "If it were X, the answer would be B"), or a restrictive
one after it ("A is correct only if ..."), or any after a hypothetical ("A would be correct if
..."). A hypothetical ("would be") or a caveat after a cue that is no answer lead ("C is right
if you ...") is a weaker one.

The last unconditional explicit commitment wins ("The answer is (B)... no, the correct answer is
(D)" is D; "(F) and (G)" is None; "Answer: B ... (option A would be correct if ...)" is B).
Without one: the one letter the weaker ones agree on; then the one letter the plain ones agree
on, lone lines first, then a short reply's letters (but not one under a condition), then
labels; then a choice's text quoted as the answer, as whole words. A reply that says no choice
fits ("none of the above", unless a choice says so) has none of these. Anything else is
unparseable (None): the harness counts it and never guesses.

Other languages read alike: answer words and their separators ("Respuesta: B", "La respuesta
correcta es la B", "A resposta correta é a B", "Die Antwort lautet B", "La bonne réponse est
B", "La risposta corretta è la B", "Правильный ответ: B", "答案是B", "正解は C です", "정답은
B입니다"), verbs ("Elijo la B", "Je choisis B", "我选B"), cues after the letter ("B es
correcta", "B ist richtig", "Bが正解です", "B是正确的"), their negations, hedges, joiners and
conditions ("no es A", "答案不是A", "可能", "B o C", "si ...", "如果 ..."). Full-width forms read
as ASCII ("答案：Ｂ", "Answer：B", "（B）"), "。" as a sentence's end; a Cyrillic or Greek
look-alike or an Arabic option letter standing alone as the letter it stands for ("Ответ: В",
"الإجابة: ب"), with their answer words ("Απάντηση:", "الإجابة الصحيحة هي").

Linear in the reply's length, whatever it holds (`bench/parse.py` measures it): no regex
here can try every split of a run between two quantifiers that both take it (possessive
quantifiers, *+, where they follow each other), no regex starts with a run it would take
again from each later position, and a mention's context is read by position within a bounded
window around it, never as a copy of the rest of the reply."""

from __future__ import annotations

import bisect
import functools
import itertools
import re
import string
from typing import NamedTuple

LETTERS = string.ascii_uppercase


def extract_letter(reply: str, choices: list[str]) -> str | None:
    valid = LETTERS[: len(choices)]
    text = reply.translate(_NARROW).strip()
    if not text:
        return None
    if not text.isascii():
        text = _LOOKALIKE.sub(lambda m: _LOOKALIKES[m.group()], text)
    context = _Context(text)
    explicit = [
        *_cued(text, valid, context),
        *_after_cues(text, valid, context),
        *_boxed(text, valid),
        *_last_line(text, valid),
    ]
    if unconditional := [m for m in explicit if m.rank == UNCONDITIONAL]:
        return max(unconditional, key=lambda m: m.position).letter
    if hypothetical := {m.letter for m in explicit if m.rank == HYPOTHETICAL}:
        return hypothetical.pop() if len(hypothetical) == 1 else None
    if _NONE_FIT.search(text) and not any(_NONE_FIT.search(_normalise(c)) for c in choices):
        return None  # "None of the listed choices sorts in place": no letter is guessed
    for tier in (_lone_lines, functools.partial(_short_reply, context=context), _labels):
        letters = {m.letter for m in tier(text, valid)}
        if len(letters) == 1:
            return letters.pop()
    return _quoted_choice(text, choices)


# How a commitment is made: unconditionally ("Answer: B"), or as a hypothetical or with a caveat
# ("B would be correct", "C is right if you ..."), or under a condition, no commitment at all
# ("If you need X, A would be best", "A is correct only if ...": found, then dropped).
UNCONDITIONAL, HYPOTHETICAL, CONDITIONAL = 2, 1, 0


class Mention(NamedTuple):
    position: int
    letter: str | None  # None: a commitment to several letters at once
    rank: int = UNCONDITIONAL


# A reply is read in its ASCII forms where it has full-width ones ("答案：Ｂ" reads as "答案:B",
# "（B）" as "(B)"), and CJK punctuation as its ASCII kin ("。" as ". ", which ends a sentence).
_NARROW = str.maketrans(
    {
        **{chr(c): chr(c - 0xFEE0) for c in range(0xFF01, 0xFF5F)},
        "\u3000": " ",
        "\u00a0": " ",
        "\u202f": " ",
        "\u3002": ". ",
        "\uff01": "! ",
        "\uff1f": "? ",
        "\u3001": ",",
        "\u3010": "[",
        "\u3011": "]",
        "\u300c": '"',
        "\u300d": '"',
        "\u300e": '"',
        "\u300f": '"',
    }
)


# -- regex building -------------------------------------------------------------------------------


class _lazy:
    """A pattern compiled at its first use: compiling this module's patterns takes ~0.1-0.2 s,
    which every pytest command would pay at start-up, before its first request."""

    __slots__ = ("_args", "_compiled")

    def __init__(self, *args):
        self._args, self._compiled = args, None

    def __getattr__(self, name: str):
        if self._compiled is None:
            self._compiled = re.compile(*self._args)
        return getattr(self._compiled, name)


def _cues(*phrases: str) -> str:
    """Phrases (regex fragments, each led by a plain character), as one alternative for each
    first character: that character, the \\b before it when it is a letter (a lookbehind),
    then the rests of the phrases it leads, case-insensitive.

    Alternatives that each start with a character are what the regex engine skips through
    fastest: it looks for those characters only, and at one, it tries only the alternative
    that starts with it; a regex that starts with \\b, or with letters under IGNORECASE, it
    tries at every position, and every alternative there (4-8x slower on prose and code,
    8x on blank space: `bench/parse.py`'s replies). A letter's
    alternative is there for both its cases and what else IGNORECASE takes for it."""
    by_first: dict[str, list[str]] = {}
    for phrase in phrases:
        by_first.setdefault(phrase[0], []).append(phrase[1:])
    alternatives = []
    for first, rests in sorted(by_first.items()):
        rest = f"(?i:{'|'.join(rests)})"
        if first.isalpha() and not _unspaced(first):
            alternatives += [
                rf"{c}(?<=\b.){rest}"
                for c in first + first.upper() + _IGNORECASE_ALSO.get(first, "")
            ]
        else:
            alternatives.append(re.escape(first) + rest)
    return f"(?:{'|'.join(alternatives)})"


def _unspaced(character: str) -> bool:
    """Whether it is of a script written without spaces between words (Chinese, Japanese,
    Korean's syllables), where a cue starts mid-"word": "最终答案" holds "答案"."""
    return "\u3040" <= character <= "\u9fff" or "\uac00" <= character <= "\ud7af"


# The characters besides a letter's two cases that IGNORECASE matches it with (all of them:
# checked against `re` over every code point).
_IGNORECASE_ALSO = {"i": "\u0130\u0131", "k": "\u212a", "s": "\u017f"}

_APOSTROPHE = "['\u2019]"
# Where a letter standing alone starts and ends: not inside a word, nor a contraction's ("I'd",
# "it's", "A's"), nor an abbreviation's ("e.g.", "U.S."); a quote around it is fine ('B').
_ALONE_BEFORE = r"(?<![A-Za-z0-9])(?<![A-Za-z]['\u2019])(?<![A-Za-z]\.)"
_ALONE_AFTER = r"(?![A-Za-z0-9])(?!['\u2019][A-Za-z])(?!\.[A-Za-z])"
_OPENERS = "([{*_`\"'\u201c\u2018<>"  # what can wrap a letter on its left: (C) **C** `C` "C" <b>C
_CLOSERS = ")]}*_`\"'\u201d\u2019<>"
_CLOSE_RUN = r"""[)\]}*_`"'\u201d\u2019]*+"""  # a letter's closing markup: C) **C** "C"
_OPEN_RUN = r"""[(\[{*_`"'\u201c\u2018]*+"""

# Letters of other scripts that stand for the choices' letters: Cyrillic and Greek look-alikes
# ("Ответ: В" is B), and the Arabic option letters (أ ب ج د, as OpenAI's simple-evals reads
# them). Only where one stands as a letter: no letter or mark of a word on either side, and no
# word right after it ("В Roblox ...", "с ним" are Russian words, "بِ" a word's start).
_LOOKALIKES = {
    **dict(zip("\u0410\u0412\u0421\u0415\u0430\u0432\u0441\u0435", "ABCEabce")),
    **dict(zip("\u0391\u0392\u0395", "ABE")),
    **dict(zip("\u0623\u0628\u062c\u062f", "ABCD")),
}
_MARKS = "\u0300-\u036f\u064b-\u065f\u0670"  # combining marks: a word goes on
_LOOKALIKE = _lazy(
    rf"[{''.join(_LOOKALIKES)}](?<![^\W_{_MARKS}].)(?![{_MARKS}])(?![^\S\n]*+-?[^\W_])"
)


# -- explicit commitments: a cue before the letter ------------------------------------------------

# What follows "answer" and the like before the letter: "Answer: C", "answer is C", "**Answer**: C",
# "### Answer\nC", "[ANSWER] C", "<answer>C", '{"answer": "C"}', "Answer - C", "answer → C".
_ARROWS = ("=>", "->", "\u2192", "\u21d2", "\u27f9", "\u27f6", "\u279c", "\u27a1")
_ARROW = "(?:" + "|".join(_ARROWS) + ")"
_SEPARATOR = (
    rf"""[ \t*_`#"']*+(?:{_ARROW}|[:=>\]\n]|[-\u2013\u2014](?=\s)|is\b|{_APOSTROPHE}s\b|are\b|"""
    r"""(?:would|should|will|must)\s+be\b"""
    rf"""|(?<=[ \t])(?=[(\[*_`"']*+[A-Za-z]{_ALONE_AFTER}))"""  # or a space only: "Final answer B"
)
_COLON = rf"""[ \t*_`#"']*+(?:{_ARROW}|[:=>\]]|[-\u2013\u2014](?=\s))"""
_NOUNS = (
    r"(?:answer|option|choice|one|expression|pick|selection|letter|call|bet|guess|vote|response)s?"
)
# Other languages: what follows an answer word before the letter ("Respuesta: B", "la respuesta
# correcta es la B", "die Antwort lautet B", "答案是B", "正解は C です", "정답은 B입니다"), the
# answer words (with the adjective that may follow them: "resposta correta é") and the option
# words, which lead only with a colon or an adjective ("la opción correcta es", not "la opción
# es": a distractor's, as in English). Enough of each language for the forms models write.
_COPULAS = (
    r"(?:es|é|est|è|ist|lautet|ser[áa]|sarà|будет|ser[íi]a|serait|sarebbe|w[äa]re|είναι|هي)\b"
)
_FOREIGN_SEPARATOR = rf"""[ \t*_`#"']*+(?:[:=\]>]|[-\u2013\u2014](?=\s)|{_COPULAS}|[是为為はが은는이]|应该是|應該是)"""
_FOREIGN_ADJECTIVE = (
    r"(?:[ \t]++(?:(?:correct|corret|exact|final|definitiv|richtig|korrekt|правильн|верн)\w*|juste|"
    r"bonne))"
)
# The nouns, grouped by their first character (each carries a copy of the separator, for each
# case of that character: `_cues`). They are a regex of their own, compiled and run only for a
# reply that has one of their nouns (`_Context.foreign`): in the English cues they doubled the
# time compiling them took, which every pytest process pays at its first reply.
_FOREIGN_LEADS = (
    # "respuesta", "resposta", "risposta", "réponse", "antwort", "ответ", "lösung", "solución", ...
    *(
        rf"{noun}{_FOREIGN_ADJECTIVE}?{_FOREIGN_SEPARATOR}"
        for noun in (
            r"r(?:espuesta|esposta|isposta|[ée]ponse)",
            "antwort",
            "ответ",
            r"l[öo]sung",
            r"solu(?:ci[óo]n|[çc][ãa]o|zione)",
            "απάντηση",
        )
    ),
    # "الإجابة: ب", "الإجابة الصحيحة هي ج" (the adjective follows the noun)
    *(
        rf"{noun}(?:[ \t]++الصحيحة)?{_FOREIGN_SEPARATOR}"
        for noun in ("الإجابة", "الاجابة", "الجواب")
    ),
    # "opción", "opção", "opzione", "alternativa", "вариант": with an adjective or a colon
    *(
        rf"{noun}(?:{_FOREIGN_ADJECTIVE}{_FOREIGN_SEPARATOR}|{_COLON})"
        for noun in (r"op(?:ci[óo]n|[çc][ãa]o|zione)", "alternativa", "вариант")
    ),
    # "答案", "答え", "正解", "正确选项", "正しい選択肢", "解答", "정답", "답"
    *(
        rf"{noun}{_FOREIGN_SEPARATOR}"
        for noun in (
            "答(?:案|え)",
            r"正(?:解|[确確]的?(?:选项|選項)|しい選択肢)",
            "解答",
            "정답",
            "답",
        )
    ),
)
_FOREIGN_NOUNS = (
    r"r(?:espuesta|esposta|isposta|[ée]ponse)",
    "antwort",
    "ответ",
    r"l[öo]sung",
    r"solu(?:ci[óo]n|[çc][ãa]o|zione)",
    "απάντηση",
    "الإجابة",
    "الاجابة",
    "الجواب",
    r"op(?:ci[óo]n|[çc][ãa]o|zione)",
    "alternativa",
    "вариант",
    "答案",
    "答え",
    "正",
    "解答",
    "정답",
    "답",
)
# A bare "option is" is not one: "the tempting wrong option is (A)" names a distractor; "is (A)"
# is, unless its sentence says wrong or tempting (`_Sentences`).
_LEADS = (
    # "the final answer is", "the correct location is", "the best fit:"; "my answer is".
    *(
        rf"{adjective}\s+[a-z]+{_SEPARATOR}"
        for adjective in ("final", "correct", "right", "best", "closest", "proper")
    ),
    *(rf"{pronoun}\s+{_NOUNS}{_SEPARATOR}" for pronoun in ("my", "our")),
    rf"answers?{_SEPARATOR}",
    rf"letter{_SEPARATOR}",
    *(
        rf"{noun}{_COLON}"
        for noun in (
            "choice",
            "option",
            "pick",
            "selection",
            "verdict",
            "final",
            "correct",
            "solution",
            r"ans\.?",
        )
    ),
    *(
        rf"{noun}{_COLON}"
        for noun in ("conclusion", "result", "summary", r"bottom\s+line", r"tl;\s*dr")
    ),
    r"which\s+is(?=\s*\()",
    r"is(?=\s*\()",
)
# Verbs of choosing: they commit to a letter that reads as one ("I'd go with (C) task.wait()"),
# unless it is the subject of what follows ("picking C would hang").
_DECISIONS = (
    r"go(?:ing|es)?\s+(?:with|for)\b",
    r"went\s+(?:with|for)\b",
    r"opt(?:ing)?\s+for\b",
    r"settl(?:e|ing)\s+(?:on|for)\b",
    r"choos(?:e|ing)\b",
    r"chose\b",
    r"select(?:ing)?\b",
    r"pick(?:ing)?\b",
    r"vote\s+for\b",
    r"lean(?:ing)?\s+towards?\b",
    r"answer(?:ing)?\b",  # the verb: "I'd answer C"
    r"mark(?:ing)?\b",
    r"circl(?:e|ing)\b",
    rf"i(?:{_APOSTROPHE}ll|\s+will|{_APOSTROPHE}d|\s+would)\s+take\b",
    # "Elijo la B", "Me quedo con la B", "Escolho a B", "Je choisis B", "Ich wähle B", "我选B".
    r"elijo\b",
    r"escojo\b",
    r"me\s+quedo\s+con\b",
    r"escolho\b",
    r"fico\s+com\b",
    r"choisis\b",
    r"w[äa]hle\b",
    r"scelgo\b",
    r"выбираю\b",
    "选择",
    "选",
    "選",
)
# Words that commit only when the letter ends their clause: "So C.", "I think it's C", "I'd say
# (C)." but not "so (A) is throttled", "I'd say A is tempting".
_CONNECTIVES = (
    r"so\b,?",
    r"thus\b,?",
    r"hence\b,?",
    r"therefore\b,?",
    *(rf"{w}(?:{_APOSTROPHE}s|\s+is|{_APOSTROPHE}d\s+be)\b" for w in ("it", "that", "this")),
    r"be\b",  # "it must be C", "it'll be C", "has to be C"; "it might be C" is a hedge
    r"say\b",
    r"think\b",
    r"believe\b",
    r"guess\b",
    r"reckon\b",
    r"makes\s+it\b",
    r"leav(?:es|ing)(?:\s+us\s+with)?\b",
    # A correction, in a reply of any length: "B, or rather C", "Answer: A. Wait, actually, B.",
    # "So D. Actually, scratch that: B". "no" only with a comma, a colon or a dash ("no, B"):
    # "there is no C." and "A: no. B: yes." are none.
    # Not before the pronoun, which may open the next cue: "C, no, I mean, D".
    *(
        rf"{w}(?![^\S\n]*+I[^\S\n]++[a-z])"
        for w in (
            r"or\s+rather\b",
            r"actually\b,?",
            r"no\b(?:[,:;]|[^\S\n]*+[\u2013\u2014])",
            r"nope\b[,:;]?",
            r"i\s+mean\b,?",
            r"scratch\s+that\b[,:;.!]?",
            r"correction\b",
            r"sorry\b,?",
            r"make\s+that\b",
            r"on\s+(?:second\s+thought|reflection)\b,?",
        )
    ),
    # "C'est B.", "Entonces, B.", "Donc B.", "所以B。"
    rf"c{_APOSTROPHE}est\b",
    r"entonces\b,?",
    r"então\b,?",
    r"donc\b,?",
    r"daher\b,?",
    r"quindi\b,?",
    "所以",
    "因此",
)
# An afterthought that opens another letter: "It's B. Or maybe C." commits to neither; so does a
# letter hedged anywhere ("I think it's B, but maybe C", "Maybe B.").
_HEDGES = (r"or(?:\s+(?:maybe|perhaps|possibly|even))?\b",)
_MAYBES = (r"maybe\b,?", r"perhaps\b,?", r"possibly\b,?")
_SENTENCE_START = _lazy(r"(?:\A|[.!?\n\u2026\u2014])[\s*_]*+\Z")
_GAP = r"""(?:[\s:*_`\[({"'\u201c\u2018<\ufe0f]|\\textbf\{)*+"""  # \ufe0f: the emoji form of "➡️"
# Words a reply puts between the cue and the letter: "Answer: Option B", "is clearly B".
_FILLER_WORDS = (
    r"(?:option|choice|letter|answer|the|clearly|definitely|certainly|surely|obviously|actually|probably|likely|indeed|therefore|just|simply|still"
    r"|opci[óo]n|op[çc][ãa]o|alternativa|letra|lettre|opzione|lettera|variante|вариант)"
)
# Or an article of another language, before a letter or an option word: "es la B", "é a
# alternativa B", "ist die B" (lowercase only: "The answer is A because" keeps its A).
_ARTICLE = (
    r"""(?-i:la|el|le|(?<=é\s)a|(?<=escolho\s)a|(?<=com\s)a|il|lo|die|"""
    rf"""l{_APOSTROPHE})\s*+(?=(?:{_FILLER_WORDS}\s++)?[(\[*_`"']*+[A-Za-z]{_ALONE_AFTER})"""
)
_FILLER = rf"(?:{_FILLER_WORDS}\s++|{_ARTICLE}|(?:选项|選項|選択肢)\s*+){{0,3}}+"
_LETTER = rf"""{_GAP}{_FILLER}{_OPEN_RUN}(?P<letter>[A-Za-z]){_ALONE_AFTER}(?P<close>[)\]}}*_`.:"'\u201d\u2019>]*+)"""
_CUED = _lazy(
    rf"{_cues(*_LEADS, *_DECISIONS, *_CONNECTIVES, *_ARROWS, *_HEDGES, *_MAYBES)}(?i:{_LETTER})"
)
_CONNECTIVE_RE = _lazy(_cues(*_CONNECTIVES, *_ARROWS))
_DECISION_RE = _lazy(_cues(*_DECISIONS))
_HEDGE_RE = _lazy(_cues(*_HEDGES))
_MAYBE_RE = _lazy(_cues(*_MAYBES))
# Before the cue "be", a hedge of the reply's own answer: "it could be D", "but it might well be
# A", ", may be C" (not "the throttled one might be A", a description, nor "could not be").
_MIGHT_BE = _lazy(
    r"(?i:(?:[.,;:!?(]\s*+|\A\s*+|\b(?:it|that|this|answer)\s++)(?:might|could|may)"
    r"(?:\s++(?:also|well|even|just))?\s++)\Z"
)
_PAREN_LEAD = _lazy(r"(?i:which\s+is|is)(?=\s*\()")
_LEAD_RE = _lazy(_cues(*_LEADS))
_FOREIGN_CUED = _lazy(rf"{_cues(*_FOREIGN_LEADS)}(?i:{_LETTER})")

# -- explicit commitments: a cue after the letter -------------------------------------------------

_VERDICTS = r"(?:correct|right|best|accurate|appropriate|closest|answer|pick|choice|winner|call|bet|final)\b"
_ADVERBS = (
    r"(?:definitely|clearly|certainly|obviously|indeed|surely|probably|actually|also|still|then|so)"
)
# A letter, then what commits to it: "C is correct", "(C) is the one", "C, it is", "C wins".
# It starts at the letter, so that only a letter right before the cue costs a look.
_AFTER = _lazy(
    rf"""(?P<letter>[A-Za-z])(?<=(?:{_ALONE_BEFORE}).)(?:(?={_APOSTROPHE}s\s)|{_ALONE_AFTER}{_CLOSE_RUN},?[^\S\n]*+)"""
    rf"(?i:(?:is|{_APOSTROPHE}s)\s++(?:(?P<it>it\b)|(?:{_ADVERBS}\s++){{0,2}}+(?:(?:the|my|our)\s++(?:most\s++)?(?:{_VERDICTS}|one\b|way\s+to\s+go\b)|(?:most\s++)?{_VERDICTS}))"
    rf"|(?:are|seems|looks|sounds|feels|(?:must|should|would)\s+be)\s++(?:(?:the|my|our)\s++)?{_VERDICTS}"
    r"|is\s++what\s++(?:i|we)\b"
    r"|(?P<closing>it\s+is|wins|for\s+sure|all\s+the\s+way)\b"
    # Other languages: "B es correcta", "B é a alternativa correta", "B ist die richtige Antwort",
    # "Bが正解です", "B是正确的", "B가 정답입니다", "Bを選びます" (but not "Bが正解ではない").
    rf"|(?:es|est|é|è|ist|ser[íi]a|serait|sarebbe|w[äa]re)\s++(?:(?:la|a|le|die|l{_APOSTROPHE})\s*+)?"
    r"(?:(?:respuesta|resposta|risposta|r[ée]ponse|antwort|opci[óo]n|op[çc][ãa]o|alternativa|option|opzione)\s++)?"
    r"(?:correct[aoe]|corrett[ao]|corret[ao]|exact[ao]|richtig|korrekt|juste|bonne)"
    r"|(?:が|是|为|為|가|이)?\s*+(?:最\s*+)?(?:正解|正しい|正确|正確|对的|對的|정답)(?!\s*+(?:では|じゃ|이\s*아|가\s*아))"
    r"|(?:を|[를을])\s*+(?:選|选|선택))"
)
# Before a lowercase letter, a name that shows it is one: "option c is correct".
_NAMED = _lazy(rf"(?i:option|choice|answer|letter)[^\S\n]++{_OPEN_RUN}\Z")

# -- what vetoes or splits a commitment --------------------------------------------------------------

# What joins two letters into one commitment to both, or a hedge between them: "B and D",
# "(B) or (D)", "B/D", "B, or maybe C" ("B, or rather C" is a correction).
_JOINER = (
    r"(?:,|/|&|\band\b|\bor\b(?!\s+rather)|\bnor\b|\bvs\b\.?|\bversus\b|\bplus\b|\bas\s+well\s+as\b"
    r"|\b(?:o|ou|oder|oppure|y|e|et|und|или|и)\b|或者?|または|또는|和)"  # "B o C", "B oder C", "B或C"
    r"(?:\s*+(?:or|and|maybe|perhaps|possibly|even|also|probably)\b)*+"
)
# Another letter joined to the committed one.
_ALSO = _lazy(rf"{_CLOSE_RUN}\s*+\(?{_JOINER}\s*+{_OPEN_RUN}(?P<letter>[A-Za-z]){_ALONE_AFTER}")
# A letter joined to the one before it: "B and C are correct" commits to neither alone.
_JOINED_BEFORE = _lazy(rf"{_ALONE_BEFORE}[A-Z]{_CLOSE_RUN}\s*+{_JOINER}\s*+{_OPEN_RUN}.\Z")
# What ends a letter's clause: the end, a line break, punctuation, a dash, a conjunction.
_CLAUSE_END = _lazy(
    r"""[)\]}*_`"'\u201d\u2019>]*+(?:\Z|[^\S\n]*+\n|[.,;:!](?=[\s*_`"'\u201d\u2019)\]<]|\Z)|[^\S\n]*+[-\u2013\u2014(]"""
    r"|[^\S\n]++(?i:because|since|as|given|for|which|with|so|but|and|or|nor|then|though|although|while|whereas|over|here|now|too|again|instead|overall)\b)"
)
# What ends a hedged letter's clause: the sentence's end, or a comma before "though" or "but"
# ("it could be B, though."); not a restriction after it ("maybe A, if ...", "may be A for ...").
_HEDGE_END = _lazy(
    r"""[)\]}*_`"'\u201d\u2019>]*+(?:\Z|[^\S\n]*+\n|[.;!](?=[\s*_`"'\u201d\u2019)\]<]|\Z)"""
    r"|,[^\S\n]*+(?i:though|but|perhaps|maybe)\b)"
)
# A letter that a verb follows is that sentence's subject, described rather than chosen: "C is
# deprecated", "picking C would hang".
_SUBJECT = _lazy(
    rf"{_CLOSE_RUN}\s++(?i:is|are|was|were|has|have|had|does|do|did|would|could|will|might|may|can|should|must|seems|looks|means|makes|leads|gives|causes|uses|runs|works|fails)\b"
)
_QUESTION = _lazy(rf"{_CLOSE_RUN}[^\S\n]*+\?")
# After an unwrapped "A" or "I", a word that shows it is the article or the pronoun ("A good
# one", "I think"): any word but a conjunction.
_WORD = _lazy(r"\s*([A-Za-z'\u2019]+)")
_CONJUNCTIONS = {
    "because",
    "since",
    "as",
    "and",
    "or",
    "but",
    "which",
    "with",
    "for",
    "given",
    "so",
}
# The context before a cue that makes it no commitment: a negation, a distractor, a condition,
# a hedge ("I don't think the answer is B", "if you pick A", "maybe B", "eliminate A").
_DOUBTS = (
    *(
        rf"{w}\b"
        for w in (
            "not",
            "never",
            "wrong",
            "incorrect",
            "false",
            "unlike",
            "except",
            "tempting",
            "distractor",
            "trap",
        )
    ),
    *(
        rf"{w}\b"
        for w in (
            "misleading",
            "if",
            "whether",
            "unless",
            "when",
            "might",
            "could",
            "may",
            "maybe",
            "perhaps",
        )
    ),
    *(rf"{w}\b" for w in ("possibly", "either", "neither", "nor", "between", "over", "than")),
    *(rf"{w}\w*" for w in ("eliminat", "avoid", "reject", "discard", "doubt", "suppos", "assum")),
    r"rul(?:e|es|ed|ing)\s+out\b",
    r"instead\s+of\b",
    r"rather\s+than\b",
    r"other\s+than\b",
    r"why\s+not\b",
    r"so\s+(?:is|are|was|does|do)\b",  # "A is wrong, and so is B"
    r"as\s+(?:is|are|was|does|do)\b",
    *(rf"{apostrophe}(?<=n{apostrophe})t\b" for apostrophe in "'\u2019"),  # "don't", "isn't"
)
# Other languages' doubts, read in a reply with other languages' words (`_Context.foreign`): each
# doubt word costs every cue's search a few microseconds.
_FOREIGN_DOUBTS = (
    # Other languages: "no es A", "n'est pas A", "nicht A", "不是A", "maybe" ("quizás B", "可能是B").
    r"no\s+(?:es|era|sería)\b",
    r"não\s+é\b",
    rf"n{_APOSTROPHE}est\s+pas\b",
    r"nicht\b",
    r"non\s+è\b",
    r"не\b",
    r"неверн\w*",
    r"неправильн\w*",
    r"incorrect[aoe]s?\b",
    r"falsch\w*",
    r"errad[ao]s?\b",
    r"sbagliat[ao]\b",
    r"quiz[áa]s?\b",
    r"tal\s+vez\b",
    r"talvez\b",
    r"peut-être\b",
    r"vielleicht\b",
    r"forse\b",
    r"возможно\b",
    "不是",
    "不對",
    "不对",
    "错误",
    "錯誤",
    "可能",
    "也许",
    "也許",
    "或许",
    "或許",
    "ではな",
    "かもしれ",
    "아마",
    "아니",
)
# What ends a clause, so that a doubt before it does not reach the cue after it.
_BREAKS = (
    *".;:!?,\n\u2013\u2014",
    *(
        rf"{w}\b"
        for w in (
            "but",
            "and",
            "then",
            "thus",
            "hence",
            "therefore",
            "however",
            "because",
            "since",
            "while",
        )
    ),
    *(rf"{w}\b" for w in ("whereas", "though", "although")),
    r"so\b(?!\s+(?:is|are|was|does|do)\b)",
)
# A doubt, then no break up to the end of the window: one search, which skips to the doubts'
# first characters (`_cues`) and reads on only from a doubt; a loop over the breaks in Python
# cost 20 us a cue.
_DOUBTED = _lazy(rf"{_cues(*_DOUBTS)}(?:(?!{_cues(*_BREAKS)})(?s:.))*+\Z")
_DOUBTED_IN_ANY_LANGUAGE = _lazy(
    rf"{_cues(*_DOUBTS, *_FOREIGN_DOUBTS)}(?:(?!{_cues(*_BREAKS)})(?s:.))*+\Z"
)
_DOUBT_WINDOW = 48  # characters: a clause's doubt is near its cue (eight words or so)

# A condition: "if you", "only if", "unless", "in that case", "for the opposite direction",
# "otherwise", "assuming" ... and their kin in other languages. A bare "if" is one before a
# hypothetical ("If it were X, the answer would be B"), not before a plain commitment ("If we
# compare them, B is correct"). "if" in a hedge of one's own ("if I had to pick", "if you ask
# me", "not sure if"), or rhetorical ("if you look at the options"), is none.
_IF = (
    r"if\b(?<!even\sif)(?<!as\sif)(?<!sure\sif)(?<!know\sif)(?<!wonder\sif)(?<!see\sif)(?<!check\sif)(?<!ask\sif)"
    rf"(?!\s+(?:i\b|i{_APOSTROPHE}|you\s+ask\s+me\b|anything\b|needed\b|necessary\b|possible\b|any\b|in\s+doubt\b"
    r"|(?:you|we)\s+(?:look|compare|consider|check|think|read|go\s+through|analy[sz]e|examine|review|eliminate|weigh)))"
)
_IF_STRONG = _lazy(
    r"\s+(?i:you|your|it\s+were|we\s+were|they|one)\b"
)  # after "if": a condition on its own
_CONDITIONS = (
    _IF,
    *(
        rf"{w}\b"
        for w in (
            "unless",
            "otherwise",
            "assuming",
            r"suppos\w*",
            r"provided(?:\s+that)?",
            r"were\s+it",
            r"had\s+it\s+been",
        )
    ),
    *(
        rf"in\s+{w}\s+case\b"
        for w in ("that", "which", r"such\s+a", r"the\s+other", r"the\s+opposite")
    ),
    *(rf"for\s+the\s+{w}\b" for w in ("opposite", "reverse", r"other\s+direction", r"other\s+way")),
    *(rf"only\s+{w}\b" for w in ("if", "when", "for", "in")),
    # es, fr, de, pt, it, ru; zh, ja, ko
    r"si\b",
    r"s[óo]lo\s+si\b",
    r"seulement\s+si\b",
    r"sinon\b",
    r"de\s+lo\s+contrario\b",
    r"wenn\b",
    r"falls\b",
    r"sonst\b",
    r"nur\s+wenn\b",
    r"caso\s+contr[áa]rio\b",
    r"altrimenti\b",
    r"если\b",
    r"иначе\b",
    "如果",
    "假如",
    "否则",
    "否則",
    "只有",
    "もし",
    "만약",
)
_CONDITION = _lazy(_cues(*_CONDITIONS))
# What ends a sentence (found with str.rfind: a regex tried at each position of the window cost
# 100 us a commitment), and what opens a clause that a condition before it does not reach ("If
# you pick A you get throttled, but B is correct").
_SENTENCE_ENDS = (". ", "! ", "? ", "\n", ";")
_CLAUSE_OPENERS = _lazy(
    _cues(
        *(rf"{w}\b" for w in ("but", "however", "pero", "mais", "aber", "но")),
        "但",
        "しかし",
        "하지만",
    )
)
# After a commitment, a condition in its clause, up to a reason ("Answer: B, because if you ...").
_REASONS = _lazy(
    _cues(
        *(
            rf"{w}\b"
            for w in (
                "because",
                "since",
                "as",
                "given",
                "while",
                "whereas",
                "and",
                "so",
                "porque",
                "weil",
                "denn",
                "parce",
                "car",
            )
        ),
        "因为",
        "因為",
    )
)
_RESTRICTIVE = _lazy(_cues(r"only\b", r"s[óo]lo\b", r"seulement\b", r"nur\b", "只有"))
_CONDITION_WINDOW = (
    160  # characters before: "For the opposite direction (server to client), C would be best"
)
_CAVEAT_WINDOW = 80  # characters after: "A would be correct if you only needed ..."
# A hypothetical in the commitment itself: "the answer would be B", "B would be correct", "sería B".
_HYPOTHETICALS = (
    r"would\b",
    r"'d\s+be\b",
    "\u2019d\\s+be\\b",
    r"ser[íi]a\b",
    r"serait\b",
    r"sarebbe\b",
    r"w[äa]re\b",
    r"würde\b",
)
_HYPOTHETICAL = _lazy(_cues(*_HYPOTHETICALS))
# What `_Context` looks for, in one pass over the reply (three passes cost 50-80 ms per MB more).
_CONTEXT_WORDS = _lazy(_cues(*_CONDITIONS, *_HYPOTHETICALS, *_FOREIGN_NOUNS))
_WOULD_BE = _lazy(rf"(?i:would|{_APOSTROPHE}d)\s++\Z")  # before the cue "be": "that would be B"


class _Context:
    """What is read once in a reply, then asked per commitment by position: its conditions and
    hypotheticals (searching each commitment's window cost it 20-100 us), and whether it has
    other languages' words."""

    def __init__(self, text: str):
        self.text = text
        self.foreign = False  # whether it has an answer word of another language
        self.starts: list[int] = []  # where each condition starts, in order
        self.ends: list[int] = []
        self.strong: list[bool] = []  # False: a bare "if", which conditions only a hypothetical
        self.hypotheticals: list[int] = []
        for word in _CONTEXT_WORDS.finditer(text):
            at = word.start()
            if condition := _CONDITION.match(text, at):
                self.starts.append(at)
                self.ends.append(condition.end())
                self.strong.append(
                    condition.group().lower() != "if"
                    or _IF_STRONG.match(text, condition.end()) is not None
                )
            elif _HYPOTHETICAL.match(text, at):
                self.hypotheticals.append(at)
            else:
                self.foreign = True
        self.doubts = _DOUBTED_IN_ANY_LANGUAGE if self.foreign or not text.isascii() else _DOUBTED
        self.weighs = bool(
            self.starts or self.hypotheticals
        )  # False: every commitment is unconditional

    def doubted(self, position: int) -> bool:
        """Whether the clause before `position` (within `_DOUBT_WINDOW` characters) negates,
        conditions or hedges what follows."""
        return self.doubts.search(self.text, max(0, position - _DOUBT_WINDOW), position) is not None

    def hypothetical(self, start: int, end: int) -> bool:
        """Whether `text[start:end]` holds a hypothetical ("would", "sería")."""
        i = bisect.bisect_left(self.hypotheticals, start)
        return i < len(self.hypotheticals) and self.hypotheticals[i] < end

    def rank(self, start: int, end: int, *, hypothetical: bool, lead: bool) -> int:
        """How the commitment in `text[start:end]` is made. Under a condition in its sentence
        before it ("If you need X, ...", "For the opposite direction, ...") or a restrictive
        one after it ("... only if ...") it is none; a hypothetical with a condition after it
        ("A would be correct if ...") neither. A hypothetical alone, or a caveat after a cue
        that is not an answer lead ("C is right if you ..."), never overrides an unconditional
        one."""
        if not self.starts:
            return HYPOTHETICAL if hypothetical else UNCONDITIONAL
        if self._before(start, hypothetical):
            return CONDITIONAL
        text, after = self.text, bisect.bisect_left(self.starts, end)
        if after < len(self.starts) and (condition := self.starts[after]) < end + _CAVEAT_WINDOW:
            if _sentence_start(text, end, condition) == end and not _REASONS.search(
                text, end, condition
            ):
                if hypothetical or _RESTRICTIVE.match(text, condition):
                    return CONDITIONAL
                return UNCONDITIONAL if lead else HYPOTHETICAL
        return HYPOTHETICAL if hypothetical else UNCONDITIONAL

    def _before(self, start: int, hypothetical: bool) -> bool:
        """Whether a condition in the sentence before `start` (within `_CONDITION_WINDOW`
        characters) reaches it: a strong one, or for a hypothetical a bare "if" too."""
        i = bisect.bisect_right(self.ends, start) - 1  # the last condition that ends before start
        low = max(0, start - _CONDITION_WINDOW)
        while i >= 0 and self.starts[i] >= low and not (hypothetical or self.strong[i]):
            i -= 1
        if i < 0 or self.starts[i] < low:
            return False
        condition, text = self.starts[i], self.text
        return _sentence_start(text, condition, start) == condition and not _CLAUSE_OPENERS.search(
            text, self.ends[i], start
        )


def _sentence_start(text: str, low: int, position: int) -> int:
    """Where the sentence that `position` is in starts, or `low` if it starts before it."""
    for end in _SENTENCE_ENDS:
        if (found := text.rfind(end, low, position)) >= 0:
            low = found + len(end)
    return low


# After a plain mention, words that reject it: "A is wrong", "B isn't it", "C: incorrect".
_REJECTED = (
    rf"(?:(?:is|are|was|seems|looks|definitely|clearly|also|obviously|{_APOSTROPHE}s)\b\s*+)*+"
    r"(?:not\b|never\b|wrong|incorrect|false|out\b|eliminated|ruled\s+out|a\s+(?:trap|distractor|red\s+herring)|tempting|misleading"
    rf"|(?:is|are|was|can|could|does|do|would|should){_APOSTROPHE}?n{_APOSTROPHE}?t\b|cannot\b"
    # "A no es correcta", "A n'est pas", "A ist falsch", "A是错的", "Aは間違い", "A는 오답"
    rf"|no\s+es\b|não\s+é\b|n{_APOSTROPHE}est\s+pas\b|ist\s+(?:nicht|falsch)\b|non\s+è\b|incorrect[aoe]|errad[ao]|sbagliat[ao]|falsch|неверн|неправильн"
    r"|(?:是|为|為)?\s*+(?:不|错|錯)|[はがも]\s*+(?:間違|正しくな|不正解)|[은는이가]?\s*+(?:오답|틀|아니))"
)
_REJECTED_AFTER_WORD = _lazy(r"(?i:[\s:]*+" + _REJECTED + ")")
_REJECTED_AFTER_LABEL = _lazy(r"(?i:[\s:.)*_`\u2013\u2014-]*+" + _REJECTED + ")")


def _cued(text: str, valid: str, context: _Context) -> list[Mention]:
    """Commitments led by a cue: "the answer is (B)", "Answer: c", "I'd go with C", "So C." """
    found = []
    sentences = _Sentences(text)
    matches = (
        itertools.chain(_CUED.finditer(text), _FOREIGN_CUED.finditer(text))
        if context.foreign
        else _CUED.finditer(text)
    )
    for match in matches:
        letter = match.group("letter")
        if letter.upper() not in valid:
            continue
        cue, start, end = match.start(), match.start("letter"), match.end("letter")
        kind = "lead" if match.re is _FOREIGN_CUED._compiled else _kind(text, cue)
        if kind in ("connective", "hedge", "maybe"):
            # Only a letter that ends its clause: "So C." but not "so (A) is throttled".
            if not _CLAUSE_END.match(text, end):
                continue
        elif not (
            text[start - 1] in _OPENERS
            or match.group("close")
            or _reads_as_letter(letter, text, end)
        ):
            continue
        elif kind == "decision" and _SUBJECT.match(text, end):
            continue  # "picking C would hang" picks nothing
        if _QUESTION.match(text, end):
            continue
        if kind == "maybe" or (
            text[cue : cue + 2].lower() == "be" and _MIGHT_BE.search(text, max(0, cue - 24), cue)
        ):
            # A hedge of its own ("it could be D", "maybe C"): after a commitment, a hedge
            # between two letters, none ("I'd lean towards C, but it could be D"). Not one
            # that a caveat restricts ("Answer: B. Maybe A, if you only need ...").
            if _HEDGE_END.match(text, end) and (
                context.rank(cue, end, hypothetical=False, lead=False) == UNCONDITIONAL
            ):
                found.append(Mention(cue, None))
            continue
        if kind == "lead" and _PAREN_LEAD.match(text, cue):
            # "is (A)" in a sentence that says wrong or tempting names a distractor.
            if text[cue : cue + 2].lower() == "is" and sentences.names_a_wrong_option(cue):
                continue
        elif context.doubted(cue):
            continue
        if kind == "hedge":
            # Only where it opens a sentence: "Both work with A or B." hedges nothing.
            if _SENTENCE_START.search(text, max(0, cue - 8), cue):
                found.append(Mention(cue, None))
            continue
        letter = _joined(letter, text, end, valid)
        if letter == _LISTED:
            continue  # "It's B, so A, C and D are out": the list commits to nothing
        rank = UNCONDITIONAL
        if context.weighs:
            hypothetical = context.hypothetical(cue, start) or (
                text[cue : cue + 2].lower() == "be"
                and context.hypothetical(max(0, cue - 8), cue)
                and _WOULD_BE.search(text, max(0, cue - 8), cue) is not None
            )
            rank = context.rank(
                cue, max(end, match.end()), hypothetical=hypothetical, lead=kind == "lead"
            )
        found.append(Mention(cue, letter, rank))
    return found


def _kind(text: str, cue: int) -> str:
    """A cue's kind, told by matching it again where it starts (as named groups in `_CUED`
    they doubled its time on plain text). A lead and a verb can share a word ("Answer: C", "I'd
    answer C"): the lead is the one that needs no veto ("Answer: D is the only call ...")."""
    if _CONNECTIVE_RE.match(text, cue):
        return "connective"
    if _HEDGE_RE.match(text, cue):
        return "hedge"
    if _MAYBE_RE.match(text, cue):
        return "maybe"
    if _LEAD_RE.match(text, cue):
        return "lead"
    return "decision"


def _after_cues(text: str, valid: str, context: _Context) -> list[Mention]:
    """Commitments whose cue follows the letter: "Option C is correct", "C it is", "(C) wins"."""
    found = []
    for match in _AFTER.finditer(text):
        letter, start = match.group("letter"), match.start()
        if letter.upper() not in valid:
            continue
        if letter.islower() and not (
            start == 0
            or text[start - 1] in "\n" + _OPENERS
            or _NAMED.search(text, max(0, start - 12), start)
        ):
            continue
        # "C it is" commits only at the end of its clause ("C, it is said, ..." does not).
        if (match.group("it") or match.group("closing")) and not _CLAUSE_END.match(
            text, match.end()
        ):
            continue
        if context.doubted(start) or _JOINED_BEFORE.search(text, max(0, start - 12), start + 1):
            continue
        rank = (
            context.rank(
                start,
                match.end(),
                hypothetical=context.hypothetical(start, match.end()),
                lead=False,
            )
            if context.weighs
            else UNCONDITIONAL
        )
        found.append(Mention(start, letter.upper(), rank))
    return found


_BOXED = _lazy(r"\\boxed\{\s*+(?:\\text(?:bf)?\{\s*+)?\(?(?P<letter>[A-Za-z])\)?\s*\}")


def _boxed(text: str, valid: str) -> list[Mention]:
    return [
        Mention(m.start(), m.group("letter").upper())
        for m in _BOXED.finditer(text)
        if m.group("letter").upper() in valid
    ]


def _reads_as_letter(letter: str, text: str, end: int) -> bool:
    """Whether an unwrapped letter followed by `text[end:]` is a choice letter, not a word.

    Lowercase letters are when they end their clause ("answer: c", not "the answer is a
    matter of ..."); "A" and "I" when punctuation or a conjunction follows ("A, since ...",
    not "I think ...")."""
    if letter.islower():
        return bool(_CLAUSE_END.match(text, end))
    if letter not in "AI" or text[end : end + 1] in ",.;:!?)":
        return True
    word = _WORD.match(text, end)
    return not word or word.group(1).lower() in _CONJUNCTIONS


def _joined(letter: str, text: str, end: int, valid: str) -> str | None:
    """The committed letter; None when another letter shares the commitment; `_LISTED` when
    the letters are a list that its clause rejects or describes ("so A, C and D are out",
    "actually A and C are both deprecated"): no commitment at all."""
    joined = False
    for _ in valid:  # a list has no more letters than the choices: bounded, whatever follows
        also = _ALSO.match(text, end)
        if not also or also.group("letter").upper() not in valid:
            break
        other = also.group("letter")
        if not (
            text[also.start("letter") - 1] in _OPENERS or _reads_as_letter(other, text, also.end())
        ):
            break
        joined, end = True, also.end()
    if not joined:
        return letter.upper()
    if _REJECTED_AFTER_WORD.match(text, end) or _SUBJECT.match(text, end):
        return _LISTED
    return None


_LISTED = "listed"


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
        mark = max(
            text.rfind(".", read, end),
            text.rfind("!", read, end),
            text.rfind("?", read, end),
            text.rfind("\n", read, end),
        )
        if mark >= 0:
            self.start, self.negative = mark + 1, False
        if not self.negative:
            self.negative = _NEGATIVE.search(text, max(self.start, read), end) is not None
        self.read = end
        return self.negative


_NEGATIVES = ("wrong", "incorrect", "tempting", "not", "distractor", "trap", "misleading")
_NEGATIVE = _lazy(_cues(*(rf"{w}\b" for w in _NEGATIVES)))

# -- plain commitments -----------------------------------------------------------------------------

# A line that is one letter and its markup: "C", "**C**", "(c)", "> C", "# C", "Option C".
# ("Answer: C" is a lead's.)
_LONE = _lazy(
    r"""^[ \t\r\f\v#>*_`+\-(\[{"'\u201c\u2018<]*+"""
    r"""(?:(?i:option|choice|letter)[ \t]*+[:*_`]*+[ \t]*+[(\[{*_`"'\u201c\u2018]*+)?"""
    r"""(?P<letter>[A-Za-z])[)\]}*_`"'\u201d\u2019.:!>]*+[ \t\r\f\v]*+$""",
    re.MULTILINE,
)
_BLANK = _lazy(r"\s*+")


def _last_line(text: str, valid: str) -> list[Mention]:
    """The reply's last line when it is a letter alone: an explicit commitment, it ends the
    reasoning ("...\n\n**C**"); unless the line before it is another letter's ("A\nB")."""
    start = text.rfind("\n") + 1
    last = _LONE.match(text, start)
    if not last or last.group("letter").upper() not in valid:
        return []
    before = len(
        text[:start].rstrip()
    )  # one copy a reply: walking back over blank lines was a step a character
    previous = _LONE.match(text, text.rfind("\n", 0, before) + 1) if before else None
    if previous and previous.group("letter").upper() != last.group("letter").upper():
        return []
    return [Mention(start, last.group("letter").upper())]


def _lone_lines(text: str, valid: str) -> list[Mention]:
    """Lines that are a letter alone, plain commitments ("C" then the why). Letter lines in a
    run with another letter ("A\nB\nC") are a list, and commit to nothing."""
    found: list[Mention] = []
    run: list[Mention] = []  # the letter lines with nothing but blank lines between them
    previous_end = -1
    for match in _LONE.finditer(text):
        if previous_end < 0 or _BLANK.match(text, previous_end).end() != match.start():
            found += _unless_a_list(run)
            run = []
        letter = match.group("letter").upper()
        run.append(Mention(match.start(), letter if letter in valid else None))
        previous_end = match.end()
    found += _unless_a_list(run)
    return [m for m in found if m.letter]


def _unless_a_list(run: list[Mention]) -> list[Mention]:
    return run if len({m.letter for m in run}) == 1 else []


# A line led by a label: "C) delay()", "**B. task.wait()**", "C — because ...", "C because ...".
# The run of blank space and markup is taken one class at a time, within the line: a run
# over several lines was taken again from each line start in it (quadratic).
_LABEL = _lazy(
    r"^(?:[^\S\n]*+[*_`>#]*+)*+(?:(?i:option|choice)[^\S\n]++)?\(?(?P<letter>[A-Z])[*_`]*+"
    r"(?:[).:][*_`]*+\s++\S|[^\S\n]*+[\u2013\u2014][^\S\n]*+\S|[^\S\n]++-[^\S\n]++\S|,?[^\S\n]++(?i:because|since)\b)",
    re.MULTILINE,
)


def _labels(text: str, valid: str) -> list[Mention]:
    return [
        Mention(m.start(), m.group("letter"))
        for m in _LABEL.finditer(text)
        if m.group("letter") in valid and not _REJECTED_AFTER_LABEL.match(text, m.end("letter"))
    ]


SHORT_REPLY_WORDS = 12  # longer one-line replies mention choices while weighing them
# Led by the letter, so that the engine skips to letters (a lookbehind first is tried everywhere).
_TOKEN = _lazy(f"(?P<letter>[A-Za-z])(?<=(?:{_ALONE_BEFORE}).){_ALONE_AFTER}")
# The text between two letters joined into one hedge or list: "B or C", "B/C", "A and B".
_JOIN = _lazy(rf"{_CLOSE_RUN}\s*+{_JOINER}\s*+{_OPEN_RUN}")


def _short_reply(text: str, valid: str, context: _Context) -> list[Mention]:
    """The letters of a short one-line reply that it commits to: "I think it's C.", "Option C",
    "C is correct", "I'd go with c". Letters it joins ("either B or C"), rejects ("not B", "A is
    wrong"), hedges ("maybe B", "B?"), describes ("C is deprecated") or takes back ("C... no,
    B") are none."""
    if "\n" in text or len(text.split(maxsplit=SHORT_REPLY_WORDS)) > SHORT_REPLY_WORDS:
        return []
    groups: list[list[re.Match]] = []  # letters joined by "or", "and", "/", ...
    for token in _TOKEN.finditer(text):
        letter, start, end = token.group("letter"), token.start(), token.end()
        wrapped = (start > 0 and text[start - 1] in _OPENERS) or text[end : end + 1] in _CLOSERS
        if not (wrapped or _reads_as_letter(letter, text, end)) or text[start - 1 : start] == "~":
            continue  # a word, or struck through ("~~A~~ B")
        join = _JOIN.match(text, groups[-1][-1].end()) if groups else None
        if join and join.end() == start:
            groups[-1].append(token)
        else:
            groups.append([token])
    found: list[Mention] = []
    previous_end = 0
    for group in groups:
        start, end = group[0].start(), group[-1].end()
        if _RETRACTION.search(text, previous_end, start):
            found = []
        previous_end = end
        letters = {t.group("letter").upper() for t in group}
        if (
            len(letters) > 1
            or context.doubted(start)
            or _SUBJECT.match(text, end)
            or _REJECTED_AFTER_WORD.match(text, end)
            or _QUESTION.match(text, end)
        ):
            continue
        if context.rank(start, end, hypothetical=False, lead=True) == CONDITIONAL:
            continue  # "If it were a RemoteFunction, B."
        if (letter := letters.pop()) in valid:
            found.append(Mention(start, letter))
    return found


# What takes back the letters before it: "C... no, B", "A, I mean B", "D, actually B".
_RETRACTION = _lazy(
    _cues(
        *(
            rf"{w}\b"
            for w in (
                "no",
                "wait",
                "actually",
                r"scratch\s+that",
                r"i\s+mean",
                "correction",
                "sorry",
            )
        )
    )
)


# -- the choice's text instead of its letter -------------------------------------------------------


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
    # As whole words: "sort" is not in "sorts".
    tail = f" {_normalise(_NEGATION.split(tail, maxsplit=1)[0])} "
    words = [f" {_normalise(choice)} " for choice in choices]
    hits = [i for i, w in enumerate(words) if w.strip() and w in tail]
    # A longer choice can contain a shorter one ("Heartbeat" in "RunService.Heartbeat").
    hits = [i for i in hits if not any(j != i and words[i] in words[j] for j in hits)]
    return LETTERS[hits[0]] if len(hits) == 1 else None


# A reply that says no choice fits ("None of the listed choices sorts in place", "none of
# these"; not "none of the others", which leaves one).
_NONE_FIT = _lazy(
    _cues(
        r"none\s++of\s++(?:the\s++)?(?:(?:listed|given|provided|offered|available|above)\s++)?"
        r"(?:options|choices|answers|alternatives|above|these|those|them)\b"
    )
)


_NEGATIONS = ("not", "rather than", "instead of", "but not")
_NEGATION = _lazy(_cues(*(rf"{w}\b" for w in _NEGATIONS)))


def _normalise(text: str) -> str:
    return " ".join(text.lower().translate(_PUNCTUATION_TO_SPACE).split())


_PUNCTUATION_TO_SPACE = str.maketrans(dict.fromkeys("*_`\"'.,;:!?()", " "))
