"""A third party's HTTP provider written from the public kit alone (`tests.support.json_provider`,
the code docs/writing-a-provider.md shows) against a loopback server of its JSON API: it
answers, and each way a call goes wrong is the error kind the harness acts on (an error
status, a reply of the wrong shape, no connection, the deadline, a redirect to another
origin); through `pytest`, as a package's provider would run, its answers land in a result
file, a 429 and a 5xx are retried, its key is never written anywhere, and a rejected key stops
the run with one message. The guide's own checks are tests/unit/test_http_kit.py.

`pytest` starts warm (tests/support/warm.py) with the provider loaded by `-p`; the loopback
server runs on a thread of the test."""

from __future__ import annotations

import re
import select
import socket
import ssl
import subprocess
import threading
import time

import httpx2
import pytest

from evals.errors import FatalProviderError, ProviderError, TransientError
from evals.providers import ProviderSpec, Request, http, make_provider
from tests.support.harness import harness_env, read_result, result_files, run_harness
from tests.support.loopback import Answer, Fault, Reply
from tests.support.loopback.jsonapi_server import JsonApiServer

KEY = "jsonapi-e2e-key-0123456789abcdef"
ENV = harness_env(JSONAPI_KEY=KEY)


@pytest.fixture
def server(monkeypatch):
    import tests.support.json_provider  # noqa: F401 (registers jsonapi, as its entry point would)

    monkeypatch.setenv("JSONAPI_KEY", KEY)
    with JsonApiServer() as running:
        yield running


def _provider(url: str):
    return make_provider(ProviderSpec("jsonapi", "tiny-1", base_url=url))


def _ask(provider, timeout: float = 10):
    return provider.complete(
        Request("What is Luau?\nAnswer briefly.", system="Be brief.", max_tokens=50),
        timeout=timeout,
    )


# -- the provider against a loopback server ---------------------------------------------------------


def test_a_provider_from_the_kit_answers(server):
    reply = _ask(_provider(server.url))

    assert (reply.text, reply.model, reply.usage.input, reply.usage.output) == (
        "loopback reply to: What is Luau?",
        "tiny-1",
        7,
        6,
    )
    (asked,) = server.requests
    assert (asked.method, asked.path) == ("POST", "/generate")
    assert asked.body == {
        "model": "tiny-1",
        "prompt": "What is Luau?\nAnswer briefly.",
        "system": "Be brief.",
        "max_tokens": 50,
    }
    assert asked.headers["authorization"] == f"Bearer {KEY}"


@pytest.mark.parametrize(
    "status, error, kind, retry_after",
    [
        (429, TransientError, "rate_limit", 2.0),
        (503, TransientError, "server_error", None),
        (401, FatalProviderError, "auth", None),
        (400, ProviderError, "bad_request", None),
    ],
)
def test_an_error_status_is_the_error_kind_the_harness_acts_on(
    server, status, error, kind, retry_after
):
    server.fail_next(
        1,
        status,
        retry_after=retry_after,
        body={"error": {"message": "the server's own words\n\x1b[2J"}},
    )

    with pytest.raises(ProviderError) as raised:
        _ask(_provider(server.url))

    assert (
        type(raised.value) is error and raised.value.kind == kind and raised.value.status == status
    )
    assert getattr(raised.value, "retry_after", None) == retry_after
    assert str(raised.value).startswith(
        f"HTTP {status}: the server's own words\\n\\x1b[2J"
    )  # one safe line


@pytest.mark.parametrize(
    "reshape, message",
    [
        (lambda body: {**body, "text": 5}, "malformed reply: text is a number, not a string"),
        (
            lambda body: {**body, "usage": {"input": -1}},
            "malformed reply: usage.input is a negative number, not a token count",
        ),
        (lambda body: [body], "malformed reply: the body is a list, not an object"),
    ],
)
def test_a_reply_of_the_wrong_shape_is_malformed_naming_the_field(monkeypatch, reshape, message):
    import tests.support.json_provider  # noqa: F401

    monkeypatch.setenv("JSONAPI_KEY", KEY)
    with JsonApiServer(lambda request: Answer("fine", reshape=reshape)) as server:
        with pytest.raises(http.MalformedReply) as raised:
            _ask(_provider(server.url))
    assert str(raised.value) == message and raised.value.kind == "malformed_response"


def test_a_body_that_is_not_json_is_malformed(server):
    server.inject(Fault.malformed_json())
    with pytest.raises(http.MalformedReply, match="the body is not valid JSON"):
        _ask(_provider(server.url))


def test_no_connection_is_unreachable(server):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(http.Unreachable, match="connection failed"):
        _ask(_provider(f"http://127.0.0.1:{port}"))


def test_the_deadline_bounds_the_whole_attempt(server):
    server.inject(Fault.slow(5))
    start = time.monotonic()
    with pytest.raises(TransientError) as raised:
        _ask(_provider(server.url), timeout=0.5)
    assert raised.value.kind == "timeout" and "0.5 s" in str(raised.value)
    assert time.monotonic() - start < 3


@pytest.mark.parametrize(
    "leftover",
    ["another answer", Answer("", reshape=lambda body: {**body, "model": "other"}), b"HTTP/1.1 2"],
    ids=["another answer", "another model, no text", "a cut-off head"],
)
def test_a_reply_left_on_the_connection_is_not_the_next_answer(server, leftover):
    # The kit's client is the built-in providers': what a server left on a kept-alive
    # connection is never read; the next request goes on a fresh connection.
    server.inject(Fault(leftover=leftover))
    provider = _provider(server.url)

    texts = [_ask(provider).text for _ in range(3)]

    assert texts == ["loopback reply to: What is Luau?"] * 3
    assert [r.connection for r in server.requests] == [0, 1, 1]


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    """A self-signed certificate for 127.0.0.1: (its file, its key's)."""
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"]
        + ["-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1"]
        + ["-addext", "subjectAltName=IP:127.0.0.1"],
        check=True,
        capture_output=True,
    )
    return cert, key


@pytest.mark.parametrize("when", ["with the reply", "just before the next request is written"])
def test_over_tls_a_reply_left_on_the_connection_is_not_the_next_answer(certificate, when):
    # Decrypted into h11's buffer with the reply it came with, or arriving as a TLS record of
    # its own once the pool has picked the connection (httpcore2's trace hook lets it in
    # there, and waits until the client's socket has it).
    serving = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    serving.load_cert_chain(*certificate)
    written, sent = threading.Event(), threading.Event()
    fault = (
        Fault(leftover="another answer")
        if when == "with the reply"
        else Fault(leftover="another answer", leftover_after=written, leftover_sent=sent)
    )
    sockets, starts = [], []

    def trace(event: str, info: dict) -> None:
        if event == "connection.start_tls.complete":  # the socket under TLS
            sockets.append(info["return_value"].get_extra_info("socket"))
        elif event == "http11.send_request_headers.started":
            starts.append(event)
            if len(starts) == 2 and fault.leftover_after is not None:
                written.set()
                sent.wait(10)
                select.select([sockets[0]], [], [], 10)

    trusting = ssl.create_default_context(cafile=certificate[0])
    client = http.http_client(lambda **options: httpx2.Client(verify=trusting, **options))
    with JsonApiServer(tls=serving) as server:
        assert server.url.startswith("https://")
        server.inject(fault)
        texts = [
            http.send(
                client,
                "POST",
                f"{server.url}/generate",
                timeout=10,
                json={"model": "tiny-1", "prompt": f"question {i}"},
                extensions={"trace": trace},
            ).json()["text"]
            for i in range(3)
        ]

    assert texts == [f"loopback reply to: question {i}" for i in range(3)]
    assert [r.connection for r in server.requests] == [0, 1, 1]


def test_a_redirect_to_another_origin_is_refused(monkeypatch):
    import tests.support.json_provider  # noqa: F401

    monkeypatch.setenv("JSONAPI_KEY", KEY)
    with JsonApiServer(
        lambda request: Reply(307, b"", {"location": "http://127.0.0.2:9/generate"})
    ) as server:
        with pytest.raises(FatalProviderError) as raised:
            _ask(_provider(server.url))
    assert raised.value.kind == "redirect" and "redirects to another origin" in str(raised.value)


# -- through pytest ----------------------------------------------------------------------------------


def _run(server, tmp_path, *args: str):
    return run_harness(
        "-p",
        "tests.support.json_provider",
        "--provider=jsonapi",
        "--model=tiny-1",
        f"--base-url={server.url}",
        "-m",
        "multiple_choice",
        "--limit=3",
        *args,
        run_dir=tmp_path / "runs",
        results_dir=tmp_path / "results",
        env=ENV,
    )


def test_a_provider_from_the_kit_runs_and_its_errors_are_retried(tmp_path):
    with JsonApiServer(lambda request: "B") as server:
        server.fail_next(1, 429, retry_after=0.05)
        server.fail_next(1, 503)
        done = _run(server, tmp_path)
        asked = len(server.requests)

    counts = re.findall(r"(\d+) (?:passed|wrong)", done.stdout.strip().splitlines()[-1])
    assert done.returncode == 0 and sum(map(int, counts)) == 3, (
        done.stdout[-3000:] + done.stderr[-2000:]
    )  # every item answered (a wrong answer is no failure)
    result = read_result(tmp_path / "results", "multiple_choice")
    assert result["config"]["provider"] == "jsonapi" and result["summary"]["n"] == 3
    assert (
        result["summary"]["apiErrors"] == 0 and asked == 5
    )  # three items, two of them asked again
    assert [row["answer"] for row in result["results"]] == ["B", "B", "B"]
    written = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert written and not [path for path in written if KEY in path.read_text(errors="replace")]
    assert KEY not in done.stdout + done.stderr


def test_a_rejected_key_stops_the_run_with_one_message(tmp_path):
    with JsonApiServer(lambda request: "B") as server:
        server.fail_next(100, 401, body={"error": {"message": f"key {KEY} is not known here"}})
        done = _run(server, tmp_path)
        asked = len(server.requests)

    assert done.returncode != 0
    assert "HTTP 401: key <redacted> is not known here; check the API key" in done.stdout, (
        done.stdout[-3000:] + done.stderr[-2000:]
    )
    assert asked < 3 and not result_files(tmp_path / "results", "multiple_choice")
    assert KEY not in done.stdout + done.stderr
