"""Multiple-choice replies as models really write them, with the letter a careful reader takes
from each (`CASES`), every letter of a 26-choice question in several shapes (`SHAPES`), and
`graded`, the letter the grader reads. `tests/unit/test_answer_extraction.py` holds
`extract_letter` to them; `bench/mc_agreement.py` prints the agreement."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evals.grading.multiple_choice import extract_letter
from evals.reasoning import split
from tests.support import ROOT

# shared/ sits beside the repository (on a developer's machine and in CI alike).
REFERENCE_REPLIES = Path(
    os.environ.get(
        "ROBLOX_EVALS_MC_REFERENCE",
        ROOT.parent / "shared" / "reference" / "mc-replies-mmlu-pro.jsonl",
    )
)


# "Which call yields for the given time without the legacy 30 Hz throttle?"
WAIT = ["wait()", "task.wait()", "delay()", "spawn()"]


# "In a LocalScript, which call sends a message to the server through a RemoteEvent?"
REMOTE = [
    "`remote:FireClient(player, ...)`",
    "`remote:InvokeServer(...)`",
    "`remote:Fire(...)`",
    "`remote:FireServer(...)`",
]


# "Where should a ModuleScript that only the server may read be stored?"
STORAGE = ["ReplicatedStorage", "ServerStorage", "StarterPlayerScripts", "Workspace"]


# "Which function returns "Instance" when called on a Part?"  ("type" is inside "typeof")
TYPEOF = ["type", "typeof", "getmetatable", "rawequal"]


# "Which event fires every frame after the physics simulation?"  ("Heartbeat" is inside A)
FRAME = ["RunService.Heartbeat", "RunService.PreRender", "RunService.Stepped", "Heartbeat"]


# "Which table function reorders an array in place?"  ("sort" is inside "sorts")
SORT = ["sort", "insert", "concat", "unpack"]


# The same, with a choice that says no other choice fits.
SORT_OR_NONE = ["sort", "insert", "concat", "None of the above"]


# Reasoning before a final line in another language (the same for every choice list).
ES = "Analicemos cada opción: A está limitada a unos 30 Hz; C y D están obsoletas.\n\n"


ZH = "逐一分析：A 被限制在 30 Hz 左右，C 和 D 已被弃用。\n\n"


JA = "各選択肢を検討します。A は約 30 Hz に制限され、C と D は非推奨です。\n\n"


DE = "Prüfen wir jede Option: A ist auf etwa 30 Hz gedrosselt; C und D sind veraltet.\n\n"


FR = "Examinons chaque option : A est limitée à environ 30 Hz ; C et D sont obsolètes.\n\n"


EN = "Let me weigh each option: A is throttled to about 30 Hz; C and D are deprecated.\n\n"


# Ten choices (A-J), as MMLU-Pro has: "I" is a choice letter as well as the pronoun.
TEN = [
    "Humanoid",
    "Animator",
    "Tool",
    "Backpack",
    "Camera",
    "Team",
    "Sound",
    "Beam",
    "Attachment",
    "Trail",
]


def case(
    id: str,
    reply: str,
    choices: list[str],
    expected: str | None,
    *,
    xfail: str | None = None,
    raises=None,
):
    marks = [pytest.mark.xfail(strict=True, reason=xfail, raises=raises)] if xfail else []
    return pytest.param(reply, choices, expected, id=id, marks=marks)


CASES = [
    # -- one letter, bare or wrapped ---------------------------------------------------------------
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
    case(
        "label-dot-choice-text-then-explanation",
        "D. `remote:FireServer(...)`\n\nFireServer is the client-to-server call.",
        REMOTE,
        "D",
    ),
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
    case(
        "correct-option-is-with-text",
        "The correct option is D: `remote:FireServer(...)`.",
        REMOTE,
        "D",
    ),
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
    case("bare-backticks", "`B`", WAIT, "B"),
    case("bare-italics", "*B*", WAIT, "B"),
    case("bare-underscores", "_B_", WAIT, "B"),
    case("bare-header", "# B", WAIT, "B"),
    case("bare-blockquote", "> B", WAIT, "B"),
    case("bare-bold-paren", "**(B)**", WAIT, "B"),
    case("bare-close-paren", "B)", WAIT, "B"),
    case("bare-quotes", "'B'", WAIT, "B"),
    case("bare-exclamation", "B!", WAIT, "B"),
    case("bare-fenced", "```\nB\n```", WAIT, "B"),
    # -- a letter alone on the first line, then the why --------------------------------------------
    case(
        "first-line-letter-then-why",
        "B\n\ntask.wait() resumes on the next Heartbeat after the time passes; wait() is throttled.",
        WAIT,
        "B",
    ),
    case(
        "first-line-bold-then-others-named",
        "**B**\n\nExplanation: A is throttled to about 30 Hz; C and D are deprecated globals.",
        WAIT,
        "B",
    ),
    case("first-line-paren-then-why", "(D)\nFireServer is the client-to-server call.", REMOTE, "D"),
    case("first-line-letter-dot-then-because", "B.\nBecause task.wait() is accurate.", WAIT, "B"),
    case(
        "first-line-bold-then-all-others-discussed",
        "**B**\n\nA is throttled, C and D are deprecated, so B is the only accurate one.",
        WAIT,
        "B",
    ),
    # -- a letter alone on the last line, after the reasoning --------------------------------------
    case(
        "last-line-bold-after-reasoning",
        "wait() is throttled; delay() and spawn() are deprecated. task.wait() is the modern scheduler.\n\n**B**",
        WAIT,
        "B",
    ),
    case(
        "last-line-after-per-option-notes",
        "Let me weigh them.\n- A: throttled\n- B: accurate\n- C: deprecated\n- D: deprecated\n\nB",
        WAIT,
        "B",
    ),
    case("last-line-header", "ServerStorage never replicates to clients.\n\n### B", STORAGE, "B"),
    case(
        "last-line-blockquote", "FireServer goes from a client to the server.\n\n> D", REMOTE, "D"
    ),
    case("last-line-after-a-bullet", "Let me think.\n\nAnswer:\n- B", WAIT, "B"),
    case(
        "last-line-overrides-earlier-answer",
        "The answer is A... hmm, wait() is throttled, so no.\n\n**B**",
        WAIT,
        "B",
    ),
    # -- answer leads of every form: words, tags, JSON, arrows, dashes -----------------------------
    case("answer-dash", "Answer - B", WAIT, "B"),
    case("answer-em-dash", "Answer — B", WAIT, "B"),
    case("answer-fat-arrow", "ANSWER => B", WAIT, "B"),
    case("answer-arrow", "Answer → B", WAIT, "B"),
    case("answer-emoji-arrow", "Answer ➡️ B", WAIT, "B"),
    case("answer-equals", "answer=B", WAIT, "B"),
    case("answer-tags", "<answer>B</answer>", WAIT, "B"),
    case("answer-tags-on-lines", "<answer>\nB\n</answer>", WAIT, "B"),
    case("answer-in-brackets", "[ANSWER] B", WAIT, "B"),
    case("answer-json", '{"answer": "B"}', WAIT, "B"),
    case(
        "answer-json-with-reason",
        '{"answer": "D", "reason": "FireServer goes from client to server"}',
        REMOTE,
        "D",
    ),
    case("choice-json", '{"choice":"B"}', WAIT, "B"),
    case("answer-colon-code-span", "answer: `B`", WAIT, "B"),
    case("answer-colon-brackets", "Answer: [B]", WAIT, "B"),
    case("answer-quoted-letter", "The answer is 'B'.", WAIT, "B"),
    case("answer-curly-quoted-letter", "The answer is “B”.", WAIT, "B"),
    case("answer-on-next-line", "Answer\nB", WAIT, "B"),
    case("answer-is-list-item", "The answer is:\n\n* B", WAIT, "B"),
    case("answer-abbreviated", "Ans: B", WAIT, "B"),
    case("answer-space-only", "Let me think about this carefully.\n\nFinal answer B", WAIT, "B"),
    case("answer-paren-after-space", "Final answer (B)", WAIT, "B"),
    case("answer-must-be", "wait() is throttled.\n\nTherefore the answer must be B.", WAIT, "B"),
    case("choice-colon", "Choice: B", WAIT, "B"),
    case("pick-colon", "Pick: B", WAIT, "B"),
    case("my-pick-colon", "My pick: B", WAIT, "B"),
    case("my-choice-is", "My choice is B.", WAIT, "B"),
    case("my-answer-would-be", "My answer would be B.", WAIT, "B"),
    case("my-final-answer-bold", "My final answer: **B**", WAIT, "B"),
    case("best-guess-colon", "Best guess: B", WAIT, "B"),
    case("the-letter-is", "The letter is B.", WAIT, "B"),
    case("the-right-call-is", "The right call is B.", WAIT, "B"),
    case("correct-response-is", "The correct response is B.", WAIT, "B"),
    case("correct-letter-colon", "Correct letter: B", WAIT, "B"),
    case("correct-colon", "Correct: B", WAIT, "B"),
    case("solution-colon", "Solution: B", WAIT, "B"),
    case("correct-option-arrow", "Correct option → B", WAIT, "B"),
    case("best-option-here-is", "The best option here is B.", WAIT, "B"),
    case("hence-correct-option", "Hence the correct option is B", WAIT, "B"),
    case("answer-choice-colon", "Answer choice: B", WAIT, "B"),
    case("answer-ascii-arrow", "Answer -> B", WAIT, "B"),
    case("answer-uppercase-lowercase-label", "ANSWER: b)", WAIT, "B"),
    case("answer-paren-no-colon", "Answer (B)", WAIT, "B"),
    case("correct-equals", "Correct = B", WAIT, "B"),
    case("my-bet-colon", "My bet: B", WAIT, "B"),
    case("selected-answer-colon", "Selected answer: B", WAIT, "B"),
    case("short-answer-colon", "Short answer: B.", WAIT, "B"),
    case("tldr-colon", "TL;DR: B", WAIT, "B"),
    case(
        "conclusion-colon",
        "Let me reason step by step.\n\n1. wait() is throttled.\n2. task.wait() is accurate.\n\nConclusion: B",
        WAIT,
        "B",
    ),
    case(
        "result-colon",
        "Step 1: compare the throttles.\nStep 2: compare the yields.\n\nResult: B",
        WAIT,
        "B",
    ),
    case("the-right-one-is", "The right one is B.", WAIT, "B"),
    case(
        "correct-location-is",
        "ServerStorage is only visible to the server, unlike ReplicatedStorage (A), which replicates. "
        "StarterPlayerScripts (C) and Workspace (D) replicate too. The correct location is B.",
        STORAGE,
        "B",
    ),
    case("best-approach-is", "The best approach is B.", WAIT, "B"),
    case("bold-label-then-paren-and-text", "**Final answer:** (B) task.wait()", WAIT, "B"),
    case("blockquote-answer-then-why", "> Answer: **B**\n>\n> task.wait() is accurate.", WAIT, "B"),
    case(
        "correct-answer-blockquote-label", "Correct answer:\n\n> **B. ServerStorage**", STORAGE, "B"
    ),
    case("answer-underlined-heading", "ANSWER\n-------\nB", WAIT, "B"),
    case(
        "so-my-answer-is-bold",
        "Here's my reasoning: wait() throttles, delay() and spawn() are deprecated.\nSo my answer is **B**.",
        WAIT,
        "B",
    ),
    case("final-answer-dollar-boxed", "So the final answer is $\\boxed{B}$.", WAIT, "B"),
    case("answer-dollar-text", "Answer: $\\text{B}$", WAIT, "B"),
    # -- verbs of choosing -------------------------------------------------------------------------
    case("id-go-with", "I'd go with B.", WAIT, "B"),
    case("so-ill-go-with", "wait() is throttled, so I'll go with B.", WAIT, "B"),
    case("going-with-paren", "Going with (B).", WAIT, "B"),
    case("going-with-then-why", "Going with B, task.wait() is the modern one.", WAIT, "B"),
    case("im-going-with-option-here", "I'm going with option B here.", WAIT, "B"),
    case("i-choose", "I choose B.", WAIT, "B"),
    case("we-choose", "We choose D.", REMOTE, "D"),
    case("pick-imperative", "Pick B.", WAIT, "B"),
    case("ill-pick-no-period", "I'll pick B", WAIT, "B"),
    case("pick-over-another", "wait() is throttled, so I'd pick B over A.", WAIT, "B"),
    case("i-select", "I select B.", WAIT, "B"),
    case("opt-for", "I'd opt for B.", WAIT, "B"),
    case("settling-on", "Settling on B.", WAIT, "B"),
    case("ill-take", "I'll take B.", WAIT, "B"),
    case("id-answer-verb", "I would answer B.", WAIT, "B"),
    case("mark-imperative", "Mark B.", WAIT, "B"),
    case("lets-go-with", "Let's go with B.", WAIT, "B"),
    case("go-with-paren-choice-text", "I'd go with B (task.wait()).", WAIT, "B"),
    case("go-with-because", "I'd go with B because task.wait() is accurate.", WAIT, "B"),
    case("unsure-but-go-with", "I don't know for sure, but I'd go with B.", WAIT, "B"),
    case("going-to-go-with", "Going to go with B.", WAIT, "B"),
    case("id-have-to-go-with", "I'd have to go with B.", WAIT, "B"),
    case("im-choosing", "I'm choosing B.", WAIT, "B"),
    case("my-pick-would-be", "My pick would be B.", WAIT, "B"),
    case("i-vote", "I vote B.", WAIT, "B"),
    case("id-lean", "I'd lean B.", WAIT, "B"),
    case("id-put", "I'd put B.", WAIT, "B"),
    case("one-word-answer", "I'll answer in one word: B.", WAIT, "B"),
    case(
        "tempted-then-go-with",
        "It's tempting to choose A since it's the classic call, but it's throttled. I'll go with B.",
        WAIT,
        "B",
    ),
    # -- a closing word before the letter: it must end its clause ----------------------------------
    case("i-think-its", "I think it's B.", WAIT, "B"),
    case("its", "It's B.", WAIT, "B"),
    case("its-option", "It's option B.", WAIT, "B"),
    case("it-is", "It is B.", WAIT, "B"),
    case("its-then-choice-text", "It's B, task.wait().", WAIT, "B"),
    case("id-say", "I'd say B.", WAIT, "B"),
    case("id-say-its", "I'd say it's B.", WAIT, "B"),
    case("ill-say", "I'll say B.", WAIT, "B"),
    case("im-going-to-say", "I'm going to say B.", WAIT, "B"),
    case("id-say-since", "I'd say B, since wait() is throttled.", WAIT, "B"),
    case("id-say-over", "I'd say B over D.", WAIT, "B"),
    case("so-letter", "So B.", WAIT, "B"),
    case("therefore-comma", "Therefore, B.", WAIT, "B"),
    case("thus-paren", "Thus (B).", WAIT, "B"),
    case("so-dash-why", "So B — task.wait() is accurate.", WAIT, "B"),
    case("so-definitely", "Lots of reasoning about it all.\n\nSo, definitely B.", WAIT, "B"),
    case("that-makes-it", "That makes it B.", WAIT, "B"),
    case(
        "that-leaves",
        "Let's see: A is throttled, B yields, D is deprecated. That leaves C.",
        WAIT,
        "C",
    ),
    case("thats", "That's B.", WAIT, "B"),
    case("that-would-be", "That would be B.", WAIT, "B"),
    case("it-must-be", "It must be B.", WAIT, "B"),
    case("it-has-to-be", "It has to be B.", WAIT, "B"),
    case("it-should-be", "It should be B.", WAIT, "B"),
    case("itll-be", "It'll be B.", WAIT, "B"),
    case("its-gotta-be", "It's gotta be B.", WAIT, "B"),
    case("i-believe", "I believe B.", WAIT, "B"),
    case("i-guess", "I guess B.", WAIT, "B"),
    case("i-reckon-its", "I reckon it's B", WAIT, "B"),
    case("pretty-sure-its", "I'm pretty sure it's B.", WAIT, "B"),
    case("gotta-be", "Gotta be B.", WAIT, "B"),
    case("must-be-no-subject", "Must be B.", WAIT, "B"),
    case("thatd-be", "That'd be B.", WAIT, "B"),
    case("in-short", "In short, B.", WAIT, "B"),
    case("yeah-letter", "Yeah, B.", WAIT, "B"),
    case(
        "ruled-out-then-leaves",
        "First, A is the legacy wait, which is throttled. So A is out. C and D don't yield at all, "
        "so they're out too. That leaves B.",
        WAIT,
        "B",
    ),
    case(
        "asked-and-answered-then-so",
        "Hmm. A? No — A is throttled. C? No, it doesn't yield. D? Same. So B.",
        WAIT,
        "B",
    ),
    case(
        "others-in-parens-then-so",
        "The client must call FireServer on the RemoteEvent. "
        "FireClient (A) goes the other way; InvokeServer (B) is for "
        "RemoteFunctions; Fire (C) is for BindableEvents. So D.",
        REMOTE,
        "D",
    ),
    case("arrow-alone", "→ B", WAIT, "B"),
    case("fat-arrow-alone", "=> B", WAIT, "B"),
    case("or-rather-corrects", "I'd go with B, or rather C.", WAIT, "C"),
    # -- a cue after the letter --------------------------------------------------------------------
    case("letter-is-correct", "B is correct.", WAIT, "B"),
    case("letter-is-the-answer", "B is the answer.", WAIT, "B"),
    case("letter-is-right", "B is right.", WAIT, "B"),
    case("paren-is-the-one", "(B) is the one.", WAIT, "B"),
    case("option-is-the-one", "Option B is the one.", WAIT, "B"),
    case("letter-it-is", "B it is.", WAIT, "B"),
    case("letter-comma-it-is", "B, it is.", WAIT, "B"),
    case("letter-it-is-then", "B it is then.", WAIT, "B"),
    case("letter-wins", "B wins.", WAIT, "B"),
    case("letter-for-sure", "B for sure", WAIT, "B"),
    case("letter-all-the-way", "B all the way.", WAIT, "B"),
    case("letter-is-my-answer", "B is my answer.", WAIT, "B"),
    case("letter-is-my-final-answer", "B is my final answer.", WAIT, "B"),
    case("letter-is-the-best-choice", "B is the best choice.", WAIT, "B"),
    case("letter-is-the-correct-one", "B is the correct one.", WAIT, "B"),
    case("letter-is-the-correct-answer-choice", "B is the correct answer choice.", WAIT, "B"),
    case("letter-would-be-my-pick", "B would be my pick.", WAIT, "B"),
    case("letter-seems-right", "B seems right.", WAIT, "B"),
    case("letter-looks-correct", "B looks correct.", WAIT, "B"),
    case("letter-sounds-right", "B sounds right.", WAIT, "B"),
    case("letter-is-what-id-go-with", "B is what I'd go with.", WAIT, "B"),
    case("letter-is-the-way-to-go", "B is the way to go.", WAIT, "B"),
    case(
        "confident-that-letter-is-correct",
        "After analyzing, I'm confident that B is correct.",
        WAIT,
        "B",
    ),
    case("letter-apostrophe-s-the-answer", "B's the answer.", WAIT, "B"),
    case("letter-apostrophe-s-correct", "B's correct.", WAIT, "B"),
    case("bold-letter-is-correct", "**B** is correct.", WAIT, "B"),
    case("letter-would-be-correct", "B would be correct.", WAIT, "B"),
    case("letter-is-the-most-accurate", "B is the most accurate.", WAIT, "B"),
    case("letter-is-best", "B is best.", WAIT, "B"),
    case("letter-is-the-correct-option-here", "B is the correct option here.", WAIT, "B"),
    case(
        "pick-after-reasons-then-letter-is-the-one",
        "If you pick A, you get throttling. If you pick C or D, you don't yield. "
        "B is the one that yields without the throttle.\n\nB",
        WAIT,
        "B",
    ),
    case("bold-label-is-the-right-choice", "**B) task.wait()** is the right choice.", WAIT, "B"),
    case("second-option-paren-is-correct", "The second option (B) is correct.", WAIT, "B"),
    case("distractor-then-letter-is-correct", "A is tempting but B is correct.", WAIT, "B"),
    # -- a leading letter with its why, a label with the choice's text -----------------------------
    case("letter-em-dash-because", "B — because task.wait() is accurate.", WAIT, "B"),
    case("letter-hyphen-why", "B - task.wait() resumes after the time passes.", WAIT, "B"),
    case("letter-because", "B because it's the modern scheduler.", WAIT, "B"),
    case("letter-comma-since", "B, since task.wait() is accurate.", WAIT, "B"),
    case("bold-letter-em-dash", "**B** — the only one that is not deprecated.", WAIT, "B"),
    case("letter-colon-choice-text", "B: task.wait()", WAIT, "B"),
    case("option-em-dash-choice-text", "Option B — task.wait()", WAIT, "B"),
    case("label-then-check-mark", "B) task.wait() ✅", WAIT, "B"),
    case("letter-dot-then-why", "B. task.wait() is the modern API.", WAIT, "B"),
    case("letter-then-paren-why", "B. (Because task.wait() is accurate.)", WAIT, "B"),
    case("letter-then-final-answer-words", "B, final answer.", WAIT, "B"),
    case(
        "label-with-paren-choice-text",
        "(B) task.wait() — it resumes after the time passes.",
        WAIT,
        "B",
    ),
    # -- short replies: a letter and a word or two -------------------------------------------------
    case("option-letter", "Option B", WAIT, "B"),
    case("option-paren-letter", "Option (B)", WAIT, "B"),
    case("choice-letter", "Choice B", WAIT, "B"),
    case("letter-word", "Letter B", WAIT, "B"),
    case("definitely-letter", "Definitely B", WAIT, "B"),
    case("clearly-letter", "Clearly B", WAIT, "B"),
    case("obviously-paren", "Obviously (B)", WAIT, "B"),
    case("probably-letter", "Probably B.", WAIT, "B"),
    case("letter-i-guess", "B, I guess.", WAIT, "B"),
    case("sure-letter", "Sure, B.", WAIT, "B"),
    case("hmm-letter", "Hmm... B.", WAIT, "B"),
    case("check-mark-letter", "✔️ B", WAIT, "B"),
    case("pointing-letter", "👉 B", WAIT, "B"),
    case("letter-paren-choice-text", "B (task.wait())", WAIT, "B"),
    case("choice-text-paren-letter", "task.wait() (B)", WAIT, "B"),
    case("numbered-letter", "1. B", WAIT, "B"),
    case("other-language", "答案: B", WAIT, "B"),
    case("others-ruled-out-then-letter", "Not A, not C, not D — B.", WAIT, "B"),
    case("letter-hands-down", "B, hands down.", WAIT, "B"),
    case("letter-easy", "B. Easy.", WAIT, "B"),
    case("letter-obviously-after", "B, obviously.", WAIT, "B"),
    case("letter-for-this-one", "B for this one.", WAIT, "B"),
    case("the-one-that-works-is", "The one that works is B.", WAIT, "B"),
    case("struck-through-then-letter", "~~A~~ B", WAIT, "B"),
    case("not-a-then-option", "Server-only storage: ServerStorage.\n\nOption B.", STORAGE, "B"),
    case("distractor-then-so", "A is wrong, so B.", WAIT, "B"),
    case("not-a-its-b", "Not A — it's B.", WAIT, "B"),
    case("choice-text-then-letter", "Unlike wait(), task.wait() is accurate: B.", WAIT, "B"),
    case("eliminate-then-leaving", "I'd eliminate A and D, leaving B.", WAIT, "B"),
    case("rule-out-then-answer", "Rule out A; the answer is B.", WAIT, "B"),
    # -- lowercase, where nothing else reads it ----------------------------------------------------
    case("lowercase-go-with", "i'd go with b", WAIT, "B"),
    case("lowercase-choose-dot", "i'd choose b.", WAIT, "B"),
    case("lowercase-answer-is-because", "the answer is b because it's accurate", WAIT, "B"),
    case("lowercase-i-think-its", "i think it's b.", WAIT, "B"),
    case("lowercase-option", "option b", WAIT, "B"),
    case("lowercase-bold", "**b**", WAIT, "B"),
    case("lowercase-is-correct", "b is correct", WAIT, "B"),
    case("lowercase-option-is-correct", "option b is correct", WAIT, "B"),
    case("lowercase-answer-paren", "The answer: (b)", WAIT, "B"),
    case("lowercase-a-at-end", "the answer is a", STORAGE, "A"),
    case("lowercase-article-is-no-letter", "I'd go with a RemoteEvent", REMOTE, None),
    # -- markdown around the answer ----------------------------------------------------------------
    case("bold-label-and-bold-letter", "**Answer:** **B**", WAIT, "B"),
    case("header-then-bold-letter", "## Final Answer\n\n**B**", WAIT, "B"),
    case("blockquote-bold-label", "> **Answer:** B", WAIT, "B"),
    case("italic-label-underscore-letter", "*Answer*: _B_", WAIT, "B"),
    case("code-span-whole-answer", "`Answer: B`", WAIT, "B"),
    case("bold-whole-sentence", "**The answer is B.**", WAIT, "B"),
    case("bold-italic-letter", "Answer: ***B***", WAIT, "B"),
    case("bold-answer-then-paren-text", "**Answer: B** (task.wait())", WAIT, "B"),
    case("bold-label-colon-outside-bold", "Answer:** B", WAIT, "B"),
    case("bold-correct-answer-with-text", "**Correct Answer: B. task.wait()**", WAIT, "B"),
    case(
        "bold-reasoning-then-bold-answer",
        "**Reasoning:** wait() is throttled.\n**Answer:** B",
        WAIT,
        "B",
    ),
    case("answer-bold-colon-then-text", "The answer is **B**: task.wait().", WAIT, "B"),
    # -- text after the letter ---------------------------------------------------------------------
    case("answer-dash-why", "Answer: B — task.wait() resumes accurately.", WAIT, "B"),
    case(
        "answer-comma-because",
        "The answer is B, because wait() is throttled and the others are deprecated.",
        WAIT,
        "B",
    ),
    case(
        "answer-then-sentence-about-it",
        "Answer: D is the only call that goes from a client to the server.",
        REMOTE,
        "D",
    ),
    case("answer-then-rule", "Answer: B\n\n---\n\nExplanation: wait() is throttled.", WAIT, "B"),
    case("answer-then-confidence", "Answer: B\nConfidence: high", WAIT, "B"),
    case("answer-then-sign-off", "Sure! The answer is B. Hope this helps!", WAIT, "B"),
    case(
        "answer-then-offer",
        "wait() throttles. task.wait() does not.\n\n**Answer: B**\n\nLet me know if you want more detail!",
        WAIT,
        "B",
    ),
    case(
        "answer-then-why-nots",
        "Answer: B.\n\nWhy not A? Because wait() is throttled. Why not C? delay() is deprecated.",
        WAIT,
        "B",
    ),
    case("answer-then-second-best", "Answer: B\n\nI'd say A is a close second.", WAIT, "B"),
    case(
        "answer-then-conditional-other", "Answer: B\n\nIf you picked A, you'd be wrong.", WAIT, "B"
    ),
    case(
        "answer-then-hypothetical-other",
        "Answer: B\n\nNote: choosing C would hang the thread.",
        WAIT,
        "B",
    ),
    case("answer-then-others-joined", "Answer: B\n\nA or C would throttle.", WAIT, "B"),
    case(
        "answer-then-choice-both-compile",
        "The answer is B.\n\nBoth compile with A or C.",
        WAIT,
        "B",
    ),
    # -- letters in the reasoning before the final one ---------------------------------------------
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
    case(
        "others-named-then-answer",
        "A and B are wrong, C is deprecated, so the answer is D.",
        WAIT,
        "D",
    ),
    case(
        "choosing-between-two-then-one",
        "So between (B) and (C), I choose (C). Answer: C",
        WAIT,
        "C",
    ),
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
    case(
        "article-a-after-answer-is",
        "The answer is a matter of replication, but Answer: B",
        WAIT,
        "B",
    ),
    case("pronoun-i", "I think the answer is D.", REMOTE, "D"),
    case("letter-a-as-answer", "The answer is A.", STORAGE, "A"),
    case("letter-a-at-end", "Answer: A", STORAGE, "A"),
    case(
        "per-option-bold-then-best-choice",
        "Let's go through the options:\n\n**A) wait()** — the legacy global, throttled to about 30 Hz.\n\n"
        "**B) task.wait()** — the modern replacement; it resumes on the next Heartbeat.\n\n"
        "**C) delay()** — deprecated; it schedules a function.\n\n**D) "
        "spawn()** — deprecated.\n\nSo the best choice is **B**.",
        WAIT,
        "B",
    ),
    case(
        "per-option-checks-then-answer-heading",
        "## Analysis\n\n- A: replicates to clients ❌\n- B: server only "
        "✅\n- C: client scripts ❌\n- D: replicates ❌\n\n## Answer\n\nB",
        STORAGE,
        "B",
    ),
    case(
        "table-then-bold-answer",
        "| Option | Server only? |\n|---|---|\n| A | No |\n| B | Yes |\n| C | No |\n| D | No |\n\n**Answer: B**",
        STORAGE,
        "B",
    ),
    case(
        "initially-thought-then-answer",
        "I initially thought A, but A is throttled. The answer is B.",
        WAIT,
        "B",
    ),
    case(
        "letters-in-parens-then-answer",
        "wait() — throttled (A). task.wait() (B) — accurate. delay() (C) — deprecated. "
        "spawn() (D) — deprecated.\n\nAnswer: B",
        WAIT,
        "B",
    ),
    case(
        "answer-then-wrong-labels",
        "Answer: B\n\nA) wrong: throttled.\nC) wrong: deprecated.\nD) wrong: deprecated.",
        WAIT,
        "B",
    ),
    case(
        "answer-then-you-might-be-tempted",
        "The answer is B. You might be tempted to pick A, but it's throttled.",
        WAIT,
        "B",
    ),
    case(
        "answer-then-some-might-argue",
        "I think the answer is B, though some might argue for A.",
        WAIT,
        "B",
    ),
    case("answer-then-trap-in-parens", "Answer: B. (A is a common trap.)", WAIT, "B"),
    case(
        "answer-then-wouldnt-choose",
        "The answer is B. A would work in older code but it's throttled; C and D are deprecated, "
        "so I wouldn't choose them.",
        WAIT,
        "B",
    ),
    # -- self-corrections: the last commitment wins ------------------------------------------------
    case(
        "self-correction-same-line",
        "The answer is (B)... wait, no. InvokeServer belongs to RemoteFunction. The correct answer is (D).",
        REMOTE,
        "D",
    ),
    case(
        "self-correction-reconsider",
        "Answer: B\n\nActually, let me reconsider. Answer: D",
        REMOTE,
        "D",
    ),
    case("self-correction-final-answer", "Answer: B\nFinal answer: C", WAIT, "C"),
    case("boxed-twice", "\\boxed{B}\n\nActually no, \\boxed{D}", WAIT, "D"),
    case("self-correction-say-then-its", "I'd say A... no wait, it's B.", WAIT, "B"),
    case("self-correction-answer-then-its", "Answer: A\n\nHmm, actually, it's B.", WAIT, "B"),
    case("self-correction-is-correct-twice", "B is correct. Wait — no, C is correct.", WAIT, "C"),
    case("self-correction-scratch-that", "Option A... scratch that, I'll go with B.", WAIT, "B"),
    case("self-correction-short-no", "C... no, B.", WAIT, "B"),
    case("self-correction-short-i-mean", "A, I mean B.", WAIT, "B"),
    case("self-correction-short-actually", "D — actually B.", WAIT, "B"),
    case("self-correction-or-rather", "B, or rather C.", WAIT, "C"),
    case(
        "self-correction-label-then-final", "D) spawn()? No — B) task.wait(). Final: B", WAIT, "B"
    ),
    # -- the choice's text instead of its letter ---------------------------------------------------
    case("quoted-choice-text", "The correct method is `task.wait()`.", WAIT, "B"),
    case("quoted-choice-after-answer-colon", "Answer: ServerStorage", STORAGE, "B"),
    case("quoted-choice-bare", "ReplicatedStorage", STORAGE, "A"),
    case("quoted-longer-choice-contains-shorter", "RunService.Heartbeat", FRAME, "A"),
    case("quoted-shorter-choice-alone", "Heartbeat", FRAME, "D"),
    case("quoted-typeof", "Use typeof.", TYPEOF, "B"),
    case("quoted-type", "type", TYPEOF, "A"),
    # -- commits to two letters: never guessed -----------------------------------------------------
    case("two-letters-and", "B and D", WAIT, None),
    case("answer-is-two-letters", "The answer is B and D.", WAIT, None),
    case("answer-two-letters-comma", "Answer: B, D", WAIT, None),
    case("answer-two-letters-or", "Answer: (B) or (D)", WAIT, None),
    case("correct-answers-are-two", "The correct answers are B and D.", WAIT, None),
    case("three-letters", "The answer is A, B, or C", WAIT, None),
    # -- hedges between letters: a commitment to none ----------------------------------------------
    case("hedge-either-or", "either B or C", WAIT, None),
    case("hedge-or-maybe", "B or maybe C", WAIT, None),
    case("hedge-or", "B or C", WAIT, None),
    case("hedge-slash-bare", "B/C", WAIT, None),
    case("hedge-question-two", "Is it B or C?", WAIT, None),
    case("hedge-torn-between", "I'm torn between B and C.", WAIT, None),
    case("hedge-cant-decide", "I can't decide between A and C.", WAIT, None),
    case("hedge-go-with-two", "I'd go with B or C.", WAIT, None),
    case("hedge-answer-two-or", "Answer: B or C", WAIT, None),
    case("hedge-its-either", "It's either B or C.", WAIT, None),
    case("hedge-could-be-could-be", "Could be B, could be C.", WAIT, None),
    case("hedge-not-sure-two", "Not sure — B or D.", WAIT, None),
    case("hedge-hard-to-say", "Hmm, A or B. Hard to say.", WAIT, None),
    case("hedge-answer-or-possibly", "The answer is B or possibly C.", WAIT, None),
    case("hedge-pick-comma-or-maybe", "I'd pick B, or maybe D.", WAIT, None),
    case("hedge-afterthought", "It's B. Or maybe C.", WAIT, None),
    case("hedge-paren-or", "Answer: B (or C if you count legacy code)", WAIT, None),
    case("hedge-maybe-one", "Maybe B.", WAIT, None),
    case("hedge-possibly-one", "Possibly C", WAIT, None),
    case("hedge-question-one", "B?", WAIT, None),
    case("hedge-question-after-hmm", "Hmm, B?", WAIT, None),
    case("hedge-could-be", "It could be B.", WAIT, None),
    case("hedge-might-be", "It might be B.", WAIT, None),
    case("hedge-both-correct", "B and C are both correct.", WAIT, None),
    case("hedge-both-work", "Both B and C work.", WAIT, None),
    case("hedge-three-or", "B, C or D.", WAIT, None),
    case("hedge-could-be-either", "Could be either A or B.", WAIT, None),
    case("hedge-is-it-question", "Hmm, is it B?", WAIT, None),
    case("hedge-not-sure-maybe-question", "Not sure. Maybe B?", WAIT, None),
    case("hedge-guess-two", "If I had to guess, B or C.", WAIT, None),
    # -- distractors and descriptions: not commitments ---------------------------------------------
    case("distractor-is-wrong", "A is wrong.", WAIT, None),
    case("distractor-not", "Not B.", WAIT, None),
    case("distractor-definitely-not", "Definitely not A.", WAIT, None),
    case("distractor-eliminate", "Eliminate A.", WAIT, None),
    case("distractor-and-so-is", "A is incorrect, and so is B.", WAIT, None),
    case("distractor-rule-out", "I'd rule out D.", WAIT, None),
    case("distractor-isnt-it", "A isn't it.", WAIT, None),
    case("distractor-cant-be-right", "A can't be right.", WAIT, None),
    case("distractor-its-not", "It's not D.", WAIT, None),
    case("description-is-deprecated", "C is deprecated.", WAIT, None),
    case("description-hypothetical-choice", "Note: choosing C would hang the thread.", WAIT, None),
    case("description-options-named", "Options A and C both use deprecated globals.", WAIT, None),
    case("description-possessive", "I'd go with B's cousin", WAIT, None),
    case("distractor-is-not-correct", "B is not correct.", WAIT, None),
    case("distractor-isnt-the-answer", "B isn't the answer.", WAIT, None),
    case("description-possessive-is", "B's throttled.", WAIT, None),
    case(
        "description-others-in-parens-no-answer",
        "The client must call FireServer on the RemoteEvent. "
        "FireClient (A) goes the other way; InvokeServer (B) is for "
        "RemoteFunctions; Fire (C) is for BindableEvents.",
        REMOTE,
        None,
    ),
    # -- no answer, empty, truncated ---------------------------------------------------------------
    case("no-answer", "I'm not sure which of these is right; it depends on the game.", WAIT, None),
    case("empty", "", WAIT, None),
    case("whitespace-only", "  \n\t ", WAIT, None),
    case(
        "truncated-after-answer-is",
        "Let me think. (A) FireClient goes to a client. (B) InvokeServer is RemoteFunction. So the answer is",
        REMOTE,
        None,
    ),
    case(
        "truncated-mid-analysis",
        "Let's analyze each option in turn. Option A uses wait(), which is throttled. Option B",
        WAIT,
        None,
    ),
    case("truncated-label-only", "Answer:", WAIT, None),
    case("number-not-letter", "Answer: 2", WAIT, None),
    case("cannot-determine", "I cannot determine the answer from the options given.", WAIT, None),
    case("none-of-the-options", "None of the options is correct.", WAIT, None),
    case("all-of-the-above", "All of the above.", WAIT, None),
    case("i-dont-know", "I don't know.", WAIT, None),
    # -- lists and echoes of the options: no commitment --------------------------------------------
    case("options-echoed", "A) wait()\nB) task.wait()\nC) delay()\nD) spawn()", WAIT, None),
    case("letters-listed-on-lines", "The options are:\nA\nB\nC\nD", WAIT, None),
    case("letters-listed-in-a-line", "A, B, C, D", WAIT, None),
    case(
        "table-without-answer",
        "| Option | Server only? |\n|---|---|\n| A | No |\n| B | Yes |\n| C | No |\n| D | No |",
        STORAGE,
        None,
    ),
    # -- "A" and "I": letters and words, ten choices -----------------------------------------------
    case("ten-pronoun-then-letter", "I think it's C.", TEN, "C"),
    case("ten-letter-i-after-verb", "I'd go with I.", TEN, "I"),
    case("ten-letter-i-at-end", "I choose I", TEN, "I"),
    case("ten-letter-i-then-comma", "The answer is I, because an Attachment anchors it.", TEN, "I"),
    case("ten-letter-i-quoted", "I'd go with 'I'.", TEN, "I"),
    case("ten-letter-i-is-correct", "I is correct.", TEN, "I"),
    case("ten-answer-i", "Answer: I", TEN, "I"),
    case("ten-article-then-letter", "A good choice is C", TEN, "C"),
    case("ten-pronoun-fairly-sure", "I'm fairly sure it's C.", TEN, "C"),
    case("ten-closest-option", "The closest option is H.", TEN, "H"),
    case("ten-label-with-text", "E. Camera", TEN, "E"),
    case("ten-a-is-the-trap", "I'd say A's the trap.", TEN, None),
    # -- letters outside A-D for four choices ------------------------------------------------------
    case("out-of-range-e", "The answer is E.", WAIT, None),
    case("out-of-range-f", "Answer: F", WAIT, None),
    case("out-of-range-bare", "E", WAIT, None),
    case("out-of-range-boxed", "The answer is \\boxed{E}", WAIT, None),
    case("out-of-range-i", "The answer is I.", WAIT, None),
    # -- replies once misread, kept as regression cases --------------------------------------------
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
    # -- a caveat after the answer: a condition or a hypothetical never overrides it ---------------
    case(
        "caveat-note-would-be-if",
        "Answer: B\n\n(Note: option A would be correct if you only needed a rough delay.)",
        WAIT,
        "B",
    ),
    case(
        "caveat-opposite-direction",
        "**Answer: D**\n\nFor the opposite direction (the server telling one client), A would be the best choice.",
        REMOTE,
        "D",
    ),
    case(
        "caveat-correct-only-if",
        "B is correct. A is correct only if you target the legacy scheduler.",
        WAIT,
        "B",
    ),
    case(
        "caveat-in-that-case",
        "Answer: D\n\nIn that case, if you needed a reply from the server, B would be the right call.",
        REMOTE,
        "D",
    ),
    case(
        "caveat-otherwise",
        "The answer is B. Otherwise, if the throttle did not matter, A would be the best choice.",
        WAIT,
        "B",
    ),
    case(
        "caveat-unless-in-which-case",
        "Answer: B\n\nUnless you are stuck on legacy code, in which case A is the answer.",
        WAIT,
        "B",
    ),
    case(
        "caveat-if-you-only-needed",
        "Final answer: B\n\nIf you only needed a one-off callback, C would be correct.",
        WAIT,
        "B",
    ),
    case(
        "caveat-would-be-right-if",
        "B is the answer. A would be right if you were targeting the old 30 Hz scheduler.",
        WAIT,
        "B",
    ),
    case(
        "caveat-assuming-after-first-line",
        "**D**\n\nAssuming you wanted server-to-client instead, A is the call.",
        REMOTE,
        "D",
    ),
    case(
        "caveat-only-when",
        "The answer is B; A is correct only when the legacy throttle is wanted.",
        WAIT,
        "B",
    ),
    case(
        "caveat-hypothetical-alone",
        "Answer: B (A would be the pick for code that must run on the old scheduler).",
        WAIT,
        "B",
    ),
    case(
        "caveat-spanish-si-seria",
        "Respuesta: B\n\nSi solo necesitaras un retraso aproximado, C sería la respuesta correcta.",
        WAIT,
        "B",
    ),
    case("caveat-chinese-ruguo", "答案：B\n\n如果只需要一次性回调，C 是正确的。", WAIT, "B"),
    case(
        "caveat-on-the-answer-itself",
        "The answer is B, unless the game still targets the legacy scheduler.",
        WAIT,
        "B",
    ),
    case(
        "caveat-if-after-the-answer",
        "task.wait() is accurate, so the answer is B if you care about precision.",
        WAIT,
        "B",
    ),
    case(
        "caveat-reason-with-if",
        "Answer: B, because if you use wait() you get throttled.",
        WAIT,
        "B",
    ),
    case("own-hedge-if-i-had-to", "If I had to pick one, B.", WAIT, "B"),
    case("concessive-even-if", "Even if A looks simpler, B is correct.", WAIT, "B"),
    case(
        "not-sure-if-then-answer",
        "I'm not sure if this is what you meant, but the answer is B.",
        WAIT,
        "B",
    ),
    case("rhetorical-if-we-compare", "If we compare them all, the answer is B.", WAIT, "B"),
    # -- only conditional mentions: no commitment, never guessed -----------------------------------
    case(
        "conditional-two-directions",
        "If you need to go from a client to the server, D would be the right call; for the opposite "
        "direction, A would be.",
        REMOTE,
        None,
    ),
    case(
        "conditional-counterfactual",
        "If it were a RemoteFunction, the answer would be B.",
        REMOTE,
        None,
    ),
    case(
        "conditional-two-only-ifs",
        "A is correct only if you target legacy code, and C is correct only if you want a callback.",
        WAIT,
        None,
    ),
    case(
        "conditional-assuming-otherwise",
        "Assuming the legacy scheduler, the answer would be A; otherwise it would be B.",
        WAIT,
        None,
    ),
    case(
        "conditional-spanish", "Si necesitas precisión, la respuesta sería B; si no, A.", WAIT, None
    ),
    case(
        "conditional-opposite-alone",
        "For the opposite direction, A would be the best choice.",
        REMOTE,
        None,
    ),
    case("conditional-in-that-case", "In that case the answer would be C.", WAIT, None),
    case("conditional-if-you-need", "If you need accuracy, the answer is B.", WAIT, None),
    case(
        "conditional-german-wenn",
        f"{DE}Wenn du den alten Scheduler brauchst, wäre A richtig.",
        WAIT,
        None,
    ),
    case("conditional-chinese-ruguo", f"{ZH}如果是旧代码，答案是A。", WAIT, None),
    # -- other languages and full-width forms, at the end of the reasoning -------------------------
    case("spanish-respuesta-correcta-es-la", f"{ES}La respuesta correcta es la B.", WAIT, "B"),
    case("portuguese-resposta-colon", f"{ES}Resposta: B", WAIT, "B"),
    case("chinese-full-width-colon", f"{ZH}答案：B", WAIT, "B"),
    case("japanese-seikai-wa-desu", f"{JA}正解は C です。", WAIT, "C"),
    case("german-antwort-colon", f"{DE}Antwort: B", WAIT, "B"),
    case("french-reponse-spaced-colon", f"{FR}Réponse : B", WAIT, "B"),
    case("english-full-width-colon", f"{EN}Answer：B", WAIT, "B"),
    case("portuguese-alternativa-correta", f"{ES}A resposta correta é a alternativa B.", WAIT, "B"),
    case("german-richtige-antwort-ist", f"{DE}Die richtige Antwort ist B.", WAIT, "B"),
    case("german-antwort-lautet", f"{DE}Die Antwort lautet B.", WAIT, "B"),
    case("german-letter-ist-richtig", f"{DE}B ist richtig.", WAIT, "B"),
    case("french-bonne-reponse-paren", f"{FR}La bonne réponse est (B).", WAIT, "B"),
    case("french-no-break-space-colon", f"{FR}Réponse\u00a0: B", WAIT, "B"),
    case("french-je-choisis", f"{FR}Je choisis la B.", WAIT, "B"),
    case("chinese-zhengque-daan-shi", f"{ZH}正确答案是B。", WAIT, "B"),
    case("chinese-zuizhong-daan", f"{ZH}最终答案：C", WAIT, "C"),
    case("chinese-suoyi-xuan", f"{ZH}所以选B。", WAIT, "B"),
    case("chinese-letter-shi-zhengque", f"{ZH}B是正确的。", WAIT, "B"),
    case("chinese-zhengque-xuanxiang", f"{ZH}正确选项是 B。", WAIT, "B"),
    case("chinese-lenticular-brackets", f"{ZH}【答案】B", WAIT, "B"),
    case("japanese-letter-ga-seikai", f"{JA}Bが正解です。", WAIT, "B"),
    case("korean-jeongdap-eun", f"{EN}정답은 B입니다.", WAIT, "B"),
    case("korean-dap-colon", f"{EN}답: B", WAIT, "B"),
    case("russian-pravilnyi-otvet", f"{EN}Правильный ответ: B", WAIT, "B"),
    case("russian-otvet-dash", f"{EN}Ответ — B", WAIT, "B"),
    case("italian-risposta-corretta-e-la", f"{EN}La risposta corretta è la B.", WAIT, "B"),
    case("italian-risposta-colon", f"{EN}Risposta: B", WAIT, "B"),
    case("spanish-opcion-correcta", f"{ES}La opción correcta es la B.", WAIT, "B"),
    case("spanish-elijo", f"{ES}Elijo la B.", WAIT, "B"),
    case("spanish-letter-es-la-respuesta", f"{ES}B es la respuesta correcta.", WAIT, "B"),
    case("portuguese-resposta-final", f"{ES}Resposta final: D", REMOTE, "D"),
    case("full-width-letter", f"{ZH}答案：Ｂ", WAIT, "B"),
    case("full-width-lowercase-letter", f"{EN}Answer: ｂ", WAIT, "B"),
    case("full-width-parentheses", f"{EN}Answer: （B）", WAIT, "B"),
    case("full-width-all", f"{EN}Ａｎｓｗｅｒ：Ｂ", WAIT, "B"),
    # -- other languages: negations, hedges and two letters are no commitment ----------------------
    case("spanish-no-es", "La respuesta no es A.", WAIT, None),
    case("spanish-letter-no-es-correcta", "A no es correcta.", WAIT, None),
    case("spanish-two-letters-o", f"{ES}Respuesta: B o C", WAIT, None),
    case("chinese-bu-shi", f"{ZH}答案不是A。", WAIT, None),
    case("chinese-keneng-two", f"{ZH}答案可能是B或C。", WAIT, None),
    case("chinese-keneng-one", f"{ZH}答案可能是B。", WAIT, None),
    case("chinese-cuowu-de-daan", f"{ZH}错误的答案是A。", WAIT, None),
    case("german-nicht", "Die Antwort ist nicht A.", WAIT, None),
    case("french-n-est-pas", f"{FR}A n'est pas la bonne réponse.", WAIT, None),
    case("japanese-machigai", "Aは間違いです。", WAIT, None),
    case(
        "spanish-conditional-seria",
        "Si la pregunta fuera sobre el servidor, la respuesta sería A.",
        WAIT,
        None,
    ),
    # -- a reasoning block before the answer: read without it (evals.reasoning), as it is graded ----
    case(
        "think-draft-then-text-paren",
        "<think>Stepped fires before physics: the answer is C.</think>\nIt is Heartbeat (D).",
        FRAME,
        "D",
    ),
    case(
        "think-draft-then-choice-text",
        "<think>I'll go with A, ReplicatedStorage.</think>\n\nPut it in ServerStorage.",
        STORAGE,
        "B",
    ),
    case(
        "thinking-draft-then-bold-text",
        "<thinking>Answer: C</thinking>\n**`remote:FireServer(...)`** sends it to the server.",
        REMOTE,
        "D",
    ),
    case(
        "reasoning-draft-then-answer", "<reasoning>My pick: A</reasoning>\nAnswer: (B)", WAIT, "B"
    ),
    case(
        "template-opened-draft-then-answer",
        "So the answer is A.\n</think>\n\ntypeof, choice B.",
        TYPEOF,
        "B",
    ),
    case("think-only-unclosed", "<think>The answer is B, task.wait()", WAIT, None),
    case("think-empty-then-answer", "<think>\n\n</think>\n\nAnswer: C", WAIT, "C"),
    case(
        "ten-think-draft-then-letter",
        "<think>I think it's I, Attachment.</think>\nAnswer: J",
        TEN,
        "J",
    ),
    # -- a later correction wins, in a reply of any length ---------------------------------------
    case(
        "correction-actually-after-reasoning",
        f"{EN}The answer is A. Wait, actually, B.",
        WAIT,
        "B",
    ),
    case("correction-no-colon-after-reasoning", f"{EN}The answer is A. Wait, no: B.", WAIT, "B"),
    case("correction-scratch-that", f"{EN}So D. Actually, scratch that: B", WAIT, "B"),
    case("correction-i-mean", f"{EN}Answer: A\n\nNo wait, I mean B.", WAIT, "B"),
    case("correction-colon", f"{EN}Answer: C. Correction: B.", WAIT, "B"),
    case("correction-on-second-thought", f"{EN}I'd go with A. On second thought, B.", WAIT, "B"),
    case("correction-dots-no", f"{EN}So the answer is D... no, B.", WAIT, "B"),
    case("correction-sorry", f"{EN}Answer: A. Sorry, B.", WAIT, "B"),
    case("correction-no-then-i-mean", f"{EN}The answer is C, no, I mean, D.", REMOTE, "D"),
    case("correction-ten-pronoun-after", "Actually, I think it's I.", TEN, "I"),
    case("correction-make-that", f"{EN}Answer: A. Make that B.", WAIT, "B"),
    case("correction-dash-actually", f"{EN}The answer is A — actually, B.", WAIT, "B"),
    case(
        "correction-actually-its",
        f"{EN}The answer is A. Wait, actually it's B here, since the throttle matters.",
        WAIT,
        "B",
    ),
    case(
        "correction-on-reflection-lead",
        f"{EN}Final answer: C\n\nHmm, no. On reflection the answer is D.",
        WAIT,
        "D",
    ),
    case("correction-actually-is-correct", f"{EN}Answer: A. Actually, (B) is correct.", WAIT, "B"),
    # -- a mention after the answer is no correction to it --------------------------------------------
    case("mention-tempting-then-answer", f"{EN}A is tempting, but the answer is B.", WAIT, "B"),
    case(
        "mention-actually-a-is-wrong",
        f"{EN}The answer is B; actually A is wrong because it throttles.",
        WAIT,
        "B",
    ),
    case(
        "mention-actually-a-would-be-fine",
        f"{EN}The answer is B. Actually, A would be fine in legacy code.",
        WAIT,
        "B",
    ),
    case("mention-no-a-is-not", f"{EN}Answer: B. No, A is not accurate: it throttles.", WAIT, "B"),
    case(
        "mention-actually-two-deprecated",
        f"{EN}Answer: B. Actually A and C are both deprecated-ish.",
        WAIT,
        "B",
    ),
    case(
        "mention-actually-no-not-a",
        f"{EN}Answer: B\n\nActually, no: A is throttled, so it is not A.",
        WAIT,
        "B",
    ),
    case("mention-actually-a-question", f"{EN}The answer is B. Actually, A? No.", WAIT, "B"),
    case("mention-there-is-no", f"{EN}Answer: B. There is no C.", WAIT, "B"),
    case("mention-no-then-subject", f"{EN}Answer: B. No, C is deprecated.", WAIT, "B"),
    case("mention-no-then-period", "A: yes. B: no. So A.", WAIT, "A"),
    # -- plain-text thinking markers: a reasoning block (evals.reasoning) ------------------------------
    case(
        "thinking-markers-draft-then-answer",
        "Thinking...\nThe answer is A.\n...done thinking.\n\nAnswer: C",
        WAIT,
        "C",
    ),
    case(
        "thinking-markers-then-bold-letter",
        "Thinking...\nI'd go with B... no.\n...done thinking.\n\n**D**",
        REMOTE,
        "D",
    ),
    case(
        "thinking-markers-ellipsis-character",
        "Thinking\u2026\nSo A.\n\u2026done thinking.\n\nThe answer is (B).",
        WAIT,
        "B",
    ),
    case(
        "thinking-markers-no-final-period",
        "Thinking...\nAnswer: A\n...done thinking\n\nC",
        WAIT,
        "C",
    ),
    case(
        "thinking-markers-uppercase",
        "THINKING...\nMy pick: A\n...DONE THINKING.\nFinal answer: D",
        REMOTE,
        "D",
    ),
    case(
        "thinking-markers-others-named-inside",
        "Thinking...\nA is throttled, C and D are deprecated.\n...done thinking.\n\nB",
        WAIT,
        "B",
    ),
    case(
        "thinking-markers-then-choice-text",
        "Thinking...\nThe answer is C.\n...done thinking.\n\nThe answer is `task.wait()`.",
        WAIT,
        "B",
    ),
    case(
        "thinking-markers-ten-choices",
        "Thinking...\nI think it's I.\n...done thinking.\n\nAnswer: J",
        TEN,
        "J",
    ),
    case(
        "thinking-markers-nothing-after",
        "Thinking...\nThe answer is A.\n...done thinking.",
        WAIT,
        None,
    ),
    case("thinking-opening-only-is-prose", "Thinking...\nThe answer is B.", WAIT, "B"),
    case("thinking-word-in-prose", "Thinking... the answer is B.", WAIT, "B"),
    # -- a choice's text as whole words; a reply that no choice fits ----------------------------------
    case("none-fit-inside-word", "None of the listed choices sorts in place", SORT, None),
    case(
        "none-fit-answer-is-none",
        "The answer is none of these: sort only orders arrays.",
        SORT,
        None,
    ),
    case(
        "none-fit-above-then-choice",
        "None of the above options is correct; sort returns nothing.",
        SORT,
        None,
    ),
    case("none-fit-none-of-these", "none of these", SORT, None),
    case("none-fit-answer-none-of-the-above", "Answer: none of the above", SORT, None),
    case("none-fit-none-of-them-then-choice", "None of them: insert only appends.", SORT, None),
    case("whole-word-plural", "It sorts in place.", SORT, None),
    case("whole-word-longer-word", "Use insertion.", SORT, None),
    case("whole-word-suffix", "The answer is unpacking.", SORT, None),
    case("whole-word-choice", "Use sort.", SORT, "A"),
    case("whole-word-choice-quoted-not-other", "The answer is `sort`, not `insert`.", SORT, "A"),
    case("whole-word-in-a-path", "table.sort", SORT, "A"),
    case("whole-word-bare", "concat", SORT, "C"),
    case(
        "none-of-the-others-then-letter",
        "None of the other options reorders in place, so A.",
        SORT,
        "A",
    ),
    case(
        "none-of-the-others-after-choice",
        "The answer is sort; none of the others reorder in place.",
        SORT,
        "A",
    ),
    case("none-choice-chosen", "None of the above.", SORT_OR_NONE, "D"),
    case("none-choice-after-answer", "Answer: None of the above", SORT_OR_NONE, "D"),
    case("none-choice-letter", "The answer is D, none of the above.", SORT_OR_NONE, "D"),
    case("none-choice-then-so", "None of the above options fits, so D.", SORT_OR_NONE, "D"),
    case(
        "none-fit-then-explicit-pick",
        "None of the listed choices is perfect, but I'd go with B.",
        SORT,
        "B",
    ),
    # -- look-alike and non-Latin letters read as the letters they stand for ------------------------
    case("cyrillic-otvet-ve", f"{EN}Ответ: \u0412", WAIT, "B"),
    case("cyrillic-es-after-answer", f"{EN}Answer: \u0421", WAIT, "C"),
    case("cyrillic-paren-after-answer", "Правильный ответ: (\u0412)", WAIT, "B"),
    case("cyrillic-lowercase-a", "Ответ: \u0430", WAIT, "A"),
    case("cyrillic-bold-alone", f"{EN}**\u0421**", WAIT, "C"),
    case("cyrillic-label-with-text", "\u0412) task.wait()", WAIT, "B"),
    case("cyrillic-ie-out-of-range", "Ответ: \u0415", WAIT, None),
    case("cyrillic-ie-in-range", "Ответ: \u0415", [*WAIT, "coroutine.yield()"], "E"),
    case("greek-apantisi-colon", "Απάντηση: \u0392", WAIT, "B"),
    case("greek-sosti-apantisi-einai", "Η σωστή απάντηση είναι \u0391.", STORAGE, "A"),
    case("arabic-ijaba-colon", "الإجابة: ب", WAIT, "B"),
    case("arabic-ijaba-sahiha-hiya", "الإجابة الصحيحة هي ج", WAIT, "C"),
    case("arabic-letter-in-parens", "(د)", REMOTE, "D"),
    case("arabic-alif-alone", "أ", STORAGE, "A"),
    case("cyrillic-preposition-in-prose", "В Roblox это зависит от игры.", WAIT, None),
    case("cyrillic-preposition-before-a-number", "В 2020 году ответ был другим.", WAIT, None),
    case(
        "cyrillic-two-letters-in-prose",
        "Ответ зависит от задачи: в одних случаях A, в других C.",
        WAIT,
        None,
    ),
    case("cyrillic-with-in-prose", "С этим сложно.", WAIT, None),
    case("arabic-word-in-prose", "الإجابة بسيطة", WAIT, None),
    # -- eliminated options after a commitment do not cancel it ---------------------------------------
    case("eliminated-so-after-its", "It's B, so A, C and D are out.", WAIT, "B"),
    case("eliminated-so-are-wrong", "The answer is D, so A, B and C are wrong.", REMOTE, "D"),
    case("eliminated-ruled-out", "I'd go with B, so A, C, D are ruled out.", WAIT, "B"),
    case("eliminated-therefore", "It's B, therefore A, C and D are wrong.", WAIT, "B"),
    case("eliminated-hence", "Going with B; hence A, C and D are out.", WAIT, "B"),
    case(
        "eliminated-after-reasons",
        "It's B since task.wait() is accurate, so A, C and D are out.",
        WAIT,
        "B",
    ),
    case("eliminated-semicolon-can-be", "The answer is C; A, B and D can be ruled out", WAIT, "C"),
    case("eliminated-that-means", "So C; that means A, B and D are eliminated.", WAIT, "C"),
    case("eliminated-all-incorrect", "B. A, C and D are all incorrect.", WAIT, "B"),
    case("eliminated-so-two-out", "Answer: B, so A and C are out.", WAIT, "B"),
    case("eliminated-list-then-commitment", "A, C and D are out, so B.", WAIT, "B"),
    case("eliminated-so-several-no-verb", "So A, C and D.", WAIT, None),
    case("eliminated-so-several-or", "So A, C or D.", WAIT, None),
    case("eliminated-so-two-correct", "So A and C are correct.", WAIT, None),
    # -- a hedge between two letters is no commitment -----------------------------------------------
    case("hedge-lean-but-could-be", "I'd lean towards C, but it could be D", WAIT, None),
    case("hedge-probably-though-might-be", "Probably B, though it might be C.", WAIT, None),
    case("hedge-answer-but-may-be", "My answer is A, but it may be D.", WAIT, None),
    case("hedge-paren-could-also-be", "Answer: B (though it could also be C).", WAIT, None),
    case("hedge-its-but-maybe", "I think it's B, but maybe C.", WAIT, None),
    case("hedge-although-might-well-be", "Going with C, although it might well be A.", WAIT, None),
    case("hedge-could-be-though", "The answer is D; it could be B, though.", WAIT, None),
    case("hedge-pick-but-perhaps", "I'd pick A, but perhaps B.", WAIT, None),
    case("hedge-seems-right-could-be", "B seems right, but it could be C.", WAIT, None),
    case(
        "hedge-long-then-could-be",
        f"{EN}So the answer is B, although it could be D.",
        WAIT,
        None,
    ),
    case("hedge-then-commitment", "It could be D, but I'd go with C.", WAIT, "C"),
    case("hedge-could-not-be", "The answer is B. It could not be A.", WAIT, "B"),
    case("hedge-maybe-question-then-answer", "Maybe B? No, the answer is C.", WAIT, "C"),
    case(
        "hedge-might-be-tempting",
        "It might be tempting to say A, but the answer is B.",
        WAIT,
        "B",
    ),
    case("hedge-could-it-be-then-its", "Could it be A? No: it's B.", WAIT, "B"),
    case(
        "hedge-restricted-by-a-condition",
        "Answer: B. Maybe A, if you only care about legacy code.",
        WAIT,
        "B",
    ),
    case(
        "hedge-restricted-in-parens",
        "The answer is B (it might be C in the old engine).",
        WAIT,
        "B",
    ),
    case(
        "hedge-other-subject-might-be",
        "Answer: B. The throttled one might be A.",
        WAIT,
        "B",
    ),
    # -- reasonable replies the function misreads --------------------------------------------------
    case(
        "xfail-hedge-then-pick-after-comma",
        "Between A and B, B.",
        WAIT,
        "B",
        xfail="the comma reads as joining the last B to the hedge 'A and B' (as in 'A, B or C'), so it is one hedge",
    ),
    case(
        "xfail-not-x-but-y-in-reasoning",
        "wait() is throttled and the others are deprecated.\n\nThe answer is not A but B.",
        WAIT,
        "B",
        xfail="'but B' is no commitment cue, and the lead 'the answer is' is followed by 'not'; a short reply reads it",
    ),
    case(
        "xfail-lowercase-then-slang",
        "i'd say b tbh",
        WAIT,
        "B",
        xfail="a lowercase letter followed by a word ('b tbh') reads as a word, like 'a matter'",
    ),
]


def graded(reply: str, choices: list[str]) -> str | None:
    """The letter the multiple-choice grader reads: from the reply without its reasoning block."""
    return extract_letter(split(reply)[1], choices)


# A question with 26 choices, one per letter: every letter in each shape, "A" and "I" too.
ALPHABET = [f"choice {i}" for i in range(26)]


SHAPES = {
    "answer-colon": "Answer: {L}",
    "answer-is-paren": "The answer is ({L}).",
    "bold-alone": "**{L}**",
    "bare": "{L}",
    "bare-lowercase": "{l}",
    "go-with": "I'd go with {L}.",
    "i-think-its": "I think it's {L}.",
    "option-is-correct": "Option {L} is correct.",
    "letter-it-is": "{L} it is.",
    "dash-because": "{L} — because it fits best.",
    "tags": "<answer>{L}</answer>",
    "answer-lowercase": "answer: {l}",
    "reasoning-then-answer": "Each choice is weighed above.\n\nSo the answer is {L}.",
    "reasoning-then-bold-line": "Each choice is weighed above.\n\n**{L}**",
    "first-line-then-why": "{L}\n\nIt is the only choice that fits.",
    "think-draft-then-first-line": "<think>The answer is {D}.</think>\n{L}\n\nIt is the only choice that fits.",
}


def shaped(shape: str, letter: str) -> str:
    """The reply of a shape for a letter ({D}: another letter, a draft's)."""
    return SHAPES[shape].format(L=letter, l=letter.lower(), D="B" if letter == "A" else "A")
