"""A pytest plugin for `bench/teardown.py`: how long the run takes after its last item.

Loaded with `-p bench.probes.teardown_probe`; writes {"teardown": seconds}, from the last
item's report to the end of pytest_unconfigure, into $TEARDOWN_PROBE."""

from __future__ import annotations

import json
import os
import time

_last = [0.0]


def pytest_runtest_logreport(report) -> None:
    _last[0] = time.monotonic()


def pytest_unconfigure(config) -> None:
    if hasattr(config, "workerinput") or not os.environ.get("TEARDOWN_PROBE"):
        return
    with open(os.environ["TEARDOWN_PROBE"], "w") as out:
        json.dump({"teardown": time.monotonic() - _last[0]}, out)
