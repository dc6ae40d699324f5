"""The public kit for HTTP providers (`evals.providers.http`): a provider written from it alone as
docs/writing-a-provider.md shows it (`tests.support.json_provider`, whose code the guide holds
verbatim) answers through a loopback server, and each way a call goes wrong is the error kind
the harness acts on; the guide names no private module, in its code or its prose. The same
provider through the CLI is tests/e2e/test_http_kit.py."""

from __future__ import annotations

import ast
import re
import socket
import time

import pytest

from evals.errors import FatalProviderError, ProviderError, TransientError
from evals.providers import ProviderSpec, Request, make_provider, http
from tests.support import ROOT
from tests.support.loopback import Fault, Reply
from tests.support.loopback.jsonapi_server import JsonApiServer

GUIDE = ROOT / "docs" / "writing-a-provider.md"
PROVIDER = ROOT / "tests" / "support" / "json_provider.py"
KEY = "jsonapi-test-key-0123456789"


def _blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", GUIDE.read_text(encoding="utf-8"), flags=re.S | re.M)


@pytest.fixture
def server(monkeypatch):
    import tests.support.json_provider  # noqa: F401 (registers jsonapi, as its entry point would)

    monkeypatch.setenv("JSONAPI_KEY", KEY)
    with JsonApiServer() as running:
        yield running


def _provider(url: str):
    return make_provider(ProviderSpec("jsonapi", "tiny-1", base_url=url))


def _ask(provider, timeout: float = 10):
    return provider.complete(Request("What is Luau?\nAnswer briefly.", system="Be brief.", max_tokens=50), timeout=timeout)


# -- the guide --------------------------------------------------------------------------------------


def test_the_guides_code_and_prose_name_no_private_module():
    """Every import of the guide's code is of a public module and a public name, no name in
    its code is a private module's, and its prose names none (`evals.providers._base`,
    `_wire.deadline`, `evals/providers/_retry.py`)."""
    blocks = _blocks("python")
    assert blocks
    private: list[str] = []
    for block in blocks:
        for node in ast.walk(ast.parse(block)):
            if isinstance(node, ast.ImportFrom):
                private += [node.module or ""] if any(part.startswith("_") for part in (node.module or "").split(".")) else []
                private += [alias.name for alias in node.names if alias.name.startswith("_")]
            elif isinstance(node, ast.Import):
                private += [alias.name for alias in node.names if any(part.startswith("_") for part in alias.name.split("."))]
            elif isinstance(node, ast.Name) and node.id.startswith("_") and not node.id.startswith("__"):
                private.append(node.id)
    assert private == []
    prose = re.sub(r"^```.*?^```", "", GUIDE.read_text(encoding="utf-8"), flags=re.S | re.M)
    named = re.findall(r"\bevals(?:[./]\w+)*[./]_[a-z]\w*|(?<![\w./])_[a-z]\w*\.(?:py\b|[a-z]\w*)", prose)
    assert named == []


def test_the_guides_http_provider_is_the_one_these_tests_run():
    (block,) = [b for b in _blocks("python") if b.startswith("# my_provider/jsonapi.py\n")]
    assert block.removeprefix("# my_provider/jsonapi.py\n") in PROVIDER.read_text(encoding="utf-8")
    imports = [node for node in ast.walk(ast.parse(block)) if isinstance(node, (ast.Import, ast.ImportFrom))]
    assert {node.module for node in imports if isinstance(node, ast.ImportFrom)} == {"evals", "evals.extensions", "evals.providers"}


def test_the_kit_is_the_objects_the_built_in_providers_use():
    """The private names keep working, and are the same objects (an isinstance holds across)."""
    from evals.providers import _base, _batch, _wire

    assert http.MalformedReply is _base.MalformedReply and http.Unreachable is _base.Unreachable
    assert http.status_error is _base.status_error and http.reply_body is _base.reply_body
    assert http.deadline is _wire.deadline and http.BatchAPI is _batch.BatchAPI
    assert set(http.__all__) <= set(dir(http))
    assert all(getattr(http, name).__doc__ for name in http.__all__)


# -- the provider against a loopback server ---------------------------------------------------------


def test_a_provider_from_the_kit_answers(server):
    reply = _ask(_provider(server.url))

    assert (reply.text, reply.model, reply.usage.input, reply.usage.output) == ("loopback reply to: What is Luau?", "tiny-1", 7, 6)
    (asked,) = server.requests
    assert (asked.method, asked.path) == ("POST", "/generate")
    assert asked.body == {"model": "tiny-1", "prompt": "What is Luau?\nAnswer briefly.", "system": "Be brief.", "max_tokens": 50}
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
def test_an_error_status_is_the_error_kind_the_harness_acts_on(server, status, error, kind, retry_after):
    server.fail_next(1, status, retry_after=retry_after, body={"error": {"message": "the server's own words\n\x1b[2J"}})

    with pytest.raises(ProviderError) as raised:
        _ask(_provider(server.url))

    assert type(raised.value) is error and raised.value.kind == kind and raised.value.status == status
    assert getattr(raised.value, "retry_after", None) == retry_after
    assert str(raised.value).startswith(f"HTTP {status}: the server's own words\\n\\x1b[2J")  # one safe line


@pytest.mark.parametrize(
    "reshape, message",
    [
        (lambda body: {**body, "text": 5}, "malformed reply: text is a number, not a string"),
        (lambda body: {**body, "usage": {"input": -1}}, "malformed reply: usage.input is a negative number, not a token count"),
        (lambda body: [body], "malformed reply: the body is a list, not an object"),
    ],
)
def test_a_reply_of_the_wrong_shape_is_malformed_naming_the_field(monkeypatch, reshape, message):
    import tests.support.json_provider  # noqa: F401

    monkeypatch.setenv("JSONAPI_KEY", KEY)
    from tests.support.loopback import Answer

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


def test_a_redirect_to_another_origin_is_refused(monkeypatch):
    import tests.support.json_provider  # noqa: F401

    monkeypatch.setenv("JSONAPI_KEY", KEY)
    with JsonApiServer(lambda request: Reply(307, b"", {"location": "http://127.0.0.2:9/generate"})) as server:
        with pytest.raises(FatalProviderError) as raised:
            _ask(_provider(server.url))
    assert raised.value.kind == "redirect" and "redirects to another origin" in str(raised.value)
