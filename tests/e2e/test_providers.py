"""Each provider against a loopback server speaking its real wire protocol, through the real SDK:
what is sent, what is read back, how failures are retried, recorded or made fatal, replies of the
wrong shape, and what the wire itself does (deadlines, stale replies, redirects, oversized
replies). No child process: the providers are called in the test's process, the servers run on
its threads. A missing key is tests/unit/test_providers.py."""

from __future__ import annotations

import select
import threading
import time

import pytest

from evals.errors import FatalProviderError, ProviderError, QuotaExhausted
from evals.providers import (
    ProviderSpec,
    Request,
    RetryPolicy,
    Throttle,
    call_with_retries,
    make_provider,
)
from tests.support.keys import KEY, api_keys  # noqa: F401 (api_keys: autouse, every test runs with the fake keys)
from tests.support.loopback import (
    Answer,
    AnthropicServer,
    Fault,
    OpenAIServer,
    Reply,
    last_user_text,
    set_field,
)

FAST = RetryPolicy(base_delay=0.01, max_delay=0.05, timeout=5)


@pytest.fixture
def openai_server():
    with OpenAIServer() as server:
        yield server


@pytest.fixture
def anthropic_server():
    with AnthropicServer() as server:
        yield server


def ask(
    provider,
    request=Request(prompt="Which service stores player data?", system="Be brief."),
    policy=FAST,
):
    return call_with_retries(provider, request, throttle=Throttle(4), policy=policy)


def test_openai_chat_sends_the_request_and_reads_text_usage_and_finish(openai_server):
    openai_server.responder = lambda req: Answer(
        "DataStoreService", input_tokens=40, output_tokens=25, reasoning_tokens=18, cached_tokens=8
    )
    provider = make_provider(
        ProviderSpec("openai", "gpt-5.5", base_url=openai_server.url + "/v1", effort="high")
    )

    completion = ask(provider, Request(prompt="Which service?", system="Be brief.", max_tokens=300))

    assert completion.text == "DataStoreService"
    assert (
        completion.usage.input,
        completion.usage.output,
        completion.usage.reasoning,
        completion.usage.cached,
    ) == (40, 25, 18, 8)
    assert completion.finish_reason == "stop"
    body = openai_server.requests[-1].body
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Which service?"},
    ]
    assert body["max_completion_tokens"] == 300 and body["reasoning_effort"] == "high"
    assert openai_server.requests[-1].api_key == KEY


def test_openai_responses_api_reads_the_reasoning_summary(openai_server):
    openai_server.responder = lambda req: Answer(
        "Heartbeat", reasoning="It runs every frame after physics.", reasoning_tokens=12
    )
    provider = make_provider(
        ProviderSpec(
            "openai",
            "gpt-5.5",
            base_url=openai_server.url + "/v1",
            effort="low",
            responses_api=True,
        )
    )

    completion = ask(provider)

    assert completion.text == "Heartbeat"
    assert completion.reasoning == "It runs every frame after physics."
    assert completion.usage.reasoning == 12
    body = openai_server.requests[-1].body
    assert openai_server.requests[-1].path == "/v1/responses"
    assert (
        body["reasoning"] == {"effort": "low", "summary": "auto"}
        and body["instructions"] == "Be brief."
    )


def test_openai_responses_truncated_with_hidden_reasoning_is_an_empty_reply_not_a_crash(
    openai_server,
):
    openai_server.responder = lambda req: Answer(
        "", reasoning="", finish_reason="length", reasoning_tokens=64
    )
    provider = make_provider(
        ProviderSpec("openai", "o3-mini", base_url=openai_server.url + "/v1", responses_api=True)
    )

    completion = ask(provider)

    assert completion.text == "" and completion.reasoning is None
    assert completion.finish_reason == "max_output_tokens"
    assert completion.usage.reasoning == 64


def test_anthropic_thinking_is_kept_as_reasoning_with_a_budget_below_max_tokens(anthropic_server):
    anthropic_server.responder = lambda req: Answer(
        "Use task.wait()",
        reasoning="wait() is throttled.",
        input_tokens=30,
        cached_tokens=10,
        cache_creation_tokens=5,
    )
    provider = make_provider(
        ProviderSpec("anthropic", "claude-sonnet-4-6", base_url=anthropic_server.url, thinking=True)
    )

    completion = ask(provider, Request(prompt="How to yield?", temperature=0.0))

    assert completion.text == "Use task.wait()"
    assert completion.reasoning == "wait() is throttled."
    # Anthropic's input_tokens leaves out cache reads and writes; the harness counts all input.
    assert completion.usage.input == 45 and completion.usage.cached == 10
    body = anthropic_server.requests[-1].body
    assert body["thinking"]["type"] == "enabled"
    assert body["thinking"]["budget_tokens"] < body["max_tokens"]
    assert "temperature" not in body


def test_anthropic_thinking_is_adaptive_on_models_that_deprecate_a_budget(anthropic_server):
    provider = make_provider(
        ProviderSpec("anthropic", "claude-opus-4-6", base_url=anthropic_server.url, thinking=True)
    )

    ask(provider)

    assert anthropic_server.requests[-1].body["thinking"] == {"type": "adaptive"}


def test_anthropic_without_thinking_sends_system_and_max_tokens(anthropic_server):
    provider = make_provider(
        ProviderSpec("anthropic", "claude-haiku-4-5", base_url=anthropic_server.url)
    )

    completion = ask(
        provider, Request(prompt="Hi", system="Judge.", temperature=0.0, max_tokens=100)
    )

    assert completion.text == "loopback reply to: Hi" and completion.reasoning is None
    body = anthropic_server.requests[-1].body
    assert body["system"] == "Judge." and body["max_tokens"] == 100
    assert "thinking" not in body


def test_live_on_openrouter_pins_the_route_and_reads_reasoning(monkeypatch):
    # The loopback server stands in for openrouter.ai as the HTTP proxy of a plain-http URL.
    with OpenAIServer(
        lambda req: Answer("B", reasoning="Thinking about B"), reasoning_field="reasoning"
    ) as server:
        monkeypatch.setenv("HTTP_PROXY", server.url)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        provider = make_provider(
            ProviderSpec(
                "live",
                "qwen/qwen3-235b",
                base_url="http://openrouter.ai/api/v1",
                route="deepinfra",
                effort="high",
            )
        )

        completion = ask(provider)

        request = server.requests[-1]
    assert completion.text == "B" and completion.reasoning == "Thinking about B"
    assert request.headers["host"] == "openrouter.ai" and request.path == "/api/v1/chat/completions"
    assert request.body["provider"] == {"order": ["deepinfra"], "allow_fallbacks": False}
    assert request.body["reasoning"] == {"effort": "high"}
    assert request.api_key == KEY  # OPENROUTER_API_KEY, picked for openrouter.ai


def test_live_local_server_needs_no_key_and_gets_enable_thinking(openai_server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    openai_server.responder = lambda req: Answer("Hi!", reasoning="Reasoning about: Hi")
    provider = make_provider(
        ProviderSpec(
            "live", "qwen3-8b", base_url=openai_server.url + "/v1", thinking=True, max_tokens=50
        )
    )

    completion = ask(provider, Request(prompt="Hi", max_tokens=50))

    assert completion.reasoning == "Reasoning about: Hi"  # vLLM's reasoning_content
    body = openai_server.requests[-1].body
    assert body["chat_template_kwargs"] == {"enable_thinking": True} and body["max_tokens"] == 50


def test_429_with_retry_after_is_honoured_then_the_answer_arrives(openai_server):
    openai_server.fail_next(2, 429, retry_after=0.3)
    provider = make_provider(ProviderSpec("openai", "gpt-5.5", base_url=openai_server.url + "/v1"))
    throttle = Throttle(8)

    started = time.monotonic()
    completion = call_with_retries(provider, Request(prompt="Hi"), throttle=throttle, policy=FAST)

    assert completion.text == "loopback reply to: Hi"
    assert time.monotonic() - started >= 0.6  # two waits of Retry-After
    assert len(openai_server.requests) == 3
    assert throttle.limit == 8  # two 429s in a row are retried, not a rate limit to slow down for


@pytest.mark.parametrize(
    "fault", [Fault(status=500), Fault.malformed_json(), Fault.dropped(), Fault(status=529)]
)
def test_transient_failures_are_retried(fault):
    server_cls = AnthropicServer if fault.status == 529 else OpenAIServer
    with server_cls() as server:
        server.inject(fault, n=2)
        base_url = server.url + ("" if server_cls is AnthropicServer else "/v1")
        provider = make_provider(
            ProviderSpec(
                "anthropic" if server_cls is AnthropicServer else "openai", "m", base_url=base_url
            )
        )
        completion = ask(provider, Request(prompt="Hi"))
        assert completion.text == "loopback reply to: Hi"
        assert len(server.requests) == 3


def test_a_final_failure_is_a_provider_error_with_its_kind_and_attempts(openai_server):
    openai_server.fail_next(10, 500)
    provider = make_provider(ProviderSpec("openai", "gpt-5.5", base_url=openai_server.url + "/v1"))

    with pytest.raises(ProviderError) as raised:
        ask(provider, policy=RetryPolicy(attempts=3, base_delay=0.01, timeout=5))

    assert raised.value.kind == "server_error" and raised.value.status == 500
    assert "after 3 attempts" in str(raised.value)
    assert not isinstance(raised.value, FatalProviderError)


def test_a_bad_request_is_not_retried(openai_server):
    openai_server.fail_next(1, 400, error="invalid_request_error")
    provider = make_provider(ProviderSpec("openai", "gpt-5.5", base_url=openai_server.url + "/v1"))

    with pytest.raises(ProviderError) as raised:
        ask(provider)

    assert raised.value.kind == "bad_request" and len(openai_server.requests) == 1


def test_spent_quota_is_fatal_at_once(openai_server):
    openai_server.fail_next(5, error="insufficient_quota")
    provider = make_provider(ProviderSpec("openai", "gpt-5.5", base_url=openai_server.url + "/v1"))

    with pytest.raises(QuotaExhausted, match="rerun to resume"):
        ask(provider)
    assert len(openai_server.requests) == 1


def test_a_retry_after_of_a_day_means_come_back_tomorrow(anthropic_server):
    anthropic_server.fail_next(1, 429, retry_after=86400)
    provider = make_provider(
        ProviderSpec("anthropic", "claude-haiku-4-5", base_url=anthropic_server.url)
    )

    with pytest.raises(QuotaExhausted, match="24.0 h"):
        ask(provider)


def test_a_rejected_key_is_fatal_and_the_key_never_appears_in_the_message(openai_server):
    openai_server.fail_next(
        1,
        401,
        body={
            "error": {
                "message": f"Incorrect API key provided: {KEY}",
                "type": "invalid_request_error",
                "code": "invalid_api_key",
            }
        },
    )
    provider = make_provider(ProviderSpec("openai", "gpt-5.5", base_url=openai_server.url + "/v1"))

    with pytest.raises(FatalProviderError) as raised:
        ask(provider)

    assert raised.value.kind == "auth"
    assert KEY not in str(raised.value) and "<redacted>" in str(raised.value)


def test_sustained_429s_give_up_after_the_patience_budget(openai_server):
    openai_server.fail_next(100, 429, retry_after=0.05)
    provider = make_provider(ProviderSpec("openai", "gpt-5.5", base_url=openai_server.url + "/v1"))

    with pytest.raises(ProviderError) as raised:
        ask(provider, policy=RetryPolicy(rate_limit_patience=0.5, base_delay=0.01, timeout=5))

    assert raised.value.kind == "rate_limit"
    assert 5 <= len(openai_server.requests) <= 12


def test_a_retry_after_of_exactly_the_patience_is_waited_out_not_failed(openai_server):
    # The jitter added to the wait is the harness's own: it does not spend the patience.
    openai_server.fail_next(1, 429, retry_after=0.5)
    provider = make_provider(ProviderSpec("openai", "gpt-5.5", base_url=openai_server.url + "/v1"))

    completion = ask(
        provider, policy=RetryPolicy(rate_limit_patience=0.5, base_delay=0.5, timeout=5)
    )

    assert completion.text and len(openai_server.requests) == 2


@pytest.mark.parametrize("value", ["Wed, 21 Oct 2015 07:28:00 GMT", "soon"])
def test_a_retry_after_date_or_garbage_falls_back_to_a_wait_not_a_crash(anthropic_server, value):
    anthropic_server.fail_next(1, 429, headers={"retry-after": value})
    provider = make_provider(
        ProviderSpec("anthropic", "claude-haiku-4-5", base_url=anthropic_server.url)
    )

    assert ask(provider, Request(prompt="Hi")).text == "loopback reply to: Hi"
    assert len(anthropic_server.requests) == 2


# -- 200 replies of the wrong shape ---------------------------------------------------------
# Each is a malformed_response: retried like a garbled body, then the item's API error; never
# an AttributeError, a TypeError later in the token totals, or a Completion of the wrong types.

TWICE = RetryPolicy(attempts=2, base_delay=0.01, max_delay=0.05, timeout=5)


CHAT_MALFORMED = {
    "message null": set_field("choices.0.message", None),
    "content a number": set_field("choices.0.message.content", 42),
    "content a list": set_field("choices.0.message.content", ["Answer: B"]),
    "content an image part": set_field(
        "choices.0.message.content", [{"type": "image_url", "image_url": {"url": "data:,"}}]
    ),
    "content a text part of a number": set_field(
        "choices.0.message.content", [{"type": "text", "text": 7}]
    ),
    "a choice that is a string": set_field("choices.0", "Answer: B"),
    "no choices": set_field("choices", []),
    "choices null": set_field("choices", None),
    "prompt_tokens a string": set_field("usage.prompt_tokens", "12"),
    "completion_tokens negative": set_field("usage.completion_tokens", -3),
    "completion_tokens a float": set_field("usage.completion_tokens", 2.5),
    "reasoning_tokens true": set_field("usage.completion_tokens_details.reasoning_tokens", True),
    "usage a string": set_field("usage", "lots"),
    "finish_reason a number": set_field("choices.0.finish_reason", 1),
    "reasoning_content a number": set_field("choices.0.message.reasoning_content", 7),
    "the body a list": lambda body: [body],
}


@pytest.mark.parametrize("provider", ["openai", "live"])
@pytest.mark.parametrize("shape", CHAT_MALFORMED)
def test_a_chat_reply_of_the_wrong_shape_is_a_malformed_response_retried_then_final(
    openai_server, provider, shape
):
    openai_server.responder = lambda req: Answer(
        "Answer: B", reasoning="r", reshape=CHAT_MALFORMED[shape]
    )
    spec = ProviderSpec(
        provider, "gpt-5.5", base_url=openai_server.url + "/v1", api_key_env="OPENAI_API_KEY"
    )

    with pytest.raises(ProviderError) as raised:
        ask(make_provider(spec), policy=TWICE)

    assert raised.value.kind == "malformed_response" and "after 2 attempts" in str(raised.value)
    assert len(openai_server.requests) == 2


def test_a_malformed_reply_then_a_good_one_is_answered(openai_server):
    replies = iter(
        [
            Answer("x", reshape=set_field("choices.0.message", None)),
            Answer("Answer: C", input_tokens=5),
        ]
    )
    openai_server.responder = lambda req: next(replies)
    provider = make_provider(ProviderSpec("openai", "gpt-5.5", base_url=openai_server.url + "/v1"))

    completion = ask(provider)

    assert completion.text == "Answer: C" and completion.usage.input == 5


CHAT_OMITTED = {
    "prompt_tokens null": set_field("usage.prompt_tokens", None),
    "no usage": lambda body: {k: v for k, v in body.items() if k != "usage"},
    "usage null": set_field("usage", None),
    "details null": set_field("usage.completion_tokens_details", None),
    "content null": set_field("choices.0.message.content", None),
    "finish_reason null": set_field("choices.0.finish_reason", None),
}


@pytest.mark.parametrize("shape", CHAT_OMITTED)
def test_a_chat_reply_that_omits_what_the_api_may_omit_reads_as_zero_or_empty(openai_server, shape):
    openai_server.responder = lambda req: Answer(
        "Answer: B", input_tokens=11, output_tokens=3, reshape=CHAT_OMITTED[shape]
    )
    provider = make_provider(ProviderSpec("openai", "gpt-5.5", base_url=openai_server.url + "/v1"))

    completion = ask(provider)

    assert completion.text in ("Answer: B", "")
    assert all(
        isinstance(n, int) and n >= 0
        for n in (
            completion.usage.input,
            completion.usage.output,
            completion.usage.reasoning,
            completion.usage.cached,
        )
    )


RESPONSES_MALFORMED = {
    "output null": set_field("output", None),
    "an output item that is a string": set_field("output.0", "Answer: B"),
    "text a number": set_field("output.0.content.0.text", 42),
    "content null": set_field("output.0.content", None),
    "input_tokens a string": set_field("usage.input_tokens", "7"),
    "output_tokens negative": set_field("usage.output_tokens", -1),
    "reasoning summary text a number": lambda body: body["output"].insert(
        0, {"type": "reasoning", "summary": [{"type": "summary_text", "text": 3}]}
    ),
    "status a number": set_field("status", 200),
}


@pytest.mark.parametrize("shape", RESPONSES_MALFORMED)
def test_a_responses_reply_of_the_wrong_shape_is_a_malformed_response(openai_server, shape):
    openai_server.responder = lambda req: Answer("Answer: B", reshape=RESPONSES_MALFORMED[shape])
    provider = make_provider(
        ProviderSpec("openai", "gpt-5.5", base_url=openai_server.url + "/v1", responses_api=True)
    )

    with pytest.raises(ProviderError) as raised:
        ask(provider, policy=TWICE)

    assert raised.value.kind == "malformed_response" and len(openai_server.requests) == 2


def test_a_responses_reply_without_a_message_or_usage_is_an_empty_answer(openai_server):
    # gpt-5 with output = [reasoning, function_call]: no message item, so no text.
    def reshape(body):
        body["output"] = [
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {"type": "function_call", "name": "f", "arguments": "{}", "call_id": "c"},
        ]
        del body["usage"]

    openai_server.responder = lambda req: Answer("unused", reshape=reshape)
    provider = make_provider(
        ProviderSpec("openai", "gpt-5", base_url=openai_server.url + "/v1", responses_api=True)
    )

    completion = ask(provider)

    assert completion.text == "" and completion.reasoning is None and completion.usage.input == 0


ANTHROPIC_MALFORMED = {
    "content null": set_field("content", None),
    "a block that is a string": set_field("content.0", "Answer: B"),
    "text a number": set_field("content.0.text", 42),
    "thinking null": lambda body: body["content"].insert(
        0, {"type": "thinking", "thinking": None, "signature": "s"}
    ),
    "input_tokens a string": set_field("usage.input_tokens", "9"),
    "output_tokens negative": set_field("usage.output_tokens", -2),
    "cache_read_input_tokens a float": set_field("usage.cache_read_input_tokens", 1.5),
    "stop_reason a number": set_field("stop_reason", 0),
}


@pytest.mark.parametrize("shape", ANTHROPIC_MALFORMED)
def test_an_anthropic_reply_of_the_wrong_shape_is_a_malformed_response(anthropic_server, shape):
    anthropic_server.responder = lambda req: Answer("Answer: B", reshape=ANTHROPIC_MALFORMED[shape])
    provider = make_provider(
        ProviderSpec("anthropic", "claude-haiku-4-5", base_url=anthropic_server.url)
    )

    with pytest.raises(ProviderError) as raised:
        ask(provider, policy=TWICE)

    assert raised.value.kind == "malformed_response" and len(anthropic_server.requests) == 2


def test_anthropic_unknown_blocks_are_skipped_and_a_missing_usage_is_zero(anthropic_server):
    def reshape(body):
        body["content"][:0] = [
            {
                "type": "server_tool_use",
                "id": "srvtoolu_1",
                "name": "web_search",
                "input": {"query": "Luau"},
            },
            {"type": "a_block_from_the_future", "payload": [1, 2]},
        ]
        body["content"].append({"type": "redacted_thinking", "data": "EmwKAhgBEgy"})
        del body["usage"]

    anthropic_server.responder = lambda req: Answer("Answer: B", reshape=reshape)
    provider = make_provider(
        ProviderSpec("anthropic", "claude-haiku-4-5", base_url=anthropic_server.url)
    )

    completion = ask(provider)

    assert completion.text == "Answer: B" and completion.reasoning == "[redacted thinking]"
    assert completion.usage.input == completion.usage.output == 0


def test_an_anthropic_refusal_is_an_empty_answer_with_finish_reason_refusal(anthropic_server):
    anthropic_server.responder = lambda req: Answer(
        "", finish_reason="refusal", reshape=set_field("content", [])
    )
    provider = make_provider(
        ProviderSpec("anthropic", "claude-haiku-4-5", base_url=anthropic_server.url)
    )

    completion = ask(provider)

    assert completion.text == "" and completion.finish_reason == "refusal"


# -- what the wire itself does: deadlines, stale replies, redirects, oversized replies ------


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("trickle", [0.05, 0.4])
def test_a_reply_trickled_a_byte_at_a_time_ends_at_the_attempts_deadline(provider, trickle):
    # A byte every 50 ms never trips a per-read timeout of 2 s, nor does one every 400 ms:
    # only a deadline for the whole attempt ends it, on the asking thread.
    server_cls = AnthropicServer if provider == "anthropic" else OpenAIServer
    with server_cls() as server:
        server.inject(Fault(trickle=trickle), n=10)
        base_url = server.url + ("" if provider == "anthropic" else "/v1")
        made = make_provider(ProviderSpec(provider, "m", base_url=base_url))
        threads = threading.active_count()

        started = time.monotonic()
        with pytest.raises(ProviderError) as raised:
            ask(made, policy=RetryPolicy(attempts=2, base_delay=0.01, timeout=2))

        assert (
            time.monotonic() - started < 30
        )  # two attempts of 2 s, not the minute the bytes take (halfway: any load)
        assert raised.value.kind == "timeout" and "within 2 s" in str(raised.value)
        assert (
            threading.active_count() <= threads + 2
        )  # the server's own connection threads at most; none of the harness's


def test_a_deadline_leaves_the_next_request_its_whole_time(openai_server):
    openai_server.inject(Fault(trickle=0.05))
    provider = make_provider(ProviderSpec("openai", "m", base_url=openai_server.url + "/v1"))

    completion = ask(
        provider, Request(prompt="Hi"), policy=RetryPolicy(attempts=2, base_delay=0.01, timeout=1)
    )

    assert completion.text == "loopback reply to: Hi" and len(openai_server.requests) == 2


@pytest.mark.parametrize("provider", ["openai", "live", "anthropic"])
def test_a_reply_written_twice_on_a_keep_alive_connection_is_not_the_next_requests_answer(provider):
    server_cls = AnthropicServer if provider == "anthropic" else OpenAIServer
    with server_cls() as server:
        server.inject(Fault(twice=True))
        base_url = server.url + ("" if provider == "anthropic" else "/v1")
        made = make_provider(
            ProviderSpec(
                provider,
                "m",
                base_url=base_url,
                api_key_env="OPENAI_API_KEY" if provider == "live" else None,
            )
        )

        first = ask(made, Request(prompt="first question"))
        second = ask(made, Request(prompt="second question"))

    assert first.text == "loopback reply to: first question"
    assert second.text == "loopback reply to: second question"


def on_server(server, provider):
    base_url = server.url + ("" if provider == "anthropic" else "/v1")
    return make_provider(
        ProviderSpec(
            provider,
            "m",
            base_url=base_url,
            api_key_env="OPENAI_API_KEY" if provider == "live" else None,
        )
    )


def numbered(n: int):
    """A reshape giving a reply the id the server gave (or will give) its n-th reply."""
    return lambda body: {**body, "id": body["id"][:-6] + f"{n:06d}"}


QUESTIONS = ("first question", "second question", "third question")

# What a broken proxy or server leaves on a kept-alive connection after the real reply: none of
# it is the answer to the next request, whatever its id and body.
LEFTOVERS = {
    "another answer": "Answer: D",
    "the id of the reply before it": Answer("Answer: C", reshape=numbered(0)),
    "the id the next reply gets": Answer("Answer: B", reshape=numbered(1)),
    "other scripts": "Ответ: В. 答案是 B。 الإجابة: ب",
    "no text": "",
    "longer than a read": "A" * 150_000,
    "an error status": Reply(503, {"error": {"message": "overloaded", "type": "server_error"}}),
    "half a response": b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-len",
    "a body with no head": b'{"id": "chatcmpl-1", "choices": []}',
}


def asked(server) -> list[tuple[str, int]]:
    """Each request the server got: its question, and the connection it came on."""
    return [(last_user_text(r.body), r.connection) for r in server.requests]


@pytest.mark.parametrize("leftover", LEFTOVERS.values(), ids=LEFTOVERS)
@pytest.mark.parametrize("provider", ["openai", "live", "anthropic"])
def test_a_reply_already_on_the_connection_before_the_request_is_never_its_answer(
    provider, leftover
):
    # Written with the first reply, so the client reads both off the socket at once: the
    # second request goes on a fresh connection, the only place the server ever sees it.
    server_cls = AnthropicServer if provider == "anthropic" else OpenAIServer
    with server_cls() as server:
        server.inject(Fault(leftover=leftover))
        made = on_server(server, provider)

        texts = [ask(made, Request(prompt=question)).text for question in QUESTIONS]

    assert texts == [f"loopback reply to: {question}" for question in QUESTIONS]
    assert asked(server) == [(QUESTIONS[0], 0), (QUESTIONS[1], 1), (QUESTIONS[2], 1)]


@pytest.mark.parametrize("provider", ["openai", "live", "anthropic"])
def test_a_reply_arriving_after_the_answer_was_read_is_not_the_next_requests_answer(provider):
    # The leftover comes in a write of its own once the first answer is in: waiting on the
    # socket when the next request is made (httpcore's own check of an idle connection).
    server_cls = AnthropicServer if provider == "anthropic" else OpenAIServer
    written, sent = threading.Event(), threading.Event()
    with server_cls() as server:
        server.inject(Fault(leftover="Answer: D", leftover_after=written, leftover_sent=sent))
        made = on_server(server, provider)

        first = ask(made, Request(prompt=QUESTIONS[0]))
        written.set()
        assert sent.wait(10)
        second = ask(made, Request(prompt=QUESTIONS[1]))

    assert [first.text, second.text] == [f"loopback reply to: {q}" for q in QUESTIONS[:2]]
    assert asked(server) == [(QUESTIONS[0], 0), (QUESTIONS[1], 1)]


@pytest.mark.parametrize("provider", ["openai", "live", "anthropic"])
def test_a_reply_arriving_just_before_the_request_is_written_is_not_its_answer(provider):
    # The leftover lands after the pool has checked the idle connection and handed it to the
    # next request, right before that request's first byte is written: httpcore's trace
    # hook there lets it in, and waits until the client's socket has it.
    server_cls = AnthropicServer if provider == "anthropic" else OpenAIServer
    written, sent = threading.Event(), threading.Event()
    sockets: list = []
    starts: list[str] = []

    def trace(event: str, info: dict) -> None:
        if event == "connection.connect_tcp.complete":
            sockets.append(info["return_value"].get_extra_info("socket"))
        elif event == "http11.send_request_headers.started":
            starts.append(event)
            if len(starts) == 2:  # the second request, on the first connection
                written.set()
                sent.wait(10)
                select.select([sockets[0]], [], [], 10)

    with server_cls() as server:
        server.inject(Fault(leftover="Answer: D", leftover_after=written, leftover_sent=sent))
        made = on_server(server, provider)
        made.client._client.event_hooks["request"].append(
            lambda request: request.extensions.__setitem__("trace", trace)
        )

        texts = [ask(made, Request(prompt=question)).text for question in QUESTIONS]

    assert sent.is_set() and len(starts) == 4  # the second request started twice, written once
    assert texts == [f"loopback reply to: {question}" for question in QUESTIONS]
    assert asked(server) == [(QUESTIONS[0], 0), (QUESTIONS[1], 1), (QUESTIONS[2], 1)]


def test_through_an_http_proxy_a_reply_left_on_the_connection_is_not_the_next_answer(
    openai_server, monkeypatch
):
    # OpenRouter reached through the loopback server as its HTTP proxy: the proxy's pool is
    # checked as the endpoint's is.
    for name in ("NO_PROXY", "no_proxy", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", openai_server.url)
    openai_server.inject(Fault(leftover=Answer("Answer: A", reshape=numbered(1))))
    made = make_provider(
        ProviderSpec("live", "qwen/qwen3-8b", base_url="http://openrouter.ai/api/v1")
    )

    texts = [ask(made, Request(prompt=question)).text for question in QUESTIONS]

    assert texts == [f"loopback reply to: {question}" for question in QUESTIONS]
    assert asked(openai_server) == [(QUESTIONS[0], 0), (QUESTIONS[1], 1), (QUESTIONS[2], 1)]
    assert {r.path for r in openai_server.requests} == {"/api/v1/chat/completions"}


def test_a_server_with_one_fixed_id_is_answered_normally(openai_server):
    # llama.cpp-like: every reply has the same id, so only an id alone is never a sign.
    openai_server.responder = lambda req: Answer(
        f"loopback reply to: {last_user_text(req.body)}", reshape=set_field("id", "chatcmpl-123")
    )
    provider = make_provider(ProviderSpec("openai", "m", base_url=openai_server.url + "/v1"))

    texts = [ask(provider, Request(prompt=f"question {i}")).text for i in range(4)]

    assert (
        texts == [f"loopback reply to: question {i}" for i in range(4)]
        and len(openai_server.requests) == 4
    )


def test_a_reply_identical_to_another_requests_is_asked_once_more_then_taken(openai_server):
    # A server that really does answer two requests with the same bytes (fixed id, no clock):
    # asked again once, on a fresh connection, and taken.
    fixed = lambda body: {**body, "id": "fixed", "created": 0, "usage": None}  # noqa: E731
    openai_server.responder = lambda req: Answer("constant", reshape=fixed)
    provider = make_provider(ProviderSpec("openai", "m", base_url=openai_server.url + "/v1"))

    assert ask(provider, Request(prompt="one")).text == "constant"
    assert ask(provider, Request(prompt="two")).text == "constant"
    assert len(openai_server.requests) == 3


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_redirect_to_another_origin_ends_the_run_in_one_line(provider):
    server_cls = AnthropicServer if provider == "anthropic" else OpenAIServer
    with server_cls() as elsewhere, server_cls() as server:
        path = "/v1/messages" if provider == "anthropic" else "/v1/chat/completions"
        server.responder = lambda req: Reply(307, b"", {"location": elsewhere.url + path})
        server.handle = lambda req: server.responder(req)
        base_url = server.url + ("" if provider == "anthropic" else "/v1")

        with pytest.raises(FatalProviderError) as raised:
            ask(make_provider(ProviderSpec(provider, "m", base_url=base_url)))

        assert not elsewhere.requests
        assert f"{server.url} redirects to another origin, {elsewhere.url}" in str(raised.value)
    assert raised.value.kind == "redirect" and "\n" not in str(raised.value)


def test_a_redirect_within_the_endpoint_is_followed(openai_server):
    real = openai_server.handle
    openai_server.handle = lambda req: (
        Reply(307, b"", {"location": "/v1/chat/completions?moved=1"})
        if not req.query
        else real(req)
    )
    provider = make_provider(ProviderSpec("openai", "m", base_url=openai_server.url + "/v1"))

    assert ask(provider, Request(prompt="Hi")).text == "loopback reply to: Hi"


@pytest.mark.parametrize("field", ["text", "reasoning"])
def test_a_reply_longer_than_the_limit_is_kept_cut_there_and_marked(openai_server, field):
    from evals.providers._base import REPLY_LIMIT

    long = "x" * (REPLY_LIMIT + 10)
    openai_server.responder = lambda req: (
        Answer("short")
        if last_user_text(req.body) == "short"
        else Answer(
            long if field == "text" else "Answer: B",
            reasoning=long if field == "reasoning" else None,
        )
    )
    provider = make_provider(
        ProviderSpec("live", "m", base_url=openai_server.url + "/v1", api_key_env="OPENAI_API_KEY")
    )

    completion = ask(provider)

    assert len(getattr(completion, field)) == REPLY_LIMIT and completion.cut
    assert completion.to_record()["cut"] is True
    assert "cut" not in ask(provider, Request(prompt="short")).to_record()


def test_a_failed_responses_reply_is_its_api_error_not_an_empty_answer(openai_server):
    failed = {
        "status": "failed",
        "error": {"code": "server_error", "message": "The model crashed."},
        "output": [],
    }
    openai_server.responder = lambda req: Answer("", reshape=lambda body: {**body, **failed})
    provider = make_provider(
        ProviderSpec("openai", "gpt-5.5", base_url=openai_server.url + "/v1", responses_api=True)
    )

    with pytest.raises(ProviderError) as raised:
        ask(provider)

    # OpenAI's server_error: asked again, as an HTTP 500 would be (issue 31 item 1)
    assert (
        str(raised.value)
        == "HTTP 200 carrying an error server_error: The model crashed. (after 6 attempts)"
    )
    assert len(openai_server.requests) == FAST.attempts


@pytest.mark.parametrize(
    "code, kind, asked", [("429", "rate_limit", 2), (503, "server_error", 2), ("401", "auth", 1)]
)
def test_an_error_object_in_a_200_is_retried_or_final_as_its_status_says(
    openai_server, code, kind, asked
):
    replies = iter(
        [Reply(200, {"error": {"message": "upstream said no", "code": code}})] + [None] * 5
    )
    real = openai_server.handle
    openai_server.handle = lambda req: next(replies) or real(req)
    provider = make_provider(ProviderSpec("openai", "gpt-5.5", base_url=openai_server.url + "/v1"))

    if kind == "auth":
        with pytest.raises(FatalProviderError, match="upstream said no"):
            ask(provider)
    else:
        assert ask(provider, Request(prompt="Hi")).text == "loopback reply to: Hi"
    assert len(openai_server.requests) == asked


@pytest.mark.parametrize("said", ["code", "type"])
def test_a_200_carrying_spent_quota_stops_at_once_as_the_429_does(openai_server, said):
    """A gateway's HTTP 200 with OpenAI's insufficient_quota error object: every call would be
    refused, so the run stops (kept to resume), not one error item after another."""
    error = {"message": "You exceeded your current quota", said: "insufficient_quota"}
    openai_server.responder = lambda req: Reply(200, {"error": error})
    provider = make_provider(ProviderSpec("openai", "gpt-5.5", base_url=openai_server.url + "/v1"))

    with pytest.raises(QuotaExhausted) as raised:
        ask(provider)

    assert str(raised.value) == (
        "HTTP 200 carrying an error insufficient_quota: You exceeded your current quota; "
        "add credit to the account, then rerun to resume (after 1 attempt)"
    )
    assert raised.value.kind == "quota" and len(openai_server.requests) == 1


def test_payment_required_stops_at_once_as_spent_quota_does(openai_server, anthropic_server):
    """HTTP 402 (OpenRouter's spent credits), and Anthropic's billing_error inside a 200 (a
    gateway's): an account out of credit refuses every call, so the run stops, kept to resume."""
    openai_server.fail_next(
        1, 402, body={"error": {"message": "Insufficient credits", "code": 402}}
    )
    anthropic_server.responder = lambda req: Reply(
        200,
        {"type": "error", "error": {"type": "billing_error", "message": "Credit balance too low"}},
    )
    spent = [
        make_provider(ProviderSpec("openai", "gpt-5.5", base_url=openai_server.url + "/v1")),
        make_provider(ProviderSpec("anthropic", "claude-haiku-4-5", base_url=anthropic_server.url)),
    ]

    for provider in spent:
        with pytest.raises(QuotaExhausted, match="add credit to the account, then rerun to resume"):
            ask(provider)
    assert len(openai_server.requests) == len(anthropic_server.requests) == 1


def test_an_anthropic_200_carrying_an_error_is_that_api_error(anthropic_server):
    anthropic_server.responder = lambda req: Reply(
        200,
        {
            "type": "error",
            "error": {"type": "invalid_request_error", "message": "prompt is too long"},
        },
    )
    provider = make_provider(
        ProviderSpec("anthropic", "claude-haiku-4-5", base_url=anthropic_server.url)
    )

    with pytest.raises(ProviderError) as raised:
        ask(provider)

    assert (
        str(raised.value)
        == "HTTP 200 carrying an error invalid_request_error: prompt is too long (after 1 attempt)"
        and len(anthropic_server.requests) == 1
    )
