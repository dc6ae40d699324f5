"""Retries with backoff and jitter, and a throttle that slows the whole process down under 429s.

A final failure is raised as a `ProviderError` for the caller to record on its item; it never
ends the run. Only a `FatalProviderError` (rejected key, spent quota, or a Retry-After so long
that it means "come back tomorrow") does."""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass, replace
from typing import Callable

from evals.errors import FatalProviderError, ProviderError, QuotaExhausted, TransientError
from evals.scrub import redact

from ._base import Completion, Provider, Request


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 6  # for 5xx, timeouts, dropped connections, garbled bodies
    rate_limit_patience: float = 900.0  # seconds of waiting on 429s before an item gives up
    base_delay: float = 1.0
    max_delay: float = 60.0
    quota_horizon: float = 3600.0  # a Retry-After longer than this means "come back tomorrow"
    timeout: float = 600.0  # per attempt: reasoning models are slow

    def backoff(self, attempt: int, rng: random.Random) -> float:
        """Full jitter: spreads retries from many threads instead of synchronising them."""
        return rng.uniform(0, min(self.max_delay, self.base_delay * 2 ** (attempt - 1)))


class Throttle:
    """Process-wide limit on concurrent requests that halves on a 429 and creeps back up.

    Under sustained rate limiting the run slows to what the provider allows instead of
    burning every item's retries at full concurrency."""

    def __init__(self, limit: int, *, clock: Callable[[], float] = time.monotonic):
        self.max_limit = limit
        self.limit = limit
        self._active = 0
        self._successes = 0
        self._paused_until = 0.0
        self._clock = clock
        self._cond = threading.Condition()

    def __enter__(self) -> Throttle:
        with self._cond:
            while True:
                wait = self._paused_until - self._clock()
                if wait <= 0 and self._active < self.limit:
                    break
                self._cond.wait(timeout=wait if wait > 0 else None)
            self._active += 1
        return self

    def __exit__(self, *exc) -> None:
        with self._cond:
            self._active -= 1
            self._cond.notify_all()

    def rate_limited(self, retry_after: float | None) -> None:
        with self._cond:
            self.limit = max(1, self.limit // 2)
            self._successes = 0
            if retry_after:
                self._paused_until = max(self._paused_until, self._clock() + retry_after)
            self._cond.notify_all()

    def succeeded(self) -> None:
        with self._cond:
            self._successes += 1
            if self.limit < self.max_limit and self._successes >= self.limit:
                self.limit += 1
                self._successes = 0
                self._cond.notify_all()


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
        try:
            with throttle:
                completion = provider.complete(request, timeout=policy.timeout)
        except TransientError as error:
            try:
                delay = _delay_after(error, attempt, policy, rng)
            except QuotaExhausted as quota:
                raise _final(quota, attempt, provider) from None
            if error.kind == "rate_limit":
                throttle.rate_limited(error.retry_after)
                give_up = waited_on_rate_limits + delay > policy.rate_limit_patience
                waited_on_rate_limits += delay
            else:
                give_up = attempt >= policy.attempts
            if give_up:
                raise _final(error, attempt, provider) from None
            sleep(delay)
            continue
        except ProviderError as error:
            raise _final(error, attempt, provider) from None
        throttle.succeeded()
        return _with_latency(completion, time.monotonic() - started)


def _delay_after(error: TransientError, attempt: int, policy: RetryPolicy, rng: random.Random) -> float:
    if error.retry_after is not None and error.retry_after > policy.quota_horizon:
        raise QuotaExhausted(
            f"the provider asks to retry in {error.retry_after / 3600:.1f} h ({error}); "
            "rerun the same command later to resume",
            kind="quota",
            status=error.status,
        )
    if error.retry_after is not None:
        return error.retry_after + rng.uniform(0, policy.base_delay)
    return policy.backoff(attempt, rng)


def _final(error: ProviderError, attempts: int, provider: Provider) -> ProviderError:
    message = redact(str(error), provider.secrets)
    cls = type(error) if isinstance(error, FatalProviderError) else ProviderError
    return cls(f"{message} (after {attempts} attempt{'s' * (attempts > 1)})", kind=error.kind, status=error.status)


def _with_latency(completion: Completion, latency: float) -> Completion:
    return replace(completion, latency=round(latency, 3))
