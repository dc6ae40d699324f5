"""A clock a test moves by hand (`clock.now += 4`), for code that takes `clock=` (the throttle,
the progress line, a power source)."""

from __future__ import annotations


class Clock:
    def __init__(self, now: float = 100.0):
        self.now = now

    def __call__(self) -> float:
        return self.now
