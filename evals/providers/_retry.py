"""Retries with backoff and jitter, and a throttle that slows the whole process down under 429s.

A final failure is raised as a `ProviderError` for the caller to record on its item; it never
ends the run. Only a `FatalProviderError` (rejected key, spent quota, or a Retry-After so long
that it means "come back later") does."""

from __future__ import annotations

import collections
import contextlib
import random
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any, Callable

from evals.errors import (
    FatalProviderError,
    ProviderError,
    QuotaExhausted,
    TransientError,
    Unreachable,
)
from evals.scrub import redact

from ._base import Completion, Provider, ProviderSpec, Request


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 6  # for 5xx, timeouts, dropped connections, garbled bodies
    # Seconds of waiting on 429s before an item gives up; one Retry-After longer than this ends
    # the run instead ("come back later"): every item would be told alike.
    rate_limit_patience: float = 900.0
    base_delay: float = 1.0
    max_delay: float = 60.0
    timeout: float = 600.0  # the whole attempt, connect to last byte: reasoning models are slow
    unreachable_attempts: int = 3  # refused connections, with no answer ever, before the run ends
    refused_attempts: int = (
        3  # the same refusal of the model, with no reply ever, before the run ends
    )
    batch_attempts: int = (
        3  # batches a request may go unrun in (expired, cancelled) or meet a 429 / 5xx
    )

    def backoff(self, attempt: int, rng: random.Random) -> float:
        """Full jitter: spreads retries from many threads instead of synchronising them."""
        return rng.uniform(0, min(self.max_delay, self.base_delay * 2 ** (attempt - 1)))


class Throttle:
    """Process-wide limit on concurrent requests: halved by a burst of 429s, grown back by
    successes and by time without 429s.

    Under sustained rate limiting the run slows to what the provider allows instead of
    burning every item's retries at full concurrency. What cuts is a rate limit, not a 429:
    the limit halves when at least `cut_share` of the last answers were 429s (a sporadic 429
    is only retried), and a burst halves it once, not once per 429 (else 16 requests in
    flight meeting one burst would fall to 1 and stay there): a 429 to a request sent before
    the last cut, or within `cooldown` seconds of it, belongs to the burst that cut already
    answered. With no cut for `recovery` seconds the limit doubles back, so a storm that has
    passed cannot keep the run serialised.

    A stalled request (in flight `stall_factor` times longer than the median of recent
    requests, and at least `stall_floor` seconds) stops counting against the limit: the
    endpoint is not serving it, and waiting on it must not idle every other item."""

    def __init__(
        self,
        limit: int,
        *,
        cut_share: float = 0.25,
        window: int = 20,
        cooldown: float = 2.0,
        recovery: float = 5.0,
        stall_factor: float = 10.0,
        stall_floor: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.max_limit = limit
        self.limit = limit
        self.cut_share = cut_share
        self.cooldown = cooldown
        self.window = window
        self._answers: collections.deque[bool] = collections.deque(maxlen=window)  # True: a 429
        self.recovery = recovery
        self.stall_factor = stall_factor
        self.stall_floor = stall_floor
        self._clock = clock
        self._in_flight: dict[int, float] = {}  # thread id -> when its request was sent
        self._latencies: collections.deque[float] = collections.deque(maxlen=64)
        self._successes = 0
        self._backing_off = 0  # requests whose retry sleeps out its backoff
        self._last_cut = float("-inf")  # when the limit was last halved
        self._last_change = clock()  # when it last changed either way
        self._cond = threading.Condition()
        # Whether the endpoint has answered anything (even an error) in this process, and how
        # many attempts could not connect to it (`call_with_retries` ends a run on a dead one).
        self.reached = False
        self.unreached = 0
        # Whether it has replied (a completion, not an error), and its first refusals of the
        # model (`call_with_retries` ends a run on an endpoint that does not serve it).
        self.served = False
        self.refusals: list[tuple[int | None, str]] = []
        self.counting = threading.Lock()

    def __enter__(self) -> float:
        """Wait for a slot; the moment the request is sent."""
        with self._cond:
            while True:
                now = self._clock()
                self._recover(now)
                if self._counted(now) < self.limit:
                    break
                self._cond.wait(timeout=self._next_change(now))
            self._in_flight[threading.get_ident()] = now
            return now

    def __exit__(self, *exc) -> None:
        with self._cond:
            sent = self._in_flight.pop(threading.get_ident(), None)
            if sent is not None:
                self._latencies.append(self._clock() - sent)
            # One slot is free: one waiter is woken. Waking all of them (up to twice the limit:
            # the prefetch threads) made each one retake the lock and recount per request.
            self._cond.notify()

    def rate_limited(self, *, sent: float | None = None) -> None:
        """A 429 to a request sent at `sent`: halve the limit, unless a cut already answered
        the burst it belongs to. (Its Retry-After is the request's own wait, not a pause of
        every request: the halved limit is what slows the process down.)"""
        with self._cond:
            now = self._clock()
            self._answers.append(True)
            limited = sum(self._answers) >= self.cut_share * self.window
            if (
                limited
                and (sent is None or sent >= self._last_cut)
                and now - self._last_cut >= self.cooldown
            ):
                self.limit = max(1, self.limit // 2)
                self._last_cut = self._last_change = now
                self._successes = 0
                self._answers.clear()
            self._cond.notify_all()

    def succeeded(self) -> None:
        with self._cond:
            self._answers.append(False)
            self._successes += 1
            if self.limit < self.max_limit and self._successes >= self.limit:
                self.limit += 1
                self._successes = 0
                self._last_change = self._clock()
                self._cond.notify_all()

    @property
    def in_flight(self) -> int:
        with self._cond:
            return len(self._in_flight)

    def set_aside(self) -> int:
        """Requests that keep a thread busy without holding a slot: stalled ones, and retries
        sleeping out their backoff. A pool of threads grows by as many (`EvalRun.prefetch`)."""
        with self._cond:
            return len(self._in_flight) - self._counted(self._clock()) + self._backing_off

    @contextlib.contextmanager
    def backing_off(self) -> Iterator[None]:
        with self._cond:
            self._backing_off += 1
        try:
            yield
        finally:
            with self._cond:
                self._backing_off -= 1

    def _stall_after(self) -> float:
        import statistics  # here: with `fractions` and `decimal`, ~4 ms of the asking child's start

        median = statistics.median(self._latencies) if self._latencies else 0.0
        return max(self.stall_floor, self.stall_factor * median)

    def _counted(self, now: float) -> int:
        stalled = now - self._stall_after()
        return sum(sent > stalled for sent in self._in_flight.values())

    def _recover(self, now: float) -> None:
        if (
            self.limit < self.max_limit
            and now - max(self._last_cut, self._last_change) >= self.recovery
        ):
            self.limit = min(self.max_limit, self.limit * 2)
            self._last_change = now
            self._successes = 0

    def _next_change(self, now: float) -> float | None:
        """Seconds until waiting could end without a notify: the limit recovers, or a
        request in flight turns stalled."""
        times = []
        if self.limit < self.max_limit:
            times.append(max(self._last_cut, self._last_change) + self.recovery - now)
        stall_after = self._stall_after()
        times += [
            sent + stall_after - now
            for sent in self._in_flight.values()
            if sent + stall_after > now
        ]
        return max(0.001, min(times)) if times else None


_endpoint_throttles: dict[tuple[Any, ...], Throttle] = {}
_endpoint_throttles_lock = threading.Lock()


def limit_share(limit: int, index: int, count: int) -> int:
    """Part `index` of `count` of a limit on requests in flight (xdist workers, asking
    processes): the parts add up to the limit (the first take one more when it does not
    divide); at least 1, so with fewer requests allowed than parts each still asks one at a time."""
    return max(1, limit // count + (index < limit % count))


def endpoint_throttle(spec: ProviderSpec, limit: int) -> Throttle:
    """The one `Throttle` of an endpoint (provider, base URL, model) in this process: every
    eval, and the candidate and judge roles, that ask the same endpoint share its limit, so
    --concurrency holds per endpoint for the whole command, not per eval."""
    key = (spec.provider, spec.base_url, spec.model, limit)
    with _endpoint_throttles_lock:
        if key not in _endpoint_throttles:
            _endpoint_throttles[key] = Throttle(limit)
        return _endpoint_throttles[key]


def call_with_retries(
    provider: Provider,
    request: Request,
    *,
    throttle: Throttle,
    policy: RetryPolicy = RetryPolicy(),
    sleep: Callable[[float], None] = time.sleep,
    rng: random.Random | None = None,
) -> Completion:
    rng = rng or random.Random()
    attempt = 0
    waited_on_rate_limits = 0.0
    while True:
        attempt += 1
        started = time.monotonic()
        sent = None
        try:
            with throttle as sent:
                completion = provider.complete(request, timeout=policy.timeout)
        except TransientError as error:
            _note_reached(throttle, error, policy, provider)
            try:
                delay = _delay_after(error, attempt, policy, rng)
            except QuotaExhausted as quota:
                raise _final(quota, attempt, provider) from None
            if error.kind == "rate_limit":
                throttle.rate_limited(sent=sent)
                # The wait asked for spends the patience, not the jitter added to it: a
                # Retry-After within the limit (`_delay_after`) is waited out.
                asked = error.retry_after if error.retry_after is not None else delay
                give_up = waited_on_rate_limits + asked > policy.rate_limit_patience
                waited_on_rate_limits += asked
            else:
                give_up = attempt >= policy.attempts
            if give_up:
                raise _final(error, attempt, provider) from None
            with throttle.backing_off():
                sleep(delay)
            continue
        except ProviderError as error:
            throttle.reached = True
            _note_refused(throttle, error, policy, provider)
            raise _final(error, attempt, provider) from None
        throttle.reached = throttle.served = True
        throttle.succeeded()
        return _with_latency(completion.kept(), time.monotonic() - started)


def _note_reached(
    throttle: Throttle, error: TransientError, policy: RetryPolicy, provider: Provider
) -> None:
    """An endpoint that has never answered anything in this process, and refused (or could not
    be found for) `unreachable_attempts` connections, ends the run in one line: every item
    would wait out its retries for the same nothing. One that answered once only has its
    item retried, as any dropped connection (a server restarting)."""
    if not isinstance(error, Unreachable):
        throttle.reached = True
        return
    with throttle.counting:
        throttle.unreached += 1
        dead = not throttle.reached and throttle.unreached >= policy.unreachable_attempts
    if dead:
        message = (
            f"nothing answers at {provider.endpoint()} ({error}): start the server or check --base-url "
            "(and any proxy), then rerun the same command to resume"
        )
        raise FatalProviderError(redact(message, provider.secrets), kind="connection")


# A refusal of the model rather than of one request: no such model (OpenAI's and vLLM's 404, a
# gateway's 400 "invalid model"), or no such route (a 404 from a server without the API).
_NOT_THE_MODEL = re.compile(
    r"model.{0,200}?(?:not found|does not exist|doesn't exist|unknown|invalid|not supported|no such)"
    r"|(?:unknown|invalid|no such|not a valid|unsupported) model",
    re.IGNORECASE | re.DOTALL,
)


def _note_refused(
    throttle: Throttle, error: ProviderError, policy: RetryPolicy, provider: Provider
) -> None:
    """An endpoint that has never replied in this process, and whose first `refused_attempts`
    answers are the same refusal of the model (a 404, or a 400 or 422 saying the model is not
    known), ends the run in one line naming the model and the endpoint: every item would get
    it. Another final error (a prompt too long, a content filter) only fails its item: those
    differ between items, and errors come back first, so the first answers are not a sample."""
    if isinstance(error, FatalProviderError) or not (
        error.status == 404
        or (error.status in (400, 422) and _NOT_THE_MODEL.search(str(error)[:2000]))
    ):
        return
    with throttle.counting:
        if throttle.served or len(throttle.refusals) >= policy.refused_attempts:
            return
        throttle.refusals.append((error.status, str(error)))
        refused = (
            len(throttle.refusals) == policy.refused_attempts and len(set(throttle.refusals)) == 1
        )
    if refused:
        message = (
            f"{provider.endpoint()} does not serve model {provider.spec.model!r}: the first"
            f" {policy.refused_attempts} requests were refused alike ({error}); check the model's"
            " name (--model, or the --judge naming it) and --base-url, then rerun"
        )
        raise FatalProviderError(
            redact(message, provider.secrets), kind=error.kind, status=error.status
        )


def _delay_after(
    error: TransientError, attempt: int, policy: RetryPolicy, rng: random.Random
) -> float:
    if error.retry_after is not None and error.retry_after > policy.rate_limit_patience:
        # One limit: a wait past the patience would fail the item at once (and every other
        # item alike), so it ends the run, in one line, with nothing lost.
        raise QuotaExhausted(
            f"the provider asks to retry in {_duration(error.retry_after)} ({error}), past the"
            f" {_duration(policy.rate_limit_patience)} a request waits on rate limits; rerun the"
            " same command then to resume",
            kind="quota",
            status=error.status,
        )
    if error.retry_after is not None:
        return error.retry_after + rng.uniform(0, policy.base_delay)
    return policy.backoff(attempt, rng)


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _final(error: ProviderError, attempts: int, provider: Provider) -> ProviderError:
    message = redact(str(error), provider.secrets)
    cls = type(error) if isinstance(error, FatalProviderError) else ProviderError
    return cls(
        f"{message} (after {attempts} attempt{'s' * (attempts > 1)})",
        kind=error.kind,
        status=error.status,
    )


def _with_latency(completion: Completion, latency: float) -> Completion:
    return replace(completion, latency=round(latency, 3))
