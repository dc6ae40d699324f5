"""--energy in whole runs: a fake powercap tree that a thread of the test drives at a known
power (or an HWiNFO log a thread appends to), the harness run as a user runs it (xdist included),
and the kWh in the result files checked against what the recorded spans say it must be; a source
that cannot measure stops the run first; then published by `evaluate` as electricity-priced, on
the board, and left alone by verify.

`pytest`, `evaluate` and verify start warm (tests/support/warm.py), each a process of its own
reading the fake meters, against loopback servers on threads of the test."""

from __future__ import annotations

import json
import math
import threading
import time
from pathlib import Path

import pytest

from evals import models_file
from evals.energy import SpanLog
from evals.site import site_data
from tests.support.board import entry, evaluate, model_flags, verify
from tests.support.harness import read_result, run_harness, wait_for
from tests.support.loopback import OpenAIServer
from tests.support.power import WATTS, Power


def expected_kwh(spans, label: str, band: str | None = None) -> float:
    """WATTS shared, at every instant, by the requests in flight then: what `label` (and
    `band`) gets, integrated over the run by sweeping the spans' ends in time order."""
    events = sorted({t for s in spans for t in (s.start, s.end)})
    joules = 0.0
    for a, b in zip(events, events[1:]):
        live = [s for s in spans if s.start <= a and s.end >= b]
        mine = [s for s in live if s.eval == label and (band is None or s.band == band)]
        if live:
            joules += WATTS * (b - a) * len(mine) / len(live)
    return joules / 3.6e6


@pytest.mark.parametrize("workers", ["0", "2"])
def test_each_eval_gets_the_energy_measured_while_its_requests_were_in_flight(
    student, tmp_path, workers
):
    # Requests of 0.2 s against readings every 0.1 s: a loaded machine's scheduling jitter
    # (a reading or a span end a few ms late) stays small beside them.
    with OpenAIServer(student, latency=0.2) as server, Power(tmp_path / "powercap"):
        done = run_harness(
            "--provider=openai",
            "--model=student-1",
            f"--base-url={server.url}/v1",
            "-m",
            "multiple_choice or leetcode",
            "--energy",
            f"--energy-powercap={tmp_path / 'powercap'}",
            "--energy-period=0.1",
            "--concurrency=4",
            "-n",
            workers,
            run_dir=tmp_path / "runs",
            results_dir=tmp_path / "results",
        )

    assert "energy" in done.stdout and "kWh (rapl)" in done.stdout, done.stdout[-3000:]
    spans = [span for folder in (tmp_path / "runs").glob("*/*/") for span in SpanLog.read(folder)]
    for name in ("multiple_choice", "leetcode"):
        result = read_result(tmp_path / "results", name)
        (folder,) = (tmp_path / "runs" / name).iterdir()
        label = f"{name}/{folder.name}"
        assert (
            len(SpanLog.read(folder)) == result["summary"].get("overall", result["summary"])["n"]
        )  # one per candidate request
        measured = result["energy"]
        assert measured["source"] == "rapl" and "RAPL" in measured["method"]
        # The evals' requests overlap (every eval is prefetched at once): each instant's power
        # is shared by the requests in flight then, whichever eval they belong to.
        assert measured["kWh"] == pytest.approx(expected_kwh(spans, label), rel=0.1)
        if name == "leetcode":
            for band in ("easy", "medium", "hard"):
                assert measured["bands"][band] == pytest.approx(
                    expected_kwh(spans, label, band), rel=0.1
                )


def test_without_energy_nothing_is_recorded(server, tmp_path):
    run_harness(
        "--provider=openai",
        "--model=student-1",
        f"--base-url={server.url}/v1",
        "-m",
        "multiple_choice",
        run_dir=tmp_path / "runs",
        results_dir=tmp_path / "results",
    )
    assert "energy" not in read_result(tmp_path / "results", "multiple_choice")
    assert not list((tmp_path / "runs").rglob("energy"))


def test_a_source_that_cannot_measure_stops_the_run_before_anything_is_asked(server, tmp_path):
    done = run_harness(
        "--provider=openai",
        "--model=student-1",
        f"--base-url={server.url}/v1",
        "-m",
        "multiple_choice",
        "--energy",
        f"--energy-powercap={tmp_path / 'nothing-here'}",
        run_dir=tmp_path / "runs",
        results_dir=tmp_path / "results",
    )
    assert done.returncode == 4 and not server.requests
    (line,) = [line for line in done.stderr.splitlines() if "--energy" in line]
    assert "Traceback" not in done.stderr
    assert (
        str(tmp_path / "nothing-here") in line and "choose --energy-source" in line
    )  # the cause and the fix


def test_evaluate_with_energy_publishes_an_electricity_priced_entry_with_its_five_figures(
    student, tmp_path
):
    data = tmp_path / "data"
    meta = [
        "--provider-name=Loopback Labs",
        "--url=https://example.com/student",
        "--release-date=2026-11-01",
        "--price-electricity=0.30",
    ]
    with OpenAIServer(student, latency=0.02) as server, Power(tmp_path / "powercap"):
        done = evaluate(
            data,
            "Metered Student",
            "--provider=openai",
            "--model=student-1",
            f"--base-url={server.url}/v1",
            f"--judge=live:judge-a@{server.url}/v1",
            f"--judge=live:judge-b@{server.url}/v1",
            *meta,
            "--allow-errors",
            "--energy",
            f"--energy-powercap={tmp_path / 'powercap'}",
            "--energy-period=0.05",
        )

    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    published = entry(data, "Metered Student")
    kwh = published["kilowattHour"]
    assert set(kwh) == {"freeform", "multipleChoice", "easy", "medium", "hard"} and all(
        v > 0 for v in kwh.values()
    )
    lc = json.loads(
        (data / "results" / "leetcode" / published["resultFiles"]["leetcode"]).read_text()
    )
    assert [kwh[b] for b in ("easy", "medium", "hard")] == [
        lc["energy"]["bands"][b] for b in ("easy", "medium", "hard")
    ]
    board = (data.parent / "site" / "data.js").read_text()
    assert '"costBasis": "electricity"' in board and "Metered Student" in board
    assert verify(data).returncode == 0  # the measured figures are kept, not rescored


def test_evaluate_warns_when_an_eval_has_no_energy_and_does_not_publish_it_as_electricity_priced(
    server, tmp_path
):
    data = tmp_path / "data"
    meta = [
        "--provider-name=Loopback Labs",
        "--url=https://example.com/student",
        "--release-date=2026-11-01",
        "--price-electricity=0.30",
    ]
    first = evaluate(
        data, "Unmetered", *model_flags(server), *meta, "--evals=mc", "--allow-errors"
    )  # without --energy
    assert first.returncode == 0, first.stdout + first.stderr
    with Power(tmp_path / "pc"):
        done = evaluate(
            data,
            "Unmetered",
            "--energy",
            f"--energy-powercap={tmp_path / 'pc'}",
            "--energy-period=0.05",
            "--allow-errors",
            "--evals=ff,lc",
        )
    assert "warning: no energy measured for multipleChoice" in done.stdout, (
        done.stdout + done.stderr
    )
    assert "needs all five kilowattHour values" in done.stdout
    assert entry(data, "Unmetered") is None


def test_a_local_model_with_an_adapter_is_metered_published_priced_by_electricity_and_verified(
    student, tiny, tmp_path, monkeypatch
):
    """The issue's finish line: a tiny checkpoint and adapter made on the spot, run by
    `evaluate` with --energy on the fake RAPL tree, published as electricity-priced, on the
    board with its electricity cost, and reproduced offline by --verify-published."""
    checkpoint, adapter = tiny["checkpoint"], tiny["adapter"]
    data = tmp_path / "data"
    meta = [
        "--provider-name=Tiny Labs",
        "--url=https://example.com/tiny",
        "--release-date=2026-11-01",
        "--size=1000",
        "--price-electricity=0.30",
    ]
    monkeypatch.setenv("ROBLOX_EVALS_CACHE", str(tmp_path / "cache"))
    with OpenAIServer(student) as judges, Power(tmp_path / "powercap"):
        done = evaluate(
            data,
            "Tiny Local",
            "--provider=local",
            f"--model={checkpoint}",
            f"--adapter={adapter}",
            "--max-tokens=8",
            f"--judge=live:judge-a@{judges.url}/v1",
            f"--judge=live:judge-b@{judges.url}/v1",
            *meta,
            "--energy",
            "--energy-source=rapl",
            f"--energy-powercap={tmp_path / 'powercap'}",
            "--energy-period=0.05",
        )

    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    published = entry(data, "Tiny Local")
    assert published["price"] == {"electricity": 0.30} and all(
        v > 0 for v in published["kilowattHour"].values()
    )
    (row,) = site_data(
        models_file.load_models(data / "models.json", results=data / "results"),
        results_dir=data / "results",
    )["models"]
    assert row["costBasis"] == "electricity" and row["cost"] == round(
        math.fsum(published["kilowattHour"].values()) * 0.30, 6
    )
    assert "Tiny Local" in (data.parent / "site" / "data.js").read_text()
    assert verify(data).returncode == 0
    status = evaluate(
        data, "Tiny Local", "--status"
    )  # a bare rerun asks for the folders again, not their hashes
    assert status.returncode == 0 and status.stdout.count("0 remaining; published") == 3, (
        status.stdout + status.stderr
    )


class HwinfoLogger:
    """What HWiNFO's sensor logging does, without HWiNFO: a row of its CSV log appended every
    50 ms at 200 W, until stopped (the README's way to try --energy without hardware)."""

    def __init__(self, path: Path):
        from tests.support.power import HEADER, hwinfo_row

        self.path, self._row = path, hwinfo_row
        path.write_bytes((",".join(HEADER) + ",\r\n").encode("utf-8-sig"))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while True:
            with open(self.path, "a", encoding="utf-8", newline="") as log:
                log.write(",".join(self._row(time.time(), 80.0, (100.0, 20.0))) + ",\r\n")
            if self._stop.wait(0.05):
                return

    def __enter__(self) -> HwinfoLogger:
        self._thread.start()
        # A few samples before the check: the header and three rows.
        wait_for(lambda: self.path.read_bytes().count(b"\r\n") >= 4, "three rows of the HWiNFO log")
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def test_a_log_named_without_a_source_is_measured_as_hwinfo(student, tmp_path):
    with OpenAIServer(student, latency=0.05) as server, HwinfoLogger(tmp_path / "sensors.csv"):
        done = run_harness(
            "--provider=openai",
            "--model=student-1",
            f"--base-url={server.url}/v1",
            "-m",
            "multiple_choice",
            "--energy",
            f"--energy-log={tmp_path / 'sensors.csv'}",
            run_dir=tmp_path / "runs",
            results_dir=tmp_path / "results",
        )
    assert done.returncode in (0, 1) and "kWh (hwinfo)" in done.stdout, (
        done.stdout[-2000:] + done.stderr[-2000:]
    )  # 1: wrong answers
    measured = read_result(tmp_path / "results", "multiple_choice")["energy"]
    assert measured["source"] == "hwinfo" and measured["kWh"] > 0, measured
