"""The process that asks the model (`evals.askers.processes`): whatever becomes of it, the run loses nothing.
Killed mid-run, pytest's process asks what it had not; a rerun of a finished run leaves no process
behind; many requests in flight are split between asking processes; a judge without a key stops
nothing when no judged item runs; a folder named `evals` where the command runs is not imported;
each provider spec crosses the pipe to a child once.

`pytest` is a real exec: the test finds its asking processes by their parent's pid in /proc and
SIGKILLs one, finds a run's processes by a marker in their environment, or runs the `pytest`
console script from another folder; what crosses the pipe is read off a `Fetcher` made in the
test's process. The model is a loopback server on a thread of the test."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from evals.askers.processes import Fetcher
from evals.cache import RunCache
from tests.support.harness import ROOT, harness_command, harness_env, wait_for
from tests.support.loopback import OpenAIServer
from tests.support.runs import reference_run


def asking_children(parent: int) -> list[int]:
    """The pids of `parent`'s child processes running `evals.askers.processes`."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            status = (proc / "status").read_text()
            command = (proc / "cmdline").read_bytes().split(b"\0")
        except (OSError, ValueError):
            continue
        ppid = next(
            (int(line.split()[1]) for line in status.splitlines() if line.startswith("PPid:")), None
        )
        if ppid == parent and b"evals.askers.processes" in command:
            found.append(int(proc.name))
    return found


def asking_run(server: OpenAIServer, tmp_path: Path, *args: str) -> subprocess.Popen:
    """An 8-item run against `server`, returned once the first request has arrived."""
    command = harness_command(
        "-q",
        "-p",
        "no:cacheprovider",
        "--provider=openai",
        "--model=m",
        f"--base-url={server.url}/v1",
        "-m",
        "multiple_choice",
        "--limit=8",
        *args,
        run_dir=tmp_path / "runs",
        results_dir=tmp_path / "results",
    )
    run = subprocess.Popen(
        command,
        cwd=ROOT,
        env=harness_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    wait_for(lambda: server.requests, "the run's first request")
    return run


def test_a_killed_asking_process_loses_nothing_and_says_so(tmp_path):
    """Killed halfway (an OOM killer, a stray signal): the items it had not answered are asked
    by pytest's process itself, every answer is kept, and the end of the run says what happened."""
    with OpenAIServer(lambda request: "Answer: A", latency=0.4) as server:
        run = asking_run(server, tmp_path, "--concurrency=2")
        children = asking_children(run.pid)
        assert len(children) == 1, children
        os.kill(children[0], signal.SIGKILL)
        output, _ = run.communicate(timeout=120)
        asked = len(server.requests)
    result = json.loads(next((tmp_path / "results").rglob("*.json")).read_text())
    assert run.returncode in (0, 1), output
    assert [row["status"] for row in result["results"]].count("apiError") == 0 and len(
        result["results"]
    ) == 8, output
    assert (
        "note: the process asking the model was killed by signal 9; pytest's process asked what it had not"
        in output
    ), output
    assert 8 <= asked <= 8 + 2  # at most the calls in flight when it was killed are asked again


def processes_marked(marker: str) -> list[int]:
    """The pids of live processes whose environment carries RUN_MARK=`marker`: a run's
    processes, whoever their parent is now (a child left behind is re-parented)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            environ = (proc / "environ").read_bytes().split(b"\0")
        except (OSError, ValueError):
            continue
        if f"RUN_MARK={marker}".encode() in environ:
            found.append(int(proc.name))
    return found


def test_a_rerun_of_a_finished_run_asks_nothing_and_leaves_no_process(tmp_path):
    env = harness_env(RUN_MARK=tmp_path.name)
    with OpenAIServer(lambda request: "Answer: A") as server:
        args = (
            "-q",
            "-p",
            "no:cacheprovider",
            "--provider=openai",
            "--model=m",
            f"--base-url={server.url}/v1",
            "-m",
            "multiple_choice",
            "--limit=4",
        )
        command = harness_command(
            *args, run_dir=tmp_path / "runs", results_dir=tmp_path / "results"
        )
        first = subprocess.run(
            command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
        )
        asked = len(server.requests)
        again = subprocess.run(
            command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
        )
        assert len(server.requests) == asked == 4, first.stdout[-2000:]
    assert again.returncode == first.returncode and "note:" not in again.stdout + again.stderr, (
        again.stdout[-2000:]
    )
    assert processes_marked(tmp_path.name) == []  # no asking process outlives its run


def test_with_many_requests_in_flight_the_items_are_split_between_asking_processes(tmp_path):
    """One asking process per 32 requests allowed in flight (at most one per core): at 64, on
    a machine with two cores or more, two, each asking half of the items, each once."""
    expected = min(len(os.sched_getaffinity(0)), 2)
    with OpenAIServer(lambda request: "Answer: A", latency=0.5) as server:
        run = asking_run(server, tmp_path, "--concurrency=64")
        children = asking_children(run.pid)
        output, _ = run.communicate(timeout=120)
        prompts = [json.dumps(request.body["messages"]) for request in server.requests]
    assert len(children) == expected, children
    assert run.returncode in (0, 1) and "note:" not in output, output
    assert len(prompts) == len(set(prompts)) == 8


def test_a_judge_whose_key_is_missing_stops_nothing_when_no_judged_item_runs(tmp_path):
    """-k picks multiple-choice items only; freeform is reachable by -m, and its default judges
    include an Anthropic model with no key set. The asking process makes a judge only when it
    has judged items to ask (its key is checked then, by pytest's process, with one line)."""
    with OpenAIServer(lambda request: "Answer: A") as server:
        done = subprocess.run(
            harness_command(
                "-q",
                "-p",
                "no:cacheprovider",
                "--provider=openai",
                "--model=m",
                f"--base-url={server.url}/v1",
                "-k",
                "mc-00",
                run_dir=tmp_path / "runs",
                results_dir=tmp_path / "results",
            ),
            cwd=ROOT,
            env=harness_env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        asked = len(server.requests)
    assert done.returncode == 0 and "note:" not in done.stdout + done.stderr, (
        done.stdout[-3000:] + done.stderr[-2000:]
    )
    assert asked == 9


def test_a_folder_named_evals_where_the_command_runs_is_not_what_the_asking_process_imports(
    tmp_path,
):
    """The asking process runs `python -P -m evals.askers.processes`: without -P, `-m` would put the
    working folder first on its path, and a user's own `evals` package there would be run."""
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "__init__.py").write_text(
        "raise ImportError('the wrong evals package')\n"
    )
    pytest_script = Path(sys.executable).with_name(
        "pytest"
    )  # the console script: its own folder first on its path
    with OpenAIServer(lambda request: "Answer: A") as server:
        done = subprocess.run(
            [
                str(pytest_script),
                f"--rootdir={ROOT}",
                "-c",
                str(ROOT / "pyproject.toml"),
                str(ROOT / "tests_evals"),
                "-q",
                "-p",
                "no:cacheprovider",
                "--provider=openai",
                "--model=m",
                f"--base-url={server.url}/v1",
                "-m",
                "multiple_choice",
                "--limit=2",
                f"--run-dir={tmp_path / 'runs'}",
                f"--results-dir={tmp_path / 'results'}",
            ],
            cwd=tmp_path,
            env=harness_env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        asked = len(server.requests)
    assert "note:" not in done.stdout + done.stderr and asked == 2, (
        done.stdout[-3000:] + done.stderr[-2000:]
    )


class Recording:
    """The parent's end of a pipe, keeping a copy of every byte written through it."""

    def __init__(self, pipe):
        self.pipe, self.data = pipe, bytearray()

    def write(self, data) -> int:
        self.data += data
        return self.pipe.write(data)

    def flush(self) -> None:
        self.pipe.flush()

    def close(self) -> None:
        self.pipe.close()


def test_each_provider_spec_crosses_the_pipe_to_the_asking_child_once(tmp_path):
    """The child is sent the providers to make while pytest collects, then the work, which names
    each of those by reference: the child reads it back as the spec it made the provider for
    (no second copy to match against the first), and answers every item with it."""
    spec = reference_run(
        "multiple_choice", tmp_path / "run", model="crosses-the-pipe-once", items=4
    )
    fetcher = Fetcher()
    sent = fetcher._to_child = Recording(fetcher._to_child)
    try:
        fetcher.prepare([spec.candidate]).start([spec], on_fatal={})
        for sample in spec.samples:
            fetcher.wait("multiple_choice", sample.id)
    finally:
        problem = fetcher.stop()

    assert problem is None
    assert bytes(sent.data).count(b"crosses-the-pipe-once") == 1
    cache = RunCache(spec.folder, None)
    assert all(
        "response" in cache.read(sample.id, "candidate") for sample in spec.samples
    )  # the child asked every item
