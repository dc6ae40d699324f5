"""Published results survive upgrades: a model published by the code of commit 905fadf (result
files of format 1, no graders recorded, rows bound to nothing) through its own `evaluate` CLI,
then read by today's code: it verifies, a bare rerun asks nothing, the board shows it, a
regrade reports it. A grader change, faked from here (the letter extractor's output and
version, patched into today's code in the subprocess): verify says REGRADE, never DIFF, and
`--regrade` writes the new scores; a tampered record still says DIFF. Verdicts an older parser
could not read are a regrade too. The rule case by case is tests/unit/test_upgrade.py.

The older commits' code runs in real execs of its own (`git archive`, PYTHONPATH:
tests/support/old_code.py); today's `evaluate` and `pytest` are processes of their own too,
exec'd with the fake grader on their PYTHONPATH where a test fakes one. The servers run on
threads of the test."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from evals import models_file
from evals.identity import identity_from_config, to_flags
from evals.results import RESULT_FORMAT
from evals.tasks import TASKS

LETTERS = TASKS["multiple_choice"].graders["letters"]  # today's versions
VERDICTS = TASKS["freeform"].graders["verdicts"]
from tests.support.harness import ROOT, OwnWayJudges, harness_env, run_cli, run_harness
from tests.support.loopback import OpenAIServer
from tests.support.old_code import (
    KEYS,
    NAME,
    _entry,
    _file,
    board,
    old_board,  # noqa: F401 (board's fixture: imported for pytest to find it)
    publish_with_old_code,
    server,
)

# Today's code with a new letter extractor: it reads every reply as "A" (version 2).
FAKE_GRADER = """
import evals.tasks
from evals.tasks import multiple_choice

multiple_choice.extract_letter = lambda text, choices: "A"
multiple_choice.MultipleChoice.graders = {"letters": "2"}
"""


@pytest.fixture
def fake_grader(tmp_path) -> Path:
    folder = tmp_path / "fake"
    folder.mkdir()
    (folder / "fake_letters.py").write_text(FAKE_GRADER)
    return folder


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def _snapshot(data: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(data)): p.read_bytes()
        for p in [*sorted((data / "results").rglob("*")), data / "models.json"]
        if p.is_file()
    }


def evaluate(data: Path, *args: str, fake: Path | None = None) -> subprocess.CompletedProcess:
    """Today's `evaluate`, with the fake grader patched in first when `fake` is given."""
    patch = "import fake_letters; " if fake else ""
    code = f"{patch}import runpy; runpy.run_module('evals.evaluate', run_name='__main__', alter_sys=True)"
    env = harness_env(**({"PYTHONPATH": str(fake)} if fake else {}))
    return subprocess.run(
        [sys.executable, "-c", code, *args, f"--data-dir={data}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def verify_published(data: Path, fake: Path | None = None) -> subprocess.CompletedProcess:
    plugin = ["-p", "fake_letters"] if fake else []
    env = harness_env(**({"PYTHONPATH": str(fake)} if fake else {}))
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "tests.support.no_network",
        *plugin,
        "--verify-published",
        "-v",
        f"--results-dir={data / 'results'}",
        f"--run-dir={data / 'runs'}",
    ]
    return run_cli(command, env=env, timeout=600)


def _tamper_a_reply(data: Path) -> str:
    """Edit the reply of a multiple-choice record the Student got right; its id."""
    result = json.loads(_file(data, "multipleChoice").read_text())
    row = next(r for r in result["results"] if r["correct"])
    record_path = _record(data, row["id"])
    record = json.loads(record_path.read_text())
    wrong = "ABCD"[("ABCD".index(row["expected"]) + 1) % 4]
    record["response"]["text"] = record["response"]["text"].replace(
        f"Answer: {row['expected']}", f"Answer: {wrong}"
    )
    record_path.write_text(json.dumps(record))
    return row["id"]


def _record(data: Path, item: str) -> Path:
    """The candidate's record of a multiple-choice item in the board's (one) run folder."""
    (path,) = (data / "runs" / "multiple_choice").glob(f"*/calls/{item}/candidate.json")
    return path


# -- a model published by 905fadf, read by today's code ---------------------------------------------


def test_an_old_published_model_verifies_reruns_asking_nothing_builds_and_regrades(board, server):
    before = _snapshot(board)
    ok = [f"ok {NAME} [{key}] {_file(board, key).name}" for key in KEYS]

    verified = evaluate(board, "--verify")
    assert (verified.returncode, verified.stderr) == (0, ""), verified.stdout + verified.stderr
    assert _lines(verified.stdout) == [*ok, "all 3 runs reproduce"]

    asked = len(server.requests)
    rerun = evaluate(board, NAME)
    assert rerun.returncode == 0, rerun.stdout[-3000:] + rerun.stderr[-2000:]
    assert len(server.requests) == asked  # nothing asked of any model
    assert f"still published {NAME!r}" in rerun.stdout
    rows = rerun.stdout.splitlines()[
        -3:
    ]  # the summary table's: each eval finished and still published
    assert [row.split()[0] for row in rows] == ["ff", "mc", "lc"] and all(
        row.endswith("still published") for row in rows
    ), rerun.stdout
    assert all(
        _snapshot(board)[k] == v for k, v in before.items() if k != "models.json"
    )  # result files byte for byte

    site = board.parent / "site"
    built = run_cli(
        [
            sys.executable,
            "-m",
            "evals.site",
            "--write",
            f"--models={board / 'models.json'}",
            f"--results={board / 'results'}",
            f"--runs={board / 'runs'}",
            f"--site={site}",
        ],
        env=harness_env(),
        timeout=300,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    assert NAME in (site / "data.js").read_text(encoding="utf-8")

    models = (board / "models.json").read_bytes()
    dry = evaluate(board, "--regrade", NAME, "--dry-run")
    assert (dry.returncode, dry.stderr) == (0, ""), dry.stdout + dry.stderr
    for key in KEYS:
        (line,) = [
            line
            for line in _lines(dry.stdout)
            if line.startswith(f"{NAME} [{key}] {_file(board, key).name}: published ")
        ]
        assert line.endswith("(unchanged)")
    assert any(line.startswith(f"board before: 1. {NAME} ") for line in _lines(dry.stdout))
    assert "nothing to regrade: every run scores as published" in dry.stdout
    assert (board / "models.json").read_bytes() == models and all(
        _snapshot(board)[k] == v for k, v in before.items() if k != "models.json"
    )


def test_pytest_on_an_old_published_run_reproduces_it_and_verify_published_passes(board):
    path = _file(board, "multipleChoice")
    before = path.read_bytes()
    flags = to_flags(identity_from_config(json.loads(before)["config"]))

    again = run_harness(
        "-m", "multiple_choice", *flags, run_dir=board / "runs", results_dir=board / "results"
    )

    # Its wrong answers are wrong (W, exit 0), as in any run; the published file reproduces.
    assert again.returncode == 0 and "DIFF" not in again.stdout, (
        again.stdout[-3000:] + again.stderr[-2000:]
    )
    assert f"reproduces the published result file {path} (left as it is)" in again.stdout
    assert path.read_bytes() == before

    verified = verify_published(board)
    assert verified.returncode == 0, verified.stdout[-3000:] + verified.stderr
    assert "3 passed" in verified.stdout and "REGRADE" not in verified.stdout


@pytest.fixture
def graders_of_then(tmp_path) -> Path:
    """Today's code with the letter extractor's version of 905fadf ("1"): the graders that
    graded the old board (they read its replies, all "Answer: X", as today's do)."""
    folder = tmp_path / "then"
    folder.mkdir()
    (folder / "fake_letters.py").write_text(
        'from evals.tasks import multiple_choice\n\nmultiple_choice.MultipleChoice.graders = {"letters": "1"}\n'
    )
    return folder


def test_an_old_published_run_with_a_tampered_record_is_a_diff(board, graders_of_then):
    """Under the graders that graded it. A format-1 file binds no row to its records, so
    under today's letters version (2) the same edit reads as a regrade of that one item."""
    item = _tamper_a_reply(board)

    verified = evaluate(board, "--verify", fake=graders_of_then)
    today = evaluate(board, "--verify")

    assert verified.returncode == 1, verified.stdout + verified.stderr
    (line,) = [line for line in _lines(verified.stdout) if "[multipleChoice]" in line]
    assert line.startswith(f"DIFF {NAME} [multipleChoice] ") and f"results.{item}.answer" in line
    (line,) = [line for line in _lines(today.stdout) if "[multipleChoice]" in line]
    assert (
        line.startswith(f"REGRADE {NAME} [multipleChoice] ")
        and f"(letters 1 -> {LETTERS})" in line
        and f"({item})" in line
    )
    assert _lines(verified.stdout)[-1] == "1 of 3 runs do not reproduce"


# -- a grader changes ---------------------------------------------------------------------------


def test_a_grader_change_is_a_regrade_not_a_diff_and_regrade_writes_the_new_scores(
    board, server, fake_grader
):
    mc = _file(board, "multipleChoice")
    published_bytes = mc.read_bytes()
    published = json.loads(published_bytes)
    changing = sorted(
        r["id"] for r in published["results"] if r["correct"] != (r["expected"] == "A")
    )

    verified = evaluate(board, "--verify", fake=fake_grader)
    assert (verified.returncode, verified.stderr) == (0, ""), verified.stdout + verified.stderr
    lines = _lines(verified.stdout)
    (regrade,) = [line for line in lines if "[multipleChoice]" in line]
    assert regrade.startswith(
        f"REGRADE {NAME} [multipleChoice] {mc.name}: today's graders differ (letters 1 -> 2): "
        f"{len(changing)} items score differently ({', '.join(changing[:5])}"
    )
    assert [line.split()[0] for line in lines[:3]] == ["ok", "REGRADE", "ok"]
    assert (
        lines[-1].startswith("2 of 3 runs reproduce; 1 regrade available")
        and "evaluate --regrade" in lines[-1]
    )

    pytest_verify = verify_published(board, fake=fake_grader)
    assert pytest_verify.returncode == 0, pytest_verify.stdout[-3000:] + pytest_verify.stderr
    assert "test_published_run[Student_1-multipleChoice] REGRADE" in pytest_verify.stdout
    tally = _lines(pytest_verify.stdout)[-1]
    assert "2 passed" in tally and "1 regrade" in tally and "failed" not in tally
    assert (
        f"REGRADE {NAME} [multipleChoice] {mc.name}: today's graders differ (letters 1 -> 2)"
        in pytest_verify.stdout
    )

    flags = to_flags(identity_from_config(published["config"]))
    env = harness_env(PYTHONPATH=str(fake_grader))
    same_flags = run_harness(
        "-p",
        "fake_letters",
        "-m",
        "multiple_choice",
        *flags,
        run_dir=board / "runs",
        results_dir=board / "results",
        env=env,
    )
    assert "DIFF" not in same_flags.stdout, same_flags.stdout[-3000:] + same_flags.stderr[-2000:]
    assert (
        "multiple_choice  regrade available: the records of the "
        f"published result file {mc} (left as it is) are intact, "
        f"today's graders differ (letters 1 -> 2)" in same_flags.stdout
    )
    assert mc.read_bytes() == published_bytes

    asked = len(server.requests)
    rerun = evaluate(board, NAME, fake=fake_grader)
    assert rerun.returncode == 0, rerun.stdout[-3000:] + rerun.stderr[-2000:]
    assert len(server.requests) == asked
    assert "regrade available" in rerun.stdout

    before = _snapshot(board)
    dry = evaluate(board, "--regrade", NAME, "--dry-run", fake=fake_grader)
    assert dry.returncode == 0, dry.stdout + dry.stderr
    regraded_accuracy = round(
        sum(r["expected"] == "A" for r in published["results"]) / len(published["results"]), 4
    )
    assert (
        f"{NAME} [multipleChoice] {mc.name}: published "
        f"{published['summary']['accuracy']:.2%}, regraded {regraded_accuracy:.2%} "
        f"(letters 1 -> 2; {len(changing)} items changed)"
    ) in dry.stdout
    assert _snapshot(board) == before  # nothing written

    done = evaluate(board, "--regrade", NAME, fake=fake_grader)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"regraded {NAME!r}: multipleChoice {mc.name}" in done.stdout
    new = json.loads(mc.read_text())
    # written again in today's format
    assert (new["resultFormat"], new["graders"], new["summary"]["accuracy"]) == (
        RESULT_FORMAT,
        {"letters": "2", "stats": "1"},
        regraded_accuracy,
    )
    assert new["config"] == published["config"] and new["timing"] == published["timing"]
    (kept,) = mc.parent.glob(f"{mc.name}.replaced-*")
    assert kept.read_bytes() == before[str(mc.relative_to(board))]
    entry = _entry(board)
    assert entry["resultFiles"]["multipleChoice"] == mc.name and entry["regraded"]["graders"] == {
        "multipleChoice": {"letters": "2", "stats": "1"}
    }
    for key in ("freeform", "leetcode"):  # what scored the same is left as it was
        assert _file(board, key).read_bytes() == before[str(_file(board, key).relative_to(board))]

    again = evaluate(board, "--verify", fake=fake_grader)
    assert (again.returncode, _lines(again.stdout)[-1]) == (0, "all 3 runs reproduce"), (
        again.stdout + again.stderr
    )

    item = _tamper_a_reply_of_format_2(board)
    tampered = evaluate(board, "--verify", fake=fake_grader)
    assert tampered.returncode == 1, tampered.stdout + tampered.stderr
    (line,) = [line for line in _lines(tampered.stdout) if "[multipleChoice]" in line]
    assert line == f"DIFF {NAME} [multipleChoice] {mc.name}: results.{item}.records"


def _build(data: Path, mode: str) -> subprocess.CompletedProcess:
    """`build --write` or `--check` of the board's site (beside its data folder)."""
    return run_cli(
        [
            sys.executable,
            "-m",
            "evals.site",
            mode,
            f"--models={data / 'models.json'}",
            f"--results={data / 'results'}",
            f"--runs={data / 'runs'}",
            f"--site={data.parent / 'site'}",
        ],
        env=harness_env(),
        timeout=300,
    )


def test_a_regrade_killed_after_its_result_files_is_finished_by_the_same_command(
    board, fake_grader
):
    """The state a kill between the result files and models.json leaves (the files regraded,
    models.json and the site as before), made exactly: a regrade run to its end, then
    models.json and the site put back. The same command again finishes the write."""
    assert _build(board, "--write").returncode == 0
    site = board.parent / "site"
    kept = {p: p.read_bytes() for p in [board / "models.json", *site.rglob("*")] if p.is_file()}
    done = evaluate(board, "--regrade", NAME, fake=fake_grader)
    assert done.returncode == 0, done.stdout + done.stderr
    regraded = _entry(board)["regraded"]
    for path, content in kept.items():
        path.write_bytes(content)
    assert _build(board, "--check").returncode == 1  # the killed state: the board is stale

    again = evaluate(board, "--regrade", NAME, fake=fake_grader)

    assert again.returncode == 0, again.stdout + again.stderr
    assert "nothing to regrade" not in again.stdout
    assert f"finished the regrade of {NAME!r}" in again.stdout, again.stdout
    checked = _build(board, "--check")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert _entry(board)["regraded"]["graders"] == regraded["graders"]
    last = evaluate(board, "--regrade", NAME, fake=fake_grader)
    assert "nothing to regrade: every run scores as published" in last.stdout, last.stdout

    # Killed later, between models.json and the site: the site alone is written again.
    for path, content in kept.items():
        if path.parent != board:
            path.write_bytes(content)
    site_only = evaluate(board, "--regrade", NAME, fake=fake_grader)
    assert "the site was stale: written again" in site_only.stdout, site_only.stdout
    assert _build(board, "--check").returncode == 0


def _tamper_a_reply_of_format_2(data: Path) -> str:
    """Edit a reply whose letter the fake grader ignores: only the record's digest tells."""
    result = json.loads(_file(data, "multipleChoice").read_text())
    row = result["results"][0]
    record_path = _record(data, row["id"])
    record = json.loads(record_path.read_text())
    record["response"]["text"] += " (edited)"
    record_path.write_text(json.dumps(record))
    return row["id"]


# -- the rule, case by case (evals.verify.judge) ----------------------------------------------------


# -- the judges' verdicts read anew -------------------------------------------------------------------

STRICT = "b9b4a3d"  # the last code whose verdict parser read only a strict last line (verdicts 1)


@pytest.fixture(scope="module")
def loose_board(tmp_path_factory) -> Path:
    """A board on which the code of STRICT published NAME with --allow-errors: its judges say
    their verdicts in their own ways (tests/unit/test_judges.py), which that code could not read."""
    with OpenAIServer(OwnWayJudges()) as server:
        return publish_with_old_code(
            STRICT, tmp_path_factory.mktemp("strict"), server, "--allow-errors"
        )


def test_verdicts_read_by_todays_parser_are_a_regrade_and_regrade_publishes_them_graded(
    loose_board,
):
    ff = _file(loose_board, "freeform")
    published = json.loads(ff.read_text())
    assert (
        published["summary"]["judgeUnparseable"] > 0 and published["publishable"] is False
    )  # over the gate then

    verified = evaluate(loose_board, "--verify")
    assert (verified.returncode, verified.stderr) == (0, ""), verified.stdout + verified.stderr
    lines = _lines(verified.stdout)
    assert [line.split()[0] for line in lines[:3]] == ["REGRADE", "ok", "ok"]
    assert lines[0].startswith(
        f"REGRADE {NAME} [freeform] {ff.name}: today's graders differ (verdicts 1 -> {VERDICTS}): "
    )
    assert lines[-1].startswith("2 of 3 runs reproduce; 1 regrade available")

    done = evaluate(loose_board, "--regrade", NAME)
    assert done.returncode == 0, done.stdout + done.stderr
    regraded = json.loads(ff.read_text())
    assert (
        regraded["graders"]["verdicts"] == VERDICTS
        and regraded["summary"]["judgeUnparseable"] == 0
        and regraded["publishable"] is True
    )
    assert regraded["config"] == published["config"]
    again = evaluate(loose_board, "--verify")
    assert (again.returncode, _lines(again.stdout)[-1]) == (0, "all 3 runs reproduce"), (
        again.stdout + again.stderr
    )
