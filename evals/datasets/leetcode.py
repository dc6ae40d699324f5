"""Luau LeetCode problems: our bundled set, the published LuauLeetcode set, or a local file.

The columns follow the published dataset (see docs/luau-test-format.md); the reference
solution sets each problem's work budget and is what the `reference` provider answers."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evals.errors import DatasetError

from ._files import column, file_digest, load_each, read_records
from ._hf import HubFile, fetch, hub_source_of

BUNDLED = Path(__file__).resolve().parents[2] / "data" / "leetcode" / "problems.jsonl"
HUB = {
    "test": HubFile(
        "TorpedoSoftware/LuauLeetcode", "e67a12285d002c45b013285c40349ec16d6eb5f5", "test.parquet"
    )
}
DIFFICULTIES = ("easy", "medium", "hard")


def source_of(identity: dict[str, Any]) -> str | None:
    """`luau-leetcode` when a run's dataset identity names its file (`Task.dataset_source`)."""
    return hub_source_of(identity, {"luau-leetcode": HUB})


@dataclass(frozen=True)
class Problem:
    id: str
    difficulty: str  # easy, medium or hard
    description: str
    starter_code: str
    entry_point: str
    test: str
    solution: str | None  # the reference solution, when the dataset has one
    origin: str = field(
        default="", compare=False
    )  # "<file>: record <n>", for errors that are the dataset's


def load_problems(source: str, split: str) -> tuple[list[Problem], dict[str, Any]]:
    if source == "bundled":
        path, identity = BUNDLED, {"name": "bundled", "sha256": file_digest(BUNDLED)}
    elif source == "luau-leetcode":
        if split not in HUB:
            raise DatasetError(f"luau-leetcode has no {split!r} split here; pass --split test")
        path, identity = fetch(HUB[split])
    else:
        path = Path(source)
        if not path.is_file():
            raise DatasetError(
                f"--dataset {source}: no such file, and not a known dataset (bundled, luau-leetcode)"
            )
        identity = {"name": path.name, "sha256": file_digest(path)}

    def build(line: int, record: dict[str, Any]) -> Problem:
        difficulty = column(path, line, record, ("difficulty",)).strip().lower()
        if difficulty not in DIFFICULTIES:
            raise DatasetError(
                f"{path}: record {line}: difficulty {difficulty!r} is not one of Easy, Medium, Hard"
            )
        return Problem(
            id=str(column(path, line, record, ("task_id", "id", "question_id"), kind=(str, int))),
            difficulty=difficulty,
            description=column(
                path, line, record, ("problem_description", "description", "prompt")
            ),
            starter_code=column(path, line, record, ("starter_code",)),
            entry_point=column(path, line, record, ("entry_point",)),
            test=column(path, line, record, ("test",)),
            solution=column(
                path, line, record, ("solution", "completion", "reference_solution"), required=False
            ),
            origin=f"{path}: record {line}",
        )

    records = [(line, r) for line, r in read_records(path) if r.get("split", split) == split]
    return load_each(path, records, build, split=split), identity
