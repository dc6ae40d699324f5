"""Ids are data, never paths: each id's file name is injective, plain or hashed, and stays in its
folder, and records filed under the names of before are still found. The command line meeting
the filesystem is tests/e2e/test_paths.py."""

from __future__ import annotations

import json

from evals.cache import RunCache
from evals.names import file_name

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


def test_file_names_are_injective_plain_or_hashed_and_stay_in_their_folder():
    names = [file_name(i) for i in IDS]
    assert len({n.lower() for n in names}) == len(IDS)  # case-insensitive filesystems too
    for name in names:
        assert (
            name and "/" not in name and "\\" not in name and "\x00" not in name and name.isascii()
        )
        assert not name.startswith((".", "-", "~")) and len(name) <= 120
    assert (
        file_name("mc-001") == "mc-001" and file_name("lc-easy-01-two-sum") == "lc-easy-01-two-sum"
    )  # today's names kept
    assert file_name("Q1").startswith("Q1~") and file_name("a/b").startswith("a_b~")


def test_records_under_the_names_of_before_are_still_found(tmp_path):
    """Run folders written before ids were hashed keep their records: an id that was filed
    under a lossy name (`Q1`, `a/b` -> `a_b`) is read back from it, and only by its own id."""
    cache = RunCache(tmp_path, session=None)
    for item, old in (("Q1", "Q1"), ("a/b", "a_b")):
        (tmp_path / "calls" / old).mkdir(parents=True)
        record = {
            "format": 1,
            "item": item,
            "role": "candidate",
            "request": {"q": item},
            "response": {"text": "Answer: A", "usage": {}},
        }
        (tmp_path / "calls" / old / "candidate.json").write_text(json.dumps(record))
    assert cache.read("Q1", "candidate")["item"] == "Q1"
    assert cache.read("a/b", "candidate")["item"] == "a/b"
    assert cache.read("a_b", "candidate") is None  # a_b's own name, holding a/b's record


# -- option values that pytest could take for test paths ----------------------------------------
# pytest picks its root directory and settings from the command line's paths before the harness
# declares its options, so the value in `--model /models/llama` counts as a path there.


# -- folders that cannot be used -------------------------------------------------------------


# -- leftovers -----------------------------------------------------------------------------------
