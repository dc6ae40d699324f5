"""The outcome of running one test file against one solution."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

Status = Literal["passed", "failed", "error"]


@dataclass(frozen=True)
class TestRun:
    """What happened when a solution met its tests.

    status:
      "passed"  every test that ran passed (at least one ran);
      "failed"  the suite ran and at least one test failed;
      "error"   the suite could not run to completion: a syntax error, an
                error while loading the solution or the test file, the work
                budget, the time or memory limit, a crash, or no tests.
    reason: a short explanation whenever status is not "passed", else None.
    aggregated: the counts of Jest's AggregatedResult; testExecError is set
      exactly when status is "error".
    tests: one dict per test in run order, shaped like Jest's AssertionResult
      (title, fullName, ancestorTitles, status, failureMessages), status being
      "passed", "failed" or "pending".
    output: what the code printed, capped, with a marker when cut.
    work: units of work used (function entries plus loop iterations); None when
      the run was not metered.
    elapsed: wall-clock seconds.
    unmetered: None for a metered run; else why it ran without a work count
      (the instrumenter could not handle a source), under the wall clock only.
    """

    __test__ = False  # keeps pytest from collecting this class

    status: Status
    reason: str | None
    aggregated: dict[str, Any]
    tests: list[dict[str, Any]]
    output: str
    work: int | None
    elapsed: float
    unmetered: str | None = None

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_tests(
        cls,
        tests: list[dict[str, Any]],
        *,
        exec_error: str | None,
        failure_cause: str | None,
        output: str,
        work: int | None,
        elapsed: float,
        unmetered: str | None = None,
    ) -> TestRun:
        """Decide the verdict from per-test results and any suite-level error.

        failure_cause names a resource limit seen in failing tests (for
        example "stack overflow"), to lead the reason of a failed run.
        """
        counts = {status: 0 for status in ("passed", "failed", "pending")}
        for test in tests:
            counts[test["status"]] += 1
        if exec_error is None and not tests:
            exec_error = "no tests found"
        elif exec_error is None and counts["passed"] + counts["failed"] == 0:
            exec_error = f"no tests ran (all {len(tests)} skipped)"

        if exec_error is not None:
            status: Status = "error"
            reason: str | None = exec_error
        elif counts["failed"]:
            status = "failed"
            reason = f"{counts['failed']} of {len(tests)} tests failed"
            if failure_cause:
                reason = f"{failure_cause}; {reason}"
        else:
            status, reason = "passed", None
        aggregated = {
            "numTotalTests": len(tests),
            "numPassedTests": counts["passed"],
            "numFailedTests": counts["failed"],
            "numPendingTests": counts["pending"],
            "testExecError": exec_error,
        }
        return cls(status, reason, aggregated, tests, output, work, elapsed, unmetered)

    @classmethod
    def error(
        cls, reason: str, *, work: int = 0, elapsed: float = 0.0, output: str = ""
    ) -> TestRun:
        """A run that ended before any test result could be read."""
        return cls.from_tests(
            [], exec_error=reason, failure_cause=None, output=output, work=work, elapsed=elapsed
        )
