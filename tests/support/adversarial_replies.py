"""Replies built to make a reply parser slow: repeated and unclosed fences, thousands of
"Answer:" leads, runs of parentheses, markup, whitespace and newlines, lines with no end.

Each generator builds a reply of about `size` characters (all ASCII, so bytes) by repeating
a unit. The parsers must be linear in the reply's length on every one of them: `bench/parse.py`
times them at several sizes, `tests/{unit,e2e}/test_parsing_linear.py` runs them at 1 MB under a hang
guard. `python -m tests.support.adversarial_replies --serve` is that guard's child process: it reads
"NAME SIZE" lines and answers each with a JSON line of what the four parsers made of it
("spin SECONDS" only spins, burning CPU as a hung parser does, for the guard's own test)."""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from typing import Callable

from evals.grading.judges import parse_verdict
from evals.grading.luau_code import extract_code
from evals.grading.multiple_choice import extract_letter
from evals.reasoning import split

CHOICES = ["wait()", "task.wait()", "delay()", "spawn()"]
ENTRY_POINT = "twoSum"


def repeat(unit: str, size: int, head: str = "", tail: str = "") -> str:
    """`head`, whole copies of `unit` up to about `size` characters, `tail`."""
    return head + unit * max(1, (size - len(head) - len(tail)) // len(unit)) + tail


@dataclass(frozen=True)
class Reply:
    name: str
    build: Callable[[int], str]
    # What the parsers make of it, at any size: the letter, the verdict, whether code is found,
    # whether a reasoning block is (`evals.reasoning`).
    letter: str | None = None
    verdict: bool | None = None
    code: bool = False
    reasoning: bool = False


def _unit(name: str, unit: str, head: str = "", tail: str = "", **expected) -> Reply:
    return Reply(name, lambda size: repeat(unit, size, head, tail), **expected)


REPLIES = [
    # -- code fences ------------------------------------------------------------------------------
    _unit("unclosed-fences", "```lua\n"),  # the reply of the issue
    _unit("unclosed-fences-then-close", "```lua\n", tail="```", code=True),
    _unit("fences-on-one-line", "```lua"),
    _unit("backtick-lines", "````\n"),
    _unit("indented-fence-lines", "  ```  luau  \n"),
    _unit("closed-blocks", "```lua\nlocal x = 1\n```\n", code=True),
    _unit(
        "defining-blocks",
        "```luau\nlocal Solution = {}\nfunction Solution.twoSum() end\nreturn Solution\n```\n",
        code=True,
    ),
    _unit(
        "crlf-fences", "```lua\r\nlocal x = 1\r\n```\r\n", code=True
    ),  # Windows line endings close their blocks
    _unit("return-lines", "return\n", head="function\n", code=True),
    _unit(
        "function-then-spaces",
        " ",
        head="local function twoSum",
        tail="x\nreturn Solution",
        code=True,
    ),
    _unit("name-then-spaces", " ", head="```lua\ntwoSum", tail="= nil\n```", code=True),
    # -- answer leads and letters -----------------------------------------------------------------
    _unit("answer-leads", "Answer: B\n", letter="B"),
    _unit("answer-leads-no-letter", "Answer:"),
    _unit("final-answer-is", "the final answer is ", letter=None),
    _unit("is-paren-one-sentence", "it is (B) and ", letter="B"),
    _unit("which-is-paren", "which is (C) ", letter="C"),
    _unit("letters", "A B C D "),
    _unit("parenthesised-letters", "(A) (B) (C) (D) ", letter="A"),
    _unit("labels", "(A) x\n", letter="A"),
    _unit("option-is-correct", "Option B is correct. ", letter="B"),
    _unit("fillers", "option clearly ", head="Answer: "),
    _unit("parens-after-lead", "(", head="Answer: ", tail="1"),
    _unit("markup-after-lead", "*_`[(", head="Answer: ", tail="1"),
    _unit("textbf-after-lead", "\\textbf{", head="Answer: "),
    _unit("spaces-after-lead", " ", head="The answer is", tail=".", letter=None),
    _unit("boxed-spaces", " ", head="\\boxed{", tail="x"),
    _unit("boxed", "\\boxed{D} ", letter="D"),
    _unit("also-letters", ", (B", head="Answer: B", letter=None),
    # -- the cues of the letter scorer: verbs, closing words, cues after the letter, lone lines ------
    _unit("go-with-letters", "I'd go with B ", letter="B"),
    _unit("so-letters", "so C. ", letter="C"),
    _unit("it-is-after-letters", "C it is. ", letter="C"),
    _unit("or-maybe-letters", "It's B. Or maybe C. "),
    _unit("answer-tags", "<answer>D</answer>", letter="D"),
    _unit("arrows", "\u2192 ", tail="\u2192 B", letter="B"),
    _unit("doubt-words", "not if maybe ", tail="\nAnswer: B", letter="B"),
    _unit("lone-letter-lines", "B\n", letter="B"),
    _unit("alternating-letter-lines", "A\nB\n"),
    _unit("dash-labels", "C \u2014 x\n", letter="C"),
    _unit("subject-letters", "picking C would ", letter=None),
    _unit("listed-letters", "A, B, C, D, ", head="It's B, so ", tail="are out."),
    _unit("corrections", "A. Actually, no, I mean, scratch that: ", tail="B.", letter="B"),
    _unit("hedges-of-its-own", "it could be C, though maybe ", tail="D."),
    _unit("none-fit", "none of the above options sorts ", head="The answer is "),
    # -- conditions and caveats: each commitment reads its sentence before it and its clause after ----
    _unit(
        "condition-words", "if you unless otherwise in that case ", tail="\nAnswer: B", letter="B"
    ),
    _unit("conditional-commitments", "If you need it, A would be correct. ", letter=None),
    _unit("conditions-in-one-sentence", "if you need A would be correct ", letter=None),
    _unit("caveats-after", "B is correct if you ", letter="B"),
    _unit("hypotheticals", "the answer would be B ", letter="B"),
    # -- other languages and full-width forms ------------------------------------------------------
    _unit("foreign-leads", "La respuesta correcta es la ", tail="B.", letter="B"),
    _unit("cjk-leads", "\u7b54\u6848\u662f", tail="B", letter="B"),  # 答案是
    _unit("full-width-answers", "\u7b54\u6848\uff1a\uff22\u3002", letter="B"),  # 答案：Ｂ。
    _unit(
        "articles", "es la ", head="La respuesta ", tail="B", letter=None
    ),  # "la B" with no lead before it
    _unit("foreign-commitments", "La respuesta correcta es la B. ", letter="B"),
    _unit(
        "look-alike-letters", "\u0412 \u0441 \u0628 (\u0391) ", head="Ответ: \u0412\n", letter="B"
    ),
    # -- markdown, whitespace, long lines ---------------------------------------------------------
    _unit("nested-quotes-and-bold", "> > > > **_`# x`_** ", tail="\n"),
    _unit("star-lines", "*\n", head="x", tail="x"),
    _unit("markup-lines", " *_`\n", head="x", tail="x"),
    _unit("newlines", "\n", head="x", tail="x"),
    _unit("spaces", " ", head="x", tail="x"),
    _unit("long-word", "a"),
    _unit("long-line-of-words", "the answer of it "),
    # -- verdicts ---------------------------------------------------------------------------------
    _unit("verdict-lines", "VERDICT: CORRECT\n", letter=None, verdict=True),
    _unit("disagreeing-verdicts", "VERDICT: CORRECT\nVERDICT: INCORRECT\n"),
    _unit(
        "verdict-spaces", " ", head="VERDICT:", tail="CORRECT x", verdict=True
    ),  # a sentence after it
    _unit("verdict-stars", "*", head="VERDICT: CORRECT", tail="x", verdict=True),
    _unit(
        "lead-verdict-then-reasoning",
        "The candidate names FireServer, it was actually fine. ",
        head="VERDICT: CORRECT\n",
        verdict=True,
    ),
    _unit("lead-verdict-then-retractions", "Hmm. ", head="VERDICT: CORRECT\n"),
    _unit(
        "verdict-then-long-clause", " it names FireServer", head="VERDICT: CORRECT", verdict=True
    ),
    _unit("unclosed-think", "VERDICT: CORRECT\n", head="<think>", reasoning=True),
    _unit(
        "think-blocks",
        "<think>VERDICT: INCORRECT</think>",
        tail="VERDICT: CORRECT",
        verdict=True,
        reasoning=True,
    ),
    _unit("label-lines", "Verdict:\n"),
    _unit("heading-then-word-lines", "## Verdict\nCORRECT\n", verdict=True),
    _unit("verdict-is-lines", "The verdict is INCORRECT.\n", verdict=False),
    _unit("fenced-json-verdicts", '```json\n{"verdict": "CORRECT"}\n```\n', verdict=True),
    _unit("json-nested-brackets", "[", head='{"verdict": "CORRECT", "x": ', tail="}", verdict=True),
    _unit(
        "json-verdict-after-long-field",
        "x",
        head='{"reasoning": "',
        tail='", "verdict": "INCORRECT"}',
        verdict=False,
    ),
    # verdicts as judges state them their own way (issue 29): table rows, fields after the
    # verdict, negations, caveats, other languages, Grade, JSON booleans
    _unit("verdict-table-rows", "| Verdict | CORRECT |\n", verdict=True),
    _unit("table-bars", "|", head="| Verdict ", tail=" CORRECT |", verdict=True),
    _unit("fields-after-verdict", "Confidence: high\n", head="x\nVERDICT: CORRECT\n", verdict=True),
    _unit("field-names-no-colon", "Confidence level high ", head="x\nVERDICT: CORRECT\n"),
    _unit("negations", "NOT ", head="VERDICT: ", tail="CORRECT"),
    _unit("negated-faults", " nothing wrong", head="VERDICT: CORRECT", verdict=True),
    _unit("dangling-negations", " not", head="VERDICT: CORRECT"),
    _unit("long-caveat", "it could mention x ", head="VERDICT: CORRECT. However, ", verdict=True),
    _unit("long-fault-caveat", "it could mention x ", head="VERDICT: CORRECT. But ", tail="no"),
    _unit("foreign-verdict-lines", "Urteil: FALSCH\n", verdict=False),
    _unit("grade-lines", "Grade: PASS\n", verdict=True),
    _unit(
        "json-boolean-after-long-field",
        "x",
        head='{"reasoning": "',
        tail='", "is_correct": false}',
        verdict=False,
    ),
    _unit(
        "json-boolean-fields",
        '"correct": true, ',
        head="{",
        tail='"is_correct": true}',
        verdict=True,
    ),
    # -- reasoning blocks ---------------------------------------------------------------------------
    _unit("think-openings", "<think>", reasoning=True),  # one block, never closed
    _unit(
        "think-closings", "</think>"
    ),  # an empty block a template opened, then stray closings: no reasoning
    _unit("reasoning-blocks", "<think>x</think>\n", reasoning=True),
    _unit("mixed-blocks", "<thinking>x</thinking> <reasoning>y</reasoning> ", reasoning=True),
    _unit("text-then-closings", "x</think>", reasoning=True),  # the answer: every later "x</think>"
    _unit("openings-then-closing", "<think>", tail="</think>", reasoning=True),
    _unit(
        "unfinished-openings", "<think", tail="</think>", reasoning=True
    ),  # no opening tag: a template opened the block
    _unit("spaces-then-opening", " ", tail="<thinking>x", reasoning=True),
    # -- a plausible reply, many times over ---------------------------------------------------------
    _unit(
        "long-reasoning",
        "Let's analyze:\n\n- **A. wait()**: deprecated.\n- **B. "
        "task.wait()**: accurate.\n\n```lua\ntask.wait(1)\n```\n\n",
        tail="The answer is B.\nVERDICT: CORRECT",
        letter="B",
        verdict=True,
        code=True,
    ),
]
BY_NAME = {reply.name: reply for reply in REPLIES}

PARSERS: dict[str, Callable[[str], object]] = {
    "code": lambda reply: extract_code(reply, ENTRY_POINT),
    "letter": lambda reply: extract_letter(reply, CHOICES),
    "verdict": parse_verdict,
    "reasoning": split,
}


def parse_all(reply: str) -> dict[str, object]:
    """What each parser makes of `reply`: the letter, the verdict, whether code was found,
    whether a reasoning block was."""
    return {
        "letter": PARSERS["letter"](reply),
        "verdict": PARSERS["verdict"](reply),
        "code": PARSERS["code"](reply) is not None,
        "reasoning": PARSERS["reasoning"](reply)[0] is not None,
    }


def serve() -> None:
    for line in sys.stdin:
        name, size = line.split()
        if (
            name == "spin"
        ):  # a parse that hangs (spending CPU, as a quadratic one does), for the guard's own test
            end = time.monotonic() + float(size)
            while time.monotonic() < end:
                pass
            print("{}", flush=True)
            continue
        print(json.dumps(parse_all(BY_NAME[name].build(int(size)))), flush=True)


if __name__ == "__main__" and sys.argv[1:] == ["--serve"]:
    serve()
