"""What the harness enforces on the wire itself, under whichever SDK (both speak httpx2):

- a deadline for the whole attempt: the SDK's timeout bounds each read, so a server sending a
  byte every few seconds held a call as long as it liked. Every connect, read and write of an
  attempt is cut to the time left before its deadline, on the thread that asks (no watchdog
  thread, nothing left wedged), and past it the read times out as any other.
- no redirect to another origin: its answers would be filed under this endpoint's identity.
- no answer that was already waiting on a kept-alive connection before the request was
  written (a second response a broken proxy or server left there): the request goes on
  another connection instead (`_Connection`).
- a way to drop the connection a refused reply came on, so that the retry asks on a fresh one.

`http_client` builds the SDK's own default client with these; `deadline` wraps an attempt."""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import math
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

from evals.errors import FatalProviderError, ProviderError, TransientError, Unreachable

from ._base import server_text

_deadline: contextvars.ContextVar[float] = contextvars.ContextVar(
    "attempt_deadline", default=math.inf
)
# The connection this thread last sent a request on, so a refused reply can drop it: the one
# it was read from, even when no read reached the socket (the reply was in h11's buffer). Per
# thread, not a context variable, which a call made inside a copied context would set where
# the caller can't see it.
_last = threading.local()


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Every network operation inside ends by `seconds` from now."""
    token = _deadline.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _deadline.reset(token)


def drop_connection() -> None:
    """Close the connection this thread last asked on: whatever else it holds (a second
    response a server wrote) is not read as the answer to the next request."""
    stream, _last.stream = getattr(_last, "stream", None), None
    if stream is not None:
        with contextlib.suppress(Exception):
            stream.close()


def _redirected(origin: str, target: str) -> FatalProviderError:
    """Raised from the response hook, through the SDK (which lets it pass, or wraps it as a
    connection error: `redirect_refusal`); fatal, as every later item would be redirected alike."""
    return FatalProviderError(
        f"{origin} redirects to another origin, {target}: its answers would be filed under {origin}; "
        "point --base-url at the server that answers",
        kind="redirect",
    )


def redirect_refusal(error: BaseException) -> FatalProviderError | None:
    """The refusal of a cross-origin redirect that the SDK wrapped, if that is what `error` is."""
    cause = error.__cause__
    return cause if isinstance(cause, FatalProviderError) and cause.kind == "redirect" else None


def _origin(url: Any) -> str:
    parts = urlsplit(str(url))
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    return f"{parts.scheme}://{(parts.hostname or '').lower()}:{port}"


def _refuse_cross_origin(response: Any) -> None:
    if not response.is_redirect or "location" not in response.headers:
        return
    target = response.request.url.join(response.headers["location"])
    if _origin(target) != _origin(response.request.url):
        # The origins only: a path or query may carry a token. The target is the server's text.
        shown = lambda url: server_text(f"{url.scheme}://{url.netloc.decode('ascii', 'replace')}")  # noqa: E731
        raise _redirected(shown(response.request.url), shown(target))


def _left(timeout: float | None) -> float | None:
    left = _deadline.get() - time.monotonic()
    if left == math.inf:
        return timeout
    return max(0.0, left if timeout is None else min(timeout, left))


def _waiting(stream: Any) -> bool:
    """Whether bytes the client has not read wait on `stream`: on its socket (httpcore2's own
    poll) or decrypted already, in its TLS object."""
    if stream.get_extra_info("is_readable"):
        return True
    tls = stream.get_extra_info("ssl_object")
    return bool(tls is not None and tls.pending())


class _Stream:
    """A connection whose every operation ends by the asking thread's deadline, and whose next
    request, once `_Connection` says so, is not written while a reply is already waiting."""

    def __init__(self, inner: Any):
        self._inner = inner
        self._check = False

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        import httpcore2

        left = _left(timeout)
        if left == 0.0:
            raise httpcore2.ReadTimeout("the attempt's deadline passed")
        return self._inner.read(max_bytes, left)

    def check_before_writing(self) -> None:
        """Its next write starts a request on a kept-alive HTTP/1.1 connection."""
        self._check = True

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        import httpcore2

        _last.stream = self
        if self._check:
            self._check = False
            if _waiting(self._inner):
                raise httpcore2.ConnectionNotAvailable()  # see `_Connection`
        left = _left(timeout)
        if left == 0.0:
            raise httpcore2.WriteTimeout("the attempt's deadline passed")
        self._inner.write(buffer, left)

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context, server_hostname=None, timeout=None):
        return _Stream(self._inner.start_tls(ssl_context, server_hostname, _left(timeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Backend:
    """httpcore2's network backend, its streams under the deadline."""

    def __init__(self, inner: Any):
        self._inner = inner

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        return _Stream(
            self._inner.connect_tcp(host, port, _left(timeout), local_address, socket_options)
        )

    def connect_unix_socket(self, path, timeout=None, socket_options=None):
        return _Stream(self._inner.connect_unix_socket(path, _left(timeout), socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def _http11(connection: Any) -> Any:
    """The HTTP/1.1 connection inside one of httpcore2's pooled connections (a plain one, or
    one through a proxy), if it has one yet."""
    import httpcore2

    while connection is not None and not isinstance(connection, httpcore2.HTTP11Connection):
        connection = getattr(connection, "_connection", None)
    return connection


class _Connection:
    """One of the pool's connections, on which a request is never written while a reply is
    already waiting: sent before the server had the request, it cannot be its answer.

    httpcore2 would take it as one. Its pool polls an idle HTTP/1.1 connection's socket when
    it picks it (`has_expired`), which misses a reply that came off the socket with the
    previous response, in the same read, into h11's buffer (where no poll sees it), and one
    that lands between the pick and the write. So before a request on a kept-alive
    connection: h11's buffer is checked here, and the socket (`_Stream.write`) right before
    the request's first byte is written. Either holding bytes, the connection is closed and
    `ConnectionNotAvailable` raised: the pool then sends the request on another connection,
    checked alike, or a fresh one, which is not checked (nothing was read on it), so a
    request moves at most once per pooled connection. The cost: one poll of the socket per
    request on a reused connection (~2 µs; bench/wire.py)."""

    def __init__(self, inner: Any):
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def __repr__(self) -> str:
        return repr(self._inner)

    def handle_request(self, request: Any) -> Any:
        import httpcore2

        http11 = _http11(self._inner)
        if http11 is not None and http11.is_idle():
            if http11._h11_state.trailing_data[0]:
                http11.close()
                raise httpcore2.ConnectionNotAvailable()
            if isinstance(http11._network_stream, _Stream):
                http11._network_stream.check_before_writing()
        return self._inner.handle_request(request)


def http_client(default_client: Callable[..., Any]) -> Any:
    """The SDK's default httpx2 client (`openai.DefaultHttpxClient`, `anthropic.DefaultHttpxClient`:
    its timeout, limits and redirects) with the deadline on every transport, the proxies' too,
    no reply that was waiting on a connection before its request taken as its answer, and
    cross-origin redirects refused."""
    client = default_client(event_hooks={"response": [_refuse_cross_origin]})
    # httpx2 takes no network backend through its client: it is set on each transport's pool,
    # before any connection is made (a pool hands its backend to each new connection).
    pools = [
        getattr(transport, "_pool", None)
        for transport in [client._transport, *client._mounts.values()]
    ]
    if pools[0] is None or not hasattr(pools[0], "_network_backend"):
        raise RuntimeError(
            "this httpx2 has no connection pool where the harness expects one: the attempt deadline cannot be set"
        )
    for pool in filter(None, pools):
        pool._network_backend = _Backend(pool._network_backend)
        made = pool.create_connection  # called on the pool for each new connection
        pool.create_connection = lambda origin, made=made: _Connection(made(origin))
    return client


class Replies:
    """The replies an endpoint gave in this process, by their id, to tell a stale one.

    A reply already waiting on a connection when a request is written is never read as its
    answer (`_Connection`); one a server repeats later, once the next request is on the wire,
    can't be told by when it came. The rule for that one: a reply is stale when its id was seen
    before on a reply to a different request and its body is byte for byte that earlier
    reply. Neither alone is a sign: llama.cpp and others send one fixed id on every reply, and
    a deterministic server may answer two requests alike (ids and timestamps differ then). A
    model field naming another model is none either (OpenRouter renames models). A stale
    reply is asked again once, on a fresh connection, and that answer is taken whatever it
    is, so even a server that did send the same reply with the same id to two requests is
    only asked twice, never refused."""

    def __init__(self) -> None:
        self._seen: dict[
            str, tuple[bytes, bytes]
        ] = {}  # id -> (digest of the request, of the reply)
        self._lock = threading.Lock()

    def stale(self, request_body: Any, raw: bytes, reply_id: Any) -> bool:
        if not isinstance(reply_id, str) or not reply_id:
            return False
        asked = hashlib.blake2b(
            json.dumps(request_body, sort_keys=True, ensure_ascii=False).encode(
                "utf-8", "surrogatepass"
            ),
            digest_size=16,
        ).digest()
        got = hashlib.blake2b(raw, digest_size=16).digest()
        with self._lock:
            before = self._seen.get(reply_id)
            if before is not None and before[0] != asked and before[1] == got:
                return True
            self._seen[reply_id] = (asked, got)
            return False


def timed_out(timeout: float | None) -> str:
    return (
        f"no whole reply within {timeout:g} s, the attempt's deadline"
        if timeout
        else "the request timed out"
    )


def connection_error(error: BaseException) -> ProviderError:
    """What an SDK's connection error was: a cross-origin redirect refused (fatal), no
    connection made at all (`Unreachable`: nothing was sent), or one dropped on the way."""
    if refused := redirect_refusal(error):
        return refused
    import httpx2

    cause = error.__cause__
    if isinstance(cause, httpx2.ConnectError):
        return Unreachable(f"connection failed: {server_text(str(cause)) or type(cause).__name__}")
    return TransientError(f"connection failed: {error}", kind="connection")
