"""The asking strategies (`evals.askers`), called in this process: what an asking child (or a
thread asking ahead) does for a judged item. Asking children themselves, and what crosses the
pipe to them, are tests/e2e/test_fetcher.py."""

from __future__ import annotations

from evals.cache import RunCache
from evals.grading.judges import JudgeSpec
from evals.run import build_run
from evals.tasks import TASKS
from evals.verify import CachedOnly
from tests.support.runs import reference_run


def test_a_judged_item_asked_ahead_makes_the_judges_calls_and_is_scored_only_by_its_item(
    tmp_path, monkeypatch
):
    """The child (and a thread asking ahead) makes an item's model calls only: the candidate's,
    then each judge's; scoring is the item's, which reads those calls from the cache."""
    from evals.askers import processes

    task = TASKS["freeform"]
    spec = reference_run(
        "freeform",
        tmp_path / "run",
        judges=(JudgeSpec("reference", "judge-a"), JudgeSpec("reference", "judge-b")),
    )
    scored: list[str] = []
    score = type(task).score
    monkeypatch.setattr(
        type(task),
        "score",
        lambda self, sample, *rest: scored.append(sample.id) or score(self, sample, *rest),
    )

    for thread in processes._answer(spec, {}):
        thread.join()

    cache = RunCache(spec.folder, None)
    assert all(
        "response" in cache.read(sample.id, role)
        for sample in spec.samples
        for role in ("candidate", "judge-0", "judge-1")
    )
    assert scored == []
    run = build_run(
        spec, lambda wanted, role: CachedOnly(wanted)
    )  # the items: nothing is asked again
    assert [run.answer(sample)["status"] for sample in spec.samples] == ["correct"] * len(
        spec.samples
    )
    assert scored == [sample.id for sample in spec.samples]
