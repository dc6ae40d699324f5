"""An item's calls through `EvalRun` and its run cache, against loopback servers and the real SDKs:
a bad reply is the item's API error and asked again by the next run, a fatal error and every
record carry no key, and a call refused after a full disk ended the run ends with the disk's
error. No child process: the run is in the test's process, the servers on its threads. `Scrub`
alone is tests/unit/test_replies.py."""

from __future__ import annotations

import json

import pytest

from evals.errors import FatalProviderError, StorageError
from evals.grading.judges import JudgeSpec
from evals.identity import from_values
from evals.plan import plan
from evals.providers import RetryPolicy, configured_secrets, make_provider
from evals.run import EvalRun
from evals.tasks import TASKS
from tests.support.loopback import Answer, OpenAIServer, Reply, set_field

FAST = RetryPolicy(attempts=3, base_delay=0.01, max_delay=0.02, timeout=5)
CANDIDATE_KEY = "fake-candidate-key-for-replies"
JUDGE_KEY = "fake-judge-key-for-replies"


@pytest.fixture(autouse=True)
def keys(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", CANDIDATE_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", JUDGE_KEY)


def mc_run(server, folder, session, **kwargs):
    judges = (
        JudgeSpec("anthropic", "claude-haiku-4-5"),
    )  # configured, though multiple choice calls no judge
    ident = from_values(
        {"provider": "openai", "model": "student-1", "base_url": server.url + "/v1"}, judges=judges
    )
    planned = plan(TASKS["multiple_choice"], ident)
    secrets = [key for j in ident.judges for key in configured_secrets(j.provider_spec())]
    return EvalRun(
        TASKS["multiple_choice"],
        planned.config,
        planned.samples[:2],
        candidate=make_provider(ident.spec),
        folder=folder,
        session=session,
        policy=FAST,
        secrets=secrets,
        **kwargs,
    )


def test_a_reply_that_stays_malformed_is_the_items_api_error_and_the_next_run_asks_again(tmp_path):
    with OpenAIServer(
        lambda req: Answer("Answer: A", reshape=set_field("choices.0.message", None))
    ) as server:
        run = mc_run(server, tmp_path / "run", "first")
        sample = run.samples[0]

        row = run.answer(sample)

        assert row["status"] == "apiError" and not row["correct"]
        assert (
            row["error"]
            == "malformed_response: malformed reply: choices[0].message is null, not an object (after 3 attempts)"
        )
        assert len(server.requests) == 3
        assert (
            run.answer(sample) == row and len(server.requests) == 3
        )  # recorded: not asked again in this session

        server.responder = lambda req: Answer("Answer: A", input_tokens=9)
        again = mc_run(server, tmp_path / "run", "second").answer(sample)

    assert again["status"] in ("correct", "wrong") and again["usage"]["input"] == 9
    assert len(server.requests) == 4


def test_a_fatal_error_that_echoes_a_judges_key_is_raised_without_it(tmp_path):
    body = {
        "error": {
            "message": f"key {CANDIDATE_KEY} rejected; {JUDGE_KEY} too",
            "type": "invalid_request_error",
            "code": "invalid_api_key",
        }
    }
    with OpenAIServer(lambda req: Reply(401, body)) as server:
        run = mc_run(server, tmp_path / "run", "first")

        with pytest.raises(FatalProviderError) as raised:
            run.answer(run.samples[0])
        with pytest.raises(FatalProviderError) as later:
            run.answer(run.samples[1])

    for error in (raised.value, later.value):
        assert str(error).startswith("HTTP 401: key <redacted> rejected; <redacted> too")
    assert not list(
        (tmp_path / "run").rglob("*.json")
    )  # a fatal error ends the run; nothing is recorded


def test_a_key_rejected_after_a_full_disk_ended_the_run_ends_the_item_with_the_disks_error(
    tmp_path,
):
    """A call in flight when another ended the run (a full disk), then refused (401), meets the
    run's first error, as every later item does: never that error taken for the model's reply."""
    full = StorageError("cannot write the run folder (No space left on device)")

    def refuse_once_the_disk_is_full(request):
        run.end_with(full)  # another thread's write failed while this request was out
        return Reply(401, {"error": {"message": "bad key", "code": "invalid_api_key"}})

    with OpenAIServer(refuse_once_the_disk_is_full) as server:
        run = mc_run(server, tmp_path / "run", "first")

        with pytest.raises(StorageError) as raised:
            run.answer(run.samples[0])

    assert raised.value is full and len(server.requests) == 1


def test_a_reply_echoing_the_keys_is_scored_and_stored_redacted_the_same_on_every_read(tmp_path):
    text = f"I saw {CANDIDATE_KEY} and {JUDGE_KEY}.\nAnswer: A \ud83d"
    with OpenAIServer(lambda req: Answer(text, reasoning=f"{JUDGE_KEY}")) as server:
        run = mc_run(server, tmp_path / "run", "first")
        sample = run.samples[0]

        first = run.answer(sample)
        again = mc_run(server, tmp_path / "run", "second").answer(sample)

    assert len(server.requests) == 1 and without_latency(again) == without_latency(first)
    assert first["answer"] == "A"
    (record,) = (tmp_path / "run").rglob("candidate.json")
    response = json.loads(record.read_text(encoding="utf-8"))["response"]
    assert response["text"] == "I saw <redacted> and <redacted>.\nAnswer: A \\ud83d"
    assert response["reasoning"] == "<redacted>"


def without_latency(row):
    return {k: v for k, v in row.items() if k != "latency"}
