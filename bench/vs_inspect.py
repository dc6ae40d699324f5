"""Side by side with a peer: this harness and inspect_ai on the same multiple-choice workload.

    uv run python bench/vs_inspect.py [--scenarios 400x16,400x64,2000x64,10000x256] [--repetitions 3]
                                      [--latency 0.2] [--inspect-version 0.3.285] [--venv DIR]
                                      [--inspect-args="--no-log-realtime"] [--smoke]

For each scenario (ITEMS x IN-FLIGHT) the same generated questions go through
`pytest --provider live ... --concurrency N -n 0` (a fresh run folder each time: cold cache) and
through `inspect eval task.py --model openai-api/loopback/bench-model --max-connections N`
(a fresh log dir each time; `--no-log-realtime` by default, the lighter of its logging modes,
see bench/README.md), against ONE loopback OpenAI-compatible server in its own process
that answers every request after --latency seconds. The repetitions alternate (harness,
inspect, harness, inspect, ...) so the machine's other load hits both alike.

inspect_ai lives in its own venv, never in this project's: created once with `uv venv` +
`uv pip install inspect_ai==VERSION openai==<this project's openai>` (default
~/.cache/roblox-evals/bench-inspect-venv, or --venv). Its task file sends exactly the
harness's prompt (system + user message, Chat Completions); inspect's `openai-api` provider is
its counterpart of `--provider live` (its `openai` provider would take an unknown model name
for a frontier model: the Responses API and an extra reasoning probe request). Every
repetition checks that both sides made the same requests: the same count (= items), the same
path, the same message lists; a difference stops the script.

Per run it prints the wall time of the whole command and its ratio to ideal
(items x latency / in-flight), CPU seconds (user + sys of the command's process tree) and per
item, peak memory of the whole process tree (the most that the command and every process under
it held resident at once, sampled every 50 ms: the harness's asking children count as much as
inspect's one process), the requests at the server and the most that were in flight
at once, and the machine's load average; per scenario the medians, and the ratio harness wall /
inspect wall of each harness run and the inspect run after it (the goal: <= 0.5 in every
scenario). The wall time is split, by the server's clock, into start-up (command start to the
first request), requests (first request to the last reply) and finish (last reply to the
command's exit).

Both commands run with bytecode caching on, in a cache of the benchmark's own
(PYTHONPYCACHEPREFIX), after one untimed warm-up run each, as a user's second run would: the
sandbox sets PYTHONDONTWRITEBYTECODE and uv installs without .pyc, which would make every
start-up compile both tools from source.

`--smoke` never makes inspect's venv (no download): where inspect_ai is not installed there,
one line says the inspect side is skipped and the harness side runs alone.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from importlib.metadata import version as installed_version
from pathlib import Path

from bench._common import ROOT, parse_args, write_dataset
from evals.tasks.multiple_choice import MultipleChoice
from tests.support.loopback import ServerProcess

GOAL = 0.5  # harness wall / inspect wall, in every scenario
SMOKE = {"scenarios": "8x4", "repetitions": 1, "latency": 0.02}
CACHE = Path.home() / ".cache" / "roblox-evals"
MODEL = "bench-model"
FAKE_KEY = "fake-openai-key-for-the-loopback"

# The inspect task: the harness's own prompts (written by `write_inspect_samples`), one
# generate() each, scored by the answer line the prompt asks for.
TASK_FILE = """
import json
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser
from inspect_ai.scorer import pattern
from inspect_ai.solver import generate


@task
def bench():
    lines = (Path(__file__).parent / "samples.jsonl").read_text().splitlines()
    samples = [
        Sample(id=r["id"], target=r["answer"],
               input=[ChatMessageSystem(content=r["system"]), ChatMessageUser(content=r["prompt"])])
        for r in map(json.loads, lines)
    ]
    return Task(dataset=MemoryDataset(samples), solver=generate(), scorer=pattern(r"Answer:\\s*([A-Z])"))
"""

# Run in inspect's venv after a run (untimed): the log's status.
READ_LOG = """
import json, sys
from inspect_ai.log import list_eval_logs, read_eval_log
(info,) = list_eval_logs(sys.argv[1])
log = read_eval_log(info, header_only=True)
print(json.dumps({"status": log.status, "error": str(log.error.message) if log.error else None}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--scenarios",
        default="400x16,400x64,2000x64,10000x256",
        help="ITEMSxIN_FLIGHT, comma-separated",
    )
    parser.add_argument("--repetitions", type=int, default=3, help="runs of each side per scenario")
    parser.add_argument(
        "--latency", type=float, default=0.2, help="seconds the server takes per reply"
    )
    parser.add_argument("--inspect-version", default="0.3.285")
    parser.add_argument(
        "--venv",
        type=Path,
        default=CACHE / "bench-inspect-venv",
        help="inspect_ai's venv (made once)",
    )
    parser.add_argument(
        "--inspect-args",
        default="--no-log-realtime",
        help="more arguments for `inspect eval` (default: %(default)s, its lighter logging;"
        " --inspect-args= runs it with its defaults)",
    )
    args = parse_args(parser, SMOKE)
    scenarios = [tuple(map(int, s.lower().split("x"))) for s in args.scenarios.split(",")]

    env = {**os.environ, "PYTHONPYCACHEPREFIX": str(CACHE / "bench-pycache")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    sides: dict[str, Harness | Inspect] = {"harness": Harness(env)}
    inspect_bin = args.venv / "bin" / "inspect"
    if args.smoke and inspect_version(inspect_bin) != args.inspect_version:
        inspect = "not installed"
        print(
            f"inspect side skipped: inspect_ai {args.inspect_version} is not installed in {args.venv}"
            " (--smoke makes no venv; a run without it does)",
            flush=True,
        )
    else:
        inspect_bin, inspect = inspect_venv(args.venv, args.inspect_version)
        sides["inspect"] = Inspect(inspect_bin, env, shlex.split(args.inspect_args))
    print(
        f"inspect_ai {inspect} ({args.venv}), openai {installed_version('openai')} on both sides,"
        f" pytest {installed_version('pytest')}, Python {sys.version.split()[0]}, {os.cpu_count()} cores,"
        f" load average {os.getloadavg()[0]:.1f} at the start; inspect eval {args.inspect_args}",
        flush=True,
    )

    with tempfile.TemporaryDirectory(prefix="vs-inspect-") as tmp:
        print(
            "warm-up (untimed): one small run each, to fill the bytecode and file caches",
            flush=True,
        )
        run_scenario(Path(tmp) / "warm-up", sides, 16, 16, 1, args.latency, quiet=True)
        table = []
        for items, in_flight in scenarios:
            print(
                f"\n{items} items, {in_flight} in flight, {args.latency * 1000:.0f} ms per reply",
                flush=True,
            )
            runs = run_scenario(
                Path(tmp) / f"{items}x{in_flight}",
                sides,
                items,
                in_flight,
                args.repetitions,
                args.latency,
            )
            table.append(summarize(items, in_flight, args.latency, runs))
    print_table(table, args.repetitions, inspect)


# -- inspect's own environment ----------------------------------------------------------------


def inspect_venv(venv: Path, wanted: str) -> tuple[Path, str]:
    """The `inspect` command of a venv holding inspect_ai==wanted, made with uv if missing."""
    inspect_bin = venv / "bin" / "inspect"
    if inspect_version(inspect_bin) != wanted:
        uv = os.environ.get("UV") or shutil.which("uv")
        if not uv:
            sys.exit("uv not found (run this script with `uv run`)")
        print(f"making {venv}: inspect_ai=={wanted}", flush=True)
        subprocess.run(
            [uv, "venv", "--quiet", "--clear", "--python", "3.12", str(venv)], check=True
        )
        subprocess.run(
            [
                uv,
                "pip",
                "install",
                "--quiet",
                "--python",
                str(venv / "bin" / "python"),
                f"inspect_ai=={wanted}",
                f"openai=={installed_version('openai')}",
            ],
            check=True,
        )
    return inspect_bin, inspect_version(inspect_bin)


def inspect_version(inspect_bin: Path) -> str:
    """inspect_ai's version, or "" where `inspect_bin` is missing or broken."""
    if not inspect_bin.exists():
        return ""
    done = subprocess.run([str(inspect_bin), "--version"], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else ""


# -- one scenario: the same questions, one server, the two sides taking turns -----------------


@dataclass
class Run:
    side: str
    started: float  # time.time() at the command's start and exit, the server log's clock
    ended: float
    cpu: float  # user + sys seconds of the command and every process it waited for
    peak_mb: float  # the most the whole process tree held resident at once
    requests: list[dict]  # what reached the server, in arrival order
    latency: float

    @property
    def wall(self) -> float:
        return self.ended - self.started

    @property
    def phases(self) -> tuple[float, float, float]:
        """(start-up, requests, finish) seconds: command start -> first request -> last reply -> exit."""
        first = min(r["timestamp"] for r in self.requests)
        last_reply = max(r["timestamp"] for r in self.requests) + self.latency
        return first - self.started, last_reply - first, self.ended - last_reply


def run_scenario(
    work: Path,
    sides: dict,
    items: int,
    in_flight: int,
    repetitions: int,
    latency: float,
    quiet: bool = False,
) -> list[Run]:
    work.mkdir(parents=True)
    dataset = work / "questions.jsonl"
    write_dataset(dataset, items)
    write_inspect_samples(dataset, work / "samples.jsonl")
    (work / "task.py").write_text(TASK_FILE)
    runs: list[Run] = []
    with ServerProcess("openai", latency=latency, log_path=work / "requests.jsonl") as server:
        for repetition in range(repetitions):
            for name, side in sides.items():
                seen = len(server.requests())
                folder = work / f"{name}-{repetition}"
                started, ended, cpu, peak_mb = side.run(server.url, work, folder, in_flight)
                run = Run(name, started, ended, cpu, peak_mb, server.requests()[seen:], latency)
                runs.append(run)
                if not quiet:
                    print(
                        f"  {name:8} {run.wall:6.2f} s wall, {run.wall / (items * latency / in_flight):5.2f} x ideal"
                        " (start-up {:.1f} s, requests {:.1f} s, finish {:.1f} s),".format(
                            *run.phases
                        ),
                        f" {cpu:5.1f} s CPU ({cpu / items * 1000:.2f} ms per item), {peak_mb:4.0f} MB over the tree,"
                        f" {len(run.requests)} requests,"
                        f" at most {peak_in_flight(run.requests, latency)} in flight,"
                        f" load {os.getloadavg()[0]:.1f}",
                        flush=True,
                    )
            check_same_work(runs[-len(sides) :], items)
            if not quiet and len(sides) == 2:
                print(
                    f"  harness / inspect {runs[-2].wall / runs[-1].wall:.2f} (goal <= {GOAL})",
                    flush=True,
                )
    return runs


def write_inspect_samples(dataset: Path, out: Path) -> None:
    """The harness's own system prompt and prompt for each question, for the inspect task."""
    task = MultipleChoice()
    questions, _ = task.load(f"{dataset}", "test")
    with out.open("w") as f:
        for question in questions:
            request = task.request(question, system_prompt_prefix=None, max_tokens=None)
            f.write(
                json.dumps(
                    {
                        "id": question.id,
                        "system": request.system,
                        "prompt": request.prompt,
                        "answer": question.answer,
                    }
                )
                + "\n"
            )


def measure(
    command: list[str], cwd: Path, env: dict, folder: Path
) -> tuple[float, float, float, float]:
    """(start time, end time, CPU seconds, peak MB over the process tree) of a command; its
    output goes to folder/out.txt."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "out.txt").open("w") as out:
        started = time.time()
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        tree = TreeMemory(process.pid)
        _, status, usage = os.wait4(process.pid, 0)  # the usage of this command's process tree only
        ended = time.time()
        peak = tree.stop()
    process.returncode = os.waitstatus_to_exitcode(status)
    return started, ended, usage.ru_utime + usage.ru_stime, peak / 2**20


class TreeMemory:
    """The most a process and all its descendants held resident at once (Linux /proc), sampled
    every `period` seconds on a thread of its own. ru_maxrss is only the largest single process."""

    PAGE = os.sysconf("SC_PAGE_SIZE")

    def __init__(self, root: int, period: float = 0.05):
        self.root, self.period, self.peak = root, period, 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def stop(self) -> int:
        self._done.set()
        self._thread.join()
        return self.peak

    def _sample(self) -> None:
        while not self._done.wait(self.period):
            self.peak = max(self.peak, self._resident())

    def _resident(self) -> int:
        parents: dict[int, int] = {}
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                try:
                    stat = Path(entry.path, "stat").read_text()
                except OSError:
                    continue  # ended meanwhile
                parents[int(entry.name)] = int(
                    stat.rsplit(")", 1)[1].split()[1]
                )  # the field after the state
        tree, grown = {self.root}, True
        while grown:
            more = {pid for pid, parent in parents.items() if parent in tree} - tree
            tree |= more
            grown = bool(more)
        total = 0
        for pid in tree:
            try:
                total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * self.PAGE
            except OSError:
                pass
        return total


class Harness:
    def __init__(self, env: dict):
        self.env = env

    def run(
        self, url: str, work: Path, folder: Path, in_flight: int
    ) -> tuple[float, float, float, float]:
        """measure()'s figures of one cold run."""
        command = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "--provider=live",
            f"--model={MODEL}",
            f"--base-url={url}/v1",
            f"--dataset=mc={work / 'questions.jsonl'}",
            "-m",
            "multiple_choice",
            f"--concurrency={in_flight}",
            f"--run-dir={folder / 'runs'}",
            f"--results-dir={folder / 'results'}",
            "-n",
            "0",
        ]
        figures = measure(command, ROOT, self.env, folder)
        output = (folder / "out.txt").read_text()
        results = list((folder / "results" / "multiple_choice").glob("*.json"))
        if "result file:" not in output or len(results) != 1:
            sys.exit(f"the harness run failed ({folder / 'out.txt'}):\n{output[-3000:]}")
        summary = json.loads(results[0].read_text())["summary"]
        if summary["apiErrors"]:
            sys.exit(f"the harness run had API errors: {summary}")
        return figures


class Inspect:
    def __init__(self, inspect_bin: Path, env: dict, extra_args: list[str]):
        self.bin, self.extra_args = inspect_bin, extra_args
        # The provider `openai-api/loopback/...` reads LOOPBACK_BASE_URL and LOOPBACK_API_KEY.
        self.env = {k: v for k, v in env.items() if not k.startswith(("INSPECT_", "OPENAI_"))}

    def run(
        self, url: str, work: Path, folder: Path, in_flight: int
    ) -> tuple[float, float, float, float]:
        """measure()'s figures of one run with a fresh log dir."""
        command = [
            str(self.bin),
            "eval",
            "task.py",
            f"--model=openai-api/loopback/{MODEL}",
            f"--max-connections={in_flight}",
            f"--log-dir={folder / 'logs'}",
            "--display=none",
            *self.extra_args,
        ]
        env = {**self.env, "LOOPBACK_BASE_URL": f"{url}/v1", "LOOPBACK_API_KEY": FAKE_KEY}
        figures = measure(command, work, env, folder)
        done = subprocess.run(
            [str(self.bin.parent / "python"), "-c", READ_LOG, str(folder / "logs")],
            capture_output=True,
            text=True,
        )
        log = json.loads(done.stdout) if done.returncode == 0 else {"status": done.stderr[-2000:]}
        if log["status"] != "success":
            output = (folder / "out.txt").read_text()
            sys.exit(f"the inspect run failed ({folder / 'out.txt'}): {log}\n{output[-3000:]}")
        return figures


def check_same_work(runs: list[Run], items: int) -> None:
    """Each side's run made `items` requests, and both sides the same ones: to the same path,
    with the same message lists."""

    def work(run: Run) -> list[str]:
        return sorted(
            json.dumps([r["method"], r["path"], r["body"].get("messages")]) for r in run.requests
        )

    counts = {run.side: len(run.requests) for run in runs}
    if set(counts.values()) != {items}:
        sys.exit(f"request counts differ: {counts}, {items} items")
    if any(work(run) != work(runs[0]) for run in runs[1:]):
        sys.exit("the two sides sent different requests (see the server log)")


def peak_in_flight(requests: list[dict], latency: float) -> int:
    """Most requests at once: each is answered `latency` after it arrives."""
    times = sorted(r["timestamp"] for r in requests)
    most, first = 0, 0
    for last, arrived in enumerate(times):
        while times[first] <= arrived - latency:
            first += 1
        most = max(most, last - first + 1)
    return most


# -- the figures ------------------------------------------------------------------------------


def summarize(items: int, in_flight: int, latency: float, runs: list[Run]) -> dict:
    ideal = items * latency / in_flight
    median = {}
    for side in dict.fromkeys(run.side for run in runs):  # the harness, and inspect where it ran
        mine = [run for run in runs if run.side == side]
        median[side] = {
            field: statistics.median(getattr(run, field) for run in mine)
            for field in ("wall", "cpu", "peak_mb")
        }
        median[side]["phases"] = [
            statistics.median(phase) for phase in zip(*(run.phases for run in mine))
        ]
        median[side]["requests"] = len(mine[0].requests)
    # Each harness run / the inspect run after it.
    ratios = (
        [h.wall / i.wall for h, i in zip(runs[0::2], runs[1::2])] if "inspect" in median else []
    )
    return {
        "scenario": f"{items:,}/{in_flight}",
        "items": items,
        "ideal": ideal,
        **median,
        "ratios": ratios,
    }


def cells(side: dict | None, ideal: float, items: int) -> dict[str, str]:
    """One side's cells of the table: "-" each where the side did not run."""
    if side is None:
        return dict.fromkeys(("wall", "cpu", "per_item", "peak", "phases"), "-")
    return {
        "wall": f"{side['wall']:.1f} s ({side['wall'] / ideal:.2f})",
        "cpu": f"{side['cpu']:.1f}",
        "per_item": f"{side['cpu'] / items * 1000:.2f}",
        "peak": f"{side['peak_mb']:.0f}",
        "phases": "{:.1f} + {:.1f} + {:.1f} s".format(*side["phases"]),
    }


def print_table(table: list[dict], repetitions: int, version: str) -> None:
    print(
        f"\nmedians of {repetitions} alternating runs each (harness / inspect: the median and the spread of the"
        f" pairs); inspect_ai {version}; goal: harness wall <= {GOAL} x inspect's"
    )
    print(
        "| scenario | ideal | harness wall (x ideal) | inspect wall (x ideal) | harness / inspect (goal <= 0.5) |"
        " CPU s harness / inspect (ms per item) | peak MB over the tree, "
        "harness / inspect | start-up + requests + finish, harness |"
        " the same, inspect | requests each |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for row in table:
        h, i = (cells(row.get(side), row["ideal"], row["items"]) for side in ("harness", "inspect"))
        ratio = "-"
        if row["ratios"]:
            median = statistics.median(row["ratios"])
            ratio = (
                f"{median:.2f} ({min(row['ratios']):.2f}-{max(row['ratios']):.2f};"
                f" {'met' if median <= GOAL else 'NOT met'})"
            )
        print(
            f"| {row['scenario']} | {row['ideal']:.1f} s | {h['wall']} | {i['wall']} | {ratio} |"
            f" {h['cpu']} / {i['cpu']} ({h['per_item']} / {i['per_item']}) | {h['peak']} / {i['peak']} |"
            f" {h['phases']} | {i['phases']} | {row['harness']['requests']} |"
        )


if __name__ == "__main__":
    main()
