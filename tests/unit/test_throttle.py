"""The process-wide throttle under 429 storms, on a fake clock: one cut per burst, and the
limit comes back once the storm has passed, so stalls and bursts cannot serialise a run. The
limit in whole runs is tests/e2e/test_throttle.py."""

from __future__ import annotations

import threading

from evals.providers import Throttle
from tests.support.clock import Clock


def test_a_burst_of_429s_to_requests_sent_together_halves_the_limit_once():
    clock = Clock()
    throttle = Throttle(16, clock=clock)
    sent = [throttle.__enter__() for _ in range(16)]
    clock.now += 0.5
    for at in sent:  # every request of the burst answers 429
        throttle.__exit__(None, None, None)
        throttle.rate_limited(sent=at)
    assert throttle.limit == 8

    clock.now += throttle.cooldown
    again = [throttle.__enter__() for _ in range(8)]  # sent after the cut: their 429s are news
    clock.now += 0.5
    for at in again:
        throttle.__exit__(None, None, None)
        throttle.rate_limited(sent=at)
    assert throttle.limit == 4


def test_sporadic_429s_are_retried_without_slowing_the_process_down():
    """One answer in ten a 429 is a fault, not a rate limit: the limit stays."""
    clock = Clock()
    throttle = Throttle(16, clock=clock)
    for i in range(200):
        at = throttle.__enter__()
        clock.now += 0.05
        throttle.__exit__(None, None, None)
        if i % 10 == 0:
            throttle.rate_limited(sent=at)
        else:
            throttle.succeeded()
    assert throttle.limit == 16


def test_a_stalled_request_stops_holding_its_slot():
    clock = Clock()
    throttle = Throttle(1, stall_floor=5.0, clock=clock)
    for _ in range(10):  # a median latency of 0.2 s
        throttle.__enter__()
        clock.now += 0.2
        throttle.__exit__(None, None, None)
    entered = threading.Event()
    stalled = threading.Thread(target=lambda: (throttle.__enter__(), entered.wait(30)), daemon=True)
    stalled.start()
    while throttle.in_flight == 0:
        pass
    clock.now += 5.0  # far beyond 10 x the median: it no longer counts
    waiter = threading.Thread(target=lambda: (throttle.__enter__(), entered.set()), daemon=True)
    waiter.start()
    assert entered.wait(5), "a stalled request kept the only slot"


def test_the_limit_doubles_back_after_a_quiet_interval_without_successes():
    """Stalled requests make successes rare: time alone must bring the limit back."""
    clock = Clock()
    throttle = Throttle(16, recovery=5.0, clock=clock)
    for _ in range(4):  # four bursts of 429s, a cooldown apart
        for _ in range(throttle.window):
            throttle.rate_limited()
        clock.now += throttle.cooldown
    assert throttle.limit == 1
    clock.now += 5.0 - throttle.cooldown
    for expected in (2, 4, 8, 16, 16):
        sent = throttle.__enter__()
        throttle.__exit__(None, None, None)
        assert throttle.limit == expected and sent == clock.now
        clock.now += 5.0


def test_a_waiting_request_is_let_in_when_the_limit_recovers():
    throttle = Throttle(2, recovery=0.05)  # real clock: the waiter must wake by itself
    for _ in range(throttle.window):
        throttle.rate_limited()
    assert throttle.limit == 1
    holder = throttle.__enter__()
    entered = threading.Event()
    threading.Thread(target=lambda: (throttle.__enter__(), entered.set()), daemon=True).start()
    assert entered.wait(5), "the second request never got a slot after the recovery interval"
    assert holder is not None and throttle.limit == 2


# -- one limit per endpoint, counted at the server ---------------------------------------------
