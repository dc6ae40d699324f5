"""A 1,000-item run through the Batch API, against a loopback OpenAI server (its own process)
whose batches take a fixed time to complete.

Prints the harness's wall time, and the batch phase's share of it: the wall time minus that of
a rerun of the finished run (same items, every answer cached, nothing asked), divided by the
batch completion time (no batch run can be faster): what submitting (upload, create), polling
and collecting cost on top of the batch itself. Also the number of create calls (one per
request set: 1) and of requests made one by one (0), from the server's request log.

    uv run python bench/batch.py [--items 1000] [--batch-seconds 2] [-n 0] [--smoke]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench._common import ROOT, parse_args, write_dataset
from tests.support.loopback import ServerProcess

SMOKE = {"items": 6, "batch_seconds": 0.2}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--batch-seconds", type=float, default=2.0)
    parser.add_argument("-n", dest="workers", default="0", help="xdist workers (default 0)")
    args = parse_args(parser, SMOKE)

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        dataset = work / "mc.jsonl"
        write_dataset(dataset, args.items)
        log = work / "requests.jsonl"
        with ServerProcess(
            "openai", log_path=log, extra_args=["--batch-seconds", str(args.batch_seconds)]
        ) as server:
            command = [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "--provider=live",
                "--model=bench-model",
                f"--base-url={server.url}/v1",
                f"--dataset=mc={dataset}",
                "-m",
                "multiple_choice",
                "--batch-wait",
                "-n",
                args.workers,
                f"--run-dir={work / 'runs'}",
                f"--results-dir={work / 'results'}",
            ]
            started = time.monotonic()
            done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
            wall = time.monotonic() - started
            requests = server.requests()
            started = time.monotonic()
            subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
            rerun = time.monotonic() - started
        if "result file:" not in done.stdout:
            sys.exit(f"the harness run failed:\n{done.stdout[-3000:]}\n{done.stderr[-2000:]}")
        creates = sum(r["method"] == "POST" and r["path"] == "/v1/batches" for r in requests)
        direct = sum(r["path"].endswith("/chat/completions") for r in requests)
        polls = sum(r["method"] == "GET" and r["path"].startswith("/v1/batches/") for r in requests)
    print(f"{args.items} items, batches complete in {args.batch_seconds:g} s, -n {args.workers}")
    print(f"  harness wall time  {wall:6.2f} s   (a rerun with every answer cached: {rerun:.2f} s)")
    print(
        f"  batch phase        {wall - rerun:6.2f} s   (ideal "
        f"{args.batch_seconds:g} s: ratio {(wall - rerun) / args.batch_seconds:.2f})"
    )
    print(f"  batch creates      {creates}")
    print(f"  polls              {polls}")
    print(f"  direct requests    {direct}")


if __name__ == "__main__":
    main()
