"""`extract_letter`: the letter a model finally commits to in its reply to a Roblox
multiple choice question, or None when it commits to none, to several, or to a letter
that is not one of the choices.

The table is replies as models really write them. A reasonable reply that the function
misreads is kept in the table as a strict xfail with the reason, not bent to fit."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from evals.grading.multiple_choice import extract_letter

ROOT = Path(__file__).resolve().parents[1]
# shared/ sits beside the repository (on a developer's machine and in CI alike).
REFERENCE_REPLIES = Path(
    os.environ.get("ROBLOX_EVALS_MC_REFERENCE", ROOT.parent / "shared" / "reference" / "mc-replies-mmlu-pro.jsonl")
)

# "Which call yields for the given time without the legacy 30 Hz throttle?"
WAIT = ["wait()", "task.wait()", "delay()", "spawn()"]
# "In a LocalScript, which call sends a message to the server through a RemoteEvent?"
REMOTE = ["`remote:FireClient(player, ...)`", "`remote:InvokeServer(...)`", "`remote:Fire(...)`", "`remote:FireServer(...)`"]
# "Where should a ModuleScript that only the server may read be stored?"
STORAGE = ["ReplicatedStorage", "ServerStorage", "StarterPlayerScripts", "Workspace"]
# "Which function returns "Instance" when called on a Part?"  ("type" is inside "typeof")
TYPEOF = ["type", "typeof", "getmetatable", "rawequal"]
# "Which event fires every frame after the physics simulation?"  ("Heartbeat" is inside A)
FRAME = ["RunService.Heartbeat", "RunService.PreRender", "RunService.Stepped", "Heartbeat"]


def case(id: str, reply: str, choices: list[str], expected: str | None, *, xfail: str | None = None, raises=None):
    marks = [pytest.mark.xfail(strict=True, reason=xfail, raises=raises)] if xfail else []
    return pytest.param(reply, choices, expected, id=id, marks=marks)


CASES = [
    # -- one letter, bare or wrapped ---------------------------------------------------------
    case("bold-letter", "**C**", WAIT, "C"),
    case("bare-letter", "D", REMOTE, "D"),
    case("bare-lowercase", "d", REMOTE, "D"),
    case("bare-paren", "(D)", REMOTE, "D"),
    case("bare-brackets", "[B]", WAIT, "B"),
    case("bare-letter-dot", "B.", WAIT, "B"),
    case("lowercase-subpart-style-alone", "(b)", WAIT, "B"),
    case("answer-colon-lowercase", "Answer: c", WAIT, "C"),
    case("answer-colon-uppercase-label", "ANSWER: (B)", WAIT, "B"),
    case("label-with-choice-text", "C) delay()", WAIT, "C"),
    case("label-dot-choice-text-then-explanation", "D. `remote:FireServer(...)`\n\nFireServer is the client-to-server call.", REMOTE, "D"),
    case("answer-is-paren", "The answer is (B).", WAIT, "B"),
    case("answer-is-lowercase-paren", "The answer is (c).", WAIT, "C"),
    case("answer-would-be", "The answer would be B.", WAIT, "B"),
    case("boxed", "\\boxed{D}", WAIT, "D"),
    case("boxed-text-in-latex", "The final answer is $\\boxed{\\text{B}}$.", WAIT, "B"),
    case("bold-letter-and-choice-text", "**B. task.wait()**", WAIT, "B"),
    case("answer-is-colon-bold-with-text", "So the answer is: **B. task.wait()**", WAIT, "B"),
    case("bold-whole-answer-line", "**Answer: C**", WAIT, "C"),
    case("bold-label-with-colon-inside", "**Answer:** C", WAIT, "C"),
    case("bold-letter-after-label", "Final answer: **B**", WAIT, "B"),
    case("final-answer", "Final answer: D", WAIT, "D"),
    case("correct-option-is-with-text", "The correct option is D: `remote:FireServer(...)`.", REMOTE, "D"),
    case("correct-option-colon-newline", "The correct option is:\n\nB", WAIT, "B"),
    case("answer-is-newline", "The answer is\n\nC", WAIT, "C"),
    case("correct-one-is", "Let me compare them.\n\nThe correct one is B.", WAIT, "B"),
    case(
        "answer-then-explanation",
        "Answer: B.\n\nExplanation: task.wait() resumes on the next Heartbeat after the time has passed; "
        "wait(), delay() and spawn() are the deprecated, throttled globals.",
        WAIT,
        "B",
    ),
    case(
        "answer-then-why-not-the-others",
        "Answer: C\n\nWhy not the others:\n(A) is throttled\n(B) yields the thread\n(D) is deprecated",
        WAIT,
        "C",
    ),
    # -- letters in the reasoning before the final one ------------------------------------------
    case(
        "analysis-of-each-option-then-answer",
        "Let's analyze:\n\n- **A. wait()**: deprecated, throttled to about 30 Hz.\n- **B. task.wait()**: accurate, "
        "resumes on Heartbeat.\n- **C. delay()**: deprecated.\n- **D. spawn()**: deprecated.\n\nThe answer is B.",
        WAIT,
        "B",
    ),
    case(
        "options-listed-then-answer",
        "A. wait()\nB. task.wait()\nC. delay()\nD. spawn()\n\nAnswer: B",
        WAIT,
        "B",
    ),
    case("others-named-then-answer", "A and B are wrong, C is deprecated, so the answer is D.", WAIT, "D"),
    case("choosing-between-two-then-one", "So between (B) and (C), I choose (C). Answer: C", WAIT, "C"),
    case("rejected-letter-after-answer", "The answer is B, not D.", WAIT, "B"),
    case(
        "lowercase-subparts-are-not-answers",
        "Two conditions matter here: (a) the script runs on the client and (b) the message goes to the server. "
        "So the answer is D.",
        REMOTE,
        "D",
    ),
    case(
        "article-a-at-the-start",
        "A RemoteEvent sent from a LocalScript must use FireServer; FireClient is the server's call.\n\nAnswer: D",
        REMOTE,
        "D",
    ),
    case("article-a-after-answer-is", "The answer is a matter of replication, but Answer: B", WAIT, "B"),
    case("pronoun-i", "I think the answer is D.", REMOTE, "D"),
    case("letter-a-as-answer", "The answer is A.", STORAGE, "A"),
    case("letter-a-at-end", "Answer: A", STORAGE, "A"),
    # -- self-corrections: the last commitment wins -----------------------------------------------
    case(
        "self-correction-same-line",
        "The answer is (B)... wait, no. InvokeServer belongs to RemoteFunction. The correct answer is (D).",
        REMOTE,
        "D",
    ),
    case("self-correction-reconsider", "Answer: B\n\nActually, let me reconsider. Answer: D", REMOTE, "D"),
    case("self-correction-final-answer", "Answer: B\nFinal answer: C", WAIT, "C"),
    case("boxed-twice", "\\boxed{B}\n\nActually no, \\boxed{D}", WAIT, "D"),
    # -- the choice's text instead of its letter ---------------------------------------------------
    case("quoted-choice-text", "The correct method is `task.wait()`.", WAIT, "B"),
    case("quoted-choice-after-answer-colon", "Answer: ServerStorage", STORAGE, "B"),
    case("quoted-choice-bare", "ReplicatedStorage", STORAGE, "A"),
    case("quoted-longer-choice-contains-shorter", "RunService.Heartbeat", FRAME, "A"),
    case("quoted-shorter-choice-alone", "Heartbeat", FRAME, "D"),
    case("quoted-typeof", "Use typeof.", TYPEOF, "B"),
    case("quoted-type", "type", TYPEOF, "A"),
    # -- commits to two letters: never guessed ----------------------------------------------------
    case("two-letters-and", "B and D", WAIT, None),
    case("answer-is-two-letters", "The answer is B and D.", WAIT, None),
    case("answer-two-letters-comma", "Answer: B, D", WAIT, None),
    case("answer-two-letters-or", "Answer: (B) or (D)", WAIT, None),
    case("correct-answers-are-two", "The correct answers are B and D.", WAIT, None),
    case("three-letters", "The answer is A, B, or C", WAIT, None),
    # -- no answer, empty, truncated ----------------------------------------------------------------
    case("no-answer", "I'm not sure which of these is right; it depends on the game.", WAIT, None),
    case("empty", "", WAIT, None),
    case("whitespace-only", "  \n\t ", WAIT, None),
    case("truncated-after-answer-is", "Let me think. (A) FireClient goes to a client. (B) InvokeServer is RemoteFunction. So the answer is", REMOTE, None),
    case("truncated-mid-analysis", "Let's analyze each option in turn. Option A uses wait(), which is throttled. Option B", WAIT, None),
    case("truncated-label-only", "Answer:", WAIT, None),
    case("number-not-letter", "Answer: 2", WAIT, None),
    # -- letters outside A-D for four choices ------------------------------------------------------
    case("out-of-range-e", "The answer is E.", WAIT, None),
    case("out-of-range-f", "Answer: F", WAIT, None),
    case("out-of-range-bare", "E", WAIT, None),
    case("out-of-range-boxed", "The answer is \\boxed{E}", WAIT, None),
    case("out-of-range-i", "The answer is I.", WAIT, None),
    # -- replies once misread, kept as regression cases -----------------------------------------------
    case(
        "no-space-after-colon",
        "Answer:B",
        WAIT,
        "B",
    ),
    case(
        "markdown-header-label",
        "### Answer\nC",
        WAIT,
        "C",
    ),
    case(
        "bold-label-colon-outside",
        "**Answer**: C",
        WAIT,
        "C",
    ),
    case(
        "letter-a-followed-by-comma",
        "The answer is A, since FireClient is the only call here that goes from the server to a client.",
        REMOTE,
        "A",
    ),
    case(
        "answer-option-letter",
        "Answer: Option B",
        WAIT,
        "B",
    ),
    case(
        "option-c-is-correct",
        "Option C is correct.",
        WAIT,
        "C",
    ),
    case(
        "wrong-option-named-after-answer",
        "Answer: **B**\n\nThe tempting wrong option is (A) wait(), which is throttled to about 30 Hz.",
        WAIT,
        "B",
    ),
    case(
        "self-correction-with-adverb",
        "Answer: D\n\nWait, I misread the question: the answer is actually B.",
        WAIT,
        "B",
    ),
    case(
        "hedge-with-slash",
        "Answer: B/D",
        WAIT,
        None,
    ),
    case(
        "quoted-shorter-choice-named-as-answer",
        "The answer is `type`, not `typeof`.",
        TYPEOF,
        "A",
    ),
]


@pytest.mark.parametrize("reply, choices, expected", CASES)
def test_extract_letter(reply, choices, expected):
    assert extract_letter(reply, choices) == expected


def test_table_is_varied():
    """The table covers every letter as an answer, and None, with at least 45 replies."""
    assert len(CASES) >= 45
    assert {c.values[2] for c in CASES} >= {"A", "B", "C", "D", None}


def test_valid_range_follows_the_number_of_choices():
    """E is out of range for four choices and in range for five."""
    assert extract_letter("Answer: E", WAIT) is None
    assert extract_letter("Answer: E", [*WAIT, "coroutine.yield()"]) == "E"


def test_real_replies_from_mmlu_pro():
    """39 real GPT-4o and DeepSeek replies to 10-option questions, labelled by hand."""
    if not REFERENCE_REPLIES.is_file():
        pytest.skip(f"{REFERENCE_REPLIES} is not there (shared/ sits beside the repository; set ROBLOX_EVALS_MC_REFERENCE)")
    records = [json.loads(line) for line in REFERENCE_REPLIES.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert records, f"{REFERENCE_REPLIES} holds no records"
    wrong = [
        f"{r['id']}: expected {r['expected']!r}, got {got!r} ({', '.join(r.get('tags', []))})"
        for r in records
        if (got := extract_letter(r["response"], r["options"])) != r["expected"]
    ]
    assert not wrong, f"{len(wrong)} of {len(records)} real replies misread:\n" + "\n".join(wrong)
