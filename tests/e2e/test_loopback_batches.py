"""The loopback Batch APIs, exercised through the real openai / anthropic SDK clients: upload,
create, poll and download, per-request outcomes and batch fates, validation, the Files API and
listing, Anthropic's Message Batches. The servers run on threads of the test; one runs in a child
process (tests/support/loopback ServerProcess), for the request log it writes to a file."""

from __future__ import annotations

import json
import time

import anthropic
import httpx
import openai
import pytest
from openai.types.chat import ChatCompletion
from openai.types.responses import Response

from tests.support.loopback import Answer, AnthropicServer, OpenAIServer, ServerProcess

CHAT = "/v1/chat/completions"


def oai_client(server) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=server.url + "/v1", api_key="fake-openai-key", max_retries=0, timeout=5
    )


def ant_client(server) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        base_url=server.url, api_key="fake-anthropic-key", max_retries=0, timeout=5
    )


def chat_body(text: str, model: str = "gpt-4o-mini") -> dict:
    return {"model": model, "messages": [{"role": "user", "content": text}]}


def input_line(custom_id: str, body: dict, url: str = CHAT) -> dict:
    return {"custom_id": custom_id, "method": "POST", "url": url, "body": body}


def jsonl(items: list) -> bytes:
    return "".join(
        (item if isinstance(item, str) else json.dumps(item)) + "\n" for item in items
    ).encode()


def submit(client, items: list, endpoint: str = CHAT, **kwargs):
    """Upload `items` as a batch input file and create a batch from it."""
    uploaded = client.files.create(file=("input.jsonl", jsonl(items)), purpose="batch")
    return client.batches.create(
        input_file_id=uploaded.id, endpoint=endpoint, completion_window="24h", **kwargs
    )


def poll(retrieve, batch_id: str, done, timeout: float = 5.0):
    """Retrieve until `done(batch)`, as a harness would."""
    deadline = time.monotonic() + timeout
    while True:
        batch = retrieve(batch_id)
        if done(batch) or time.monotonic() > deadline:
            return batch
        time.sleep(0.05)


def oai_wait(client, batch_id: str):
    return poll(
        client.batches.retrieve,
        batch_id,
        lambda b: b.status in ("completed", "failed", "expired", "cancelled"),
    )


def ant_wait(client, batch_id: str):
    return poll(
        client.messages.batches.retrieve, batch_id, lambda b: b.processing_status == "ended"
    )


def file_lines(client, file_id: str | None) -> list[dict]:
    if file_id is None:
        return []
    return [json.loads(line) for line in client.files.content(file_id).text.splitlines()]


def by_custom_id(lines: list[dict]) -> dict[str, dict]:
    return {line["custom_id"]: line for line in lines}


def without_ids(value):
    """A body minus what differs between two answers to one request: ids and timestamps."""
    if isinstance(value, dict):
        return {
            k: without_ids(v) for k, v in value.items() if k not in ("id", "created", "created_at")
        }
    if isinstance(value, list):
        return [without_ids(v) for v in value]
    return value


@pytest.fixture
def serve():
    """Starts servers that stay up until the test ends, so it can read files after polling."""
    started = []

    def start(server_class, *args, **kwargs):
        started.append(server_class(*args, **kwargs).start())
        return started[-1]

    yield start
    for server in started:
        server.stop()


# -- OpenAI: upload, create, poll, download -------------------------------------------------


def test_chat_batch_output_is_what_the_live_endpoint_answers(serve):
    server = serve(OpenAIServer, batch_seconds=0.2)
    client = oai_client(server)
    bodies = {f"q{i}": chat_body(f"name Roblox service {i}") for i in range(6)}
    created = submit(
        client, [input_line(cid, body) for cid, body in bodies.items()], metadata={"run": "nightly"}
    )
    assert created.status == "validating" and created.output_file_id is None
    statuses = []
    batch = poll(
        client.batches.retrieve,
        created.id,
        lambda b: statuses.append(b.status) or b.status == "completed",
    )
    paths_before_live_calls = {r.path for r in server.requests}
    live = {
        cid: client.chat.completions.with_raw_response.create(**body).http_response.json()
        for cid, body in bodies.items()
    }

    # polled as a harness polls: a busy machine may poll past a status, never see them out of order
    lifecycle = ["validating", "in_progress", "finalizing", "completed"]
    assert statuses[-1] == "completed" and statuses == sorted(statuses, key=lifecycle.index)
    assert batch.request_counts.model_dump() == {"total": 6, "completed": 6, "failed": 0}
    assert batch.metadata == {"run": "nightly"} and batch.model == "gpt-4o-mini"
    assert batch.error_file_id is None and batch.usage.total_tokens > 0
    assert batch.created_at <= batch.in_progress_at <= batch.finalizing_at <= batch.completed_at
    lines = file_lines(client, batch.output_file_id)
    assert [line["custom_id"] for line in lines] != list(bodies)  # out of order
    assert sorted(line["custom_id"] for line in lines) == sorted(bodies)
    for line in lines:
        assert line["error"] is None and line["id"].startswith("batch_req_")
        assert line["response"]["status_code"] == 200
        body = line["response"]["body"]
        ChatCompletion.model_validate(body)
        assert without_ids(body) == without_ids(live[line["custom_id"]])
    # Only HTTP requests are recorded: the batch's lines ran without reaching the request log.
    assert paths_before_live_calls == {"/v1/files", "/v1/batches", f"/v1/batches/{batch.id}"}
    assert server.batch_creates == 1 and server.uploads == 1
    assert server.batches == [
        {"id": batch.id, "status": "completed", "endpoint": CHAT, "custom_ids": list(bodies)}
    ]


def test_responses_batch_lines_parse_as_responses(serve):
    def responder(request):
        return Answer("Workspace", reasoning="It is a service.", reasoning_tokens=3)

    server = serve(OpenAIServer, responder, batch_seconds=0)
    client = oai_client(server)
    body = {
        "model": "gpt-5",
        "input": "name a Roblox service",
        "reasoning": {"effort": "low", "summary": "auto"},
    }
    batch = oai_wait(
        client,
        submit(
            client,
            [input_line("r1", body, "/v1/responses"), input_line("r2", body, "/v1/responses")],
            endpoint="/v1/responses",
        ).id,
    )
    live = client.responses.create(**body)

    assert batch.status == "completed" and batch.usage.output_tokens_details.reasoning_tokens == 6
    for line in file_lines(client, batch.output_file_id):
        response = Response.construct(**line["response"]["body"])  # as the SDK parses it
        assert response.output_text == live.output_text == "Workspace"
        assert without_ids(line["response"]["body"]) == without_ids(
            live.model_dump(mode="json", exclude_unset=True)
        )


# -- OpenAI: per-request outcomes and batch fates -------------------------------------------


def test_per_request_errors_come_in_both_error_file_shapes(serve):
    server = serve(OpenAIServer, batch_seconds=0)
    server.batch_outcome_when(lambda cid, body: cid == "bad", 400)
    server.batch_outcome_when(lambda cid, body: "busy" in json.dumps(body), 429, times=1)
    server.batch_outcome_when(lambda cid, body: cid == "late", "expired")
    server.batch_outcome_when(lambda cid, body: cid == "stop", "cancelled")
    client = oai_client(server)
    items = [
        input_line(cid, chat_body(text))
        for cid, text in (
            ("ok", "fine"),
            ("bad", "x"),
            ("busy1", "busy"),
            ("busy2", "busy"),
            ("late", "y"),
            ("stop", "z"),
        )
    ]
    items.append(input_line("nomsg", {"model": "gpt-4o-mini"}))  # the endpoint's own 400
    batch = oai_wait(client, submit(client, items).id)

    assert batch.status == "completed"
    assert batch.request_counts.model_dump() == {"total": 7, "completed": 2, "failed": 5}
    assert set(by_custom_id(file_lines(client, batch.output_file_id))) == {"ok", "busy2"}
    errors = by_custom_id(file_lines(client, batch.error_file_id))
    assert set(errors) == {"bad", "busy1", "late", "stop", "nomsg"}
    for custom_id, status, type_ in (
        ("bad", 400, "invalid_request_error"),
        ("busy1", 429, "requests"),
        ("nomsg", 400, "invalid_request_error"),
    ):
        line = errors[custom_id]
        assert line["error"] is None and line["response"]["status_code"] == status
        assert set(line["response"]["body"]["error"]) == {"message", "type", "param", "code"}
        assert line["response"]["body"]["error"]["type"] == type_
    assert errors["late"]["response"] is None
    assert errors["late"]["error"]["code"] == "batch_expired"
    assert errors["stop"]["error"]["code"] == "batch_cancelled"


def test_fate_failed_has_errors_and_no_files(serve):
    server = serve(OpenAIServer, batch_seconds=0)
    server.next_batch_ends("failed")
    client = oai_client(server)
    batch = oai_wait(client, submit(client, [input_line("a", chat_body("hi"))]).id)

    assert batch.status == "failed" and batch.failed_at is not None
    assert batch.errors.data and batch.errors.data[0].code
    assert batch.output_file_id is None and batch.error_file_id is None


def test_fate_expired_keeps_the_first_half_and_expires_the_rest(serve):
    server = serve(OpenAIServer, batch_seconds=0)
    server.next_batch_ends("expired")
    client = oai_client(server)
    batch = oai_wait(
        client, submit(client, [input_line(f"q{i}", chat_body(f"hi {i}")) for i in range(5)]).id
    )

    assert batch.status == "expired" and batch.expired_at is not None
    assert batch.request_counts.model_dump() == {"total": 5, "completed": 3, "failed": 2}
    assert set(by_custom_id(file_lines(client, batch.output_file_id))) == {"q0", "q1", "q2"}
    expired = file_lines(client, batch.error_file_id)
    assert {line["custom_id"] for line in expired} == {"q3", "q4"}
    assert {line["error"]["code"] for line in expired} == {"batch_expired"}


def test_fate_cancelled_goes_through_cancelling(serve):
    server = serve(OpenAIServer, batch_seconds=0)
    server.next_batch_ends("cancelled")
    client = oai_client(server)
    created = submit(client, [input_line(f"q{i}", chat_body("hi")) for i in range(4)])
    cancelling = client.batches.retrieve(created.id)
    cancelled = client.batches.retrieve(created.id)

    assert cancelling.status == "cancelling" and cancelling.cancelling_at is not None
    assert cancelled.status == "cancelled" and cancelled.cancelled_at is not None
    assert cancelled.request_counts.completed == 2 and cancelled.request_counts.failed == 2
    assert {line["error"]["code"] for line in file_lines(client, cancelled.error_file_id)} == {
        "batch_cancelled"
    }


def test_hold_keeps_batches_in_progress_until_released(serve):
    server = serve(OpenAIServer, batch_seconds=0)
    server.hold_batches()
    client = oai_client(server)
    created = submit(client, [input_line("a", chat_body("hi"))])
    held = [client.batches.retrieve(created.id).status for _ in range(3)]
    server.release_batches()
    released = client.batches.retrieve(created.id)

    assert held == ["in_progress"] * 3
    assert released.status == "completed"


# -- OpenAI: validation ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "items, code, line",
    [
        (
            [input_line("a", chat_body("x")), input_line("b", chat_body("y"), url="/v1/responses")],
            "url_mismatch",
            2,
        ),
        (
            [input_line("a", chat_body("x")), input_line("a", chat_body("y"))],
            "duplicate_custom_id",
            2,
        ),
        (
            [input_line("a", chat_body("x")), '{"custom_id": "b", "method": "PO'],
            "invalid_json_line",
            2,
        ),
        (
            [input_line("a", chat_body("x")), input_line("b", chat_body("y", model="gpt-5"))],
            "model_mismatch",
            2,
        ),
        ([input_line(f"q{i}", chat_body("x")) for i in range(3)], "too_many_tasks", None),
    ],
)
def test_invalid_input_lines_fail_the_batch(serve, items, code, line):
    server = serve(OpenAIServer, batch_seconds=0, batch_max_requests=2)
    client = oai_client(server)
    batch = oai_wait(client, submit(client, items).id)

    assert batch.status == "failed" and batch.output_file_id is None
    (error,) = batch.errors.data
    assert (error.code, error.line) == (code, line) and error.message


def test_input_file_over_the_byte_limit_fails_the_batch(serve):
    server = serve(OpenAIServer, batch_seconds=0, batch_max_bytes=100)
    client = oai_client(server)
    batch = oai_wait(client, submit(client, [input_line("a", chat_body("x" * 100))]).id)

    assert batch.status == "failed" and batch.errors.data[0].code == "file_too_large"


def test_create_rejects_an_unknown_or_non_batch_file(serve):
    server = serve(OpenAIServer)
    client = oai_client(server)
    other = client.files.create(file=("notes.txt", b"hello"), purpose="user_data")
    for file_id in ("file-nope", other.id):
        with pytest.raises(openai.BadRequestError) as caught:
            client.batches.create(input_file_id=file_id, endpoint=CHAT, completion_window="24h")
        assert caught.value.param == "input_file_id"
    with pytest.raises(openai.BadRequestError):
        client.files.create(file=("input.txt", b"{}"), purpose="batch")  # must be .jsonl
    assert server.batch_creates == 0


# -- OpenAI: Files API and listing ----------------------------------------------------------


def test_files_round_trip_and_404s(serve):
    server = serve(OpenAIServer)
    client = oai_client(server)
    data = jsonl([input_line("a", chat_body("ünïcode\r\nline"))])
    uploaded = client.files.create(file=("in.jsonl", data), purpose="batch")
    assert (uploaded.bytes, uploaded.filename, uploaded.status) == (
        len(data),
        "in.jsonl",
        "processed",
    )
    assert client.files.retrieve(uploaded.id) == uploaded
    assert client.files.content(uploaded.id).content == data
    assert client.files.delete(uploaded.id).deleted
    for call in (
        client.files.retrieve,
        client.files.content,
        client.files.delete,
        client.batches.retrieve,
    ):
        with pytest.raises(openai.NotFoundError):
            call(uploaded.id)


def test_list_pages_find_a_file_by_name_and_a_batch_by_metadata(serve):
    server = serve(OpenAIServer, batch_seconds=0)
    client = oai_client(server)
    files = [
        client.files.create(
            file=(f"part{i}.jsonl", jsonl([input_line("a", chat_body(str(i)))])), purpose="batch"
        )
        for i in range(5)
    ]
    batches = [
        client.batches.create(
            input_file_id=f.id, endpoint=CHAT, completion_window="24h", metadata={"part": str(i)}
        )
        for i, f in enumerate(files)
    ]
    first = client.files.list(limit=2)
    found = [
        f
        for f in client.files.list(limit=2, purpose="batch")  # auto-paginates
        if f.filename == "part1.jsonl"
    ]
    oldest_first = [f.id for f in client.files.list(order="asc", purpose="batch")]
    by_metadata = [b for b in client.batches.list(limit=2) if b.metadata == {"part": "3"}]
    by_input = [b for b in client.batches.list(limit=2) if b.input_file_id == files[0].id]
    output_files = list(client.files.list(purpose="batch_output"))

    assert [f.id for f in first.data] == [files[4].id, files[3].id] and first.has_more
    assert [f.id for f in found] == [files[1].id]
    assert oldest_first == [f.id for f in files]
    assert [b.id for b in by_metadata] == [batches[3].id]
    assert [b.id for b in by_input] == [batches[0].id] and by_input[0].status == "completed"
    assert len(output_files) == 5  # listing advanced every batch to its end
    assert server.uploads == 5 and server.batch_creates == 5


@pytest.mark.parametrize("server_class", [OpenAIServer, AnthropicServer])
def test_list_pages_hold_at_most_the_servers_page_limit_and_backdate_ages_every_batch(
    serve, server_class
):
    server = serve(server_class, batch_seconds=60, list_page_limit=1)
    if server_class is OpenAIServer:
        client = oai_client(server)
        for i in range(3):
            upload = client.files.create(
                file=(f"p{i}.jsonl", jsonl([input_line("a", chat_body(str(i)))])), purpose="batch"
            )
            client.batches.create(input_file_id=upload.id, endpoint=CHAT, completion_window="24h")
        uploads = lambda **kwargs: client.files.list(
            purpose="batch", **kwargs
        )  # not the outputs the ended batches wrote
        lists, created = (client.batches.list, uploads), lambda item: item.created_at
    else:
        client = ant_client(server)
        for i in range(3):
            ant_submit(client, [f"c{i}"])
        lists, created = (client.messages.batches.list,), lambda item: item.created_at.timestamp()
    now = time.time()
    server.backdate(2 * 86400)

    for listed in lists:
        first = listed(limit=100)
        assert (
            len(first.data) == 1 and first.has_more
        )  # the page the server chose, not the one asked for
        everything = list(listed(limit=100))  # the SDK pages on, one object a request
        assert len(everything) == 3 and all(created(item) < now - 86400 for item in everything)
    assert [batch["status"] for batch in server.batches] == ["completed"] * 3  # aged past their end


# -- Anthropic ------------------------------------------------------------------------------


def params(text: str) -> dict:
    return {
        "model": "claude-loopback",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": text}],
    }


def ant_submit(client, custom_ids, **kwargs):
    return client.messages.batches.create(
        requests=[{"custom_id": cid, "params": params(f"hi {cid}")} for cid in custom_ids], **kwargs
    )


def test_message_batch_results_equal_live_messages_out_of_order(serve):
    server = serve(AnthropicServer, batch_seconds=0.2)
    client = ant_client(server)
    custom_ids = [f"req-{i}" for i in range(6)]
    created = ant_submit(client, custom_ids)
    assert created.processing_status == "in_progress" and created.results_url is None
    assert created.request_counts.processing == 6
    batch = ant_wait(client, created.id)
    results = list(client.messages.batches.results(batch.id))
    raw = httpx.get(batch.results_url, headers={"x-api-key": "fake-anthropic-key"})
    live = {
        cid: client.messages.with_raw_response.create(**params(f"hi {cid}")).http_response.json()
        for cid in custom_ids
    }

    assert batch.processing_status == "ended" and batch.ended_at >= batch.created_at
    assert batch.request_counts.succeeded == 6 and batch.request_counts.processing == 0
    assert batch.results_url == f"{server.url}/v1/messages/batches/{batch.id}/results"
    assert [r.custom_id for r in results] != custom_ids
    assert sorted(r.custom_id for r in results) == custom_ids
    assert raw.headers["content-type"] == "application/binary"
    for line in map(json.loads, raw.text.splitlines()):
        assert line["result"]["type"] == "succeeded"
        assert without_ids(line["result"]["message"]) == without_ids(live[line["custom_id"]])
    assert server.batch_creates == 1
    assert server.batches[0]["custom_ids"] == custom_ids


def test_message_batch_timestamps_are_rfc3339_strings(serve):
    server = serve(AnthropicServer, batch_seconds=0)
    raw = (
        ant_client(server)
        .messages.batches.with_raw_response.create(
            requests=[{"custom_id": "a", "params": params("hi")}]
        )
        .http_response.json()
    )

    assert raw["type"] == "message_batch" and raw["created_at"].endswith("Z")
    assert raw["cancel_initiated_at"] is None and raw["archived_at"] is None


def test_message_batch_errored_expired_and_canceled_results(serve):
    server = serve(AnthropicServer, batch_seconds=0)
    server.batch_outcome_when(lambda cid, body: cid == "gone", 404)
    server.batch_outcome_when(lambda cid, body: cid == "busy", 529)
    server.batch_outcome_when(lambda cid, body: cid == "late", "expired")
    server.batch_outcome_when(lambda cid, body: cid == "stop", "canceled")
    client = ant_client(server)
    batch = ant_wait(client, ant_submit(client, ["ok", "gone", "busy", "late", "stop"]).id)
    results = {r.custom_id: r.result for r in client.messages.batches.results(batch.id)}

    assert batch.request_counts.model_dump() == {
        "processing": 0,
        "succeeded": 1,
        "errored": 2,
        "canceled": 1,
        "expired": 1,
    }
    assert results["ok"].type == "succeeded"
    assert results["gone"].type == "errored" and results["gone"].error.type == "error"
    assert results["gone"].error.error.type == "not_found_error"  # the nested, specific type
    assert results["busy"].error.error.type == "overloaded_error"
    assert (results["late"].type, results["stop"].type) == ("expired", "canceled")


def test_message_batch_fates(serve):
    server = serve(AnthropicServer, batch_seconds=0)
    client = ant_client(server)
    server.next_batch_ends("expired")
    expired = ant_wait(client, ant_submit(client, ["a", "b", "c", "d"]).id)
    server.next_batch_ends("canceled")
    fated = ant_submit(client, ["a", "b"])
    canceling = client.messages.batches.retrieve(fated.id)
    canceled = client.messages.batches.retrieve(fated.id)
    with pytest.raises(ValueError):
        server.next_batch_ends("failed")  # Anthropic checks requests at create

    assert expired.request_counts.succeeded == 2 and expired.request_counts.expired == 2
    assert canceling.processing_status == "canceling" and canceling.cancel_initiated_at
    assert canceled.processing_status == "ended" and canceled.request_counts.canceled == 1


def test_message_batch_hold_and_release(serve):
    server = serve(AnthropicServer, batch_seconds=0)
    server.hold_batches()
    client = ant_client(server)
    created = ant_submit(client, ["a"])
    held = client.messages.batches.retrieve(created.id)
    with pytest.raises(anthropic.AnthropicError, match="No `results_url`"):
        client.messages.batches.results(created.id)
    early = httpx.get(f"{server.url}/v1/messages/batches/{created.id}/results")
    server.release_batches()
    released = client.messages.batches.retrieve(created.id)

    assert held.processing_status == "in_progress" and released.processing_status == "ended"
    assert early.status_code == 404 and early.json()["error"]["type"] == "not_found_error"


@pytest.mark.parametrize(
    "requests, status",
    [
        ([{"custom_id": "has space", "params": params("x")}], 400),
        ([{"custom_id": "x" * 65, "params": params("x")}], 400),
        (
            [{"custom_id": "a", "params": params("x")}, {"custom_id": "a", "params": params("y")}],
            400,
        ),
        ([{"custom_id": f"r{i}", "params": params("x")} for i in range(3)], 413),
    ],
)
def test_message_batch_create_rejects_bad_requests(serve, requests, status):
    server = serve(AnthropicServer, batch_max_requests=2)
    with pytest.raises(anthropic.APIStatusError) as caught:
        ant_client(server).messages.batches.create(requests=requests)
    assert server.batch_creates == 0

    assert caught.value.status_code == status
    assert (
        caught.value.body["error"]["type"]
        == {400: "invalid_request_error", 413: "request_too_large"}[status]
    )


def test_message_batch_list_pages_and_unknown_ids(serve):
    server = serve(AnthropicServer, batch_seconds=0)
    client = ant_client(server)
    ids = [ant_submit(client, ["a"]).id for _ in range(5)]
    newest_first = ids[::-1]
    first = client.messages.batches.list(limit=2)
    everything = [b.id for b in client.messages.batches.list(limit=2)]
    before = client.messages.batches.list(limit=2, before_id=newest_first[3])
    with pytest.raises(anthropic.NotFoundError) as caught:
        client.messages.batches.retrieve("msgbatch_nope")

    assert [b.id for b in first.data] == newest_first[:2] and first.has_more
    assert (first.first_id, first.last_id) == tuple(newest_first[:2])
    assert everything == newest_first
    assert [b.id for b in before.data] == newest_first[1:3] and before.has_more
    assert caught.value.body["error"]["type"] == "not_found_error"


# -- subprocess mode ------------------------------------------------------------------------


def test_subprocess_logs_uploads_and_creates(tmp_path):
    log = tmp_path / "requests.jsonl"
    with ServerProcess("openai", log_path=log, extra_args=["--batch-seconds", "0"]) as server:
        client = openai.OpenAI(
            base_url=server.url + "/v1", api_key="fake-openai-key", max_retries=0, timeout=5
        )
        batch = oai_wait(client, submit(client, [input_line("a", chat_body("hi"))]).id)
        logged = server.requests()

    assert batch.status == "completed"
    upload, create = logged[0], logged[1]
    assert upload["path"] == "/v1/files" and "input.jsonl" in upload["body"]
    assert [r["path"] for r in logged].count("/v1/batches") == 1
    assert create["body"]["input_file_id"] == batch.input_file_id
    assert "fake-openai-key" not in log.read_text()
