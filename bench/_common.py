"""What the bench scripts share: the checkout's root, the bytecode cache of their runs, the
generated multiple-choice dataset, one timed harness run, and `--smoke`."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

# Compiled bytecode, kept outside the checkout: a machine that sets PYTHONDONTWRITEBYTECODE
# (the development machine does) would otherwise compile pytest, the SDK and pydantic's models
# at every launch.
PYCACHE = Path(tempfile.gettempdir()) / "roblox-evals-bench-pycache"

SMOKE_HELP = "a check, not a figure: the same code path with tiny sizes, one repeat and short latencies, in seconds"


def parse_args(parser: argparse.ArgumentParser, smoke: dict[str, Any]) -> argparse.Namespace:
    """The command line's arguments, `--smoke` among them. With --smoke, `smoke` (dest -> value)
    replaces the defaults; an option given on the command line still wins."""
    parser.add_argument("--smoke", action="store_true", help=SMOKE_HELP)
    args = parser.parse_args()
    if args.smoke:
        parser.set_defaults(**smoke)
        args = parser.parse_args()
        print(
            "--smoke: tiny sizes, a check that the bench runs; its figures are no measurement",
            flush=True,
        )
    return args


def write_dataset(path: Path, items: int) -> None:
    """`items` generated multiple-choice questions (`--dataset=mc=PATH`)."""
    with path.open("w") as out:
        for i in range(items):
            choices = [f"Option {c} of question {i}" for c in "ABCD"]
            out.write(
                json.dumps(
                    {
                        "id": f"bench-{i:04d}",
                        "question": f"Benchmark question {i}?",
                        "choices": choices,
                        "answer": "ABCD"[i % 4],
                    }
                )
                + "\n"
            )


def run_harness(
    url: str, dataset: Path, work: Path, concurrency: int, workers: str
) -> tuple[float, float]:
    """One `pytest --provider live` run of `dataset` against the loopback server at `url`:
    (wall seconds of the whole command, seconds of the pytest session it reports)."""
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "--provider=live",
        "--model=bench-model",
        f"--base-url={url}/v1",
        f"--dataset=mc={dataset}",
        "-m",
        "multiple_choice",
        f"--concurrency={concurrency}",
        f"--run-dir={work / 'runs'}",
        f"--results-dir={work / 'results'}",
        "-n",
        workers,
    ]
    started = time.monotonic()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    elapsed = time.monotonic() - started
    if "result file:" not in done.stdout:
        sys.exit(f"the harness run failed:\n{done.stdout[-3000:]}\n{done.stderr[-2000:]}")
    (result,) = (work / "results" / "multiple_choice").glob("*.json")
    return elapsed, json.loads(result.read_text())["timing"]["wallSeconds"]
