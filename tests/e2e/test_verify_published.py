"""Verifying the published runs, as a user runs it: `evaluate --verify [NAME]` and
`pytest --verify-published[=NAME]` on a board with two published models (one name with a
space), every refusal one line, Ctrl-C, nothing ever written to a published file, and a broken
models.json as one line in every command, and a publish right after a run rescoring only what
the run did not write. The snapshot guard is tests/unit/test_verify_published.py.

The commands start warm (tests/support/warm.py) or are exec'd as they are (offline through
`tests.support.no_network`), each with its own exit status and streams; the interrupted verify
is a real exec given Ctrl-C as a process group once the sandbox's forkserver starts. The server
runs on a thread of the test; the publish right after a run is pytest in-process (`pytester`)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evals import models_file
from tests.support.board import META, evaluate, evaluate_command, model_flags, verify
from tests.support.harness import ROOT, Student, harness_env, run_cli, start
from tests.support.loopback import OpenAIServer

NAME = "Student 1"
OTHER = "Other Model"  # published with the same result files, so both reproduce
KEYS = ("freeform", "multipleChoice", "leetcode")

pytest_plugins = ["pytester"]


@pytest.fixture(scope="module")
def board(tmp_path_factory) -> Path:
    """The data folder of a board with NAME and OTHER published."""
    data = tmp_path_factory.mktemp("verify") / "data"
    with OpenAIServer(Student()) as server:
        done = evaluate(data, NAME, *model_flags(server), *META)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    files = _entry(data, NAME)["resultFiles"]
    models_file.update_entry(
        OTHER,
        lambda e: {**_entry(data, NAME), "name": OTHER, "resultFiles": files},
        data / "models.json",
        results=data / "results",
    )
    return data


@pytest.fixture
def copy(board, tmp_path) -> Path:
    """A copy of the board to damage."""
    target = tmp_path / "data"
    shutil.copytree(board, target, ignore=shutil.ignore_patterns("locks"))
    return target


def _entry(data: Path, name: str) -> dict:
    return models_file.find_entry(
        models_file.load_models(data / "models.json", results=data / "results"), name
    )


def _file(data: Path, key: str) -> Path:
    return models_file.result_path(_entry(data, NAME), key, data / "results")


def _ok_lines(data: Path, name: str) -> list[str]:
    return [f"ok {name} [{key}] {_file(data, key).name}" for key in KEYS]


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def _verify_offline(data: Path, *args: str) -> subprocess.CompletedProcess:
    """`evaluate --verify` with every IP connection in the process refused."""
    code = (
        "import runpy, tests.support.no_network; "
        "runpy.run_module('evals.evaluate', run_name='__main__', alter_sys=True)"
    )
    return subprocess.run(
        [sys.executable, "-c", code, "--verify", *args, f"--data-dir={data}"],
        cwd=ROOT,
        env=harness_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )


# -- evaluate --verify -------------------------------------------------------------------------


def test_evaluate_verify_reproduces_every_published_run_with_the_network_blocked(board):
    done = _verify_offline(board)

    assert (done.returncode, done.stderr) == (0, ""), done.stdout + done.stderr
    assert _lines(done.stdout) == [
        *_ok_lines(board, NAME),
        *_ok_lines(board, OTHER),
        "all 6 runs reproduce",
    ]


def test_evaluate_verify_a_name_with_spaces_checks_only_that_model(board):
    done = evaluate(board, "--verify", NAME)

    assert (done.returncode, done.stderr) == (0, ""), done.stdout + done.stderr
    assert _lines(done.stdout) == [*_ok_lines(board, NAME), "all 3 runs reproduce"]


def test_evaluate_verify_an_unknown_name_is_one_line_listing_the_published_names(board):
    done = evaluate(board, "--verify", "Nobody")

    assert (done.returncode, done.stdout) == (2, "")
    assert _lines(done.stderr) == [
        f"error: 'Nobody' is not published in {board / 'models.json'}; published: '{NAME}', '{OTHER}'"
    ]


def test_evaluate_verify_with_nothing_published_says_so(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    unpublished = {
        "name": "Metadata Only",
        "provider": "P",
        "url": "https://p",
        "releaseDate": "2026-01-02",
        "size": None,
        "price": {"input": 1, "output": 2},
    }
    (data / "models.json").write_text(json.dumps([unpublished]))

    done = evaluate(data, "--verify")

    assert (done.returncode, done.stderr) == (0, "")
    assert _lines(done.stdout) == [
        f"nothing published in {data / 'models.json'}: nothing to verify"
    ]


def test_evaluate_verify_names_the_tampered_field(copy):
    path = _file(copy, "multipleChoice")
    result = json.loads(path.read_text())
    result["summary"]["correct"] += 1
    path.write_text(json.dumps(result, indent=2))

    done = evaluate(copy, "--verify", NAME)

    assert done.returncode == 1, done.stdout + done.stderr
    ok = _ok_lines(copy, NAME)
    assert _lines(done.stdout) == [
        ok[0],
        f"DIFF {NAME} [multipleChoice] {path.name}: summary.correct",
        ok[2],
        "1 of 3 runs do not reproduce",
    ]


def test_evaluate_verify_fails_a_run_whose_run_folder_is_missing(copy):
    for folder in (copy / "runs" / "leetcode").iterdir():
        shutil.rmtree(folder)

    done = evaluate(copy, "--verify")

    assert done.returncode == 1, done.stdout + done.stderr
    lines = _lines(done.stdout)
    for name in (NAME, OTHER):
        (fail,) = [
            line
            for line in lines
            if line.startswith(f"FAIL {name} [leetcode] {_file(copy, 'leetcode').name}: ")
        ]
        assert "run folder" in fail and "is missing" in fail
    assert lines[-1] == "2 of 6 runs do not reproduce"


def test_evaluate_without_a_name_needs_verify(tmp_path):
    done = evaluate(tmp_path / "data")

    assert done.returncode == 2
    assert (
        _lines(done.stderr)[-1]
        == "evaluate: error: the display NAME is required (or --verify, to rescore every published run)"
    )


def test_evaluate_verify_interrupted_prints_the_lines_so_far_and_exits_130(board):
    process = start(
        evaluate_command(board, "--verify"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _wait_for_child(process.pid, b"multiprocessing.forkserver")  # leetcode's sandbox is starting
    os.killpg(
        process.pid, signal.SIGINT
    )  # what Ctrl-C does: the whole process group, helpers included
    out, err = process.communicate(timeout=60)

    assert process.returncode == 130, out + err
    assert _lines(out) == _ok_lines(board, NAME)[:2]
    assert _lines(err) == ["interrupted: 2 of 6 runs checked"]  # and no traceback, from any process


def _wait_for_child(pid: int, command: bytes, timeout: float = 60) -> None:
    """Until a child process of `pid` with `command` in its command line exists."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for proc in Path("/proc").iterdir():
            try:
                if (
                    proc.name.isdigit()
                    and int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid
                    and command in (proc / "cmdline").read_bytes()
                ):
                    return
            except OSError:
                continue
        time.sleep(0.001)
    raise AssertionError(f"no {command!r} process started within {timeout} s")


# -- pytest --verify-published -------------------------------------------------------------------


def test_pytest_verify_published_picks_a_model_by_name_with_spaces(board):
    done = verify(board, f"--verify-published={NAME}", "-v")

    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    assert "3 passed" in done.stdout
    for key in KEYS:
        assert f"test_published_run[Student_1-{key}] PASSED" in done.stdout
    assert "Other_Model" not in done.stdout


def test_pytest_verify_published_ids_are_selectable_with_k(board):
    done = verify(board, "-k", "Other_Model-multipleChoice", "-v")

    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    assert "test_published_run[Other_Model-multipleChoice] PASSED" in done.stdout
    assert "1 passed" in done.stdout


def test_pytest_verify_published_says_when_k_matches_no_published_run(board):
    done = verify(board, "-k", "Student_2")

    assert done.returncode == pytest.ExitCode.NO_TESTS_COLLECTED
    ids = ", ".join(f"{model}-{key}" for model in ("Student_1", "Other_Model") for key in KEYS)
    assert f"no published run matched the selection; the published runs are: {ids}" in done.stdout


def test_pytest_verify_published_an_unknown_name_is_one_line(board):
    done = verify(board, "--verify-published=Nobody")

    assert done.returncode == pytest.ExitCode.USAGE_ERROR
    assert _lines(done.stdout + done.stderr) == [
        f"ERROR: 'Nobody' is not published in {board / 'models.json'}; published: '{NAME}', '{OTHER}'"
    ]


def test_pytest_verify_published_with_nothing_published_says_so(tmp_path):
    data = tmp_path / "data"

    done = verify(data)

    assert done.returncode == 0, done.stdout + done.stderr
    assert f"nothing published in {data / 'models.json'}: nothing to verify" in done.stdout


@pytest.mark.parametrize("flag", ["--snapshot-update", "--snapshot-update-new-only"])
def test_snapshot_update_is_refused_and_the_published_file_unchanged(copy, flag):
    path = _file(copy, "multipleChoice")
    result = json.loads(path.read_text())
    result["summary"]["correct"] += 1  # a difference that --snapshot-update would write back
    path.write_text(json.dumps(result, indent=2))
    before = path.read_bytes()

    done = verify(copy, flag)

    assert done.returncode == pytest.ExitCode.USAGE_ERROR
    assert _lines(done.stdout + done.stderr) == [
        f"ERROR: {flag} is refused with --verify-published: published result files never change; "
        "a different result is a new run, published with `uv run evaluate NAME`"
    ]
    assert path.read_bytes() == before


# -- a broken models.json, in every command ------------------------------------------------------


BROKEN = {
    "malformed": (b'[{"name": ', "not valid JSON"),
    "not UTF-8": (b"\xff\xfe[\x00]\x00", "not UTF-8 text"),
    "nested 100,000 deep": (
        b"[" * 100_000 + b"]" * 100_000,
        "nested more than 100 levels deep, the limit of a file the harness reads",
    ),
}


def _commands(data: Path) -> dict[str, list[str]]:
    paths = [f"--results-dir={data / 'results'}", f"--run-dir={data / 'runs'}"]
    return {
        "pytest --verify-published": [sys.executable, "-m", "pytest", "--verify-published", *paths],
        "pytest eval run": [
            sys.executable,
            "-m",
            "pytest",
            "--provider=reference",
            "--limit=1",
            "--publish=Gold",
            *paths,
        ],
        "evaluate --verify": evaluate_command(data, "--verify"),
        "evaluate NAME": evaluate_command(data, NAME, "--dry-run"),
        "build": [
            sys.executable,
            "-m",
            "evals.site",
            "--check",
            f"--models={data / 'models.json'}",
            f"--results={data / 'results'}",
            f"--site={data.parent / 'site'}",
        ],
    }


@pytest.mark.parametrize("command", list(_commands(Path("data"))))
@pytest.mark.parametrize("damage", list(BROKEN))
def test_a_broken_models_json_is_one_line_in_every_command(tmp_path, command, damage):
    data = tmp_path / "data"
    data.mkdir()
    content, message = BROKEN[damage]
    (data / "models.json").write_bytes(content)

    done = run_cli(_commands(data)[command], env=harness_env(), timeout=300)

    assert done.returncode != 0
    (line,) = _lines(done.stdout + done.stderr)
    assert f"{data / 'models.json'}: {message}" in line
    assert not (data / "results").exists()  # the eval run stopped before answering anything


@pytest.mark.parametrize("command", list(_commands(Path("data"))))
@pytest.mark.parametrize("kind", ["a link to /dev/zero", "a FIFO"])
def test_a_models_json_that_is_no_file_is_one_line_in_every_command(tmp_path, command, kind):
    """Refused before it is read: /dev/zero would be read until memory ran out (a MemoryError
    under a cap), a FIFO until a writer came."""
    data = tmp_path / "data"
    data.mkdir()
    if kind == "a FIFO":
        os.mkfifo(data / "models.json")
    else:
        (data / "models.json").symlink_to("/dev/zero")

    done = run_cli(_commands(data)[command], env=harness_env(), timeout=120)

    assert done.returncode != 0, done.stdout + done.stderr
    (line,) = _lines(done.stdout + done.stderr)
    assert f"{data / 'models.json'}: not a regular file (" in line, line
    assert not (data / "results").exists()


def _deep_file(data: Path, which: str) -> Path:
    """The board's multiple-choice result file, or a record of its run, nested 100,000 deep."""
    path = (
        _file(data, "multipleChoice")
        if which == "result file"
        else next((data / "runs" / "multiple_choice").glob("*/calls/*/candidate.json"))
    )
    path.write_bytes(b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
    return path


@pytest.mark.parametrize("command", ["evaluate --verify", "build"])
@pytest.mark.parametrize("which", ["result file", "cache record"])
def test_a_file_nested_100000_deep_is_one_line_never_a_recursion_error(copy, command, which):
    path = _deep_file(copy, which)

    done = run_cli(_commands(copy)[command] + [f"--runs={copy / 'runs'}"] * (command == "build"))

    assert "Traceback" not in done.stderr and "RecursionError" not in done.stderr, done.stderr
    said = _lines(done.stdout + done.stderr)
    if command == "build" and which == "cache record":  # the page shows its result row only
        assert done.returncode == 1 and said[-1].endswith("run `uv run build --write`"), said
        return
    deep = [line for line in said if "nested more than 100 levels deep" in line]
    assert deep and all(str(path) in line for line in deep), said
    assert done.returncode == (2 if command == "build" else 1), said
    if which == "cache record":  # verify moved the published record aside, "asking again"
        assert path.exists() and not list(path.parent.glob("*.corrupt-*")), said
        assert not [line for line in said if "asking again" in line or "CacheWarning" in line]
        assert [line for line in said if line.startswith("FAIL") and "corrupt cache record" in line]


# -- publishing right after a run --------------------------------------------------------------


def test_a_publish_right_after_a_run_rescores_only_the_result_files_this_session_did_not_write(
    pytester, monkeypatch, tmp_path
):
    """The session's own result file was written from the records it read just now: only the
    others (an earlier session's) are rescored from their run folders before publishing.
    pytest runs in this process, so the rescorings are counted where they happen."""
    from evals import verify
    from tests.support.harness import API_KEYS, EVALS

    for name in API_KEYS:
        monkeypatch.delenv(name, raising=False)
    rescored: list[str] = []
    rescore = verify._rescore
    monkeypatch.setattr(
        verify,
        "_rescore",
        lambda published, **kw: (
            rescored.append(published["config"]["eval"]) or rescore(published, **kw)
        ),
    )
    folders = (f"--run-dir={tmp_path / 'runs'}", f"--results-dir={tmp_path / 'data' / 'results'}")

    earlier = pytester.runpytest_inprocess(
        EVALS, "--provider=reference", "-m", "freeform", "--limit=3", *folders
    )
    assert earlier.ret == 0 and rescored == []
    # -k: every eval is reachable, so publishing looks at the freeform result file too.
    done = pytester.runpytest_inprocess(
        EVALS,
        "--provider=reference",
        "-k",
        "multiple_choice",
        "--limit=3",
        "--publish=Gold",
        *folders,
    )

    assert done.ret == 0
    assert rescored == ["freeform"]
    assert [
        line for line in done.outlines if line.startswith("publish: ")
    ] == [  # a reference run never is published
        "publish: not published: --limit 3 makes it a smoke test",
        "publish: not published: the reference provider answers with the gold answers",
    ]


# -- a grading change that did not move its version (issue 29.2) ---------------------------------

# Today's code with the letter reader changed and its version left as it is: every reply "A".
UNVERSIONED_READER = """
from evals.tasks import multiple_choice

multiple_choice.extract_letter = lambda text, choices: "A"
"""


def _with_reader(data: Path, reader: Path, *args: str) -> subprocess.CompletedProcess:
    """`evaluate ARGS` with the changed reader patched in first (its own interpreter)."""
    code = "import unversioned_reader, runpy; runpy.run_module('evals.evaluate', run_name='__main__', alter_sys=True)"
    return subprocess.run(
        [sys.executable, "-c", code, *args, f"--data-dir={data}"],
        cwd=ROOT,
        env=harness_env(PYTHONPATH=str(reader)),
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_intact_records_read_otherwise_under_the_same_versions_are_unversioned_and_regrade_accepts_them(
    copy, tmp_path
):
    reader = tmp_path / "reader"
    reader.mkdir()
    (reader / "unversioned_reader.py").write_text(UNVERSIONED_READER)
    mc = _file(copy, "multipleChoice")
    published = json.loads(mc.read_text())
    changing = sorted(
        r["id"] for r in published["results"] if r["correct"] != (r["expected"] == "A")
    )
    assert changing  # the premise: some items score otherwise when every reply reads "A"

    verified = _with_reader(copy, reader, "--verify", NAME)

    assert verified.returncode == 1, verified.stdout + verified.stderr
    lines = _lines(verified.stdout)
    (line,) = [line for line in lines if "[multipleChoice]" in line]
    letters = published["graders"]["letters"]
    assert line.startswith(
        f"UNVERSIONED {NAME} [multipleChoice] {mc.name}: today's graders read the intact records "
        f"otherwise under the same versions (letters {letters}, stats "
    ), line
    assert f"({', '.join(changing[:5])}" in line and "`evaluate --regrade` accepts" in line
    assert lines[-1] == (
        "2 of 3 runs reproduce; 1 unversioned (records intact, read otherwise under the same "
        f"grader versions: a harness bug; `evaluate --regrade {NAME!r}` accepts today's reading)"
    )

    # A record edited beside it is still a DIFF, naming the record: the two are told apart.
    tampered = tmp_path / "tampered"
    shutil.copytree(copy, tampered)
    record = next((tampered / "runs" / "multiple_choice").rglob("candidate.json"))
    body = json.loads(record.read_text())
    body["response"]["text"] += " (edited)"
    record.write_text(json.dumps(body))
    diff = _with_reader(tampered, reader, "--verify", NAME)
    (line,) = [line for line in _lines(diff.stdout) if "[multipleChoice]" in line]
    assert diff.returncode == 1 and line.startswith(f"DIFF {NAME} [multipleChoice] "), line
    assert ".records" in line

    # pytest's verify mode fails it with the same line, as `evaluate --verify` exits 1 for it.
    checked = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "unversioned_reader",
            "--verify-published",
            f"--results-dir={copy / 'results'}",
            f"--run-dir={copy / 'runs'}",
            "-k",
            "multipleChoice",
        ],
        cwd=ROOT,
        env=harness_env(PYTHONPATH=str(reader)),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert checked.returncode == 1, checked.stdout[-3000:] + checked.stderr[-2000:]
    assert f"UNVERSIONED {NAME} [multipleChoice] {mc.name}: today's graders read" in checked.stdout

    done = _with_reader(copy, reader, "--regrade", NAME)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"(letters {letters} read otherwise today, stats " in done.stdout, done.stdout
    assert f"regraded {NAME!r}: multipleChoice {mc.name}" in done.stdout, done.stdout
    again = _with_reader(copy, reader, "--verify", NAME)
    assert again.returncode == 0 and _lines(again.stdout)[-1] == "all 3 runs reproduce", (
        again.stdout + again.stderr
    )
