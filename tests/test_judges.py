"""Freeform judging: strict verdict parsing, the vote, `--judge` specs and the judge prompt."""

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
        # not strictly one verdict on the last line -> None
        pytest.param(f"VERDICT: CORRECT\n{REASON}", None, id="verdict-not-last"),
        pytest.param("VERDICT: CORRECT\nVERDICT: INCORRECT", None, id="two-disagreeing-lines"),
        pytest.param("VERDICT: INCORRECT\nOn reflection it is fine.\nVERDICT: CORRECT", None, id="disagreeing-then-last"),
        pytest.param(f"{REASON}\nVERDICT: MOSTLY CORRECT", None, id="mostly-correct"),
        pytest.param(f"{REASON}\nVERDICT: PARTIALLY CORRECT", None, id="partially-correct"),
        pytest.param(f"{REASON}\nVERDICT: NOT CORRECT", None, id="not-correct"),
        pytest.param(f"{REASON}\nVERDICT: CORRECT or INCORRECT", None, id="both-words"),
        pytest.param(f"{REASON}\nVERDICT: CORRECT (it names FireServer)", None, id="text-after-verdict"),
        pytest.param(f"{REASON}\nCORRECT", None, id="no-label"),
        pytest.param("CORRECT", None, id="bare-word"),
        pytest.param(f"{REASON} VERDICT: CORRECT", None, id="verdict-inside-sentence"),
        pytest.param(f"{REASON}\nVERDICT - CORRECT", None, id="dash-instead-of-colon"),
        pytest.param("", None, id="empty"),
        pytest.param(" \n\n ", None, id="whitespace"),
        pytest.param(REASON, None, id="no-verdict"),
    ],
)
def test_parse_verdict(reply, expected):
    assert parse_verdict(reply) is expected


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
        (["ok\nVERDICT: CORRECT", "ok\nVERDICT: CORRECT", "no\nVERDICT: INCORRECT"], True, ["CORRECT", "CORRECT", "INCORRECT"]),
        (["ok\nVERDICT: CORRECT", "VERDICT: CORRECT\nbut really it is wrong", "unsure"], False, ["CORRECT", None, None]),
        (["ok\nVERDICT: CORRECT", "no\nVERDICT: INCORRECT"], False, ["CORRECT", "INCORRECT"]),
    ],
    ids=["two-of-three", "unparseable-is-not-a-pass", "one-of-two"],
)
def test_freeform_row_records_each_vote(texts, correct, shown):
    """The row a freeform item writes: the majority decides, unparseable votes show as None."""
    sample = FreeformQuestion("ff-x", "What does RemoteEvent:FireServer do?", "It sends a message from the client to the server.")
    calls = FakeCalls(texts)
    row = TASKS["freeform"].score(sample, Completion(text="It fires the event on the server."), calls)
    assert row["correct"] is correct
    assert row["status"] == ("correct" if correct else "wrong")
    assert [v["verdict"] for v in row["verdicts"]] == shown
    assert [v["judge"] for v in row["verdicts"]] == calls.judge_names
    assert row["agreed"] is (len(set(shown)) == 1 and None not in shown)
    if not correct:
        assert "unparseable" in TASKS["freeform"].explain(row) or "INCORRECT" in TASKS["freeform"].explain(row)


def test_freeform_empty_reply_asks_no_judge():
    sample = FreeformQuestion("ff-x", "What does RemoteEvent:FireServer do?", "It sends a message to the server.")
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
        ("live:deepseek/deepseek-v3.2@https://openrouter.ai/api/v1", "live", "deepseek/deepseek-v3.2", "https://openrouter.ai/api/v1"),
    ],
)
def test_judge_spec_parse(text, provider, model, base_url):
    spec = JudgeSpec.parse(text)
    assert (spec.provider, spec.model, spec.base_url) == (provider, model, base_url)
    assert spec.name == text  # the name shown in reports round-trips
    assert spec.identity()["model"] == model
    assert ("baseUrl" in spec.identity()) is (base_url is not None)


@pytest.mark.parametrize("text", ["badform", "openai", "openai:", ":gpt-5-mini", "@http://127.0.0.1:8000/v1", ""])
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
    sample = FreeformQuestion("ff-x", "Where do server-only modules go?", "In ServerStorage, which clients never receive.")
    calls = FakeCalls(["VERDICT: CORRECT"] * 3)
    TASKS["freeform"].score(sample, Completion(text="Put them in ServerStorage."), calls)
    assert len(calls.prompts) == 3
    for prompt in calls.prompts:
        assert sample.question in prompt and sample.answer in prompt and "Put them in ServerStorage." in prompt
