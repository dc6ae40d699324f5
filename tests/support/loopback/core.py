"""Provider-agnostic loopback HTTP server: recording, faults, latency.

One request goes through `LoopbackServer._serve`:
  arrival -> pick a fault (queued faults first, then rules) -> record (memory + JSONL log)
  -> sleep latency (+ fault delay) -> fault reply, or `handle()` -> bytes on the wire.

Provider subclasses only override `handle()` (routing and wire shapes) and
`error_reply()` (their error-body shape). Everything runs on stdlib threads: one daemon
thread per connection, HTTP/1.1 keep-alive, so sleeps in one request never delay another.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import json
import socket
import ssl
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable
from urllib.parse import parse_qsl, unquote, urlsplit

# Header values never written to the file log: they carry API keys.
SECRET_HEADERS = frozenset(
    {"authorization", "x-api-key", "api-key", "proxy-authorization", "cookie"}
)
REDACTED = "<redacted>"

# A body that starts like a real completion and stops mid-object, as a cut-off proxy would send.
MALFORMED_BODY = b'{"id": "loopback-malformed", "object": "chat.completion", "choices": [{"ind'


@dataclass(frozen=True)
class Request:
    """One request as it reached the server."""

    index: int  # arrival order, from 0
    method: str
    path: str  # without the query string
    query: str
    headers: dict[str, str]  # keys lowercased
    body: Any  # parsed JSON, or None when the body is empty or not JSON
    raw_body: bytes
    timestamp: float  # time.time() at arrival
    fault: str | None = None  # label of the injected fault, if any
    connection: int = 0  # the connection it came on, numbered from 0 in the order accepted
    scripted: Answer | None = None  # what the model says, not the responder (a leftover's)

    @property
    def api_key(self) -> str | None:
        """The key as sent in `Authorization: Bearer ...` (OpenAI) or `x-api-key` (Anthropic)."""
        auth = self.headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            return auth[7:]
        return self.headers.get("x-api-key") or self.headers.get("api-key")

    @property
    def params(self) -> dict[str, str]:
        """Query-string parameters (the last value of a repeated name wins)."""
        return dict(parse_qsl(self.query))

    def log_record(self) -> dict:
        """JSON-able record for the file log, with secrets removed."""
        headers = {k: (REDACTED if k in SECRET_HEADERS else v) for k, v in self.headers.items()}
        body = self.body if self.body is not None else self.raw_body.decode("utf-8", "replace")
        return {
            "index": self.index,
            "timestamp": self.timestamp,
            "method": self.method,
            "path": self.path,
            "query": self.query,
            "headers": headers,
            "body": body,
            "fault": self.fault,
        }


@dataclass
class Reply:
    """A raw HTTP reply, sent as is. dict/list bodies are JSON-encoded."""

    status: int = 200
    body: bytes | str | dict | list = b""
    headers: dict[str, str] = field(default_factory=dict)
    wire_fault: Fault | None = None  # how it is written: trickled, or twice (see Fault)
    leftover: Reply | bytes | None = None  # a second response written after it (Fault.leftover)

    def encode(self) -> tuple[bytes, dict[str, str]]:
        headers = dict(self.headers)
        if isinstance(self.body, (dict, list)):
            headers.setdefault("content-type", "application/json")
            return json.dumps(self.body).encode(), headers
        if isinstance(self.body, str):
            headers.setdefault("content-type", "text/plain; charset=utf-8")
            return self.body.encode(), headers
        return self.body, headers


@dataclass
class Answer:
    """What the model "said"; each provider server renders it in its own wire shape.

    Token counts are written to the wire verbatim, in each provider's own accounting (OpenAI's
    prompt tokens include cached ones, Anthropic's input_tokens exclude cache reads/writes).
    None means "derive deterministically": words in the request / in text + reasoning.
    """

    text: str
    reasoning: str | None = None  # None: no reasoning at all; "": hidden reasoning (no text)
    finish_reason: str = "stop"  # neutral "stop" | "length" | "content_filter", or a native value
    input_tokens: int | None = None
    output_tokens: int | None = None  # includes reasoning tokens, as both providers count them
    reasoning_tokens: int | None = None  # OpenAI only; Anthropic has no separate count
    cached_tokens: int = 0  # OpenAI cached_tokens / Anthropic cache_read_input_tokens
    cache_creation_tokens: int = 0  # Anthropic cache_creation_input_tokens
    # Breaks the rendered wire body before it is sent (a 200 reply of the wrong shape): edits
    # the body in place, or returns the body to send instead.
    reshape: Callable[[dict], Any] | None = None

    def wire(self, body: dict) -> dict:
        """The body to send: the provider's rendering of this answer, reshaped if asked."""
        if self.reshape is None:
            return body
        replaced = self.reshape(body)
        return body if replaced is None else replaced


@dataclass
class Fault:
    """An injected failure. Fields combine: e.g. Fault(status=429, delay=1.0)."""

    status: int | None = None  # error reply with this status (provider error-body shape)
    error: str | None = None  # named provider error kind, e.g. "insufficient_quota"
    retry_after: float | None = None  # adds a `retry-after` header (seconds)
    body: bytes | str | dict | None = None  # replaces the provider error body
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # extra seconds before answering (a slow reply)
    malformed: bool = False  # 200 with truncated JSON
    drop: bool = False  # close the connection without any response
    trickle: float | None = None  # send the reply a byte at a time, this many seconds apart
    twice: bool = False  # write the reply twice on the keep-alive connection (a broken proxy)
    # After the reply, a second, different response on the same keep-alive connection, as a
    # broken proxy leaves one: an answer (str, Answer) to a request that never came (its own
    # id), a Reply, or raw bytes. In the reply's own write, unless `leftover_after` is given:
    # then written once that is set (10 s at most), in a write of its own, and `leftover_sent`
    # set once it is on the wire.
    leftover: str | Answer | Reply | bytes | None = None
    leftover_after: threading.Event | None = None
    leftover_sent: threading.Event | None = None

    @classmethod
    def slow(cls, delay: float) -> Fault:
        return cls(delay=delay)

    @classmethod
    def malformed_json(cls) -> Fault:
        return cls(malformed=True)

    @classmethod
    def dropped(cls) -> Fault:
        return cls(drop=True)

    @property
    def label(self) -> str:
        if self.drop:
            return "drop"
        if self.trickle is not None:
            return f"trickle {self.trickle}s"
        if self.twice:
            return "twice"
        if self.leftover is not None:
            return "leftover"
        if self.malformed:
            return "malformed"
        if self.status or self.error:
            return str(self.status or self.error)
        return f"delay {self.delay}s"


Responder = Callable[[Request], "str | Answer | Reply"]
Predicate = Callable[[Request], bool]


class LoopbackServer:
    """Base server: records every request and answers `responder(request)`.

    The base class has no routes: its default responder echoes method, path and body as JSON.
    """

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        latency: float = 0.0,
        host: str = "127.0.0.1",
        port: int = 0,
        log_path: str | Path | None = None,
        tls: ssl.SSLContext | None = None,  # serve HTTPS with this (server-side) context
    ):
        self.responder = responder or self.default_responder
        self._tls = tls
        self.latency = latency
        self._address = (host, port)
        self._log_path = Path(log_path) if log_path else None
        self._lock = threading.Lock()
        self._requests: list[Request] = []
        self._queued: list[Fault] = []
        self._rules: list[list] = []  # [predicate, fault, remaining times or None]
        self._httpd: _HTTPServer | None = None
        self._log_file = None
        self._in_flight: collections.Counter[str | None] = collections.Counter()
        self.peak_in_flight: dict[
            str | None, int
        ] = {}  # model (None: no model in the body) -> most requests at once

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> LoopbackServer:
        self._httpd = _HTTPServer(self._address, _Handler)
        self._httpd.loopback = self
        if self._tls is not None:
            self._httpd.socket = self._tls.wrap_socket(self._httpd.socket, server_side=True)
        if self._log_path:
            self._log_file = open(self._log_path, "a", encoding="utf-8")
        threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"loopback-{self.port}",
            daemon=True,
        ).start()
        return self

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._httpd.shutdown()
        self._httpd.close_all_connections()  # idle keep-alive threads would linger otherwise
        self._httpd.server_close()
        self._httpd = None
        with self._lock:  # a request arriving right now must not write to a closed file
            if self._log_file:
                self._log_file.close()
                self._log_file = None

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"{'https' if self._tls else 'http'}://{self._address[0]}:{self.port}"

    # -- recorded requests -------------------------------------------------------------------

    @property
    def requests(self) -> list[Request]:
        """Snapshot of the requests received so far, in arrival order."""
        with self._lock:
            return list(self._requests)

    def clear(self) -> None:
        """Forget recorded requests and all pending faults."""
        with self._lock:
            self._requests.clear()
            self._queued.clear()
            self._rules.clear()

    # -- faults ------------------------------------------------------------------------------

    def inject(self, fault: Fault, n: int = 1) -> None:
        """The next n requests (any route) get `fault`. Queued faults apply before rules."""
        with self._lock:
            self._queued.extend([fault] * n)

    def inject_when(self, predicate: Predicate, fault: Fault, times: int | None = None) -> None:
        """Matching requests (`predicate(request)` true) get `fault`, at most `times` times."""
        with self._lock:
            self._rules.append([predicate, fault, times])

    def fail_next(
        self,
        n: int = 1,
        status: int | None = None,
        *,
        error: str | None = None,
        retry_after: float | None = None,
        body: bytes | str | dict | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        """The next n requests get an error reply. With neither status nor error: 429."""
        self.inject(_error_fault(status, error, retry_after, body, headers), n)

    def fail_when(
        self,
        predicate: Predicate,
        status: int | None = None,
        *,
        times: int | None = None,
        error: str | None = None,
        retry_after: float | None = None,
        body: bytes | str | dict | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        """Requests matching `predicate(request)` get an error reply (see fail_next)."""
        self.inject_when(predicate, _error_fault(status, error, retry_after, body, headers), times)

    def clear_faults(self) -> None:
        with self._lock:
            self._queued.clear()
            self._rules.clear()

    def _take_fault(self, request: Request) -> Fault | None:
        # Called under self._lock, so concurrent requests never consume the same queued fault.
        if self._queued:
            return self._queued.pop(0)
        for rule in self._rules:
            predicate, fault, times = rule
            if times != 0 and predicate(request):
                if times is not None:
                    rule[2] = times - 1
                return fault
        return None

    # -- per-provider hooks ------------------------------------------------------------------

    def default_responder(self, request: Request) -> Reply:
        return Reply(200, {"method": request.method, "path": request.path, "body": request.body})

    def handle(self, request: Request) -> Reply:
        """Answer a request that got no fault. Providers override this with their routes."""
        result = self.responder(request)
        return result if isinstance(result, Reply) else Reply(200, {"text": str(result)})

    def error_reply(
        self, status: int | None, error: str | None = None, message: str | None = None
    ) -> Reply:
        """An error in this provider's body shape; status None means "the usual one for `error`"."""
        return Reply(
            status or 500,
            {"error": {"type": error or "error", "message": message or "loopback error"}},
        )

    # -- the request pipeline ----------------------------------------------------------------

    def _serve(
        self, method: str, target: str, headers: dict[str, str], raw: bytes, connection: int = 0
    ) -> Reply | None:
        """Returns the reply to send, or None to drop the connection. A trickle or twice fault
        rides on the reply (`Reply.wire_fault`) for the handler to write it so, a leftover on
        `Reply.leftover`."""
        parts = urlsplit(target)
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        with self._lock:
            request = Request(
                len(self._requests),
                method,
                parts.path,
                parts.query,
                headers,
                body,
                raw,
                time.time(),
                connection=connection,
            )
            fault = self._take_fault(request)
            if fault:
                request = _with_fault(request, fault.label)
            self._requests.append(request)
            self._write_log(request)  # at arrival, so a killed client still leaves a trace
            model = (
                body.get("model")
                if isinstance(body, dict) and isinstance(body.get("model"), str)
                else None
            )
            self._in_flight[model] += 1
            self.peak_in_flight[model] = max(
                self.peak_in_flight.get(model, 0), self._in_flight[model]
            )
        try:
            time.sleep(self.latency + (fault.delay if fault else 0.0))
            if fault and fault.drop:
                return None
            if fault and fault.malformed:
                return Reply(200, MALFORMED_BODY, {"content-type": "application/json"})
            if fault and (fault.status or fault.error):
                return self._fault_reply(fault)
            reply = self.handle_safely(request)
            if fault and (fault.trickle is not None or fault.twice):
                reply.wire_fault = fault
            if fault and fault.leftover is not None:
                reply.leftover = self._leftover(request, fault.leftover)
                reply.wire_fault = fault
            return reply
        finally:
            with self._lock:
                self._in_flight[model] -= 1

    def _leftover(self, request: Request, leftover: str | Answer | Reply | bytes) -> Reply | bytes:
        if isinstance(leftover, (Reply, bytes)):
            return leftover
        never_asked = dataclasses.replace(
            request,
            index=request.index + 900_000,  # its own id
            scripted=Answer(leftover) if isinstance(leftover, str) else leftover,
        )
        return self.handle_safely(never_asked)

    @property
    def busy(self) -> bool:
        """Whether a request is being answered now (read, its reply not yet sent)."""
        with self._lock:
            return any(n > 0 for n in self._in_flight.values())

    def handle_safely(self, request: Request) -> Reply:
        """`handle()`, with an exception turned into a 500 reply and a traceback on stderr."""
        try:
            return self.handle(request)
        except Exception as exc:  # a broken test responder should fail loudly, not hang the client
            traceback.print_exc(file=sys.stderr)
            return self.error_reply(500, message=f"loopback responder raised {exc!r}")

    def _fault_reply(self, fault: Fault) -> Reply:
        reply = self.error_reply(fault.status, fault.error)
        if fault.body is not None:
            reply.body = fault.body
        if fault.retry_after is not None:
            reply.headers["retry-after"] = f"{fault.retry_after:g}"
        reply.headers.update(fault.headers)
        return reply

    def _write_log(self, request: Request) -> None:
        if not self._log_file:
            return
        line = json.dumps(request.log_record())
        # Scrub the key anywhere else too (URL, body): a leaking client must not leak into the log.
        key = request.api_key
        if key:
            line = line.replace(key, REDACTED)
        self._log_file.write(line + "\n")
        self._log_file.flush()


class RoutedServer(LoopbackServer):
    """Base for provider servers: a route table plus the common checks of generation requests."""

    # (method, path template) -> name of the handler method. A "{name}" segment of the template
    # matches any one path segment and reaches the handler as a keyword argument:
    # ("GET", "/v1/batches/{batch_id}") calls handler(request, batch_id="batch_...").
    routes: dict[tuple[str, str], str] = {}
    required: dict[str, tuple[str, ...]] = {}  # path -> body fields the real API rejects without

    def handle(self, request: Request) -> Reply:
        # OpenRouter serves the same API under /api/v1: reached as an HTTP proxy for
        # http://openrouter.ai, the server stands in for it.
        found = self.route(request.method, request.path.removeprefix("/api"))
        if found is None:
            return self.error_reply(404, message=f"Invalid URL ({request.method} {request.path})")
        name, params = found
        return getattr(self, name)(request, **params)

    def route(self, method: str, path: str) -> tuple[str, dict[str, str]] | None:
        """(handler name, path parameters) of the first route matching, or None."""
        for (route_method, template), name in self.routes.items():
            if route_method == method:
                params = match_path(template, path)
                if params is not None:
                    return name, params
        return None

    def answer(self, request: Request) -> Answer | Reply:
        """Validate a generation request, then ask the responder what the model says."""
        body = request.body
        if not isinstance(body, dict):
            return self.error_reply(400, message="The request body is not valid JSON.")
        missing = [
            f
            for f in self.required.get(request.path.removeprefix("/api"), ())
            if body.get(f) is None
        ]
        if missing:
            return self.error_reply(400, message=f"{missing[0]}: Field required")
        if body.get("stream"):  # loud rather than a silently wrong non-SSE body
            return self.error_reply(400, message="loopback server does not implement stream=true")
        result = request.scripted if request.scripted is not None else self.responder(request)
        return Answer(result) if isinstance(result, str) else result

    def default_responder(self, request: Request) -> Answer:
        """Deterministic: echoes the last user message; reasons only when the request asks to."""
        last = last_user_text(request.body)
        reasoning = f"Reasoning about: {last}" if self.wants_reasoning(request.body) else None
        return Answer(f"loopback reply to: {last}", reasoning=reasoning)

    def wants_reasoning(self, body: dict) -> bool:
        return False


def usage_numbers(body: dict, answer: Answer) -> tuple[int, int, int]:
    """(input, output, reasoning) tokens: the answer's numbers, or deterministic word counts."""
    reasoning = answer.reasoning_tokens
    if reasoning is None:
        reasoning = count_words(answer.reasoning)
    inp = answer.input_tokens if answer.input_tokens is not None else prompt_words(body)
    out = answer.output_tokens
    if out is None:
        out = count_words(answer.text) + reasoning
    return inp, out, reasoning


def match_path(template: str, path: str) -> dict[str, str] | None:
    """The "{name}" segments of `template` as found in `path`, or None if the path differs."""
    wanted, got = template.split("/"), path.split("/")
    if len(wanted) != len(got):
        return None
    params = {}
    for want, segment in zip(wanted, got):
        if want.startswith("{") and want.endswith("}") and segment:
            params[want[1:-1]] = unquote(segment)
        elif want != segment:
            return None
    return params


def _error_fault(status, error, retry_after, body, headers) -> Fault:
    if status is None and error is None:
        status = 429
    return Fault(
        status=status, error=error, retry_after=retry_after, body=body, headers=headers or {}
    )


def _with_fault(request: Request, label: str) -> Request:
    return Request(**{**request.__dict__, "fault": label})


def read_log(path: str | Path) -> list[dict]:
    """The JSONL request log written by a server started with `log_path`."""
    path = Path(path)
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


# -- helpers for responders ------------------------------------------------------------------


def last_user_text(body: Any) -> str:
    """Text of the last user turn in a chat / responses / messages request body."""
    if not isinstance(body, dict):
        return ""
    turns = body.get("messages") or body.get("input") or []
    if isinstance(turns, str):  # Responses API allows a bare string input
        return turns
    for turn in reversed(turns):
        if isinstance(turn, dict) and turn.get("role") == "user":
            return " ".join(_strings(turn.get("content")))
    return ""


def set_field(path: str, value: Any) -> Callable[[dict], None]:
    """A reshape (see `Answer.reshape`) that sets one field of the wire body, named by a dotted
    path with list indexes: set_field("choices.0.message", None)."""
    *parents, last = path.split(".")

    def reshape(body: dict) -> None:
        node: Any = body
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        node[int(last) if isinstance(node, list) else last] = value

    return reshape


def count_words(obj: Any) -> int:
    """Deterministic stand-in for a token count: words in all text of `obj`."""
    return sum(len(s.split()) for s in _strings(obj))


def _strings(obj: Any) -> list[str]:
    # Text leaves only: role and type tags are structure, not content.
    if isinstance(obj, str):
        return [obj]
    if isinstance(obj, list):
        return [s for item in obj for s in _strings(item)]
    if isinstance(obj, dict):
        return [s for k, v in obj.items() if k not in ("role", "type") for s in _strings(v)]
    return []


def prompt_words(body: dict) -> int:
    return count_words([body.get(k) for k in ("system", "instructions", "messages", "input")])


# -- stdlib HTTP plumbing --------------------------------------------------------------------


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # listen backlog; the default 5 makes bursts of connects stall
    loopback: LoopbackServer

    def __init__(self, *args, **kwargs):
        self._conns: set[socket.socket] = set()
        self._conns_lock = threading.Lock()
        self.numbers = itertools.count()  # of the connections accepted
        super().__init__(*args, **kwargs)

    def track(self, conn: socket.socket, alive: bool) -> None:
        with self._conns_lock:
            (self._conns.add if alive else self._conns.discard)(conn)

    def handle_error(self, request, client_address) -> None:
        # Clients that hang up (timeouts, killed processes) are routine in fault tests.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)

    def close_all_connections(self) -> None:
        with self._conns_lock:
            for conn in self._conns:
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: SDK connection pools reuse sockets
    server_version = "loopback"
    server: _HTTPServer

    # Headers and body leave in separate writes; with Nagle's algorithm on, the body waits for
    # the client's delayed ACK, adding 40 ms to every reply that no real API server adds.
    disable_nagle_algorithm = True

    def setup(self):
        super().setup()
        self.number = next(self.server.numbers)
        self.server.track(self.connection, True)

    def finish(self):
        super().finish()
        self.server.track(self.connection, False)

    def _dispatch(self):
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        reply = self.server.loopback._serve(self.command, self.path, headers, raw, self.number)
        if reply is None:
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        body, reply_headers = reply.encode()
        fault = reply.wire_fault
        if fault is not None and (
            fault.trickle is not None or fault.twice or reply.leftover is not None
        ):
            self._write_faulty(reply, reply_headers, body, fault)
            return
        self.send_response(reply.status)
        for name, value in reply_headers.items():
            if name.lower() != "content-length":
                self.send_header(name, value)
        # A HEAD reply says the length of the body a GET would get (or the one the reply names), and sends none.
        lengths = [v for k, v in reply_headers.items() if k.lower() == "content-length"]
        self.send_header(
            "content-length", lengths[0] if lengths and self.command == "HEAD" else str(len(body))
        )
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _message(self, status: int, headers: dict[str, str], body: bytes) -> bytes:
        head = [f"HTTP/1.1 {status} {self.responses.get(status, ('',))[0]}"]
        head += [f"{k}: {v}" for k, v in headers.items() if k.lower() != "content-length"]
        head.append(f"content-length: {len(body)}")
        return ("\r\n".join(head) + "\r\n\r\n").encode() + body

    def _write_faulty(
        self, reply: Reply, headers: dict[str, str], body: bytes, fault: Fault
    ) -> None:
        message = self._message(reply.status, headers, body)
        if (
            fault.twice
        ):  # one write: the client reads both into its buffer, the second left for the next request
            self.wfile.write(message * 2)
            return
        if reply.leftover is not None:
            leftover = reply.leftover
            if isinstance(leftover, Reply):
                extra_body, extra_headers = leftover.encode()
                leftover = self._message(leftover.status, extra_headers, extra_body)
            if fault.leftover_after is None:  # one write, as twice
                self.wfile.write(message + leftover)
                return
            self.wfile.write(message)
            self.wfile.flush()
            fault.leftover_after.wait(10)
            try:
                self.wfile.write(leftover)
                self.wfile.flush()
            except OSError:  # the client hung up first
                self.close_connection = True
            if fault.leftover_sent is not None:
                fault.leftover_sent.set()
            return
        try:
            for i in range(len(message)):
                self.wfile.write(message[i : i + 1])
                self.wfile.flush()
                time.sleep(fault.trickle)
        except OSError:  # the client gave up on it
            self.close_connection = True

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = _dispatch

    def log_message(self, format, *args):  # keep test output clean
        pass
