"""The `pinned_readings` fixture as an eval's own test suite meets it (pytest in a child, in a
git repository of its own): a snapshot to record, a reading changed under the same version
refused (and its snapshot kept), a moved version asking for its snapshot in the same commit,
and two branches that moved one part to the same version with different rules caught after
their merge, from the repository's history. The library is tests/unit/test_grader_readings.py."""

from __future__ import annotations

import json
import subprocess
import textwrap

import pytest

# An eval's test of its own part: its rule and version come from the environment, so that
# one file can play every commit.
EVAL_TEST = textwrap.dedent(
    """
    import os

    import pytest

    CORPUS = {"one": "A", "two": "b", "three": "C"}
    RULES = {"upper": str.upper, "lower": str.lower, "swap": str.swapcase}

    @pytest.mark.graders
    def test_rubric(pinned_readings):
        rule = RULES[os.environ["RULE"]]
        readings = {case: rule(reply) for case, reply in CORPUS.items()}
        pinned_readings({"rubric": os.environ["VERSION"]}, readings)
    """
)
pytest_plugins = ["pytester"]
SNAPSHOT = "__snapshots__/test_rubric/test_rubric.json"


@pytest.fixture
def repo(pytester, monkeypatch):
    for name in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{name}_NAME", "Tester")
        monkeypatch.setenv(f"GIT_{name}_EMAIL", "tester@example.invalid")
    monkeypatch.delenv("RULE", raising=False)
    monkeypatch.delenv("VERSION", raising=False)
    pytester.makepyfile(test_rubric=EVAL_TEST)
    git(pytester, "init", "-q", "-b", "main")
    return pytester


def git(pytester, *args):
    subprocess.run(["git", *args], cwd=pytester.path, check=True, capture_output=True)


def run(pytester, monkeypatch, *args, rule="upper", version="1"):
    monkeypatch.setenv("RULE", rule)
    monkeypatch.setenv("VERSION", version)
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-m", "graders", *args)


def snapshot(pytester):
    return json.loads((pytester.path / SNAPSHOT).read_text())


def test_an_eval_records_its_readings_then_a_change_under_the_same_version_is_refused(
    repo, monkeypatch
):
    first = run(repo, monkeypatch)
    first.assert_outcomes(failed=1)
    first.stdout.fnmatch_lines(
        ["*no snapshot yet: record them with `pytest -m graders --snapshot-update`*"]
    )
    run(repo, monkeypatch, "--snapshot-update").assert_outcomes(passed=1)
    assert snapshot(repo)["readings"] == {"one": "A", "two": "B", "three": "C"}
    run(repo, monkeypatch).assert_outcomes(passed=1)

    changed = run(repo, monkeypatch, rule="lower")
    changed.assert_outcomes(failed=1)
    changed.stdout.fnmatch_lines(
        [
            "*test_rubric: 3 cases ('one': 'A' then, 'a' now; *) read otherwise than the snapshot"
            " under the same versions (rubric 1)*"
        ]
    )
    refused = run(repo, monkeypatch, "--snapshot-update", rule="lower")
    refused.assert_outcomes(failed=1)
    assert snapshot(repo)["readings"]["one"] == "A"  # kept, not rewritten nor deleted


def test_a_moved_version_asks_for_its_snapshot_in_the_same_commit(repo, monkeypatch):
    run(repo, monkeypatch, "--snapshot-update").assert_outcomes(passed=1)
    moved = run(repo, monkeypatch, rule="lower", version="2")
    moved.assert_outcomes(failed=1)
    moved.stdout.fnmatch_lines(
        ["*the versions moved ({'rubric': '1'} -> {'rubric': '2'})*--snapshot-update*"]
    )
    run(repo, monkeypatch, "--snapshot-update", rule="lower", version="2").assert_outcomes(passed=1)
    assert snapshot(repo)["versions"] == {"rubric": "2"}
    run(repo, monkeypatch, rule="lower", version="2").assert_outcomes(passed=1)


def test_two_branches_that_moved_a_part_to_one_version_are_caught_after_their_merge(
    repo, monkeypatch
):
    """Each branch moved rubric 1 -> 2 with a rule of its own and recorded its snapshot; the
    merge kept main's side. The history holds both tables of "2": the merge cannot read like
    both, and the message names the commit it differs from."""
    run(repo, monkeypatch, "--snapshot-update").assert_outcomes(passed=1)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "rubric 1")
    git(repo, "checkout", "-qb", "other")
    run(repo, monkeypatch, "--snapshot-update", rule="lower", version="2").assert_outcomes(passed=1)
    git(repo, "commit", "-qam", "rubric 2, lower")
    git(repo, "checkout", "-q", "main")
    run(repo, monkeypatch, "--snapshot-update", rule="swap", version="2").assert_outcomes(passed=1)
    git(repo, "commit", "-qam", "rubric 2, title")
    subprocess.run(
        ["git", "merge", "-q", "-s", "ours", "other", "-m", "merge"], cwd=repo.path, check=True
    )  # the conflict "resolved": main's snapshot kept, main's rule kept
    other = subprocess.run(
        ["git", "rev-parse", "other"], cwd=repo.path, capture_output=True, text=True, check=True
    ).stdout.strip()

    merged = run(repo, monkeypatch, rule="swap", version="2")  # main's rule, main's snapshot
    merged.assert_outcomes(failed=1)
    merged.stdout.fnmatch_lines(
        [
            f"*read otherwise than at commit {other[:12]} under the same versions (rubric 2): one"
            " version has been read two ways*"
        ]
    )
