"""What each eval's run folder holds so far, read and never written: `evaluate NAME --status`
(answered, errors, remaining, and the state of the run's batches, each asked once) and the
requests line of `--dry-run` (what is left to ask)."""

from __future__ import annotations

import argparse
from typing import Any

from evals.budget import Estimate, planned_estimate
from evals.errors import EvalError
from evals.evaluate.plan import Eval, Plan
from evals.scrub import printable
from evals.tasks import TASKS
from evals.words import in_words


def show_status(plan: Plan, args: argparse.Namespace) -> None:
    for e in plan.selected:
        print(_status(e))
        for line in _batch_status(e, args):
            print(printable(f"      {line}"))  # a batch's problem quotes its server


def _cached(e: Eval) -> tuple[int, int]:
    """(answered, errors) among the eval's candidate calls its run folder holds."""
    records = _records(e)
    answered = sum(bool(record and "response" in record) for record in records.values())
    errors = sum(bool(record and "error" in record) for record in records.values())
    return answered, errors


def _records(e: Eval) -> dict[str, dict[str, Any] | None]:
    """The candidate record of each of the eval's items, by id (None: not asked yet)."""
    from evals.cache import RunCache

    cache = RunCache(e.run_folder, session=None)
    return {sample.id: cache.read(sample.id, "candidate") for sample in e.planned.samples}


def estimate_of(e: Eval, *, left: bool = True) -> Estimate | None:
    """The budget of what the eval has left to ask (`evals.budget`), None when it asks nothing;
    not `left`: of all its items, as the run's cost counts them."""
    if left and (e.published or e.finished):
        return None
    records = _records(e) if left else {}
    return planned_estimate(e.planned, lambda sample: "response" in (records.get(sample.id) or {}))


def requests(e: Eval, estimated: Estimate | None) -> str:
    """The model requests the eval would make, for --dry-run, from its `estimate_of`: an item
    not answered yet is asked once, and judged by each judge (retries and calls cached since
    come on top or off)."""
    if e.published:
        return "none (published: reproduced offline)"
    if e.finished:
        return "none (finished: reproduced offline)"
    return estimated.requests_line() if estimated else "none"


def _status(e: Eval) -> str:
    answered, errors = _cached(e)
    n = len(e.planned.samples)
    done = (
        "published"
        if e.published
        else "result file written"
        if e.result_file.is_file()
        else "no result file yet"
    )
    return f"  {e.tag}: {answered} of {n} answered (cached), {errors} errors, {n - answered} remaining; {done}"


def _batch_status(e: Eval, args: argparse.Namespace) -> list[str]:
    """The run's recorded batches, each asked once for its state; a provider that cannot be
    reached (its key is not set) says so once, and its batches show their last recorded state."""
    from evals.askers.batch import describe
    from evals.providers import ProviderSpec, make_provider

    problems: list[str] = []

    def api_for(entry: dict[str, Any]):
        spec = ProviderSpec.from_identity(
            entry["provider"],
            responses_api=entry.get("responsesApi", False),
            api_key_env=args.api_key_env
            if entry["provider"] == e.identity.spec.identity()
            else None,
        )
        try:
            return make_provider(spec).batch_api()
        except EvalError as error:
            if str(error) not in problems:
                problems.append(str(error))
            return None

    lines = describe(e.run_folder, api_for)
    return [
        f"cannot ask the batches' state ({problem}): showing the state last recorded"
        for problem in problems
    ] + lines
