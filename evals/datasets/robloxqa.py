"""RobloxQA questions: our bundled set, the published Hugging Face sets, or a local file.

Every source becomes `MultipleChoiceQuestion` or `FreeformQuestion`. Columns are read by
name with fallbacks; a missing one fails loudly, naming the file and the record."""

from __future__ import annotations

import hashlib
import random
import string
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evals.errors import DatasetError

from ._files import Numbered, column, file_digest, load_each, read_records
from ._hf import HubFile, fetch, hub_source_of

BUNDLED_DIR = Path(__file__).resolve().parents[2] / "data" / "robloxqa"
LETTERS = string.ascii_uppercase

QUESTION = ("question", "prompt", "query")
CHOICES = ("choices", "options")
ANSWER = ("answer", "correct_answer", "reference_answer", "reference", "label")
INCORRECT = ("incorrect_0", "incorrect_1", "incorrect_2")
ID = ("id", "question_id", "qid", "uid")


@dataclass(frozen=True)
class MultipleChoiceQuestion:
    id: str
    question: str
    choices: tuple[str, ...]
    answer: str  # the letter of the correct choice


@dataclass(frozen=True)
class FreeformQuestion:
    id: str
    question: str
    answer: str


# Published datasets: name -> files per split, at a pinned revision. v1.0's commit could not
# be confirmed while this was written: it follows main, resolved to a commit at first download.
HUB = {
    "robloxqa-v1": {
        "test": HubFile("TorpedoSoftware/RobloxQA-v1.0", "main", "test.parquet"),
    },
    "robloxqa-openended-v1": {
        "test": HubFile(
            "TorpedoSoftware/RobloxQA-OpenEnded-v1.0",
            "c2d80ec677e0b96e895e11dd9177940e5bd8bc22",
            "test.parquet",
        ),
    },
    "robloxqa-v2": {
        "test": HubFile(
            "TorpedoSoftware/RobloxQA-v2.0",
            "3d983bf3a4702ef33719de4bb9fa8eaedbe626f1",
            "test.parquet",
        ),
        "train": HubFile(
            "TorpedoSoftware/RobloxQA-v2.0",
            "3d983bf3a4702ef33719de4bb9fa8eaedbe626f1",
            "train.parquet",
        ),
    },
}
BUNDLED = {"multiple_choice": "multiple_choice.jsonl", "freeform": "freeform.jsonl"}


def source_of(identity: dict[str, Any]) -> str | None:
    """The published dataset a run's dataset identity names (`Task.dataset_source`)."""
    return hub_source_of(identity, HUB)


def resolve(source: str, eval_name: str, split: str) -> tuple[Path, dict[str, Any], bool]:
    """(file, dataset identity, whether the file holds several splits in a `split` column)."""
    if source == "bundled":
        path = BUNDLED_DIR / BUNDLED[eval_name]
        return path, {"name": "bundled", "sha256": file_digest(path)}, True
    if source in HUB:
        files = HUB[source]
        if split not in files:
            raise DatasetError(
                f"{source} has no {split!r} split (it has {', '.join(files)}); pass --split {next(iter(files))}"
            )
        path, identity = fetch(files[split])
        return path, identity, False
    path = Path(source)
    if not path.is_file():
        known = ", ".join(["bundled", *HUB])
        raise DatasetError(f"--dataset {source}: no such file, and not a known dataset ({known})")
    return path, {"name": path.name, "sha256": file_digest(path)}, True


def load_multiple_choice(
    source: str, split: str
) -> tuple[list[MultipleChoiceQuestion], dict[str, Any]]:
    path, identity, by_column = resolve(source, "multiple_choice", split)
    records = _in_split(read_records(path), split, by_column)

    def build(line: int, record: dict[str, Any]) -> MultipleChoiceQuestion:
        qid = _id(path, line, record)
        question = column(path, line, record, QUESTION)
        if all(name in record for name in INCORRECT):
            # v2.0 stores the answer and three distractors; the order is ours to fix, per question.
            correct = column(path, line, record, ("answer",))
            choices = [correct, *(column(path, line, record, (name,)) for name in INCORRECT)]
            random.Random(_seed(qid)).shuffle(choices)
            return MultipleChoiceQuestion(
                qid, question, tuple(choices), LETTERS[choices.index(correct)]
            )
        choices = column(path, line, record, CHOICES, kind=(list, tuple))
        if len(choices) < 2 or not all(isinstance(c, str) for c in choices):
            raise DatasetError(
                f"{path}: record {line}: 'choices' must be a list of at least two strings"
            )
        if len(choices) > len(LETTERS):
            raise DatasetError(
                f"{path}: record {line}: {len(choices)} choices, but only {len(LETTERS)} letters (A-Z) to label them; "
                f"keep at most {len(LETTERS)} choices"
            )
        answer = column(path, line, record, ANSWER, kind=(str, int))
        return MultipleChoiceQuestion(
            qid, question, tuple(choices), _answer_letter(path, line, answer, choices)
        )

    return load_each(path, records, build, split=split), identity


def load_freeform(source: str, split: str) -> tuple[list[FreeformQuestion], dict[str, Any]]:
    path, identity, by_column = resolve(source, "freeform", split)
    records = _in_split(read_records(path), split, by_column)

    def build(line: int, record: dict[str, Any]) -> FreeformQuestion:
        answer = column(path, line, record, ANSWER)
        if len(answer.strip()) < 2:
            raise DatasetError(
                f"{path}: record {line}: the answer {answer!r} is too short for a freeform reference answer"
            )
        return FreeformQuestion(
            _id(path, line, record), column(path, line, record, QUESTION), answer
        )

    return load_each(path, records, build, split=split), identity


def _in_split(records: Numbered, split: str, by_column: bool) -> Numbered:
    if by_column and any("split" in r for _, r in records):
        return [(line, r) for line, r in records if r.get("split", "test") == split]
    return records


def _id(path: Path, line: int, record: dict[str, Any]) -> str:
    value = column(path, line, record, ID, kind=(str, int), required=False)
    if value is not None:
        return str(value)
    # No id column: a stable id from the question text, so reordering a file keeps the cache.
    return "q-" + hashlib.sha256(column(path, line, record, QUESTION).encode()).hexdigest()[:10]


def _seed(qid: str) -> int:
    return int.from_bytes(hashlib.sha256(qid.encode()).digest()[:8], "big")


def _answer_letter(path: Path, line: int, answer: str | int, choices: list[str]) -> str:
    letters = LETTERS[: len(choices)]
    fix = (
        f"fix the answer or the choices (its {len(choices)} choices are "
        f"{letters[0]}-{letters[-1]}, indexes 0-{len(choices) - 1})"
    )
    if isinstance(answer, int):
        if not 0 <= answer < len(choices):
            raise DatasetError(
                f"{path}: record {line}: answer index {answer} is not one of its choices; {fix}"
            )
        return LETTERS[answer]
    letter = answer.strip().strip("()").upper()
    if len(letter) == 1 and letter in letters:
        return letter
    if answer in choices:
        return LETTERS[choices.index(answer)]
    if len(letter) == 1 and letter in LETTERS:
        raise DatasetError(
            f"{path}: record {line}: answer {answer!r} is a letter beyond its choices; {fix}"
        )
    raise DatasetError(
        f"{path}: record {line}: answer {answer!r} is neither a choice's letter, index nor text; {fix}"
    )
