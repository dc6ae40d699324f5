"""Sandboxed Luau test runner with a Jest Lua compatible API.

    run = run_tests(solution_source, test_source, work_budget=work_budget_for(reference_work))
    run.status, run.reason, run.aggregated, run.tests, run.output, run.work

The test-file convention is in docs/luau-test-format.md. run_tests runs in this
process; run_tests_isolated runs the same thing in a reusable child process so
that a hung C call or a crash of the VM cannot take the caller down, and
measure_work measures a reference solution there.
"""

from .isolated import ReferenceFailed, measure_work, run_tests_isolated, start_method
from .result import TestRun
from .runner import WORK_BUDGET_FACTOR, WORK_BUDGET_FLOOR, run_tests, work_budget_for

__all__ = [
    "WORK_BUDGET_FACTOR",
    "WORK_BUDGET_FLOOR",
    "ReferenceFailed",
    "TestRun",
    "measure_work",
    "run_tests",
    "run_tests_isolated",
    "start_method",
    "work_budget_for",
]
