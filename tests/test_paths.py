"""Bad inputs meet the filesystem: ids are data, never paths; option values pytest could take
for test paths; run and result folders that cannot be used; temporary files left by a killed
run. Each through the command line, as a user meets it."""

from __future__ import annotations

import json
from pathlib import Path

from evals.cache import RunCache
from evals.names import file_name
from tests.harness import ROOT, read_result, run_harness
from tests.loopback import Answer, OpenAIServer

# Ids a dataset file may hold. Before, `../../../../x` wrote outside the run folder, and `a/b`,
# `a_b` and `a b` (or two long ids sharing their first 120 characters) shared one cache record.
IDS = [
    "../../../../x", "..", ".", "", "a/b", "a_b", "a b", "a\\b", "x\x00y", "Q1", "q1", "con", "-rf", ".hidden",
    "é", "日本語", "\ud800", "x" * 10_000, "x" * 9_999 + "y", "mc-001",
]


def test_file_names_are_injective_plain_or_hashed_and_stay_in_their_folder():
    names = [file_name(i) for i in IDS]
    assert len({n.lower() for n in names}) == len(IDS)  # case-insensitive filesystems too
    for name in names:
        assert name and "/" not in name and "\\" not in name and "\x00" not in name and name.isascii()
        assert not name.startswith((".", "-", "~")) and len(name) <= 120
    assert file_name("mc-001") == "mc-001" and file_name("lc-easy-01-two-sum") == "lc-easy-01-two-sum"  # today's names kept
    assert file_name("Q1").startswith("Q1~") and file_name("a/b").startswith("a_b~")


def mc_file(path: Path, ids: list[str]) -> Path:
    rows = [{"id": i, "question": f"Question number {n}?", "choices": ["yes", "no"], "answer": "A"} for n, i in enumerate(ids)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def outside(tmp_path: Path, *kept: Path) -> list[Path]:
    """Files written anywhere under tmp_path but in the run folder, the results folder and `kept`."""
    mine = (tmp_path / "runs", tmp_path / "results")
    return [p for p in tmp_path.rglob("*") if p.is_file() and p not in kept and not any(f in p.parents for f in mine)]


def test_every_id_has_its_own_cache_record_and_a_rerun_asks_nothing(tmp_path):
    dataset = mc_file(tmp_path / "odd-ids.jsonl", IDS)
    with OpenAIServer(lambda request: Answer("Answer: A")) as server:
        args = ["--provider=openai", "--model=m", f"--base-url={server.url}/v1", "-m", "multiple_choice", f"--dataset=mc={dataset}"]
        first = run_harness(*args, run_dir=tmp_path / "runs", results_dir=tmp_path / "results")
        asked = len(server.requests)
        second = run_harness(*args, run_dir=tmp_path / "runs", results_dir=tmp_path / "results")

    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-2000:]
    assert asked == len(IDS)
    assert len(server.requests) == asked, second.stdout[-2000:]  # nothing paid for twice
    records = list((tmp_path / "runs").glob("multiple_choice/*/calls/*/candidate.json"))
    assert len({p.parent.name.lower() for p in records}) == len(IDS)
    assert sorted(json.loads(p.read_text(encoding="utf-8"))["item"] for p in records) == sorted(IDS)
    assert {r["id"] for r in read_result(tmp_path / "results", "multiple_choice")["results"]} == set(IDS)
    assert not outside(tmp_path, dataset)


def test_leetcode_ids_keep_their_work_budget_files_inside_the_run_folder(tmp_path):
    problems = [json.loads(line) for line in (ROOT / "data" / "leetcode" / "problems.jsonl").read_text().splitlines()[:4]]
    dataset = tmp_path / "odd-problems.jsonl"
    ids = ["../../../../x", "a/b", "a_b", "A_B"]
    dataset.write_text("".join(json.dumps({**p, "task_id": i}) + "\n" for p, i in zip(problems, ids)), encoding="utf-8")

    done = run_harness("--provider=reference", "-m", "leetcode", f"--dataset=lc={dataset}", run_dir=tmp_path / "runs", results_dir=tmp_path / "results")

    assert done.returncode == 0, done.stdout[-3000:]
    assert not outside(tmp_path, dataset)
    budgets = list((tmp_path / "runs").glob("leetcode/*/work/*.json"))
    assert len({p.name.lower() for p in budgets}) == len(ids)
    rows = {r["id"]: r for r in read_result(tmp_path / "results", "leetcode")["results"]}
    assert set(rows) == set(ids) and all(r["correct"] for r in rows.values())


def test_records_under_the_names_of_before_are_still_found(tmp_path):
    """Run folders written before ids were hashed keep their records: an id that was filed
    under a lossy name (`Q1`, `a/b` -> `a_b`) is read back from it, and only by its own id."""
    cache = RunCache(tmp_path, session=None)
    for item, old in (("Q1", "Q1"), ("a/b", "a_b")):
        (tmp_path / "calls" / old).mkdir(parents=True)
        record = {"format": 1, "item": item, "role": "candidate", "request": {"q": item}, "response": {"text": "Answer: A", "usage": {}}}
        (tmp_path / "calls" / old / "candidate.json").write_text(json.dumps(record))
    assert cache.read("Q1", "candidate")["item"] == "Q1"
    assert cache.read("a/b", "candidate")["item"] == "a/b"
    assert cache.read("a_b", "candidate") is None  # a_b's own name, holding a/b's record
