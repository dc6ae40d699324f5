"""No JSON file the harness writes holds NaN or Infinity: the writer refuses them in one line
naming the file and the field, and leaves nothing behind; a run's spec is built by keyword.
Whole runs are tests/e2e/test_runs.py."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    "value, where",
    [
        ({"summary": {"cost": float("nan")}}, "summary.cost"),
        ({"prices": {"input": float("inf")}}, "prices.input"),
        ({"rows": [{"latency": 1.0}, {"latency": -float("inf")}]}, "rows[1].latency"),
    ],
)
def test_no_json_file_the_harness_writes_holds_nan_or_infinity(tmp_path, value, where):
    """NaN and Infinity are not JSON (the board's JSON.parse fails on them): the writer refuses
    them in one line naming the file and the field, and leaves nothing behind."""
    from evals.atomic import write_json_atomic

    path = tmp_path / "result.json"
    with pytest.raises(ValueError) as error:
        write_json_atomic(path, value, indent=2)
    assert (
        str(error.value)
        == f"{path}: {where} is not a finite number, which JSON cannot hold; nothing was written"
    )
    assert list(tmp_path.iterdir()) == []


def test_a_run_spec_is_built_by_keyword_only(tmp_path):
    """Twelve fields, several of one type (three of provider specs): by position, two of them
    swapped would build another run without a word."""
    from evals.run import RunSpec

    with pytest.raises(TypeError):
        RunSpec("multiple_choice", None, (), None, (), (), tmp_path, None)
    spec = RunSpec(
        eval="multiple_choice",
        config=None,
        samples=(),
        candidate=None,
        judges=(),
        redacted=(),
        folder=tmp_path,
        session=None,
    )
    assert (spec.concurrency, spec.published) == (8, False)


# The last commit whose rows dropped the candidate's usage when a judge call failed (format 2).
