"""A published model whose entry names the result of an eval whose package is no longer
installed: everything else keeps working (a built-in run, verify of the other results, the board
without that column), every command says so in one warning line naming the key and the file, the
key is kept when models.json is written, and publishing a new model refuses in one line, so the
board never holds an entry that would be invalid once the package is back.

The board is one model published by `evaluate` against a loopback server; the eval that went
away is `echo` (examples/echo_eval), its key added to the entry by hand as it was when its
package, on the board then, published it. Every command is started as from a shell: its
environment holds no warning said before (`models_file.WARNED`)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.board import META, evaluate, model_flags
from tests.support.harness import ROOT, Student, harness_env, run_cli, run_harness
from tests.support.loopback import OpenAIServer

NAME = "Student 1"
GONE = "echo-openai-student-1.json"  # the echo result file the entry names
KEYS = ("freeform", "multipleChoice", "leetcode")


@pytest.fixture(scope="module")
def published(tmp_path_factory) -> tuple[Path, list[str]]:
    """The data folder and the model's flags: NAME published with the three built-in evals,
    then `echo` added to its resultFiles (its file in results/echo/, as the eval left it)."""
    data = tmp_path_factory.mktemp("gone") / "data"
    with OpenAIServer(Student()) as server:
        flags = model_flags(server)
        done = evaluate(data, NAME, *flags, *META)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    models = json.loads((data / "models.json").read_text())
    models[0]["resultFiles"]["echo"] = GONE
    (data / "models.json").write_text(json.dumps(models, indent=2) + "\n")
    (data / "results" / "echo").mkdir()
    (data / "results" / "echo" / GONE).write_text("{}\n")
    return data, flags


@pytest.fixture
def board(published) -> Path:
    return published[0]


@pytest.fixture
def copy(board, tmp_path) -> Path:
    target = tmp_path / "data"
    shutil.copytree(board, target, ignore=shutil.ignore_patterns("locks"))
    return target


def _warning(data: Path) -> str:
    return (
        f"warning: {data / 'models.json'}: resultFiles.echo ({NAME!r} "
        f"{GONE}) is left out: no installed package registers "
        "an eval with that key; it is kept, and installing the package that puts it on the board brings it back"
    )


def _said_once(done: subprocess.CompletedProcess, data: Path) -> None:
    """The warning is one line of the command's output, said once, and the only one that names echo."""
    lines = (done.stdout + done.stderr).splitlines()
    assert [line for line in lines if "echo" in line] == [_warning(data)], (
        done.stdout[-3000:] + done.stderr[-2000:]
    )


def _files(data: Path) -> dict[str, str]:
    return json.loads((data / "models.json").read_text())[0]["resultFiles"]


def _ok_lines(data: Path) -> list[str]:
    return [f"ok {NAME} [{key}] {_files(data)[key]}" for key in KEYS]


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one process", "xdist"])
def test_a_built_in_run_passes_and_says_once_what_is_left_out(copy, workers):
    done = run_harness(
        "--provider=reference",
        "-m",
        "multiple_choice",
        *workers,
        run_dir=copy / "runs",
        results_dir=copy / "results",
    )

    assert done.returncode == 0 and " passed" in done.stdout, (
        done.stdout[-3000:] + done.stderr[-2000:]
    )
    _said_once(done, copy)


def test_verify_reproduces_the_other_results(copy):
    before = (copy / "models.json").read_text()
    verified = evaluate(copy, "--verify")
    plugin = run_cli(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "tests.support.no_network",
            "--verify-published",
            f"--results-dir={copy / 'results'}",
            f"--run-dir={copy / 'runs'}",
        ]
    )

    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert [line for line in verified.stdout.splitlines() if line.strip()] == [
        *_ok_lines(copy),
        "all 3 runs reproduce",
    ]
    _said_once(verified, copy)
    assert plugin.returncode == 0 and "3 passed" in plugin.stdout, (
        plugin.stdout[-3000:] + plugin.stderr[-2000:]
    )
    _said_once(plugin, copy)
    assert (copy / "models.json").read_text() == before


def test_regrade_ranks_the_board_by_the_other_results(copy):
    done = evaluate(copy, "--regrade", "--dry-run")

    assert done.returncode == 0, done.stdout + done.stderr
    boards = [line for line in done.stdout.splitlines() if line.startswith("board ")]
    assert len(boards) == 2 and all(
        re.search(rf": +1\. {NAME} [0-9.]+%$", line) for line in boards
    ), done.stdout
    # The copy has no site beside it: stale, so not "nothing to regrade" (the site is not as the data makes it).
    assert (
        "every run scores as published, but the site is stale; --dry-run: nothing written"
        in done.stdout
    )
    _said_once(done, copy)


def test_build_writes_and_checks_the_board_without_that_column(copy):
    site = copy.parent / "site"
    before = (copy / "models.json").read_text()

    def build(mode: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "evals.site",
                mode,
                f"--models={copy / 'models.json'}",
                f"--results={copy / 'results'}",
                f"--site={site}",
            ],
            cwd=ROOT,
            env=harness_env(),
            capture_output=True,
            text=True,
            timeout=120,
        )

    wrote, checked = build("--write"), build("--check")

    assert wrote.returncode == 0 and "(1 published model)" in wrote.stdout, (
        wrote.stdout + wrote.stderr
    )
    _said_once(wrote, copy)
    assert (
        checked.returncode == 0 and checked.stdout == f"{site} is up to date (1 published model)\n"
    ), checked.stdout + checked.stderr
    _said_once(checked, copy)
    board = json.loads(
        (site / "data.js").read_text().split("window.LEADERBOARD = ", 1)[1].rstrip().rstrip(";")
    )
    assert [e["key"] for e in board["evals"]] == list(KEYS)
    assert [m["name"] for m in board["models"]] == [NAME]
    assert (copy / "models.json").read_text() == before  # the echo key kept, the file as it was


def test_publishing_a_new_model_refuses_in_one_line_and_the_same_files_again_keep_the_key(
    copy, published
):
    """A new entry without echo's result would be invalid once its package is back: refused.
    The published model's own files again are published, echo's result kept. The runs are
    NAME's, published: reproduced offline, nothing asked (the server the flags name is gone)."""
    before, flags = (copy / "models.json").read_text(), published[1]
    new = evaluate(copy, "Student 2", *flags, *META)
    again = evaluate(copy, NAME, *flags, *META)

    assert new.returncode == 1, new.stdout[-3000:] + new.stderr[-2000:]
    refusals = [
        line.strip() for line in new.stdout.splitlines() if line.strip().startswith("not published")
    ]
    assert refusals == [
        f"not published: models.json names results of an eval no installed package puts on the board "
        f"(resultFiles.echo of {NAME!r}), and every entry needs every eval's; install the package that registers it "
        f"and run it for 'Student 2' too"
    ]
    assert [
        line for line in (new.stdout + new.stderr).splitlines() if line.startswith("warning:")
    ] == [_warning(copy)]
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-2000:]
    assert f"still published {NAME!r}" in again.stdout
    _said_once(again, copy)
    assert (copy / "models.json").read_text() == before
    assert _files(copy)["echo"] == GONE


ON_BOARD_ECHO = """
from evals.extensions import register_task
from evals.tasks import Task


@register_task
class Echo(Task):
    name, tag, key, prompt_version, on_board = "echo", "echo", "echo", "echo-v1", True

    def load(self, source, split):
        return [], {"name": "bundled"}

    def prompt(self, sample):
        return ""

    def score(self, sample, completion, scoring):
        return {}
"""


def test_installing_the_package_that_puts_it_on_the_board_brings_it_back(board, tmp_path):
    """With an eval of that key on the board again, the entry's echo result is its result file
    once more, and nothing is said."""
    (tmp_path / "echo_on_board.py").write_text(ON_BOARD_ECHO)
    site = tmp_path / "site"
    info = site / "echo_on_board-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: echo-on-board\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[roblox_evals]\necho = echo_on_board\n")
    env = harness_env(PYTHONPATH=os.pathsep.join(map(str, [site, tmp_path])))
    probe = f"""
from pathlib import Path
from evals import models_file
(entry,) = models_file.load_models(Path({str(board / "models.json")!r}), results=Path({str(board / "results")!r}))
print(list(models_file.RESULT_KEYS), models_file.others(entry), models_file.result_path(entry, "echo", Path("r")))
"""
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert done.stdout.split() == [
        "['freeform',",
        "'multipleChoice',",
        "'leetcode',",
        "'echo']",
        "{}",
        f"r/echo/{GONE}",
    ]
