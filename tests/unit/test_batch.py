"""--batch, in process: the result lines each Batch API writes (an OpenAI error line in either
shape; an Anthropic result errored, canceled or of the wrong shape), calls split into batches
within an API's request and byte limits, and the board's suite cost with batched tokens at the
batch price. Whole batch runs are tests/e2e/test_batch.py."""

from __future__ import annotations

import json

import pytest

from evals.askers.batch import _chunks
from evals.providers import ProviderSpec, Request
from evals.providers._anthropic import _result_outcome
from evals.providers.openai import OpenAIBatch, OpenAIProvider
from evals.run import Call
from evals.site.board import _costs, _total

# -- refusals: nothing left behind that blocks a later run ---------------------------------------


# A refusal of one of the calls that make a submission: the API made no batch of it.


# -- results the API refuses to hand over --------------------------------------------------------


# (provider, how the batch ends, which call is refused, its status, the line)


# -- looking for a submission by name --------------------------------------------------------------


# -- result lines, as the APIs write them ------------------------------------------------------


@pytest.fixture
def openai_batch(monkeypatch) -> OpenAIBatch:
    monkeypatch.setenv("OPENAI_API_KEY", "fake-openai-key-for-tests")
    return OpenAIProvider(
        ProviderSpec("openai", "gpt-4o-mini", base_url="http://127.0.0.1:9/v1")
    ).batch_api()


def test_an_openai_error_line_in_either_shape_is_the_requests_error(openai_batch):
    refused = {
        "id": "batch_req_1",
        "custom_id": "c1",
        "error": None,
        "response": {
            "status_code": 400,
            "request_id": "r",
            "body": {
                "error": {
                    "message": "Unsupported value: 'system'",
                    "type": "invalid_request_error",
                    "param": None,
                    "code": None,
                }
            },
        },
    }
    expired = {
        "id": "batch_req_123",
        "custom_id": "c2",
        "response": None,
        "error": {
            "code": "batch_expired",
            "message": "This request could not be executed before the completion window expired.",
        },
    }
    refusal, unrun = openai_batch._outcome(refused), openai_batch._outcome(expired)
    assert refusal.kind == "bad_request" and "Unsupported value" in str(refusal)
    assert unrun.kind == "batch_not_run" and "expired" in str(unrun)


def test_an_anthropic_errored_result_is_read_by_its_nested_type():
    errored = {
        "type": "errored",
        "error": {
            "type": "error",
            "error": {"type": "overloaded_error", "message": "Overloaded"},
            "request_id": "r",
        },
    }
    outcome = _result_outcome(errored)
    assert outcome.kind == "server_error" and "overloaded_error" in str(
        outcome
    )  # retried, as a 529 over HTTP is
    assert _result_outcome({"type": "canceled"}).kind == "batch_not_run"
    assert (
        _result_outcome({"type": "succeeded", "message": {"content": "x"}}).kind
        == "malformed_response"
    )


class _Limits:
    """The two limits `_chunks` reads off a Batch API, and its line shape."""

    def __init__(self, max_requests: int, max_bytes: int):
        self.max_requests, self.max_bytes = max_requests, max_bytes

    def line(self, custom_id, request):
        return {"custom_id": custom_id, "body": {"prompt": request.prompt}}


@pytest.mark.parametrize(
    "max_requests, max_bytes, sizes", [(15, 10**9, [15, 15, 10]), (10**6, 1000, None)]
)
def test_calls_are_split_into_batches_within_the_apis_request_and_byte_limits(
    max_requests, max_bytes, sizes
):
    calls = [Call(f"q{i}", "candidate", None, Request(prompt="x" * 90)) for i in range(40)]
    limits = _Limits(max_requests, max_bytes)
    chunks = list(_chunks(limits, calls))
    assert [call for chunk in chunks for _, call in chunk] == calls
    assert sizes is None or [len(chunk) for chunk in chunks] == sizes
    for chunk in chunks:
        assert (
            sum(len(json.dumps(limits.line(cid, call.request)).encode()) + 1 for cid, call in chunk)
            <= max_bytes
        )
    assert len({cid for chunk in chunks for cid, _ in chunk}) == len(calls)


def test_the_boards_suite_cost_prices_batched_tokens_at_the_share_the_result_file_records():
    plain = {"tokens": {"input": 1_000_000, "output": 1_000_000}}
    batched = {
        **plain,
        "batch": {
            "calls": 10,
            "tokens": {"input": 1_000_000, "output": 500_000},
            "priceFactor": 0.5,
        },
    }
    entry = {"name": "m", "price": {"input": 2.0, "output": 8.0}}

    def suite_cost(summaries):
        costs, _ = _costs(entry, {key: {"summary": summary} for key, summary in summaries.items()})
        return _total(entry, costs)

    cost = suite_cost({"freeform": plain, "multipleChoice": plain, "leetcode": {"overall": plain}})
    discounted = suite_cost(
        {"freeform": batched, "multipleChoice": plain, "leetcode": {"overall": plain}}
    )
    assert cost == 30.0 and discounted == 30.0 - 0.5 * 2.0 - 0.25 * 8.0
