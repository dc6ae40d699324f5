"""The work budget: how much deterministic work (instrument.py's units) an answer may use,
from what the problem's reference solution used. Kept apart from the VM so that what a run's
identity records (the factor and the floor) is known without loading the sandbox."""

from __future__ import annotations

# A model's answer may use up to WORK_BUDGET_FACTOR times the reference
# solution's work, and never less than WORK_BUDGET_FLOOR units (a few
# milliseconds of Luau): enough for a slower but reasonable algorithm on the
# small inputs of typical tests, while an endless loop ends within ~10 ms
# times the factor.
WORK_BUDGET_FACTOR = 10
WORK_BUDGET_FLOOR = 1_000_000


def work_budget_for(reference_work: int) -> int:
    """The work budget for answers to a problem whose reference used `reference_work` units."""
    return max(WORK_BUDGET_FLOOR, WORK_BUDGET_FACTOR * reference_work)
