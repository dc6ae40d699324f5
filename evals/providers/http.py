"""The kit for a provider that speaks HTTP: what the built-in providers use on the wire, public
(docs/writing-a-provider.md builds a provider from it). Four parts:

- **the deadline** (`deadline`): `timeout` bounds the whole attempt, not each read, so a server
  sending a byte every few seconds cannot hold a call; every connect, read and write inside
  `with deadline(timeout):` ends by then.
- **the client** (`http_client`): an httpx2 client (the HTTP client the openai and anthropic
  SDKs are built on, installed with the harness) under that deadline, with redirects to
  another origin refused (their answers would be filed under this endpoint's identity), and
  no reply that was already waiting on a kept-alive connection read as the answer to the
  request written next (that request goes on a fresh connection). An
  SDK on httpx2 takes it as its `http_client`; without an SDK, `send` makes one request with
  it, under the deadline, and raises what went wrong as the error kind it is.
- **the error kinds**: what `complete` raises tells the harness what happened (`evals.errors`):
  `TransientError` is retried (a timeout, a 429, a 5xx; `retry_after` when the server said),
  `ProviderError` fails the item and the run goes on, `FatalProviderError` stops the run (a
  rejected key), `Unreachable` (a `TransientError`) says no connection could be made, so a
  dead endpoint ends the run early. `status_error` maps an HTTP status as every built-in
  provider does, `response_error` a whole error response, `transport_error` what the client
  raised.
- **the reply reader** (`reply_body`, `json_object`, `json_list`, `json_text`, `text_parts`,
  `token_count`, `error_in_body`): the reply's JSON read field by field; a field of the wrong
  type raises `MalformedReply` (retried), naming the field and the type found, never the value.
  `server_text` and `error_text` make what a server said safe for a one-line message.

Also here, for a provider with a Batch API: `BatchAPI` (what `Provider.batch_api()` returns),
`BatchState`, `BatchUnsupported`, `not_run` and `line_error`; and for a server that may repeat
a reply once the next request is on its way, `Replies` and `drop_connection`.

Importing this module imports no HTTP library: httpx2 is imported when a client is made or an
error read, so a provider module that imports it at its top keeps the harness's start-up light.
The names are those the built-in providers use, the same objects: the error kinds from
`evals.errors`, the rest from the private modules `_base`, `_wire` and `_batch`."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from evals.errors import (
    BatchUnsupported,
    FatalProviderError,
    MalformedReply,
    ProviderError,
    TransientError,
    Unreachable,
)

from ._base import (
    error_in_body,
    error_text,
    json_list,
    json_object,
    json_text,
    reply_body,
    server_text,
    status_error,
    text_parts,
    token_count,
)
from ._batch import BatchAPI, BatchState, line_error, not_run
from ._wire import Replies, deadline, drop_connection, redirect_refusal, timed_out
from ._wire import http_client as _sdk_client

__all__ = [
    "BatchAPI",
    "BatchState",
    "BatchUnsupported",
    "FatalProviderError",
    "MalformedReply",
    "ProviderError",
    "Replies",
    "TransientError",
    "Unreachable",
    "deadline",
    "drop_connection",
    "error_in_body",
    "error_text",
    "http_client",
    "json_list",
    "json_object",
    "json_text",
    "line_error",
    "not_run",
    "reply_body",
    "response_error",
    "send",
    "server_text",
    "status_error",
    "text_parts",
    "token_count",
    "transport_error",
]


def http_client(default_client: Callable[..., Any] | None = None) -> Any:
    """An httpx2 client with the attempt's deadline on every connection, redirects to another
    origin refused (a same-origin redirect is followed), and no reply that was waiting on a
    kept-alive connection before a request was written taken as its answer. `default_client` is the client class to
    make it from, with its own defaults: an SDK's (`openai.DefaultHttpxClient`), or by default
    `httpx2.Client` following redirects. Send each request inside `with deadline(timeout):`."""
    if default_client is None:
        import httpx2

        def default_client(**options: Any) -> Any:
            return httpx2.Client(follow_redirects=True, **options)

    return _sdk_client(default_client)


def send(client: Any, method: str, url: str, *, timeout: float, **options: Any) -> Any:
    """One request of an attempt with `client` (`http_client`), whole within `timeout` seconds
    (`deadline`): its response, read, when its status is below 400; else the error it is
    (`response_error`: a 429 or 5xx retried, a rejected key fatal, ...) raised, and what the
    client raised as the error it means (`transport_error`). `options` are the client's own
    (`json=`, `headers=`, `params=`)."""
    import httpx2

    try:
        with deadline(timeout):
            response = client.request(method, url, timeout=timeout, **options)
    except httpx2.TransportError as error:
        raise transport_error(error, timeout) from None
    if (refused := response_error(response)) is not None:
        raise refused
    return response


def response_error(response: Any) -> ProviderError | None:
    """The error an HTTP response is (None for a status below 400): `status_error` of its status,
    with the explanation its body gives (`error_text`, any common shape, made one safe line) and
    its Retry-After. `response` is an httpx2 (or httpx) response, read."""
    status = response.status_code
    if status < 400:
        return None
    try:
        body: Any = json.loads(response.content)
    except ValueError:
        body = response.content.decode("utf-8", "replace")
    said = error_text(body)
    return status_error(
        status,
        f"HTTP {status}: {server_text(said) if said else response.reason_phrase or 'no explanation'}",
        response.headers,
    )


def transport_error(error: BaseException, timeout: float | None = None) -> ProviderError:
    """What an error the client raised (or an SDK's, wrapping one) means: a redirect to another
    origin refused (fatal), the deadline passed (`timeout`, the attempt's, names it; retried), no
    connection made (`Unreachable`: nothing was sent), or a connection dropped on the way (retried)."""
    import httpx2

    if isinstance(error, FatalProviderError):
        return error
    if refused := redirect_refusal(error):
        return refused
    cause = error if isinstance(error, httpx2.TransportError) else error.__cause__
    if isinstance(cause, httpx2.TimeoutException):
        return TransientError(timed_out(timeout), kind="timeout")
    if isinstance(cause, httpx2.ConnectError):
        return Unreachable(f"connection failed: {server_text(str(cause)) or type(cause).__name__}")
    return TransientError(
        f"connection failed: {server_text(str(error)) or type(error).__name__}", kind="connection"
    )
