"""Bad inputs meet the filesystem, through the command line as a user meets it: ids are data,
never paths; option values pytest could take for test paths; run and result folders that cannot
be used, or a disk that fills up mid-run; temporary files left by a killed run. File names alone
are tests/unit/test_paths.py.

`pytest` starts warm (tests/support/warm.py) or in-process through `pytester`, against a loopback
server on a thread; the run whose disk fills up is a real exec, since the sitecustomize on its
PYTHONPATH must be in every process of the run, the asking process too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evals.scrub import escape_surrogates
from tests.support.harness import (
    ROOT,
    bundled,
    mc_file,
    read_result,
    run_harness,
    usage_error,
)
from tests.support.loopback import Answer, OpenAIServer

pytest_plugins = ["pytester"]

# Ids a dataset file may hold. Before, `../../../../x` wrote outside the run folder, and `a/b`,
# `a_b` and `a b` (or two long ids sharing their first 120 characters) shared one cache record.
IDS = [
    "../../../../x",
    "..",
    ".",
    "a  b",
    "a/b",
    "a_b",
    "a b",
    "a\\b",
    "x\x00y",
    "Q1",
    "q1",
    "con",
    "-rf",
    ".hidden",
    "é",
    "日本語",
    "\ud800",
    "x" * 10_000,
    "x" * 9_999 + "y",
    "mc-001",
]


def outside(tmp_path: Path, *kept: Path) -> list[Path]:
    """Files written anywhere under tmp_path but in the run folder, the results folder and `kept`."""
    mine = (tmp_path / "runs", tmp_path / "results")
    return [
        p
        for p in tmp_path.rglob("*")
        if p.is_file() and p not in kept and not any(f in p.parents for f in mine)
    ]


def test_every_id_has_its_own_cache_record_and_a_rerun_asks_nothing(tmp_path):
    dataset = mc_file(tmp_path / "odd-ids.jsonl", IDS)
    with OpenAIServer(lambda request: Answer("Answer: A")) as server:
        args = [
            "--provider=openai",
            "--model=m",
            f"--base-url={server.url}/v1",
            "-m",
            "multiple_choice",
            f"--dataset=mc={dataset}",
        ]
        first = run_harness(*args, run_dir=tmp_path / "runs", results_dir=tmp_path / "results")
        asked = len(server.requests)
        second = run_harness(*args, run_dir=tmp_path / "runs", results_dir=tmp_path / "results")

    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-2000:]
    assert asked == len(IDS)
    assert len(server.requests) == asked, second.stdout[-2000:]  # nothing paid for twice
    records = list((tmp_path / "runs").glob("multiple_choice/*/calls/*/candidate.json"))
    assert len({p.parent.name.lower() for p in records}) == len(IDS)
    written = sorted(escape_surrogates(i) for i in IDS)  # a lone surrogate is kept as its escape
    assert sorted(json.loads(p.read_text(encoding="utf-8"))["item"] for p in records) == written
    assert (
        sorted(r["id"] for r in read_result(tmp_path / "results", "multiple_choice")["results"])
        == written
    )
    assert not outside(tmp_path, dataset)


def test_leetcode_ids_keep_their_work_budget_files_inside_the_run_folder(tmp_path):
    problems = [
        json.loads(line)
        for line in (ROOT / "data" / "leetcode" / "problems.jsonl").read_text().splitlines()[:4]
    ]
    dataset = tmp_path / "odd-problems.jsonl"
    ids = ["../../../../x", "a/b", "a_b", "A_B"]
    dataset.write_text(
        "".join(json.dumps({**p, "task_id": i}) + "\n" for p, i in zip(problems, ids)),
        encoding="utf-8",
    )

    done = run_harness(
        "--provider=reference",
        "-m",
        "leetcode",
        f"--dataset=lc={dataset}",
        run_dir=tmp_path / "runs",
        results_dir=tmp_path / "results",
    )

    assert done.returncode == 0, done.stdout[-3000:]
    assert not outside(tmp_path, dataset)
    budgets = list((tmp_path / "runs").glob("leetcode/*/work/*.json"))
    assert len({p.name.lower() for p in budgets}) == len(ids)
    rows = {r["id"]: r for r in read_result(tmp_path / "results", "leetcode")["results"]}
    assert set(rows) == set(ids) and all(r["correct"] for r in rows.values())


# -- option values that pytest could take for test paths ----------------------------------------
# pytest picks its root directory and settings from the command line's paths before the harness
# declares its options, so the value in `--model /models/llama` counts as a path there.

LIVE = ["--provider", "live", "--base-url", "http://127.0.0.1:8000/v1"]


@pytest.fixture
def from_root(pytester, monkeypatch, tmp_path):
    """pytest in-process from the repository, as a user types it: no test path given."""
    monkeypatch.chdir(ROOT)

    def run(*args: str) -> pytest.RunResult:
        return pytester.runpytest_inprocess(
            *args,
            "--co",
            "-q",
            f"--run-dir={tmp_path / 'runs'}",
            f"--results-dir={tmp_path / 'results'}",
        )

    return run


def listed(result: pytest.RunResult) -> list[str]:
    """Every item a `--co -q` run listed: the evals' only, never the harness's own tests."""
    assert result.ret == 0, "\n".join(result.outlines + result.errlines)
    items = [line for line in result.outlines if "::" in line]
    assert items and all(line.startswith("tests_evals/") for line in items), items[:5]
    return items


def test_a_model_that_is_a_folder_written_apart_stops_with_one_line_every_time(from_root, tmp_path):
    model = tmp_path / "models" / "llama"  # a vLLM checkpoint
    model.mkdir(parents=True)
    for _ in range(2):
        line = usage_error(from_root(*LIVE, "--model", str(model)))
        assert f"--model={model}" in line and "'='" in line, line
    assert listed(from_root(*LIVE, f"--model={model}"))
    assert not (tmp_path / "runs").exists() and not (tmp_path / "results").exists()


@pytest.mark.parametrize(
    "args",
    [
        [
            "--model",
            "qwen/qwen3-8b",
            "--base-url",
            "http://127.0.0.1:8000/v1",
            "--provider",
            "live",
        ],
        [*LIVE, "--model", "m", "--system-prompt-prefix", "/no_think"],
        [*LIVE, "--model", "tests"],  # a folder of this project: the root directory stays
        ["--provider", "reference", "--dataset", "data/robloxqa/multiple_choice.jsonl"],
    ],
    ids=["base-url", "prompt-prefix-slash", "model-inside-project", "dataset-inside-project"],
)
def test_values_written_apart_that_do_not_move_pytest_work_as_with_equals(from_root, args):
    joined = [f"{a}={b}" for a, b in zip(args[::2], args[1::2])]
    assert listed(from_root(*args)) == listed(from_root(*joined))


@pytest.mark.parametrize("flag", ["--run-dir", "--results-dir"])
def test_a_folder_the_run_writes_written_apart_stops_before_and_after_it_exists(
    pytester, monkeypatch, tmp_path, flag
):
    """Otherwise the command works once and fails the next time, once the folder exists."""
    folder = tmp_path / "out"
    other = "--results-dir" if flag == "--run-dir" else "--run-dir"
    monkeypatch.chdir(ROOT)
    for _ in range(2):
        line = usage_error(
            pytester.runpytest_inprocess(
                "--provider",
                "reference",
                "--co",
                "-q",
                flag,
                str(folder),
                f"{other}={tmp_path / 'other'}",
            )
        )
        assert f"{flag}={folder}" in line, line
        folder.mkdir(exist_ok=True)
    assert not list(folder.iterdir()) and not (tmp_path / "other").exists()


def test_a_dataset_file_outside_the_project_written_apart_stops(from_root, tmp_path):
    dataset = mc_file(tmp_path / "mine.jsonl", ["x-1", "x-2"])
    line = usage_error(from_root("--provider", "reference", "--dataset", str(dataset)))
    assert f"--dataset={dataset}" in line
    items = listed(from_root("--provider", "reference", f"--dataset={dataset}"))
    assert "tests_evals/test_robloxqa.py::test_multiple_choice[x-1]" in items and len(
        items
    ) >= 2 + len(bundled("freeform"))


# -- folders that cannot be used -------------------------------------------------------------


@pytest.fixture
def evals_run(pytester, monkeypatch):
    """pytest in-process on the eval items with the folders given (written with '=')."""
    from tests.support.harness import API_KEYS, EVALS

    for name in API_KEYS:
        monkeypatch.delenv(name, raising=False)
    return lambda *args: pytester.runpytest_inprocess(
        EVALS, "--provider=reference", "-m", "multiple_choice", *args
    )


def a_file(tmp_path: Path) -> Path:
    path = tmp_path / "notes.txt"
    path.write_text("not a folder\n")
    return path


@pytest.mark.parametrize("flag", ["--run-dir", "--results-dir"])
@pytest.mark.parametrize("where", ["file", "under-file"])
def test_a_folder_that_is_a_file_stops_before_anything_runs(evals_run, tmp_path, flag, where):
    file = a_file(tmp_path)
    folder = file if where == "file" else file / "runs"
    other = "--results-dir" if flag == "--run-dir" else "--run-dir"
    line = usage_error(evals_run(f"{flag}={folder}", f"{other}={tmp_path / 'other'}"))
    assert f"{flag}={folder}" in line and f"{file} is a file" in line, line
    assert file.read_text() == "not a folder\n" and not (tmp_path / "other").exists()


def test_a_read_only_folder_stops_before_anything_runs(evals_run, tmp_path):
    import os

    folder = tmp_path / "runs"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        if os.access(folder, os.W_OK):
            pytest.skip("running as root: the folder stays writable whatever its mode")
        line = usage_error(
            evals_run(f"--run-dir={folder}", f"--results-dir={tmp_path / 'results'}")
        )
    finally:
        folder.chmod(0o755)
    assert f"--run-dir={folder}" in line and "Permission denied" in line, line
    assert not list(folder.iterdir())


def test_a_full_disk_stops_before_anything_runs(evals_run, tmp_path, monkeypatch):
    import errno
    import os

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    line = usage_error(
        evals_run(f"--run-dir={tmp_path / 'runs'}", f"--results-dir={tmp_path / 'results'}")
    )
    assert f"--run-dir={tmp_path / 'runs'}" in line and "No space left on device" in line, line
    assert not list(tmp_path.iterdir())


FILLS_UP = '''
import errno, os
_write, _done = os.write, []


def write(fd, data):
    """A disk that fills up after FULL_AFTER cache records (each written in one call), in
    whichever process writes them (a sitecustomize: the process asking the model too)."""
    if "/calls/" in os.readlink(f"/proc/self/fd/{fd}"):
        if len(_done) >= int(os.environ["FULL_AFTER"]):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        _done.append(fd)
    return _write(fd, data)


os.write = write
'''


def test_a_disk_that_fills_up_during_a_run_stops_it_with_one_line_and_loses_no_finished_answer(
    tmp_path,
):
    from tests.support.harness import harness_env, questions

    (tmp_path / "sitecustomize.py").write_text(FILLS_UP)
    full = harness_env(PYTHONPATH=str(tmp_path), FULL_AFTER="10")
    folders = {"run_dir": tmp_path / "runs", "results_dir": tmp_path / "results"}
    n = len(questions("multiple_choice"))
    with OpenAIServer(lambda request: Answer("Answer: A")) as server:
        args = [
            "--provider=openai",
            "--model=m",
            f"--base-url={server.url}/v1",
            "-m",
            "multiple_choice",
            "--concurrency=2",
        ]
        stopped = run_harness(*args, **folders, env=full)
        kept = list((tmp_path / "runs").glob("multiple_choice/*/calls/*/candidate.json"))
        leftovers = list((tmp_path / "runs").rglob("*.tmp")) + list(tmp_path.glob("results/*/*"))
        asked = len(server.requests)
        resumed = run_harness(*args, **folders)

    out = stopped.stdout + stopped.stderr
    assert stopped.returncode != 0 and "Traceback" not in out and "INTERNALERROR" not in out, out[
        -3000:
    ]
    assert "No space left on device" in out and "run the same command again" in out, out[-3000:]
    assert len(kept) == 10 and not leftovers
    assert resumed.returncode == 0, resumed.stdout[-2000:]  # every item answered, some wrongly
    assert len(server.requests) - asked == n - 10  # the finished answers are not asked again
    assert read_result(tmp_path / "results", "multiple_choice")["summary"]["n"] == n


# -- leftovers -----------------------------------------------------------------------------------


def test_a_rerun_removes_the_stale_temporary_files_a_killed_run_left_in_its_own_folders(tmp_path):
    import os
    import tempfile
    import time

    folders = {"run_dir": tmp_path / "runs", "results_dir": tmp_path / "results"}
    args = ["--provider=reference", "-m", "multiple_choice"]
    assert run_harness(*args, **folders).returncode == 0
    (run,) = (tmp_path / "runs" / "multiple_choice").iterdir()
    results = tmp_path / "results" / "multiple_choice"
    other = tmp_path / "runs" / "multiple_choice" / "another-run"
    for folder in (other, tmp_path / "elsewhere"):
        folder.mkdir()

    def temp(folder: Path, name: str, age: float) -> Path:
        """A temporary file as an atomic write killed midway leaves it, `age` seconds old."""
        fd, path = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".tmp")
        os.close(fd)
        os.utime(path, (time.time() - age, time.time() - age))
        return Path(path)

    hour = 3600
    stale = [
        temp(run / "calls" / "mc-001", "candidate.json", hour),
        temp(run, "forced.json", hour),
        temp(results, f"{run.name}.json", hour),
    ]
    kept = [
        temp(
            run / "calls" / "mc-002", "candidate.json", 1
        ),  # being written right now, by another process maybe
        temp(other, "x.json", hour),
        temp(tmp_path / "elsewhere", "x.json", hour),  # not this run's folders
    ]
    for name in ("notes.tmp", ".notes.tmp", ".candidate.json.tmp", "candidate.corrupt-123"):
        (run / "calls" / "mc-003" / name).write_text("mine")
        os.utime(run / "calls" / "mc-003" / name, (time.time() - hour, time.time() - hour))
        kept.append(run / "calls" / "mc-003" / name)

    assert run_harness(*args, **folders).returncode == 0

    assert not [p for p in stale if p.exists()]
    assert all(p.exists() for p in kept)


def test_listing_the_items_writes_nothing_so_checks_no_folder(pytester, monkeypatch, tmp_path):
    """`--collect-only` asks and writes nothing: a folder a run could not write is no reason to
    refuse the list (and probing it, a write and a flush each, costs ~3 ms of its start-up)."""
    from tests.support.harness import EVALS

    file = a_file(tmp_path)
    monkeypatch.chdir(ROOT)
    result = pytester.runpytest_inprocess(
        EVALS, "--provider=reference", "--co", "-q", f"--run-dir={file}", f"--results-dir={file}"
    )
    assert result.ret == 0 and "tests collected" in result.stdout.str(), result.stdout.str()
    assert file.read_text() == "not a folder\n"
