"""Sandboxed Luau test runner with a Jest Lua compatible API.

    run = run_tests(solution_source, test_source, work_budget=work_budget_for(reference_work))
    run.status, run.reason, run.aggregated, run.tests, run.output, run.work

The test-file convention is in docs/luau-test-format.md. run_tests runs in this
process; run_tests_isolated runs the same thing in a reusable child process so
that a hung C call or a crash of the VM cannot take the caller down, and
measure_work measures a reference solution there.

The names load with the module that defines them, on first use: the VM and its child
processes cost ~30 ms to import, which a command that only plans a run (`--collect-only`,
`--dry-run`, `--status`) never pays.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evals.errors import ReferenceFailed  # light: the rest loads on first use
from evals.lazy import names_from

if TYPE_CHECKING:
    from .budget import WORK_BUDGET_FACTOR, WORK_BUDGET_FLOOR, work_budget_for
    from .isolated import measure_work, run_tests_isolated, start_method
    from .result import TestRun
    from .runner import run_tests

_MODULE = {
    "WORK_BUDGET_FACTOR": "budget",
    "WORK_BUDGET_FLOOR": "budget",
    "work_budget_for": "budget",
    "measure_work": "isolated",
    "run_tests_isolated": "isolated",
    "start_method": "isolated",
    "TestRun": "result",
    "run_tests": "runner",
}
__all__ = sorted([*_MODULE, "ReferenceFailed"])

__getattr__ = names_from(__name__, _MODULE, globals())
