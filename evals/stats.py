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
- Two models on the same questions: the paired difference of their per-question scores
  with Newcombe's hybrid score interval for paired proportions (Newcombe 1998, "Improved
  confidence intervals for the difference between binomial proportions based on paired
  data", Stat Med 17:2635, method 10): each model's own interval (Wilson's, or with epochs
  Wilson's at the effective number of answers), put together with the correlation of the two
  models' scores (MOVER, Zou & Donner 2008). Unlike the normal interval it keeps its width at
  +-100 points and when every question is a tie, where the normal interval's is zero, as if a
  handful of questions had proved the difference exactly. For plain right/wrong scores
  McNemar's exact two-sided p-value is given beside it.
- Several evals' scores averaged (the board's average): the same recovery of each score's
  own interval, below and above apart, so that at 0% or 100% it stays as wide as its parts."""

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
    return (0.0 if correct <= 0 else _clip(centre - half)), (
        1.0 if correct >= n else _clip(centre + half)
    )


def clustered(by_question: Sequence[Sequence[bool]]) -> tuple[float, float]:
    """The 95% interval of the share of rows correct, rows grouped by question: Wilson at the
    effective number of rows (see the module's docstring)."""
    if not by_question:
        return 0.0, 1.0
    p, effective = _effective(by_question)
    return wilson(p * effective, effective)


def _effective(by_question: Sequence[Sequence[bool]]) -> tuple[float, float]:
    """The share of rows correct and the effective number of rows (Kish's design effect) of
    rows grouped by question, at least one question."""
    rows = sum(len(q) for q in by_question)
    m = len(by_question)
    p = sum(sum(map(bool, q)) for q in by_question) / rows
    means = [sum(map(bool, q)) / len(q) for q in by_question]
    mean = math.fsum(means) / m
    se2 = math.fsum((s - mean) ** 2 for s in means) / (m - 1) / m if m > 1 else 0.0
    effective = rows if se2 == 0 else p * (1 - p) / se2
    effective = min(rows, max(m, effective))
    if p in (0.0, 1.0):  # no spread to measure: as sure as one answer per question
        effective = m
    return p, effective


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
    values = [
        pass_at_k(len(rows), sum(map(bool, rows)), k)
        for rows in by_question.values()
        if len(rows) >= k
    ]
    return round(math.fsum(values) / len(values), DIGITS) if values else 0.0


def paired(
    a: Mapping[str, Sequence[bool]], b: Mapping[str, Sequence[bool]]
) -> dict[str, Any] | None:
    """A vs B on the questions both answered, each question's answers (its epochs) as
    `per_question` gives them, scored by their mean: the difference in points with its 95%
    interval (see the module's docstring), whether it is distinguishable from zero, and for
    plain right/wrong scores McNemar's exact p-value; None when they share no question."""
    shared = sorted(a.keys() & b.keys())
    n = len(shared)
    if n == 0:
        return None
    first, second = [a[q] for q in shared], [b[q] for q in shared]
    scores = [[sum(map(bool, q)) / len(q) for q in answers] for answers in (first, second)]
    plain = all(s in (0, 1) for side in scores for s in side)
    p1, (l1, u1) = _share(first, plain)
    p2, (l2, u2) = _share(second, plain)
    r = _correlation(*scores)
    difference = p1 - p2
    # Each bound from how far the two models' own bounds lie on its side (MOVER): A's lower
    # with B's upper for the difference's lower bound, and the other way round.
    low = difference - _spread(p1 - l1, u2 - p2, r)
    high = difference + _spread(u1 - p1, p2 - l2, r)
    low, high = max(-1.0, low), min(1.0, high)  # a difference of shares lies in [-1, 1]
    result: dict[str, Any] = {
        "shared": n,
        "difference": round(100 * difference, 2),
        "ci95": [round(100 * low, 2), round(100 * high, 2)],
        "distinguishable": low > 0 or high < 0,
    }
    if plain:
        only_a = sum(x > y for x, y in zip(*scores))
        only_b = sum(y > x for x, y in zip(*scores))
        result.update(
            onlyA=only_a, onlyB=only_b, mcnemarP=round(mcnemar_exact(only_a, only_b), DIGITS)
        )
    return result


def _share(by_question: Sequence[Sequence[bool]], plain: bool) -> tuple[float, tuple[float, float]]:
    """One model's mean per-question score and its 95% interval: Wilson's over the questions
    for right/wrong scores; with epochs that disagree, Wilson's at the effective number of
    answers around the mean of the per-question means (the difference's own terms)."""
    m = len(by_question)
    total = math.fsum(sum(map(bool, q)) / len(q) for q in by_question)
    if plain:
        return total / m, wilson(total, m)
    effective = _effective(by_question)[1]
    return total / m, wilson(total / m * effective, effective)


def _spread(x: float, y: float, r: float) -> float:
    """sqrt(x^2 - 2 r x y + y^2), summed exactly so that A vs B and B vs A are mirror images."""
    return math.sqrt(max(0.0, math.fsum((x * x, -2 * r * (x * y), y * y))))


def _correlation(first: Sequence[float], second: Sequence[float]) -> float:
    """The correlation of two models' scores on the same questions, as Newcombe estimates it:
    Pearson's, its sum of cross-products brought 1/2 towards zero when positive; 0 when either
    does not vary. For right/wrong scores that is his phi, (AD - BC - N/2) / sqrt(EFGH) of
    their 2x2 table (the cross-products sum to (AD - BC) / N): the continuity correction his
    published values use, and what keeps two models that agree on every question from an
    interval of zero width."""
    n = len(first)
    mx, my = math.fsum(first) / n, math.fsum(second) / n
    sxx = math.fsum((x - mx) ** 2 for x in first)
    syy = math.fsum((y - my) ** 2 for y in second)
    if sxx == 0 or syy == 0:
        return 0.0
    sxy = math.fsum((x - mx) * (y - my) for x, y in zip(first, second))
    if sxy > 0:
        sxy = max(0.0, sxy - 0.5)
    return max(-1.0, min(1.0, sxy / math.sqrt(sxx * syy)))


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
    questions), each given as (score, its 95% interval): each bound the mean's distance to it
    combined from the scores' own distances on that side (MOVER, Zou & Donner 2008), so one
    score gives its own interval and scores at 100% keep the room below them that Wilson's
    interval leaves. [0, 1] for no scores."""
    k = len(scores)
    if k == 0:
        return [0.0, 1.0]
    mean = math.fsum(score for score, _ in scores) / k
    below = math.sqrt(math.fsum((score - low) ** 2 for score, (low, _) in scores)) / k
    above = math.sqrt(math.fsum((high - score) ** 2 for score, (_, high) in scores)) / k
    return [round(_clip(mean - below), DIGITS), round(_clip(mean + above), DIGITS)]
