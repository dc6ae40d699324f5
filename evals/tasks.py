"""The evals: how a sample becomes a prompt, and how a reply is scored.

A `Task` knows nothing about pytest, caching or providers beyond the `Scoring` it is handed:
`score` may make further model calls through it (the judges, cached like the candidate's) or
run Luau in the sandbox."""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Protocol

from evals import stats
from evals.datasets import robloxqa
from evals.datasets.leetcode import DIFFICULTIES, Problem, load_problems
from evals.errors import DatasetError
from evals.grading.luau_code import extract_code
from evals.luau import WORK_BUDGET_FACTOR, WORK_BUDGET_FLOOR, TestRun
from evals.grading import judges
from evals.grading.multiple_choice import LETTERS, extract_letter
from evals.names import attempt_key
from evals.providers import Completion, Request, Usage

SYSTEM_PROMPT = "You are an expert Roblox game developer who knows the Roblox engine APIs and the Luau language in depth."


class Scoring(Protocol):
    """What `EvalRun` hands `Task.score`: cached judge calls and the Luau sandbox."""

    judge_names: list[str]

    def judge(self, item_id: str, index: int, request: Request) -> Completion: ...

    def work_budget(self, problem: Problem) -> int | None: ...

    def run_luau(self, problem: Problem, solution: str, work_budget: int | None) -> TestRun: ...


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
    prompt_version: str
    bands: tuple[str, ...] = ()  # sub-scores beside "overall", e.g. difficulties
    has_splits = True  # False: --split does not apply, the test problems always run
    uses_judges = False
    grades_locally = False  # True: scoring does CPU work of its own (xdist workers share it)

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
        """Row fields: at least `status` ("correct", "wrong", "unparseable") and `correct`."""

    def summarize(self, rows: list[dict[str, Any]]) -> dict[str, Any]:
        """Task-specific summary fields, beside the common ones."""
        return {}

    def sample_fields(self, sample: Any) -> dict[str, Any]:
        """Fields every row of the sample carries, an API error's included (its band)."""
        return {}

    def identity_extra(self, samples: list[Any]) -> dict[str, Any]:
        """Task-specific parts of the run identity."""
        return {}

    def judge_request(self, sample: Any, completion: Completion) -> Request | None:
        """What the judges are asked about this reply; None when no judge is asked."""
        return None

    def explain(self, row: dict[str, Any]) -> str:
        """One line for a failed item's report."""
        return f"{row['status']}: {row.get('note') or ''}".strip(": ")

    def request(self, sample: Any, *, system_prompt_prefix: str | None, max_tokens: int | None) -> Request:
        system = f"{system_prompt_prefix}\n\n{SYSTEM_PROMPT}" if system_prompt_prefix else SYSTEM_PROMPT
        return Request(prompt=self.prompt(sample), system=system, max_tokens=max_tokens, context={"gold": self.gold_reply(sample)})


class MultipleChoice(Task):
    name = "multiple_choice"
    tag = "mc"
    key = "multipleChoice"
    prompt_version = "mc-v1"

    def load(self, source: str, split: str):
        return robloxqa.load_multiple_choice(source, split)

    def prompt(self, sample: robloxqa.MultipleChoiceQuestion) -> str:
        options = "\n".join(f"{LETTERS[i]}) {choice}" for i, choice in enumerate(sample.choices))
        return (
            "Answer the following multiple choice question about Roblox.\n\n"
            f"Question: {sample.question}\n\n{options}\n\n"
            'Think it through if you need to, then end your reply with a line of the form "Answer: X", '
            "where X is the letter of the single correct choice."
        )

    def gold_reply(self, sample: robloxqa.MultipleChoiceQuestion) -> str:
        return f"Answer: {sample.answer}"

    def score(self, sample, completion, scoring):
        letter = extract_letter(completion.text, list(sample.choices))
        if letter is None:
            return {"status": "unparseable", "correct": False, "expected": sample.answer, "answer": None}
        correct = letter == sample.answer
        return {"status": "correct" if correct else "wrong", "correct": correct, "expected": sample.answer, "answer": letter}

    def summarize(self, rows):
        return {"unparseable": sum(r["status"] == "unparseable" for r in rows)}

    def explain(self, row):
        if row["answer"] is None:
            return f"no answer letter found in the reply; expected {row['expected']}"
        return f"answered {row['answer']}, expected {row['expected']}"


class Freeform(Task):
    name = "freeform"
    tag = "ff"
    key = "freeform"
    prompt_version = "ff-v1"
    uses_judges = True

    def load(self, source: str, split: str):
        return robloxqa.load_freeform(source, split)

    def prompt(self, sample: robloxqa.FreeformQuestion) -> str:
        return f"Answer the following question about Roblox development precisely and concisely.\n\n{sample.question}"

    def judge_request(self, sample, completion):
        reply = completion.text
        if not reply.strip():
            return None
        return Request(
            prompt=judges.judge_prompt(sample.question, sample.answer, reply),
            temperature=judges.TEMPERATURE,
            seed=judges.SEED,
            context={"reply": reply, "reference": sample.answer},
        )

    def score(self, sample, completion, scoring):
        request = self.judge_request(sample, completion)
        if request is None:
            return {"status": "wrong", "correct": False, "verdicts": [], "agreed": True, "note": "empty reply"}
        replies = [scoring.judge(sample.id, i, request) for i in range(len(scoring.judge_names))]
        verdicts = [judges.parse_verdict(reply.text) for reply in replies]
        correct = judges.majority(verdicts)
        return {
            "status": "correct" if correct else "wrong",
            "correct": correct,
            "verdicts": [
                {"judge": name, "verdict": None if v is None else ("CORRECT" if v else "INCORRECT")}
                for name, v in zip(scoring.judge_names, verdicts)
            ],
            "agreed": judges.unanimous(verdicts),
            "judgeUsage": dataclasses.asdict(sum((reply.usage for reply in replies), Usage())),
        }

    def explain(self, row):
        if not row["verdicts"]:
            return row.get("note", "wrong")
        votes = ", ".join(f"{v['judge']}: {v['verdict'] or 'unparseable'}" for v in row["verdicts"])
        return f"judged wrong by majority ({votes})"

    def summarize(self, rows):
        graded = [r for r in rows if "verdicts" in r and r["verdicts"]]
        unparseable = sum(v["verdict"] is None for r in graded for v in r["verdicts"])
        agreement = round(sum(r["agreed"] for r in graded) / len(graded), 4) if graded else None
        return {"judgeUnparseable": unparseable, "judgeAgreement": agreement}


class LeetCode(Task):
    name = "leetcode"
    tag = "lc"
    key = "leetcode"
    prompt_version = "lc-v1"
    bands = DIFFICULTIES
    has_splits = False
    grades_locally = True  # each reply's tests run in the Luau sandbox

    def load(self, source: str, split: str):
        return load_problems(source, split)

    def prompt(self, sample: Problem) -> str:
        return (
            "Solve the following programming problem in Luau, Roblox's dialect of Lua.\n\n"
            f"{sample.description.strip()}\n\n"
            "Complete this starter code:\n\n"
            f"```luau\n{sample.starter_code.strip()}\n```\n\n"
            "Reply with the complete module in one ```luau code block: it must keep the starter code's "
            f"names and signatures, define `{sample.entry_point}`, and end with the same `return` statement. "
            "It is loaded as a ModuleScript and called by a Jest test file; it gets no Roblox services, "
            "files or network."
        )

    def gold_reply(self, sample: Problem) -> str:
        return f"```luau\n{sample.solution or ''}\n```"

    def score(self, sample, completion, scoring):
        try:
            budget = scoring.work_budget(sample)
        except DatasetError as error:  # the problem's fault, whatever the reply: not scored
            return {"status": "datasetError", "correct": False, "difficulty": sample.difficulty, "error": str(error)}
        code = extract_code(completion.text, sample.entry_point)
        if code is None:
            return {"status": "wrong", "correct": False, "note": "no code in the reply"}
        run = scoring.run_luau(sample, code, budget)
        counts = run.aggregated
        row = {
            "status": "correct" if run.passed else "wrong",
            "correct": run.passed,
            "tests": f"{counts['numPassedTests']}/{counts['numTotalTests']}",
            "note": run.reason,
            "work": run.work,
            "workBudget": budget,
        }
        if run.unmetered:  # code the instrumenter could not handle ran under the wall clock only
            row["unmetered"] = run.unmetered
        return row

    def band(self, row: dict[str, Any]) -> str:
        return row["difficulty"]

    def summarize(self, rows):
        """With --epochs K: pass@1 and pass@K, unbiased (HumanEval's estimator) over problems."""
        epochs = max((r.get("epoch", 1) for r in rows), default=1)
        if epochs == 1:
            return {}
        by_problem = stats.per_question(rows)
        return {"passAt": {str(k): stats.mean_pass_at_k(by_problem, k) for k in (1, epochs)}}

    def sample_fields(self, sample: Problem) -> dict[str, Any]:
        return {"difficulty": sample.difficulty}

    def identity_extra(self, samples):
        return {"workBudget": {"factor": WORK_BUDGET_FACTOR, "floor": WORK_BUDGET_FLOOR}}


TASKS: dict[str, Task] = {task.name: task for task in (Freeform(), MultipleChoice(), LeetCode())}
TAGS: dict[str, str] = {task.tag: task.name for task in TASKS.values()}  # "ff" -> "freeform"
