"""What an eval is: how a sample becomes a prompt, how a reply is scored, and what the rest
of the harness needs to know about it (its marker, datasets, bands, board columns, kWh keys,
the versions of its graders).

A `Task` knows nothing about pytest, caching or providers beyond the `Scoring` it is handed:
`score` may make further model calls through it (the judges, cached like the candidate's) or
run code in a sandbox its module makes (`resources`). An eval may declare how-to-run flags of
its own (`flags`, rows of `evals.flags.Flag`, as a provider declares its own): pytest and
`evaluate` take them, and `resources` gets their values. Concrete evals live in modules of
their own and register themselves with `evals.tasks.register_task`; nothing outside them names
one."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from evals.errors import DataFileError
from evals.flags import Flag
from evals.names import attempt_key
from evals.messages import Completion, Request

SYSTEM_PROMPT = (
    "You are an expert Roblox game developer who knows the Roblox engine APIs "
    "and the Luau language in depth."
)


class Scoring(Protocol):
    """What `EvalRun` hands `Task.score`: cached judge calls, the run folder for what the task
    measures once per run and keeps, and what the command configured for it to score with."""

    judge_names: list[str]
    folder: Path  # the run folder: the task's own files go in a subfolder of its naming

    def judge(self, item_id: str, index: int, request: Request) -> Completion: ...

    def storing(self, path: Path) -> AbstractContextManager[None]:
        """Around a write into the run folder: failing, it ends the run with one clear line."""
        ...

    def resource(self, kind: str) -> Any:
        """What the command configured of `kind` (`Task.resources`), or None when it did not."""
        ...


@dataclass(frozen=True)
class Column:
    """A score on the leaderboard: its key in the board's data (the eval's `key`, or one per band),
    its heading, the summary it is read from (None: the eval's own, or `overall` when the eval
    has bands; else a band), and whether it counts in the board's average."""

    key: str
    label: str
    band: str | None = None
    averaged: bool = True


@dataclass(frozen=True)
class Shown:
    """One thing an item's local page (`build --view`, `Task.shown`) shows of its grading: a
    label and its text, both plain text that the page escapes (never HTML). `block`: a passage
    (a judge's reply, a test's output), kept as written and folded when long; else a one-line
    fact. `mark`: the outcome it stands for (`correct`, `wrong`, `unparseable`), for its colour."""

    label: str
    text: str
    block: bool = False
    mark: str | None = None


@dataclass(frozen=True)
class Attempt:
    """The k-th answer to a sample under `--epochs K`: an item of its own, cached under its own
    records (`names.attempt_key`), asked and scored as the sample it wraps."""

    sample: Any
    epoch: int

    @property
    def id(self) -> str:
        return attempt_key(self.sample.id, self.epoch)

    def __getattr__(self, name: str) -> Any:  # the sample's own fields: question, choices, test...
        if name == "sample":  # not set yet (while being copied): not the sample's to answer
            raise AttributeError(name)
        return getattr(self.sample, name)


def question_of(sample: Any) -> Any:
    """The dataset's sample behind an item: itself, or the one an `Attempt` answers again."""
    return sample.sample if isinstance(sample, Attempt) else sample


def row_identity(sample: Any) -> dict[str, Any]:
    """How a row names its item: the question's id, and the epoch under `--epochs`."""
    if isinstance(sample, Attempt):
        return {"id": sample.sample.id, "epoch": sample.epoch}
    return {"id": sample.id}


class Task(ABC):
    name: str  # the pytest marker, the results folder
    tag: str  # its short name in `evaluate --evals` and `--dataset TAG=SOURCE`
    key: str  # its key in a models.json entry's resultFiles
    title: str = ""  # how people call it, in messages and on the board; default: the name
    description: str = ""  # a phrase for the leaderboard's introduction; default: the title
    marker_help: str = ""  # the pytest marker's description
    prompt_version: str
    # Where it comes in every list of evals (markers, `--evals`, messages, the board's columns):
    # lower first, then by name. Entry points come in no reliable order.
    position = 100
    bands: tuple[str, ...] = ()  # sub-scores beside "overall", e.g. difficulties
    band_field = (
        "band"  # with bands: the row field that holds the row's band (`band`, `sample_fields`)
    )
    has_splits = True  # False: --split does not apply, the test problems always run
    uses_judges = False
    grades_locally = False  # True: scoring does CPU work of its own (xdist workers share it)
    # On the leaderboard: its result file is one of every published model's resultFiles, and
    # `board` its columns. An eval off the board runs, writes result files and verifies alike.
    on_board = True
    board: tuple[Column, ...] = ()  # default: one column, `key`, averaged
    # Published datasets by --dataset name that serve this eval.
    named_datasets: tuple[str, ...] = ()
    # What graded a row, by part, each with its version: recorded in every result file, so
    # that a change of grading is told apart from a changed record. Bump a part's version
    # whenever what it gives for the same record can change.
    graders: dict[str, str] = {}
    # The row fields the graders write (beside `status` and `correct`): what may change, and
    # nothing else, when today's graders rescore the same records (evals/verify.py).
    graded_fields: tuple[str, ...] = ()
    # How-to-run flags of its own (`evals.flags.Flag` rows, as `ProviderInfo.flags`): pytest and
    # `evaluate` take them beside every other eval's, and `resources` gets their values. A flag
    # that can change a grade says `graded=True`: the result file records it, verify rescores with it.
    flags: tuple[Flag, ...] = ()

    def serves(self, columns: set[str]) -> bool:
        """Whether a dataset file with these columns (of its first record) is one of this
        eval's, for a bare `--dataset FILE`."""
        return False

    def dataset_source(self, identity: dict[str, Any]) -> str | None:
        """The name of the published dataset (one of `named_datasets`) that a result file's
        dataset identity came from, or None when it is none of this eval's."""
        return None

    def columns(self) -> tuple[Column, ...]:
        return self.board or (Column(self.key, self.title or self.name),)

    def kilowatt_hour_keys(self) -> tuple[str, ...]:
        """Its keys in a models.json entry's kilowattHour: one per band, else its key."""
        return self.bands or (self.key,)

    def band(self, row: dict[str, Any]) -> str:
        raise NotImplementedError

    @abstractmethod
    def load(self, source: str, split: str) -> tuple[list[Any], dict[str, Any]]: ...

    @abstractmethod
    def prompt(self, sample: Any) -> str: ...

    def gold_reply(self, sample: Any) -> str:
        """What the offline `reference` provider answers."""
        return sample.answer

    @abstractmethod
    def score(self, sample: Any, completion: Completion, scoring: Scoring) -> dict[str, Any]:
        """Row fields: at least `status` ("correct", "wrong", "unparseable") and `correct`.
        `completion` is the record's; a grader reads `completion.apart()`, without a reasoning
        block that a record of an older version still holds in its text. Judges' replies
        (`Scoring.judge`) come apart already."""

    def summarize(self, rows: list[dict[str, Any]]) -> dict[str, Any]:
        """Task-specific summary fields, beside the common ones."""
        return {}

    def sample_fields(self, sample: Any) -> dict[str, Any]:
        """Fields every row of the sample carries, an API error's included (its band)."""
        return {}

    def resources(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """What the task scores with, made from its own flags' `values` (each flag's `dest`, as
        `--my-limit` is `my_limit`, -> its value: given, or its default), by kind: handed to the
        run and back to `score` through `Scoring.resource(kind)`. Made once per run; verify
        makes them from the values the result file recorded (`recorded_values`)."""
        return {}

    def identity_extra(self, samples: list[Any]) -> dict[str, Any]:
        """Task-specific parts of the run identity."""
        return {}

    def judge_request(self, sample: Any, completion: Completion) -> Request | None:
        """What the judges are asked about this reply; None when no judge is asked."""
        return None

    def shown(
        self, row: Mapping[str, Any] | None, calls: Mapping[str, Mapping[str, Any]]
    ) -> list[Shown]:
        """What an item's local page (`build --view`) shows of its grading, beside what every
        eval's shows (the question asked, the reply, its reasoning, the outcome): what was read
        from the reply and how it was judged. `row`: its result row (None: the run is
        unfinished, nothing is graded yet); `calls`: its cache records in the run folder by role
        (`candidate`, `judge-0`...), as stored. By default each of `graded_fields` the row holds."""
        if row is None:
            return []
        return [
            Shown(name, value if isinstance(value, str) else json.dumps(value, sort_keys=True))
            for name in self.graded_fields
            if (value := row.get(name)) not in (None, "", [], {})
        ]

    def explain(self, row: dict[str, Any]) -> str:
        """One line for a failed item's report."""
        return f"{row['status']}: {row.get('note') or ''}".strip(": ")

    def request(
        self, sample: Any, *, system_prompt_prefix: str | None, max_tokens: int | None
    ) -> Request:
        system = (
            f"{system_prompt_prefix}\n\n{SYSTEM_PROMPT}" if system_prompt_prefix else SYSTEM_PROMPT
        )
        return Request(
            prompt=self.prompt(sample),
            system=system,
            max_tokens=max_tokens,
            context={"gold": self.gold_reply(sample)},
        )


GRADED_WITH = (
    "gradedWith"  # a result file's record of the graded flags' values other than their defaults
)


def graded_with(task: Task, values: Mapping[str, Any]) -> dict[str, Any]:
    """What a run's result file records of the eval's own flags (`GRADED_WITH`): each `graded`
    one whose value is not its default, by flag name. Nothing for a run that sets none, so its
    file is as it was before there was such a record."""
    return {
        flag.name: values[flag.dest]
        for flag in task.flags
        if flag.graded and values.get(flag.dest) not in (None, flag.unset)
    }


def recorded_values(task: Task, result: Mapping[str, Any]) -> dict[str, Any]:
    """The eval's own flags' values a result file was graded with, as `resources` takes them:
    a `graded` flag's as the file recorded it, else its default (a file written before the
    record was kept was graded with the defaults). A flag that is not `graded` (where the tests
    ran, say) is its default: verify rescores here, offline."""
    recorded = result.get(GRADED_WITH) or {}
    values = {}
    for flag in task.flags:
        value = recorded.get(flag.name, flag.unset) if flag.graded else flag.unset
        if flag.graded and flag.name in recorded:
            # A hand-edited file's value is checked as the command line's would be: one line.
            try:
                value = flag.type(str(value)) if flag.type is not None else value
            except (TypeError, ValueError, OverflowError):
                raise DataFileError(
                    f"{GRADED_WITH}.{flag.name} is {recorded[flag.name]!r}, not a value of {flag.name}"
                ) from None
            if problem := flag.refusal(value):
                raise DataFileError(f"{GRADED_WITH}.{flag.name}: {problem}")
        values[flag.dest] = value
    return values
