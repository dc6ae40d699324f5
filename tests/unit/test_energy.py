"""evals/energy/ in process: the span log (a torn last line, a span of a block that raises), the
three power sources read from fakes of what they read (a powercap tree, HWiNFO's CSV, an NVML
reader), the sampler, and the attribution against figures worked out by hand. Spans written by
other processes are tests/e2e/test_energy.py."""

from __future__ import annotations

import json
import random
import threading
import time
from pathlib import Path

import pytest

from evals.energy import Interval, Span, SpanLog, attribute, source
from evals.energy import hwinfo as hwinfo_source, rapl as rapl_source
from evals.errors import StorageError, UsageError
from tests.support.clock import Clock
from tests.support.power import (
    advance,
    hwinfo_row,
    powercap_tree,
    write_hwinfo,
    zone,
)


def kwh(joules: float) -> float:
    return pytest.approx(joules / 3.6e6, rel=1e-9, abs=1e-15)


# ---------------------------------------------------------------- spans


def test_a_torn_last_line_is_skipped_and_the_next_writer_starts_a_new_line(tmp_path):
    with SpanLog(tmp_path).span("mcq", clock=iter([10.0, 12.5]).__next__):
        pass
    killed = tmp_path / "energy" / "spans-1-deadbeef.jsonl"
    killed.write_text(
        json.dumps({"start": 1.0, "end": 2.0, "eval": "leetcode", "band": "hard"})
        + '\n{"start": 3.0, "en'
    )
    assert sorted(SpanLog.read(tmp_path), key=lambda span: span.start) == [
        Span(1.0, 2.0, "leetcode", "hard"),
        Span(10.0, 12.5, "mcq"),
    ]


def test_a_span_is_recorded_when_its_block_raises(tmp_path):
    log = SpanLog(tmp_path)
    with pytest.raises(RuntimeError):
        with log.span("freeform", clock=iter([5.0, 6.0]).__next__):
            raise RuntimeError("the request failed")
    log.close()
    assert SpanLog.read(tmp_path) == [Span(5.0, 6.0, "freeform")]
    assert SpanLog.read(tmp_path / "nothing") == []


# ---------------------------------------------------------------- rapl


def test_rapl_sums_the_package_zones_only_and_counts_a_wraparound(tmp_path):
    zones = powercap_tree(tmp_path / "powercap")
    clock = Clock(1000.0)
    rapl = source("rapl", powercap=tmp_path / "powercap", period=3600, clock=clock)
    rapl.check()
    assert [zone.name for zone in rapl.zones()] == ["intel-rapl:0", "intel-rapl:1"]
    store = tmp_path / "run" / "energy" / "rapl-1.jsonl"
    rapl.start(store)  # a first reading at 1000

    clock.now = 1002.0
    advance(
        zones,
        **{
            "package-0": 1_500_000,
            "package-1": 4_000_000,
            "core": 10**9,
            "psys": 10**9,
            "mmio": 10**9,
        },
    )
    rapl.sample()
    clock.now = 1005.0
    advance(
        zones, **{"package-0": 3_000_000, "package-1": 1_000_000, "core": 10**9}
    )  # package-0 wraps
    rapl.sample()
    clock.now = 1006.0
    rapl.stop()  # a last reading, nothing used since

    assert int((zones["package-0"] / "energy_uj").read_text()) == 2_500_000  # it did wrap
    assert rapl.intervals([store]) == [
        Interval(1000.0, 1002.0, pytest.approx(5.5)),
        Interval(1002.0, 1005.0, pytest.approx(4.0)),
        Interval(1005.0, 1006.0, 0.0),
    ]
    assert "RAPL" in rapl.method and "in flight" in rapl.method


def test_rapl_check_names_what_is_missing(tmp_path, monkeypatch):
    with pytest.raises(UsageError, match="no RAPL package zone .*choose --energy-source"):
        source("rapl", powercap=tmp_path).check()

    zone(tmp_path / "intel-rapl:0", "intel-rapl:0", "package-0")

    def denied(path: Path) -> int:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(
        rapl_source, "_read_counter", denied
    )  # root reads it here whatever its mode
    with pytest.raises(
        UsageError, match=r"cannot read .*intel-rapl:0/energy_uj \(permission denied.*run as root"
    ):
        source("rapl", powercap=tmp_path).check()


def test_readings_of_sessions_merge_by_machine_and_source(tmp_path):
    """Two sessions sampling at once are not counted twice; another machine's counters and
    another source's are never subtracted from these; torn and stray lines are skipped."""

    def line(t, value, origin="host a", src="rapl"):
        return json.dumps(
            {
                "source": src,
                "origin": origin,
                "t": t,
                "scale": 1e-6,
                "counters": {"intel-rapl:0": value},
                "wrap": {"intel-rapl:0": 1000},
            }
        )

    one = tmp_path / "one.jsonl"
    two = tmp_path / "two.jsonl"
    one.write_text(
        "\n".join([line(0, 100), line(2, 300), line(4, 500), line(100, 7, origin="host b")]) + "\n"
    )
    two.write_text(
        "\n".join(
            [
                line(1, 200),
                line(3, 400),
                line(3.5, 399),  # two samplers' readings crossed
                line(5, 50, src="nvml"),
                line(200, 9, origin="host b"),
                "not json",
                '{"t": 9',
            ]
        )
    )
    rapl = source("rapl", powercap=tmp_path)
    intervals = rapl.intervals([one, two, tmp_path / "missing.jsonl"])
    assert [(i.start, i.end, round(i.joules * 1e6)) for i in intervals] == [
        (0, 1, 100),
        (1, 2, 100),
        (2, 3, 100),
        (3, 3.5, 0),
        (3.5, 4, 101),
        (100, 200, 2),
    ]


def test_the_sampler_keeps_reading_while_its_store_is_read(tmp_path):
    zones = powercap_tree(tmp_path / "powercap")
    rapl = source("rapl", powercap=tmp_path / "powercap", period=0.002)
    store = tmp_path / "store.jsonl"
    store.write_text('{"source": "rapl", "t": 1')  # a killed session's torn line
    rapl.start(store)
    seen = []
    # 0.3 s of reading, longer on a machine too busy for 20 readings in that time (a parallel
    # suite on 2 cores): what is checked is that reading never stops the sampler, not its pace.
    start = time.monotonic()
    while time.monotonic() < start + 0.3 or (len(seen[-1]) < 21 and time.monotonic() < start + 20):
        advance(zones, **{"package-0": 1000, "package-1": 1000})
        seen.append(rapl.intervals([store]))
    rapl.stop()
    intervals = rapl.intervals([store])
    assert len(intervals) >= 20 and max(len(some) for some in seen) >= 10
    assert sum(i.joules for i in intervals) == pytest.approx(len(seen) * 2000 * 1e-6)
    assert all(a.end == b.start for a, b in zip(intervals, intervals[1:]))
    assert not any(thread.name == "energy-rapl" for thread in threading.enumerate())


# ---------------------------------------------------------------- nvml


class FakeNvml:
    def __init__(self, energies: list[int]):
        self.energies = energies

    def device_count(self) -> int:
        return len(self.energies)

    def total_energy_mj(self, index: int) -> int:
        return self.energies[index]


def test_nvml_sums_the_energy_of_every_gpu(tmp_path):
    gpus = FakeNvml([1_000_000, 20_000])
    clock = Clock(50.0)
    nvml = source("nvml", nvml=gpus, period=3600, clock=clock)
    nvml.check()
    store = tmp_path / "nvml.jsonl"
    nvml.start(store)
    clock.now, gpus.energies = 52.0, [1_250_000, 120_000]
    nvml.sample()
    clock.now, gpus.energies = 53.0, [10_000, 170_000]  # GPU 0's driver reloaded
    nvml.stop()
    assert nvml.intervals([store]) == [
        Interval(50.0, 52.0, pytest.approx(350.0)),
        Interval(52.0, 53.0, pytest.approx(50.0)),
    ]
    assert "NVML" in nvml.method


class Flaky(FakeNvml):
    """Fails its second reading; `read` is set at each reading."""

    def __init__(self):
        super().__init__([0])
        self.calls = 0
        self.read = threading.Event()

    def total_energy_mj(self, index: int) -> int:
        self.calls += 1
        self.read.set()
        if self.calls == 2:
            raise RuntimeError("GPU is lost")
        return 1000 * self.calls


class FullDisk:
    def write(self, data: bytes) -> int:
        raise OSError(28, "No space left on device")

    def close(self) -> None:
        pass


def test_the_sampler_skips_an_unreadable_reading_and_stop_reports_a_full_disk(tmp_path):
    gpus = Flaky()
    nvml = source("nvml", nvml=gpus, period=0.001)
    store = tmp_path / "nvml.jsonl"
    nvml.start(store)
    while gpus.calls < 4:
        gpus.read.wait(1)
        gpus.read.clear()
    with nvml._lock:  # between two writes
        real, nvml._handle = nvml._handle, FullDisk()
        real.close()
    with pytest.raises(
        StorageError, match=r"cannot write .*nvml.jsonl \(No space left on device\): free space"
    ):
        nvml.stop()
    readings = [json.loads(line)["counters"]["gpu0"] for line in store.read_text().splitlines()]
    assert readings[:2] == [1000, 3000]  # the second reading failed, the third spans its gap


class Broken:
    def __init__(self, count: int = 1, where: str = "count"):
        self.count, self.where = count, where

    def device_count(self) -> int:
        if self.where == "count":
            raise RuntimeError("NVML Shared Library Not Found")
        return self.count

    def total_energy_mj(self, index: int) -> int:
        raise RuntimeError("Not Supported")


def test_nvml_check_says_why_it_cannot_measure():
    with pytest.raises(
        UsageError,
        match=r"NVML is not available \(NVML Shared Library Not Found\): install the NVIDIA driver",
    ):
        source("nvml", nvml=Broken()).check()
    with pytest.raises(UsageError, match="NVML sees no GPU"):
        source("nvml", nvml=Broken(0, "energy")).check()
    with pytest.raises(
        UsageError, match=r"GPU 0 does not report its total energy \(Not Supported; Volta"
    ):
        source("nvml", nvml=Broken(2, "energy")).check()


def test_the_real_nvml_reader_imports_without_a_gpu():
    try:
        source("nvml").check()
    except UsageError as error:  # no driver here: one line, not a traceback
        assert "\n" not in str(error) and "choose --energy-source" in str(error)


# ---------------------------------------------------------------- hwinfo


def test_hwinfo_power_columns_by_the_trapezoid_rule(tmp_path):
    base = 1_790_000_000.0
    log = write_hwinfo(
        tmp_path / "sensors.csv",
        [
            hwinfo_row(base, 40.0, (100.0, 20.0)),  # 160 W
            hwinfo_row(base + 2.0, 60.0, (150.0, 30.0)),  # 240 W
            hwinfo_row(base + 4.5, 50.0, (100.0, 10.0)),  # 160 W
            hwinfo_row(base + 4.5 + 60, 40.0, (0.0, 0.0)),  # after a pause: no interval
            hwinfo_row(base + 65.5, 40.0, (0.0, 0.0)),
        ],
        closed=True,
    )
    hwinfo = source("hwinfo", log=log)
    assert hwinfo.intervals([]) == [
        Interval(base, base + 2.0, pytest.approx(400.0)),  # (160 + 240) / 2 x 2 s
        Interval(base + 2.0, base + 4.5, pytest.approx(500.0)),  # (240 + 160) / 2 x 2.5 s
        Interval(base + 64.5, base + 65.5, pytest.approx(40.0)),
    ]
    assert "CPU Package Power [W] + GPU Power [W]" in hwinfo.method

    chosen = source("hwinfo", log=log, columns=["IA Cores Power [W]"])
    assert [round(i.joules, 6) for i in chosen.intervals([])] == [60.0, 75.0, 30.0]


def test_hwinfo_log_in_cp1252_with_a_torn_last_row(tmp_path):
    now = float(int(time.time()))
    log = write_hwinfo(
        tmp_path / "sensors.csv",
        [hwinfo_row(now - 3, 30.0, (10.0, 0.0)), hwinfo_row(now - 1, 50.0, (10.0, 0.0))],
        closed=False,
        encoding="cp1252",
    )
    with open(log, "ab") as handle:
        handle.write(",".join(hwinfo_row(now, 40.0, (0.0, 0.0))[:6]).encode())  # being written
    hwinfo = source("hwinfo", log=log)
    hwinfo.check()
    assert [round(i.joules, 6) for i in hwinfo.intervals([])] == [100.0]
    assert b"\xb0C" in log.read_bytes()


def test_hwinfo_check_wants_a_log_being_written_now(tmp_path):
    now = time.time()
    missing = tmp_path / "none.csv"
    with pytest.raises(UsageError, match="does not exist: start HWiNFO's sensor logging"):
        source("hwinfo", log=missing).check()
    with pytest.raises(UsageError, match="--energy-log PATH"):
        source("hwinfo")

    stale = write_hwinfo(
        tmp_path / "stale.csv",
        [hwinfo_row(now - 62, 30.0, (0.0, 0.0)), hwinfo_row(now - 60, 30.0, (0.0, 0.0))],
        closed=False,
    )
    with pytest.raises(UsageError, match=r"was last written 60 s ago, so HWiNFO is not logging"):
        source("hwinfo", log=stale).check()

    stopped = write_hwinfo(
        tmp_path / "stopped.csv", [hwinfo_row(now - 1, 30.0, (0.0, 0.0))], closed=True
    )
    with pytest.raises(UsageError, match="closing header, so logging has stopped"):
        source("hwinfo", log=stopped).check()

    empty = write_hwinfo(tmp_path / "empty.csv", [], closed=False)
    with pytest.raises(UsageError, match="has no sample yet"):
        source("hwinfo", log=empty).check()

    ahead = write_hwinfo(
        tmp_path / "ahead.csv", [hwinfo_row(now + 3600, 30.0, (0.0, 0.0))], closed=False
    )
    with pytest.raises(UsageError, match="3600 s ahead of this machine's clock"):
        source("hwinfo", log=ahead).check()

    with pytest.raises(
        UsageError,
        match=r'no column "Wall Power \[W\]" \(its power columns: "CPU Package Power \[W\]", "IA Cores',
    ):
        source("hwinfo", log=stale, columns=["Wall Power [W]"]).check()


def test_hwinfo_check_reads_only_the_end_of_a_long_log(tmp_path, monkeypatch):
    now = time.time()
    rows = [hwinfo_row(now - 5000 + 2 * i, 30.0, (0.0, 0.0)) for i in range(2499)] + [
        hwinfo_row(now - 1, 30.0, (0.0, 0.0))
    ]
    log = write_hwinfo(tmp_path / "long.csv", rows, closed=False)
    monkeypatch.setattr(hwinfo_source, "TAIL_BYTES", 1000)
    source("hwinfo", log=log).check()
    monkeypatch.setattr(hwinfo_source, "LOG_FRESH", 0.5)
    with pytest.raises(UsageError, match="last written 1 s ago"):
        source("hwinfo", log=log).check()


def test_hwinfo_reads_the_hour_repeated_when_clocks_go_back(tmp_path, monkeypatch):
    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    try:
        rows = [
            ["25.10.2026", "02:59:58.000"],
            ["25.10.2026", "02:00:00.500"],
            ["25.10.2026", "02:00:02.500"],
        ]
        log = write_hwinfo(
            tmp_path / "dst.csv",
            [cells + ["0", "0", "0", "100", "0", "0", "20", "0", "1"] for cells in rows],
            closed=True,
        )
        intervals = source("hwinfo", log=log).intervals([])
    finally:
        monkeypatch.undo()
        time.tzset()
    assert [(i.end - i.start, i.joules) for i in intervals] == [
        (2.5, pytest.approx(300.0)),
        (2.0, pytest.approx(240.0)),
    ]


def test_an_unknown_source_is_a_usage_error():
    with pytest.raises(
        UsageError, match="unknown --energy-source 'wattmeter': choose one of hwinfo, rapl, nvml"
    ):
        source("wattmeter")
    with pytest.raises(UsageError, match="period must be positive"):
        source("rapl", period=0)


# ---------------------------------------------------------------- attribution


def test_one_eval_alone_takes_the_energy_while_it_is_in_flight():
    result = attribute([Span(2.0, 7.0, "mcq")], [Interval(0.0, 10.0, 100.0)])
    assert result == {"mcq": {"kWh": kwh(50.0), "bands": {}}}  # 5 s of 10 in flight


def test_two_evals_at_once_share_by_requests_in_flight():
    spans = [Span(0.0, 10.0, "mcq"), Span(0.0, 5.0, "freeform"), Span(4.0, 6.0, "freeform")]
    result = attribute(spans, [Interval(0.0, 10.0, 360.0)])
    # always in flight: all 360 J; request-seconds mcq 10, freeform 5 + 2 = 7
    assert result == {
        "mcq": {"kWh": kwh(360 * 10 / 17), "bands": {}},
        "freeform": {"kWh": kwh(360 * 7 / 17), "bands": {}},
    }


def test_idle_gaps_and_unmeasured_time_go_to_nobody():
    spans = [
        Span(1.0, 3.0, "mcq"),  # in the first interval
        Span(6.0, 8.0, "mcq"),
        Span(15.0, 30.0, "freeform"),  # 5 s measured, 20..30 after the last interval
        Span(40.0, 50.0, "leetcode"),  # never measured: absent
    ]
    intervals = [Interval(0.0, 10.0, 100.0), Interval(10.0, 20.0, 200.0)]
    assert attribute(spans, intervals) == {
        "mcq": {"kWh": kwh(100 * 4 / 10), "bands": {}},
        "freeform": {"kWh": kwh(200 * 5 / 10), "bands": {}},
    }


def test_spans_across_several_intervals_of_different_power():
    spans = [
        Span(1.0, 4.0, "mcq"),
        Span(3.0, 5.0, "freeform"),
        Span(3.0, 3.0, "mcq"),
        Span(9.0, 8.0, "mcq"),
    ]
    intervals = [
        Interval(0.0, 2.0, 20.0),
        Interval(2.0, 4.0, 60.0),
        Interval(4.0, 6.0, 10.0),
        Interval(6.0, 6.0, 5.0),
    ]
    # [0,2]: mcq 1 s of 2 -> 10 J. [2,4]: covered 2 s -> 60 J; mcq 2, freeform 1 -> 40 / 20.
    # [4,6]: freeform 1 s of 2 -> 5 J. Empty and backwards spans, an empty interval: nothing.
    assert attribute(spans, intervals) == {
        "mcq": {"kWh": kwh(50.0), "bands": {}},
        "freeform": {"kWh": kwh(25.0), "bands": {}},
    }


def test_bands_share_their_eval_part_the_same_way():
    spans = [
        Span(0.0, 4.0, "leetcode", "easy"),
        Span(2.0, 6.0, "leetcode", "hard"),
        Span(6.0, 8.0, "leetcode"),  # no band: a share of the eval, of no band
        Span(7.0, 9.0, "mcq"),
    ]
    # covered [0,9] of 10 -> 90 J; request-seconds easy 4, hard 4, none 2, mcq 2 -> 7.5 J each
    result = attribute(spans, [Interval(0.0, 10.0, 100.0)])
    assert result == {
        "leetcode": {"kWh": kwh(75.0), "bands": {"easy": kwh(30.0), "hard": kwh(30.0)}},
        "mcq": {"kWh": kwh(15.0), "bands": {}},
    }


def test_attribution_agrees_with_a_count_second_by_second():
    """Spans and intervals on whole seconds: within each second the spans in flight are
    constant, so each eval takes E x its spans in flight / all in flight."""
    rng = random.Random(7)
    spans = []
    for _ in range(60):
        start = rng.randrange(0, 40)
        spans.append(
            Span(
                start,
                start + rng.randrange(1, 8),
                rng.choice(["mcq", "freeform", "leetcode"]),
                rng.choice([None, "easy", "hard"]),
            )
        )
    energies = [rng.uniform(0, 300) for _ in range(50)]
    expected: dict = {}
    for second, joules in enumerate(energies):
        live = [span for span in spans if span.start <= second < span.end]
        for span in live:
            entry = expected.setdefault(span.eval, {"kWh": 0.0, "bands": {}})
            entry["kWh"] += joules / len(live) / 3.6e6
            if span.band is not None:
                entry["bands"][span.band] = (
                    entry["bands"].get(span.band, 0.0) + joules / len(live) / 3.6e6
                )
    intervals = [
        Interval(float(second), second + 1.0, joules) for second, joules in enumerate(energies)
    ]
    result = attribute(spans, intervals)
    assert result == {
        name: {"kWh": pytest.approx(entry["kWh"]), "bands": pytest.approx(entry["bands"])}
        for name, entry in expected.items()
    }


def test_attribution_from_a_run_folder_end_to_end(tmp_path):
    """Spans written by the log, energy from an NVML store, joined."""
    gpus, clock = FakeNvml([0]), Clock(0.0)
    nvml = source("nvml", nvml=gpus, period=3600, clock=clock)
    nvml.start(tmp_path / "energy" / "nvml.jsonl")
    log = SpanLog(tmp_path)
    log.record(Span(1.0, 3.0, "leetcode", "medium"))
    clock.now, gpus.energies = 4.0, [40_000]  # 40 J over [0, 4]: 10 W
    nvml.stop()
    result = attribute(SpanLog.read(tmp_path), nvml.intervals([tmp_path / "energy" / "nvml.jsonl"]))
    assert result == {"leetcode": {"kWh": kwh(20.0), "bands": {"medium": kwh(20.0)}}}
