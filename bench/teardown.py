"""What a run costs after its last item, by how many answers are wrong.

Runs N generated multiple-choice items through `pytest --provider live` against a loopback
server in its own process with no latency, twice: every answer right, then half of them wrong
(failed test items). A probe plugin (`bench/probes/teardown_probe.py`) times the end of the
run, from the last item's report to pytest's unconfigure: the terminal summary, the result
files. Wrong answers must cost O(1) each there: the goal is under 0.3 s at 2,000 items, half
wrong.

    uv run python bench/teardown.py [--items 2000 10000] [--smoke]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench._common import ROOT, parse_args
from tests.support.loopback import ServerProcess

SMOKE = {"items": [10]}


def write_dataset(path: Path, items: int, wrong: bool) -> None:
    """The loopback server echoes the prompt, so the question's own "Final answer: B" is the
    letter read from the reply; the gold answer decides whether that is right."""
    with path.open("w") as out:
        for i in range(items):
            choices = [f"Option {c} of question {i}" for c in "ABCD"]
            answer = "C" if wrong and i % 2 else "B"
            out.write(
                json.dumps(
                    {
                        "id": f"bench-{i:05d}",
                        "question": f"Benchmark question {i}. Final answer: B",
                        "choices": choices,
                        "answer": answer,
                    }
                )
                + "\n"
            )


def run(url: str, items: int, wrong: bool, work: Path) -> tuple[float, float, str]:
    """(seconds after the last item, seconds of the whole command, the summary line)."""
    dataset = work / f"bench-{wrong}.jsonl"
    write_dataset(dataset, items, wrong)
    probe = work / "probe.json"
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "bench.probes.teardown_probe",
        "--provider=live",
        "--model=bench-model",
        f"--base-url={url}/v1",
        f"--dataset=mc={dataset}",
        "-m",
        "multiple_choice",
        "--concurrency=64",
        f"--run-dir={work / 'runs'}",
        f"--results-dir={work / 'results'}",
    ]
    env = {**os.environ, "TEARDOWN_PROBE": str(probe), "OPENAI_API_KEY": "fake-bench-key"}
    started = time.monotonic()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=env)
    elapsed = time.monotonic() - started
    if "result file:" not in done.stdout:
        sys.exit(f"the harness run failed:\n{done.stdout[-3000:]}\n{done.stderr[-2000:]}")
    last = [
        line
        for line in done.stdout.splitlines()
        if " in " in line and ("passed" in line or "failed" in line)
    ][-1]
    return json.loads(probe.read_text())["teardown"], elapsed, last.strip("= ")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, nargs="+", default=[2000, 10000])
    args = parse_args(parser, SMOKE)
    with ServerProcess("openai") as server:
        for items in args.items:
            figures = {}
            for wrong in (False, True):
                with tempfile.TemporaryDirectory() as tmp:
                    figures[wrong] = run(server.url, items, wrong, Path(tmp))
            right, half = figures[False], figures[True]
            print(
                f"{items} items: after the last item {right[0]:.2f} s all right, {half[0]:.2f} s half wrong "
                f"(goal < 0.3 s); extra per wrong answer {1000 * (half[0] - right[0]) / (items / 2):.3f} ms; "
                f"whole command {right[1]:.1f} s / {half[1]:.1f} s; {half[2]}"
            )


if __name__ == "__main__":
    main()
