"""Luau LeetCode: the model writes a Luau module, run in the sandboxed Luau VM against the
problem's Jest-Lua tests; the item passes only if every test passes. Scored per difficulty."""

from __future__ import annotations

import functools
import json
import os
from typing import Any

from evals import bounded
from evals import stats
from evals.atomic import write_json_atomic
from evals.datasets.leetcode import DIFFICULTIES, Problem, load_problems
from evals.datasets.leetcode import source_of as leetcode_source_of
from evals.errors import DatasetError, ReferenceFailed
from evals.flags import Flag, seconds
from evals.grading.luau_code import extract_code
from evals import luau  # the sandbox loads when a run is built (`resources`), not to plan one
from evals.luau.budget import WORK_BUDGET_FACTOR, WORK_BUDGET_FLOOR, work_budget_for
from evals.names import file_name
from evals.tasks import Column, Scoring, Shown, Task, question_of, register_task


def http_url(value: str) -> str | None:
    return None if value.startswith(("http://", "https://")) else "is not an http(s) URL"


# Its own flags (`Task.flags`): the time limit changes what a slow solution scores, so the result
# file records it (`graded`) and verify rescores with it; the server is only where the tests run.
# Its default is what every file without `gradedWith` was graded with: a new default moves
# `graders["luau"]`, or verify would rescore those files with it.
LUAU_TIMEOUT = Flag(
    "--luau-timeout",
    "wall-clock safety net per leetcode problem, seconds (default 10)",
    float,
    10.0,
    forward=True,
    check=seconds,
    graded=True,
)
JEST_URL = Flag(
    "--jest-url",
    "run leetcode tests on a JestLuaTestServer (default $JEST_SERVER_URL; key from $JEST_SERVER_API_KEY)",
    str,
    env="JEST_SERVER_URL",
    evaluate_help="JestLuaTestServer URL for leetcode (default $JEST_SERVER_URL)",
    forward=True,
    check=http_url,
    refused="{name} {value!r} {problem}",
    resume=None,
)  # an address may hold credentials: not kept

SANDBOX = "luau"  # the resource kind: (solution, tests, *, work_budget) -> evals.luau.TestRun
REFERENCE = "luau-reference"  # (solution, tests) -> the reference's work (evals.luau.measure_work)


@register_task
class LeetCode(Task):
    name = "leetcode"
    tag = "lc"
    key = "leetcode"
    title = "LeetCode"
    description = "Luau LeetCode problems run against their tests"
    marker_help = "Luau LeetCode items"
    position = 30
    prompt_version = "lc-v1"
    bands = DIFFICULTIES
    band_field = "difficulty"
    board = (
        Column("leetcode", "LeetCode"),
        *(
            Column(f"leetcode{band.title()}", band.title(), band, averaged=False)
            for band in DIFFICULTIES
        ),
    )
    named_datasets = ("luau-leetcode",)
    # evals.grading.luau_code.extract_code; the sandbox and work meter (evals.luau.runner,
    # instrument); the Jest-Lua layer (evals/luau/jest.luau). luau 2: code nested deeper than
    # Python's recursion limit is metered, no longer "wrong: the test harness failed". code 2:
    # the code is taken from the reply without its reasoning block (evals.reasoning). code 3: the
    # plain-text thinking markers are a block too.
    graders = {"code": "3", "luau": "2", "jest": "1"}
    graded_fields = ("tests", "note", "work", "workBudget", "unmetered", "error")
    flags = (LUAU_TIMEOUT, JEST_URL)

    def serves(self, columns):
        return "test" in columns

    has_splits = False
    grades_locally = True  # each reply's tests run in the Luau sandbox

    def dataset_source(self, identity):
        return leetcode_source_of(identity)

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
            budget = work_budget(sample, scoring)
        except DatasetError as error:  # the problem's fault, whatever the reply: not scored
            return {
                "status": "datasetError",
                "correct": False,
                "difficulty": sample.difficulty,
                "error": str(error),
            }
        code = extract_code(completion.apart().text, sample.entry_point)
        if code is None:
            return {"status": "wrong", "correct": False, "note": "no code in the reply"}
        sandbox = scoring.resource(SANDBOX) or luau.run_tests_isolated
        run = sandbox(code, sample.test, work_budget=budget)
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
        return row[self.band_field]

    def shown(self, row, calls):
        """The Luau tests' outcome: how many passed, why the rest failed, the work the code did
        against its budget, what ran unmetered; or why the problem could not be scored."""
        if row is None:
            return []
        parts = []
        if row.get("tests"):
            parts.append(Shown("Tests passed", row["tests"], mark=row["status"]))
        if row.get("note"):
            parts.append(Shown("Tests said", row["note"], block="\n" in row["note"]))
        if isinstance(row.get("work"), int):
            budget = row.get("workBudget")
            of = (
                f" of a budget of {budget:,}"
                if isinstance(budget, int)
                else " (no budget: not meterable)"
            )
            parts.append(Shown("Work", f"{row['work']:,}{of}"))
        if row.get("unmetered"):
            parts.append(Shown("Ran unmetered", str(row["unmetered"])))
        if row["status"] == "datasetError" and row.get("error"):
            parts.append(Shown("Not scored", row["error"], mark="datasetError"))
        return parts

    def summarize(self, rows):
        """With --epochs K: pass@1 and pass@K, unbiased (HumanEval's estimator) over problems."""
        epochs = max((r.get("epoch", 1) for r in rows), default=1)
        if epochs == 1:
            return {}
        by_problem = stats.per_question(rows)
        return {"passAt": {str(k): stats.mean_pass_at_k(by_problem, k) for k in (1, epochs)}}

    def sample_fields(self, sample: Problem) -> dict[str, Any]:
        return {"difficulty": sample.difficulty}

    def resources(self, values):
        """Model-written Luau runs in an isolated worker process (a VM crash or a runaway C
        call cannot take the run down), or on a JestLuaTestServer with --jest-url. Reference
        solutions are measured in the same worker under the same --luau-timeout, always here:
        the work count is this meter's."""
        luau.start_method()  # a wrong EVALS_START_METHOD is one line before anything is asked
        timeout, url = (
            values.get(LUAU_TIMEOUT.dest, LUAU_TIMEOUT.default),
            values.get(JEST_URL.dest),
        )
        reference = functools.partial(luau.measure_work, timeout=timeout)
        if url:
            from evals.luau.remote import run_remote

            sandbox = functools.partial(
                run_remote,
                url=url,
                api_key=os.environ.get("JEST_SERVER_API_KEY"),
                timeout=max(60.0, timeout),
            )
        else:
            sandbox = functools.partial(luau.run_tests_isolated, timeout=timeout)
        return {SANDBOX: sandbox, REFERENCE: reference}

    def identity_extra(self, samples):
        return {"workBudget": {"factor": WORK_BUDGET_FACTOR, "floor": WORK_BUDGET_FLOOR}}


def work_budget(problem: Problem, scoring: Scoring) -> int | None:
    """The problem's deterministic work budget, from its reference solution's work, measured
    once per run (in the sandbox's worker, as model code runs) and kept in the run folder. A
    reference that fails its own tests (or overruns the limits) is kept too, and raises
    DatasetError: the problem cannot be scored."""
    problem = question_of(problem)  # measured once per problem, not once per epoch
    if not problem.solution:
        return None
    path = scoring.folder / "work" / f"{file_name(problem.id)}.json"
    try:
        measured = bounded.load_json(path)
        failed, budget = measured.get("referenceFailed"), measured["budget"]
    except (FileNotFoundError, ValueError, KeyError, TypeError, AttributeError):
        try:
            work = (scoring.resource(REFERENCE) or luau.measure_work)(
                problem.solution, problem.test
            )
            failed, budget = (
                None,
                None if work is None else work_budget_for(work),
            )  # None: not meterable
        except ReferenceFailed as failure:
            work, failed, budget = None, failure.reason, None
        record = {"referenceWork": work, "budget": budget} | (
            {"referenceFailed": failed} if failed else {}
        )
        with scoring.storing(path):
            write_json_atomic(path, record, tree=scoring.folder.parent.parent)  # --run-dir
    if failed:
        raise DatasetError(
            f"the reference solution does not pass its own tests ({failed}); "
            "fix the problem's solution or test in the dataset; the item is not scored"
        )
    return budget
