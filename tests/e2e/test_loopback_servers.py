"""The loopback servers, exercised through the real openai / anthropic SDK clients: replies that
parse, injected faults as the SDKs' errors, recording and latency. The servers run on threads of
the test; in a child process (tests/support/loopback ServerProcess) one prints its URL and logs to
a file, and that log survives a client process SIGKILLed mid-request."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor

import anthropic
import openai
import pytest

from tests.support.harness import wait_for
from tests.support.loopback import (
    Answer,
    AnthropicServer,
    Fault,
    OpenAIServer,
    ServerProcess,
    last_user_text,
    read_log,
)

USER = [{"role": "user", "content": "name a Roblox service"}]


@pytest.fixture
def oai_server():
    with OpenAIServer() as server:
        yield server


@pytest.fixture
def ant_server():
    with AnthropicServer() as server:
        yield server


def oai_client(server, **kwargs) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=server.url + "/v1",
        api_key="fake-openai-key",
        max_retries=0,
        timeout=kwargs.pop("timeout", 5),
        **kwargs,
    )


def ant_client(server) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        base_url=server.url, api_key="fake-anthropic-key", max_retries=0, timeout=5
    )


def chat(client, **kwargs):
    return client.chat.completions.create(model="gpt-4o-mini", messages=USER, **kwargs)


def message(client, **kwargs):
    return client.messages.create(model="claude-loopback", max_tokens=2048, messages=USER, **kwargs)


# -- successful replies parse in the SDKs ---------------------------------------------------


def test_chat_completion_default_reply_is_derived_from_last_user_message(oai_server):
    completion = chat(oai_client(oai_server))

    assert completion.object == "chat.completion"
    assert completion.model == "gpt-4o-mini"
    choice = completion.choices[0]
    assert choice.message.content == "loopback reply to: name a Roblox service"
    assert choice.message.refusal is None
    assert choice.finish_reason == "stop"
    usage = completion.usage
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    assert usage.prompt_tokens_details.cached_tokens == 0
    assert usage.completion_tokens_details.reasoning_tokens == 0


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_chat_completion_custom_answer_with_reasoning_field(field):
    def responder(request):
        return Answer(
            last_user_text(request.body).upper(),
            reasoning="thinking hard",
            finish_reason="length",
            input_tokens=11,
            output_tokens=30,
            reasoning_tokens=20,
            cached_tokens=4,
        )

    with OpenAIServer(responder, reasoning_field=field) as server:
        completion = chat(oai_client(server))

    message_ = completion.choices[0].message
    assert message_.content == "NAME A ROBLOX SERVICE"
    assert getattr(message_, field) == "thinking hard"  # non-standard field, kept by the SDK
    assert completion.choices[0].finish_reason == "length"
    usage = completion.usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (11, 30, 41)
    assert usage.prompt_tokens_details.cached_tokens == 4
    assert usage.completion_tokens_details.reasoning_tokens == 20


def test_responses_call_with_reasoning_summary(oai_server):
    oai_server.responder = lambda request: Answer(
        "Workspace",
        reasoning="It is a service.",
        input_tokens=9,
        output_tokens=12,
        reasoning_tokens=5,
        cached_tokens=3,
    )
    response = oai_client(oai_server).responses.create(
        model="gpt-5", input="name a Roblox service", reasoning={"effort": "low", "summary": "auto"}
    )

    assert response.status == "completed" and response.incomplete_details is None
    assert response.output_text == "Workspace"
    reasoning, msg = response.output
    assert reasoning.type == "reasoning"
    assert [s.text for s in reasoning.summary] == ["It is a service."]
    assert msg.type == "message" and msg.content[0].type == "output_text"
    usage = response.usage
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (9, 12, 21)
    assert usage.input_tokens_details.cached_tokens == 3
    assert usage.output_tokens_details.reasoning_tokens == 5


def test_responses_call_truncated_with_hidden_reasoning(oai_server):
    oai_server.responder = lambda request: Answer("Work", reasoning="", finish_reason="length")
    response = oai_client(oai_server).responses.create(
        model="o3-mini", input=USER, max_output_tokens=16
    )

    assert response.status == "incomplete"
    assert response.incomplete_details.reason == "max_output_tokens"
    assert response.output[0].summary == []  # reasoning happened, no summary text
    assert response.output_text == "Work"


def test_models_list(oai_server):
    assert "gpt-5" in [m.id for m in oai_client(oai_server).models.list()]


def test_messages_call_without_thinking(ant_server):
    reply = message(ant_client(ant_server))

    assert [block.type for block in reply.content] == ["text"]
    assert reply.content[0].text == "loopback reply to: name a Roblox service"
    assert reply.stop_reason == "end_turn" and reply.stop_sequence is None
    assert reply.usage.input_tokens == 4  # words in the prompt
    assert reply.usage.output_tokens == 7  # words in the reply
    assert reply.usage.cache_read_input_tokens == 0


def test_messages_call_with_thinking(ant_server):
    ant_server.responder = lambda request: Answer(
        "Workspace",
        reasoning="Pick one.",
        finish_reason="length",
        output_tokens=50,
        cached_tokens=7,
        cache_creation_tokens=2,
    )
    reply = message(ant_client(ant_server), thinking={"type": "enabled", "budget_tokens": 1024})

    thinking, text = reply.content
    assert thinking.type == "thinking" and thinking.thinking == "Pick one." and thinking.signature
    assert text.text == "Workspace"
    assert reply.stop_reason == "max_tokens"
    assert reply.usage.output_tokens == 50
    assert reply.usage.cache_read_input_tokens == 7
    assert reply.usage.cache_creation_input_tokens == 2


def test_default_responder_thinks_only_when_asked(ant_server):
    thinking = message(ant_client(ant_server), thinking={"type": "enabled", "budget_tokens": 1024})
    assert thinking.content[0].thinking == "Reasoning about: name a Roblox service"


# -- injected faults surface as the SDKs' errors --------------------------------------------


def test_openai_429_with_retry_after(oai_server):
    oai_server.fail_next(1, 429, retry_after=7)
    with pytest.raises(openai.RateLimitError) as caught:
        chat(oai_client(oai_server))
    assert caught.value.response.headers["retry-after"] == "7"
    assert caught.value.code == "rate_limit_exceeded"
    assert chat(oai_client(oai_server)).choices[0].message.content  # only the next one failed


def test_openai_429_insufficient_quota(oai_server):
    oai_server.fail_next(1, error="insufficient_quota")
    with pytest.raises(openai.RateLimitError) as caught:
        chat(oai_client(oai_server))
    assert caught.value.body == {
        "message": caught.value.body["message"],
        "param": None,
        "type": "insufficient_quota",
        "code": "insufficient_quota",
    }


def test_anthropic_429_with_retry_after_and_529_overloaded(ant_server):
    ant_server.fail_next(1, 429, retry_after=3)
    ant_server.fail_next(1, error="overloaded_error")  # status 529 comes with the kind
    with pytest.raises(anthropic.RateLimitError) as caught:
        message(ant_client(ant_server))
    assert caught.value.response.headers["retry-after"] == "3"
    assert caught.value.body["error"]["type"] == "rate_limit_error"
    with pytest.raises(anthropic.OverloadedError) as caught:
        message(ant_client(ant_server))
    assert caught.value.status_code == 529
    assert caught.value.body["error"]["type"] == "overloaded_error"


def test_500_surfaces_as_internal_server_error(oai_server, ant_server):
    oai_server.fail_next(1, 500)
    ant_server.fail_next(1, 500)
    with pytest.raises(openai.InternalServerError) as caught:
        chat(oai_client(oai_server))
    assert caught.value.body["type"] == "server_error"
    with pytest.raises(anthropic.InternalServerError) as caught:
        message(ant_client(ant_server))
    assert caught.value.body["error"]["type"] == "api_error"


def test_malformed_json_raises_json_decode_error_in_both_sdks(oai_server, ant_server):
    # Neither SDK wraps this: a harness must catch ValueError itself.
    oai_server.inject(Fault.malformed_json())
    ant_server.inject(Fault.malformed_json())
    with pytest.raises(json.JSONDecodeError):
        chat(oai_client(oai_server))
    with pytest.raises(json.JSONDecodeError):
        message(ant_client(ant_server))


def test_reshape_sends_a_200_reply_of_the_wrong_shape(oai_server, ant_server):
    def null_message(body):
        body["choices"][0]["message"] = None

    oai_server.responder = lambda req: Answer("hi", reshape=null_message)
    ant_server.responder = lambda req: Answer("hi", reshape=lambda body: {**body, "usage": None})
    assert chat(oai_client(oai_server)).choices[0].message is None
    assert message(ant_client(ant_server)).usage is None
    oai_server.responder = lambda req: Answer(
        "hi", reshape=lambda body: body["usage"].update(input_tokens="7")
    )
    raw = oai_client(oai_server).responses.with_raw_response.create(model="gpt-5", input="hi")
    assert json.loads(raw.text)["usage"]["input_tokens"] == "7"


def test_dropped_connection_and_slow_reply(oai_server):
    oai_server.inject(Fault.dropped())
    with pytest.raises(openai.APIConnectionError):
        chat(oai_client(oai_server))
    oai_server.inject(Fault.slow(2.0))
    with pytest.raises(openai.APITimeoutError):
        chat(oai_client(oai_server, timeout=0.3))
    assert [r.fault for r in oai_server.requests] == ["drop", "delay 2.0s"]


def test_fail_when_matches_requests_and_counts_down(oai_server):
    oai_server.fail_when(lambda r: r.body["model"] == "bad-model", 404, times=1)
    client = oai_client(oai_server)
    assert chat(client).choices[0].message.content  # other models pass
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model="bad-model", messages=USER)
    assert client.chat.completions.create(model="bad-model", messages=USER).model == "bad-model"


def test_unknown_route_and_missing_field_are_provider_errors(oai_server, ant_server):
    with pytest.raises(openai.NotFoundError):
        oai_client(oai_server).embeddings.create(model="e", input="x")
    with pytest.raises(anthropic.BadRequestError) as caught:
        ant_client(ant_server).messages.create(model="c", max_tokens=None, messages=USER)
    assert caught.value.body["error"]["message"] == "max_tokens: Field required"


# -- recording, latency, subprocess mode ----------------------------------------------------


def test_api_key_is_received_only_as_a_header(oai_server, ant_server, tmp_path):
    chat(oai_client(oai_server))
    message(ant_client(ant_server))
    for server, key in ((oai_server, "fake-openai-key"), (ant_server, "fake-anthropic-key")):
        (request,) = server.requests
        assert request.api_key == key
        assert key not in request.path + request.query
        assert key.encode() not in request.raw_body


def test_latency_does_not_serialize_concurrent_requests():
    with OpenAIServer(latency=0.2) as server:
        client = oai_client(server)
        start = time.perf_counter()
        with ThreadPoolExecutor(16) as pool:
            results = list(pool.map(lambda _: chat(client), range(16)))
        elapsed = time.perf_counter() - start

    assert len(results) == len(server.requests) == 16
    assert 0.2 <= elapsed < 1.7, (
        elapsed
    )  # serialized would be 3.2 s: the bound is halfway, whatever the load


def test_subprocess_prints_url_and_logs_requests_with_keys_redacted(tmp_path):
    log = tmp_path / "requests.jsonl"
    with ServerProcess("openai", log_path=log) as server:
        assert server.url.startswith("http://127.0.0.1:")
        # A buggy client that also puts the key in the body must not leak it into the log.
        chat(
            openai.OpenAI(
                base_url=server.url + "/v1", api_key="fake-secret-key", max_retries=0, timeout=5
            ),
            metadata={"oops": "fake-secret-key"},
        )
        (logged,) = server.requests()

    assert logged["path"] == "/v1/chat/completions"
    assert logged["headers"]["authorization"] == "<redacted>"
    assert logged["body"]["messages"] == USER
    assert "fake-secret-key" not in log.read_text()


def test_subprocess_log_survives_sigkill_of_the_client(tmp_path):
    log = tmp_path / "requests.jsonl"
    with ServerProcess("anthropic", latency=30, log_path=log) as server:
        # A bare stdlib client: what matters is a process killed mid-request, not its SDK.
        client_code = textwrap.dedent(f"""
            import json, urllib.request
            body = json.dumps({{"model": "c", "max_tokens": 5, "messages": []}}).encode()
            urllib.request.urlopen({server.url + "/v1/messages"!r}, body)
        """)
        client = subprocess.Popen([sys.executable, "-c", client_code])
        try:
            wait_for(lambda: read_log(log), "the server's request log")
        finally:
            client.kill()  # SIGKILL while the request is still in flight
            client.wait()

    (logged,) = read_log(log)
    assert logged["path"] == "/v1/messages" and logged["body"]["max_tokens"] == 5
