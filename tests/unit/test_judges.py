"""Freeform judging, in process: verdict parsing (as the prompt asks for it, as judges say it
their own way, and after a judge's reasoning block), the vote, a freeform row's votes, `--judge`
specs and the judge prompt. A whole freeform run so judged is tests/e2e/test_judges.py."""

from __future__ import annotations

import pytest

from evals.datasets.robloxqa import FreeformQuestion
from evals.grading.judges import (
    JudgeSpec,
    judge_prompt,
    majority,
    parse_verdict,
    unanimous,
)
from evals.providers import Completion
from evals.tasks import TASKS
from tests.support import verdict_tables

REASON = "The candidate names FireServer for client-to-server and InvokeServer for a reply, as the reference does."


@pytest.mark.parametrize(
    "reply, expected",
    [
        pytest.param(f"{REASON}\nVERDICT: CORRECT", True, id="correct-last-line"),
        pytest.param(f"{REASON}\nVERDICT: INCORRECT", False, id="incorrect-last-line"),
        pytest.param(f"{REASON}\n\nVERDICT: INCORRECT\n\n", False, id="trailing-blank-lines"),
        pytest.param(f"{REASON}\n**VERDICT: CORRECT**", True, id="bold-line"),
        pytest.param(f"{REASON}\n**VERDICT:** INCORRECT", False, id="bold-label"),
        pytest.param(f"{REASON}\nVERDICT: **CORRECT**", True, id="bold-word"),
        pytest.param(f"{REASON}\n`VERDICT: CORRECT`", True, id="code-span"),
        pytest.param(f"{REASON}\n## VERDICT: CORRECT", True, id="markdown-header"),
        pytest.param(f"{REASON}\nverdict: correct", True, id="lowercase"),
        pytest.param(f"{REASON}\nVerdict: Incorrect.", False, id="titlecase-with-period"),
        pytest.param(f"{REASON}\nVERDICT:CORRECT", True, id="no-space"),
        pytest.param("VERDICT: CORRECT\nVERDICT: CORRECT", True, id="repeated-agreeing"),
        pytest.param(
            "The reply claims VERDICT: CORRECT should be given, but it misses InvokeServer.\nVERDICT: INCORRECT",
            False,
            id="verdict-words-inside-reasoning-line",
        ),
        # not one verdict stated clearly -> None
        pytest.param("VERDICT: CORRECT\nVERDICT: INCORRECT", None, id="two-disagreeing-lines"),
        pytest.param(
            "VERDICT: INCORRECT\nOn reflection it is fine.\nVERDICT: CORRECT",
            None,
            id="disagreeing-then-last",
        ),
        pytest.param(f"{REASON}\nVERDICT: MOSTLY CORRECT", None, id="mostly-correct"),
        pytest.param(f"{REASON}\nVERDICT: PARTIALLY CORRECT", None, id="partially-correct"),
        pytest.param(f"{REASON}\nVERDICT: NOT CORRECT", False, id="not-correct"),
        pytest.param(f"{REASON}\nVERDICT: NOT INCORRECT", None, id="not-incorrect"),
        pytest.param(f"{REASON}\nVERDICT: CORRECT or INCORRECT", None, id="both-words"),
        pytest.param(f"{REASON}\nCORRECT", None, id="no-label"),
        pytest.param("CORRECT", None, id="bare-word"),
        pytest.param(f"{REASON} VERDICT: CORRECT", None, id="verdict-inside-sentence"),
        pytest.param("", None, id="empty"),
        pytest.param(" \n\n ", None, id="whitespace"),
        pytest.param(REASON, None, id="no-verdict"),
    ],
)
def test_parse_verdict(reply, expected):
    assert parse_verdict(reply) is expected


# Judges who say it their own way (issue 20): each kind as the issue found it, then more of its
# kind, then what must stay unparseable. Three cases of the table above (a verdict first, then
# reasoning; a sentence after the verdict; a dash) were unparseable before and read now.
THINK_DRAFT = (
    "<think>\nThe candidate seems to swap them. VERDICT: INCORRECT\nVERDICT: "
    "INCORRECT\nNo wait, it names both, in order.\n</think>\n"
)
OWN_WAY = {
    "verdict-first": [
        (f"VERDICT: CORRECT\n{REASON}", True),  # the issue's
        (
            "**VERDICT: INCORRECT**\n\nThe candidate names InvokeServer where the reference says FireServer.",
            False,
        ),
        (f"Verdict: CORRECT\n\nReasoning: {REASON}", True),
        (
            "VERDICT: INCORRECT. The candidate says RemoteFunction, but the reference says RemoteEvent.",
            False,
        ),
        ("## VERDICT: CORRECT\n- names FireServer\n- names InvokeServer", True),
        (
            f"### Verdict\n**CORRECT**\n\n{REASON}",
            True,
        ),  # the label as a heading, the verdict under it
        (
            "VERDICT: INCORRECT\nThe candidate names RemoteFunction; the correct answer is RemoteEvent.",
            False,
        ),
        ("VERDICT: CORRECT\n\nThe candidate correctly identifies both calls.", True),
    ],
    "json": [
        ('{"verdict": "CORRECT"}', True),  # the issue's
        ('{"verdict":"INCORRECT"}', False),
        (
            '{"reasoning": "It names FireServer and InvokeServer, but not in order.", "verdict": "CORRECT"}',
            True,
        ),
        (
            '```json\n{\n  "verdict": "INCORRECT",\n  "reason": "It swaps the two calls."\n}\n```',
            False,
        ),
        (f'{REASON}\n\n```json\n{{"verdict": "CORRECT", "confidence": 0.9}}\n```', True),
        ("{'verdict': 'CORRECT'}", True),
        ('{"final_verdict": "correct"}', True),
    ],
    "final-verdict": [
        (f"{REASON}\nFinal verdict: CORRECT", True),  # the issue's
        (f"{REASON}\nFinal Verdict: INCORRECT", False),
        (f"{REASON}\n**Final verdict:** CORRECT", True),
        (f"{REASON}\nOverall verdict: CORRECT", True),
        (f"{REASON}\nMy verdict is INCORRECT.", False),
        (f"{REASON}\nJudgment: CORRECT", True),
        (f"{REASON}\nThe verdict is CORRECT.", True),
        (f"{REASON}\n<verdict>INCORRECT</verdict>", False),
    ],
    "separator": [
        (f"{REASON}\nVERDICT - CORRECT", True),  # the issue's
        (f"{REASON}\nVERDICT：INCORRECT", False),  # the issue's: a full-width colon
        (f"{REASON}\nVERDICT — CORRECT", True),
        (f"{REASON}\nVERDICT – INCORRECT", False),
        (f"{REASON}\nVERDICT = CORRECT", True),
        (f"{REASON}\nVERDICT -> INCORRECT", False),
        (f"{REASON}\nVERDICT => CORRECT", True),
        (f"{REASON}\nＶＥＲＤＩＣＴ：ＣＯＲＲＥＣＴ", True),  # full-width letters too
    ],
    "trailing": [
        (f"{REASON}\nVERDICT: CORRECT ✅", True),  # the issue's
        (f"{REASON}\nVERDICT: CORRECT (it names FireServer)", True),  # the issue's
        (f"{REASON}\nVERDICT: INCORRECT ❌", False),
        (f"{REASON}\nVERDICT: CORRECT - the candidate states the same key facts.", True),
        (
            f"{REASON}\nVERDICT: INCORRECT. It names InvokeServer where the reference says FireServer.",
            False,
        ),
        (f"{REASON}\n✅ VERDICT: CORRECT", True),
        (f"{REASON}\nVERDICT: CORRECT 🎉 Nice work.", True),
        (f"{REASON}\nVERDICT: INCORRECT, since it swaps the two calls.", False),
    ],
    "code-fence": [
        ("```\nVERDICT: CORRECT\n```", True),  # the issue's
        (f"{REASON}\n```text\nVERDICT: INCORRECT\n```", False),
        (f"{REASON}\n~~~\nVERDICT: CORRECT\n~~~", True),
        (f"{REASON}\n```VERDICT: CORRECT```", True),
        (f"{REASON}\n\n```\nFinal verdict: INCORRECT\n```\n", False),
    ],
    "reasoning-block": [
        (f"{THINK_DRAFT}VERDICT: CORRECT", True),  # the issue's
        (f"<thinking>\nVERDICT: CORRECT?\n</thinking>\n\n{REASON}\nVERDICT: INCORRECT", False),
        ("<reasoning>Draft: VERDICT: CORRECT</reasoning>\nVERDICT: INCORRECT", False),
        ("  <THINK>VERDICT: INCORRECT</THINK>\n\nFinal verdict: CORRECT", True),
        ("<think>a</think><think>VERDICT: INCORRECT</think>VERDICT: CORRECT", True),
    ],
    # -- what stays unparseable -------------------------------------------------------------------
    "both-asserted": [
        (f"VERDICT: CORRECT\n{REASON}\nVERDICT: INCORRECT", None),
        (f"{REASON}\nFinal verdict: INCORRECT\nVERDICT: CORRECT", None),
        (f"{REASON}\nVERDICT: CORRECT and INCORRECT", None),
        (f"{REASON}\nVERDICT: CORRECT/INCORRECT", None),
        ('{"verdict": "CORRECT"}\nVERDICT: INCORRECT', None),
        ('{"verdict": "CORRECT", "final_verdict": "INCORRECT"}', None),
        ("```\nVERDICT: CORRECT\nVERDICT: INCORRECT\n```", None),
        (f"{REASON}\nVERDICT: ~~CORRECT~~ INCORRECT", None),
    ],
    "qualified": [
        (f"{REASON}\nVERDICT: Partially correct", None),
        (f"{REASON}\nVERDICT: CORRECT (mostly)", None),
        (f"{REASON}\nVERDICT: CORRECT (partially)", None),
        (f"{REASON}\nVERDICT: HALF CORRECT", None),
        (f"{REASON}\nVERDICT: CORRECT in part, incorrect in part", None),
        (f"{REASON}\nVERDICT: CORRECT, but it misses InvokeServer", None),
        (f"{REASON}\nVERDICT: CORRECT. But it misses InvokeServer.", None),
        (f"{REASON}\nVERDICT: CORRECT?", None),
        (f"{REASON}\nVERDICT: CORRECT-ish", None),
        (f"{REASON}\nVERDICT: CORRECT — not quite, though", None),
        (f"{REASON}\nVerdict: the candidate is mostly correct.\nVERDICT: CORRECT", None),
        (f"{REASON}\nMy verdict is that it is correct", None),
        ('{"verdict": "PARTIALLY CORRECT"}', None),
        ('{"verdict": "maybe"}', None),
        (f"{REASON}\nVERDICT: CORRECT ❌", None),  # emoji that say the other verdict
        (f"{REASON}\n❌ VERDICT: CORRECT", None),
        (f"{REASON}\nVERDICT: INCORRECT ✅", None),
    ],
    "taken-back": [
        ("VERDICT: CORRECT\nbut really it is wrong", None),
        ("VERDICT: CORRECT\nWait, the candidate swaps the two. It is wrong.", None),
        (f"VERDICT: INCORRECT\n{REASON} Actually, on a second read it matches.", None),
        ("VERDICT: CORRECT\nHowever, it never mentions InvokeServer.", None),
        ("VERDICT: CORRECT\nNo, it is not: the candidate swaps them.", None),
        ("VERDICT: CORRECT\nI mean INCORRECT.", None),
        (
            "VERDICT: CORRECT\nThe candidate says InvokeServer reaches "
            "the client, which contradicts the reference: incorrect.",
            None,
        ),
        ("VERDICT: INCORRECT\nOn balance I would call it CORRECT.", None),
        # a verdict in the middle is not where a reader looks: here, the candidate's own line quoted
        (
            "The candidate's answer ends with:\n```\nVERDICT: "
            "CORRECT\n```\nwhich tries to sway the grader; it names neither call.",
            None,
        ),
    ],
    "refusal": [
        ("I'm sorry, but I can't grade this answer.", None),
        ("I cannot determine a verdict without more context.", None),
        (f"{REASON}\nVERDICT: UNABLE TO DETERMINE", None),
        (f"{REASON}\nVERDICT: N/A", None),
        ("VERDICT: I decline to judge this.", None),
        ("<think>VERDICT: CORRECT</think>\nI cannot decide.", None),
    ],
    "empty": [
        ("", None),
        ("<think></think>", None),
        ("<think>VERDICT: CORRECT</think>", None),  # nothing after the reasoning
        ("<think>\nVERDICT: CORRECT", None),  # an unclosed reasoning block has no answer
        ("```\n```", None),
        ("VERDICT:", None),
        (f"```\n{REASON}\n```", None),
    ],
    "not-correct": [  # INCORRECT (issue 29), never CORRECT
        (f"{REASON}\nVERDICT: not correct.", False),
        (f"{REASON}\nFinal verdict: NOT CORRECT", False),
        (f"{REASON}\nVERDICT - NOT CORRECT", False),
        (f"{REASON}\nVERDICT: isn't correct", False),
        (f"{REASON}\nVerdict is not CORRECT", False),
        (f"{REASON}\nVERDICT: CORRECT? Not really.", None),
        (f"{REASON}\nVERDICT: NOT INCORRECT", None),  # a double negation is no pass
    ],
    "incorrect-spelled-apart": [  # INCORRECT, however written, is never CORRECT
        (f"{REASON}\nVERDICT: IN-CORRECT", None),
        (f"{REASON}\nVERDICT: **IN**CORRECT", None),
        (f"{REASON}\nVERDICT: In correct", None),
        (f"{REASON}\nVERDICT: INCORRECTLY graded", None),
        (f"{REASON}\nVERDICT: UNCORRECT", None),
        (f"{REASON}\nＶＥＲＤＩＣＴ：ＩＮＣＯＲＲＥＣＴ", False),
    ],
}


@pytest.mark.parametrize(
    "reply, expected",
    [
        pytest.param(reply, expected, id=f"{kind}-{i}")
        for kind, cases in OWN_WAY.items()
        for i, (reply, expected) in enumerate(cases)
    ],
)
def test_parse_verdict_said_their_own_way(reply, expected):
    assert parse_verdict(reply) is expected


@pytest.mark.parametrize("reply, expected", verdict_tables.CASES)
def test_parse_verdict_agrees_with_a_careful_reader(reply, expected):
    """The probe corpus (issue 29): every class the README documents and the issue found
    unread, each with the verdict a careful reader takes; `bench/judge_agreement.py` prints
    the agreement per class."""
    assert verdict_tables.graded(reply) is expected


def test_a_verdict_is_read_after_the_judges_reasoning_block_by_the_graders_one_rule():
    assert parse_verdict(f"{THINK_DRAFT}VERDICT: CORRECT") is True
    assert parse_verdict("<think>VERDICT: CORRECT") is None  # unclosed: no answer
    assert (
        parse_verdict("VERDICT: INCORRECT\n</think>\nVERDICT: CORRECT") is True
    )  # a block the chat template opened
    assert (
        parse_verdict("VERDICT: CORRECT <think>VERDICT: INCORRECT</think>") is None
    )  # only at the start: both stand


@pytest.mark.parametrize(
    "verdicts, expected",
    [
        ([True, True, True], True),
        ([True, True, False], True),  # 2 of 3
        ([True, True, None], True),
        ([True, False, False], False),
        ([True, None, None], False),  # unparseable never counts as a pass
        ([None, None, None], False),
        ([True, False], False),  # 1 of 2 is not a majority
        ([True, None], False),
        ([True], True),
        ([None], False),
        ([], False),
    ],
)
def test_majority(verdicts, expected):
    assert majority(verdicts) is expected


@pytest.mark.parametrize(
    "verdicts, expected",
    [
        ([True, True, True], True),
        ([False, False, False], True),
        ([True, True, False], False),
        ([True, True, None], False),
        ([None, None, None], False),
    ],
)
def test_unanimous(verdicts, expected):
    assert unanimous(verdicts) is expected


class FakeCalls:
    """Judges that answer with fixed texts, in the shape `Freeform.score` calls them."""

    def __init__(self, texts: list[str]):
        self.texts = texts
        self.judge_names = [f"judge{i}" for i in range(len(texts))]
        self.prompts: list[str] = []

    def judge(self, item_id, index, request):
        self.prompts.append(request.prompt)
        return Completion(text=self.texts[index])


@pytest.mark.parametrize(
    "texts, correct, shown",
    [
        (
            ["ok\nVERDICT: CORRECT", "ok\nVERDICT: CORRECT", "no\nVERDICT: INCORRECT"],
            True,
            ["CORRECT", "CORRECT", "INCORRECT"],
        ),
        (
            ["ok\nVERDICT: CORRECT", "VERDICT: CORRECT\nbut really it is wrong", "unsure"],
            False,
            ["CORRECT", None, None],
        ),
        (["ok\nVERDICT: CORRECT", "no\nVERDICT: INCORRECT"], False, ["CORRECT", "INCORRECT"]),
    ],
    ids=["two-of-three", "unparseable-is-not-a-pass", "one-of-two"],
)
def test_freeform_row_records_each_vote(texts, correct, shown):
    """The row a freeform item writes: the majority decides, unparseable votes show as None."""
    sample = FreeformQuestion(
        "ff-x",
        "What does RemoteEvent:FireServer do?",
        "It sends a message from the client to the server.",
    )
    calls = FakeCalls(texts)
    row = TASKS["freeform"].score(
        sample, Completion(text="It fires the event on the server."), calls
    )
    assert row["correct"] is correct
    assert row["status"] == ("correct" if correct else "wrong")
    assert [v["verdict"] for v in row["verdicts"]] == shown
    assert [v["judge"] for v in row["verdicts"]] == calls.judge_names
    assert row["agreed"] is (len(set(shown)) == 1 and None not in shown)
    if not correct:
        assert "unparseable" in TASKS["freeform"].explain(row) or "INCORRECT" in TASKS[
            "freeform"
        ].explain(row)


def test_freeform_empty_reply_asks_no_judge():
    sample = FreeformQuestion(
        "ff-x", "What does RemoteEvent:FireServer do?", "It sends a message to the server."
    )
    calls = FakeCalls(["VERDICT: CORRECT"] * 3)
    row = TASKS["freeform"].score(sample, Completion(text="  \n"), calls)
    assert row["correct"] is False
    assert calls.prompts == []


@pytest.mark.parametrize(
    "text, provider, model, base_url",
    [
        ("openai:gpt-5-mini", "openai", "gpt-5-mini", None),
        ("anthropic:claude-haiku-4-5", "anthropic", "claude-haiku-4-5", None),
        ("live:deepseek/deepseek-v3.2", "live", "deepseek/deepseek-v3.2", None),
        ("live:qwen3-8b@http://127.0.0.1:8000/v1", "live", "qwen3-8b", "http://127.0.0.1:8000/v1"),
        (
            "live:deepseek/deepseek-v3.2@https://openrouter.ai/api/v1",
            "live",
            "deepseek/deepseek-v3.2",
            "https://openrouter.ai/api/v1",
        ),
    ],
)
def test_judge_spec_parse(text, provider, model, base_url):
    spec = JudgeSpec.parse(text)
    assert (spec.provider, spec.model, spec.base_url) == (provider, model, base_url)
    assert spec.name == text  # the name shown in reports round-trips
    assert spec.identity()["model"] == model
    assert ("baseUrl" in spec.identity()) is (base_url is not None)


@pytest.mark.parametrize(
    "text", ["badform", "openai", "openai:", ":gpt-5-mini", "@http://127.0.0.1:8000/v1", ""]
)
def test_judge_spec_bad_forms(text):
    with pytest.raises(ValueError) as error:
        JudgeSpec.parse(text)
    message = str(error.value)
    assert "--judge" in message and repr(text) in message
    assert "provider:model" in message


def test_judge_prompt_holds_question_reference_and_reply():
    question = "What does `task.wait()` return?"
    reference = "The time that actually elapsed, in seconds."
    reply = "It returns how long the thread really yielded, in seconds."
    prompt = judge_prompt(f"  {question}\n", f"\n{reference}  ", f"{reply}\n\n")
    assert question in prompt and reference in prompt and reply in prompt
    # the order a judge reads: question, then the reference, then the candidate
    assert prompt.index(question) < prompt.index(reference) < prompt.index(reply)
    # it asks for the exact final line that parse_verdict reads
    assert "VERDICT: CORRECT" in prompt and "VERDICT: INCORRECT" in prompt


def test_freeform_judges_see_the_prompt():
    sample = FreeformQuestion(
        "ff-x", "Where do server-only modules go?", "In ServerStorage, which clients never receive."
    )
    calls = FakeCalls(["VERDICT: CORRECT"] * 3)
    TASKS["freeform"].score(sample, Completion(text="Put them in ServerStorage."), calls)
    assert len(calls.prompts) == 3
    for prompt in calls.prompts:
        assert (
            sample.question in prompt
            and sample.answer in prompt
            and "Put them in ServerStorage." in prompt
        )


# -- a whole freeform run, judged by judges who say it their own way --------------------------------
