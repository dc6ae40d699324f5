"""How sure a score is: 95% intervals, pass@k, and paired comparisons between two models.

Everything here is closed-form and deterministic (no resampling, no random numbers), so a
result file's summary and the board's comparisons are the same bytes on every machine, and
`--verify-published` and `build --check` can compare them exactly.

- One row per question: the Wilson score interval of the proportion correct (well behaved
  at 0%, 100% and small n, where the textbook p +- 1.96 * se is not).
- Several rows per question (`--epochs K`): rows of one question are not independent, so
  the interval is Wilson's at the effective number of rows (Kish's design effect): the
  proportion's variance over the squared cluster-robust standard error of the mean of
  per-question means, kept between the number of questions (epochs that always agree tell
  nothing more) and the number of rows (epochs as good as new questions).
- Two models on the same questions: the paired difference of their per-question scores,
  with its normal interval; for plain right/wrong scores that interval is the one that
  goes with McNemar's test (it only depends on the questions where the two disagree), and
  McNemar's exact two-sided p-value is given beside it."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

# Recorded in every result file's `graders` (as "stats"): bump it whenever a summary of the
# same rows can come out different.
VERSION = "1"
Z95 = 1.959963984540054  # the standard normal's 97.5th percentile
DIGITS = 4  # as accuracies in result files (0.8125)


def wilson(correct: float, n: float) -> tuple[float, float]:
    """The 95% Wilson score interval of `correct` out of `n` (an effective n may be
    fractional); (0, 1) when n is 0."""
    if n == 0:
        return 0.0, 1.0
    p = correct / n
    z2 = Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    # At 0 and n the bound is exactly 0 or 1; the formula lands an ulp away.
    return (0.0 if correct <= 0 else _clip(centre - half)), (1.0 if correct >= n else _clip(centre + half))


def clustered(by_question: Sequence[Sequence[bool]]) -> tuple[float, float]:
    """The 95% interval of the share of rows correct, rows grouped by question: Wilson at the
    effective number of rows (see the module's docstring)."""
    rows = sum(len(q) for q in by_question)
    m = len(by_question)
    if m == 0:
        return 0.0, 1.0
    p = sum(sum(map(bool, q)) for q in by_question) / rows
    means = [sum(map(bool, q)) / len(q) for q in by_question]
    mean = math.fsum(means) / m
    se2 = math.fsum((s - mean) ** 2 for s in means) / (m - 1) / m if m > 1 else 0.0
    effective = rows if se2 == 0 else p * (1 - p) / se2
    effective = min(rows, max(m, effective))
    if p in (0.0, 1.0):  # no spread to measure: as sure as one answer per question
        effective = m
    return wilson(p * effective, effective)


def accuracy_interval(by_question: Mapping[str, Sequence[bool]]) -> list[float]:
    """[low, high], rounded, for rows grouped by question: Wilson when every question has one
    row, else clustered by question."""
    if all(len(rows) == 1 for rows in by_question.values()):
        low, high = wilson(sum(bool(rows[0]) for rows in by_question.values()), len(by_question))
    else:
        low, high = clustered([rows for rows in by_question.values() if rows])
    return [round(low, DIGITS), round(high, DIGITS)]


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k of one problem with `c` passing samples out of `n` (HumanEval:
    1 - C(n-c, k) / C(n, k)), the chance that k samples drawn without replacement hold a pass."""
    if not 0 < k <= n:
        raise ValueError(f"pass@{k} needs 1 <= k <= n (n = {n})")
    if n - c < k:
        return 1.0
    # The product form of the ratio of binomials: exact enough and never overflows.
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


def mean_pass_at_k(by_question: Mapping[str, Sequence[bool]], k: int) -> float:
    """pass@k averaged over problems, rounded; problems with fewer than k samples are left out."""
    values = [pass_at_k(len(rows), sum(map(bool, rows)), k) for rows in by_question.values() if len(rows) >= k]
    return round(math.fsum(values) / len(values), DIGITS) if values else 0.0


def paired(a: Mapping[str, float], b: Mapping[str, float]) -> dict[str, Any] | None:
    """A vs B on the questions both answered (per-question scores in [0, 1]): the difference
    in points with its 95% interval, whether it is distinguishable from zero, and for plain
    right/wrong scores McNemar's exact p-value; None when they share no question."""
    shared = sorted(a.keys() & b.keys())
    n = len(shared)
    if n == 0:
        return None
    diffs = [a[q] - b[q] for q in shared]
    mean = math.fsum(diffs) / n
    var = math.fsum((d - mean) ** 2 for d in diffs) / (n - 1) if n > 1 else 0.0
    half = Z95 * math.sqrt(var / n)
    low, high = max(-1.0, mean - half), min(1.0, mean + half)  # a difference of shares lies in [-1, 1]
    result: dict[str, object] = {
        "shared": n,
        "difference": round(100 * mean, 2),
        "ci95": [round(100 * low, 2), round(100 * high, 2)],
        # An interval that is a single point away from zero (every question agrees) is too.
        "distinguishable": low > 0 or high < 0,
    }
    if all(a[q] in (0, 1) and b[q] in (0, 1) for q in shared):
        only_a = sum(a[q] > b[q] for q in shared)
        only_b = sum(b[q] > a[q] for q in shared)
        result.update(onlyA=only_a, onlyB=only_b, mcnemarP=round(mcnemar_exact(only_a, only_b), DIGITS))
    return result


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """McNemar's exact two-sided p-value: under "no difference", each disagreement is a fair
    coin; the chance of a split at least as lopsided as this one."""
    n = only_a + only_b
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(only_a, only_b) + 1))
    return min(1.0, 2 * tail / (1 << n))  # exact integers: 2.0**n overflows past n = 1023


def per_question(rows: Iterable[Mapping[str, object]]) -> dict[str, list[bool]]:
    """Rows grouped by question id, each row's `correct` (epochs of a question together)."""
    grouped: dict[str, list[bool]] = {}
    for row in rows:
        grouped.setdefault(str(row["id"]), []).append(bool(row["correct"]))
    return grouped


def _clip(value: float) -> float:
    return min(1.0, max(0.0, value))


def average_interval(scores: Sequence[tuple[float, Sequence[float]]]) -> list[float]:
    """[low, high], rounded, of the mean of independent scores (evals over different
    questions), each given as (score, its 95% interval): the normal interval whose standard
    error combines theirs, each taken as its interval's half-width / 1.96 (so the 1.96 cancels;
    an asymmetric Wilson interval counts by its half-width). [0, 1] for no scores."""
    k = len(scores)
    if k == 0:
        return [0.0, 1.0]
    mean = math.fsum(score for score, _ in scores) / k
    half = math.sqrt(math.fsum(((high - low) / 2) ** 2 for _, (low, high) in scores)) / k
    return [round(_clip(mean - half), DIGITS), round(_clip(mean + half), DIGITS)]
