"""Benchmark: what it costs that no reply already waiting on a connection is taken as an answer.

    uv run python bench/wire.py [--requests 500] [--repeat 11] [--smoke]

Before each request on a kept-alive HTTP/1.1 connection the harness's client checks h11's
buffer and polls the socket (`evals.providers._wire._Connection`). `--requests` requests of an
OpenAI provider, one after another on one kept-alive connection, to a loopback server in its
own process answering at once, taking turns with and without the check (the same client, the
check taken off its pool), `--repeat` times. Prints the wall and CPU time per request, the
median over repeats, the difference, and the check alone on an idle connection (its h11
buffer, one poll).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

from bench._common import parse_args

SMOKE = {"requests": 20, "repeat": 1}


def provider(url: str, checked: bool):
    from evals.providers import ProviderSpec, make_provider

    made = make_provider(ProviderSpec("openai", "gpt-5.5", base_url=url + "/v1"))
    if not checked:
        for pool in pools(made):
            del pool.create_connection  # the pool's own method again: no `_Connection`
    return made


def pools(made) -> list:
    client = made.client._client
    return [t._pool for t in [client._transport, *client._mounts.values()] if t is not None]


def once(made, requests: int) -> tuple[float, float]:
    """(wall s, CPU s) per request."""
    from evals.providers import Request

    ask = Request(prompt="Which service stores player data?")
    made.complete(ask, timeout=30)  # the connection made, the SDK warm
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(requests):
        made.complete(ask, timeout=30)
    return (time.perf_counter() - wall) / requests, (time.process_time() - cpu) / requests


def check_alone(made, times: int = 20_000) -> float:
    """Seconds per check of an idle connection: h11's buffer and a poll of the socket."""
    from evals.providers import _wire

    (connection,) = pools(made)[0].connections
    http11 = _wire._http11(connection)
    stream = http11._network_stream
    started = time.perf_counter()
    for _ in range(times):
        assert not http11._h11_state.trailing_data[0]
        assert not _wire._waiting(stream._inner)
    return (time.perf_counter() - started) / times


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=11)
    args = parse_args(parser, SMOKE)
    os.environ.setdefault("OPENAI_API_KEY", "fake-openai-key")
    from tests.support.loopback import ServerProcess

    figures: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
    with ServerProcess("openai") as server:
        made = {checked: provider(server.url, checked) for checked in (True, False)}
        for _ in range(args.repeat):
            for checked in (True, False):  # taking turns
                figures[checked].append(once(made[checked], args.requests))
        alone = check_alone(made[True])
        for checked in (True, False):
            assert len(pools(made[checked])[0].connections) == 1  # one kept-alive connection

    def median(checked: bool, i: int) -> float:
        return statistics.median(f[i] for f in figures[checked])

    print(f"{args.requests} requests x {args.repeat} repeats, one kept-alive connection")
    for checked in (True, False):
        walls = " ".join(f"{f[0] * 1e6:.0f}" for f in figures[checked])
        print(
            f"  wall per request, each repeat, {'checked' if checked else 'unchecked'}: {walls} us"
        )
    for label, i in (("wall", 0), ("CPU", 1)):
        on, off = median(True, i), median(False, i)
        print(
            f"  {label:4} per request: checked {on * 1e6:7.1f} us, unchecked {off * 1e6:7.1f} us, "
            f"difference {(on - off) * 1e6:+6.1f} us ({(on - off) / off:+.1%})"
        )
    print(f"  the check alone: {alone * 1e6:.2f} us")


if __name__ == "__main__":
    sys.exit(main())
