"""echo: the model is asked to repeat a word, and is right when its reply is that word.

The smallest eval the harness runs: it shows what an eval declares (docs/writing-an-eval.md).
The harness imports this module through the `roblox_evals` entry point of this package's
pyproject.toml; `@register_task` adds the eval to its registry. Keep the imports at the top
of such a module light: the registry is loaded by every pytest run."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from evals.errors import DatasetError
from evals.flags import Flag
from evals.tasks import Task, register_task

BUNDLED = Path(__file__).with_name("words.jsonl")
# Its own how-to-run flag: pytest and `evaluate` take it, `resources` gets its value. It changes
# how a reply is graded, so `graded=True`: the result file records it, verify rescores with it.
IGNORE_CASE = Flag(
    "--echo-ignore-case", "echo: a reply in other capitals is right too", forward=True, graded=True
)


@dataclass(frozen=True)
class Word:
    id: str  # the item's id: its node id is tests_evals/test_registered.py::test_registered[echo:<id>]
    word: str


@register_task
class Echo(Task):
    name = "echo"  # its pytest marker (-m echo) and its folder under data/runs/ and data/results/
    tag = "echo"  # `evaluate --evals echo`, `--dataset echo=FILE`
    key = "echo"  # the key it would have in a models.json entry's resultFiles
    title = "Echo"
    marker_help = "echo items: the model repeats a word (examples/echo_eval)"
    prompt_version = "echo-v1"  # part of the run's identity: change it when the prompt changes
    has_splits = False  # one set of words, whatever --split says
    on_board = False  # runs, writes result files and verifies, but is never on the leaderboard
    graders = {"exact": "1"}  # `score` below: bump it when it could grade a reply differently
    flags = (IGNORE_CASE,)  # its own flags (a switch: no type)

    def load(self, source: str, split: str) -> tuple[list[Word], dict[str, str]]:
        """The words of `source` (`bundled`, or a JSONL file of {"id", "word"} records) and the
        dataset's identity, recorded in the run's config: a different file is a different run."""
        path = BUNDLED if source == "bundled" else Path(source)
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError as error:
            raise DatasetError(
                f"--dataset echo={source}: cannot read it ({error.strerror or error}); pass bundled or a JSONL file"
            ) from None
        words = []
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                words.append(Word(str(record["id"]), str(record["word"])))
            except (ValueError, KeyError, TypeError):
                raise DatasetError(
                    f"{path}: line {number}: not a JSON object with an id and a word"
                ) from None
        digest = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
        return words, {"name": "bundled" if source == "bundled" else path.name, "sha256": digest}

    def prompt(self, sample: Word) -> str:
        return f"Repeat this word exactly, and reply with nothing else: {sample.word}"

    def gold_reply(self, sample: Word) -> str:
        return sample.word  # what `--provider reference` answers

    def resources(self, values):
        """What `score` grades with, made once per run from its own flags' values (by `dest`)."""
        return {"match": str.casefold if values[IGNORE_CASE.dest] else str}

    def score(self, sample, completion, scoring):
        reply = completion.text.strip()
        match = scoring.resource("match") or str  # a Scoring of no run of this command: exact
        correct = match(reply) == match(sample.word)
        return {
            "status": "correct" if correct else "wrong",
            "correct": correct,
            "expected": sample.word,
        }

    def explain(self, row):
        return f"did not repeat {row['expected']!r}"  # the reply is the model's: never printed
