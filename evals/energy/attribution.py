"""Attribution (`attribute`): of an interval [a, b] with energy E only the part during which
at least one span is in flight counts: E x (time of [a, b] covered by the union of spans)
/ (b - a). It is shared among evals in proportion to each eval's spans in flight
integrated over [a, b] (its request-seconds), divided by the integral of all spans in
flight; bands share an eval's part the same way (spans without a band take their share
of the eval, but none of a band). Energy while nothing is in flight (idle) goes to nobody,
and so does the part of a span outside every interval (unmeasured). An eval (a band)
appears in the result when an interval covers one of its spans. kWh = J / 3.6e6,
unrounded."""

from __future__ import annotations

import bisect
from collections import defaultdict

from ._base import Interval
from .spans import Span

JOULES_PER_KWH = 3.6e6


def attribute(spans: list[Span], intervals: list[Interval]) -> dict[str, dict]:
    """{eval: {"kWh": float, "bands": {band: kWh}}}: each interval's energy while spans are
    in flight, shared by request-seconds (see the module's docstring)."""
    segments = _in_flight(spans)
    ends = [end for _, end, _ in segments]
    joules: dict[str, float] = defaultdict(float)
    bands: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for interval in intervals:
        length = interval.end - interval.start
        if not length > 0:
            continue
        covered = 0.0
        weights: dict[tuple[str, str | None], float] = defaultdict(float)
        index = bisect.bisect_right(ends, interval.start)
        while index < len(segments) and segments[index][0] < interval.end:
            start, end, counts = segments[index]
            seconds = min(end, interval.end) - max(start, interval.start)
            covered += seconds
            for key, count in counts:
                weights[key] += count * seconds
            index += 1
        if not covered > 0:
            continue
        per_weight = interval.joules * covered / length / sum(weights.values())
        for (name, band), weight in weights.items():
            joules[name] += per_weight * weight
            if band is not None:
                bands[name][band] += per_weight * weight
    return {
        name: {
            "kWh": total / JOULES_PER_KWH,
            "bands": {band: part / JOULES_PER_KWH for band, part in bands[name].items()},
        }
        for name, total in joules.items()
    }


def _in_flight(
    spans: list[Span],
) -> list[tuple[float, float, tuple[tuple[tuple[str, str | None], int], ...]]]:
    """The time covered by spans, cut where the spans in flight change: (start, end,
    ((eval, band), count) for each pair in flight), in order, never overlapping."""
    events: list[tuple[float, int, tuple[str, str | None]]] = []
    for span in spans:
        if span.end > span.start:
            events += [
                (span.start, 1, (span.eval, span.band)),
                (span.end, -1, (span.eval, span.band)),
            ]
    events.sort(key=lambda event: event[0])
    segments = []
    counts: dict[tuple[str, str | None], int] = {}  # only those in flight
    followings: list[float | None] = [event[0] for event in events[1:]]
    for (time_, change, key), following in zip(events, [*followings, None]):
        count = counts.get(key, 0) + change
        if count:
            counts[key] = count
        else:
            del counts[key]
        if following != time_ and following is not None and counts:
            segments.append((time_, following, tuple(counts.items())))
    return segments
