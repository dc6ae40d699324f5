"""`evals.stats`: the intervals, pass@k and paired comparisons in result files and on the board,
checked against published values and against brute force."""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction

import pytest

from evals import stats


@pytest.mark.parametrize(
    ("correct", "n", "low", "high"),
    [
        # Newcombe (1998), Statistics in Medicine 17:857, table I (Wilson "score method", method 3)
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
    ],
)
def test_wilson_matches_published_values(correct, n, low, high):
    got = stats.wilson(correct, n)
    assert got == pytest.approx((low, high), abs=6e-5)


def test_wilson_stays_inside_0_1_and_covers_the_estimate():
    for n in (1, 2, 7, 40, 2300):
        for correct in range(0, n + 1, max(1, n // 13)):
            low, high = stats.wilson(correct, n)
            assert 0.0 <= low <= correct / n <= high <= 1.0


def test_an_empty_set_is_the_whole_range():
    assert stats.wilson(0, 0) == (0.0, 1.0)
    assert stats.accuracy_interval({}) == [0.0, 1.0]


def test_one_row_per_question_is_wilson_and_several_are_clustered():
    single = {f"q{i}": [i < 30] for i in range(40)}
    assert stats.accuracy_interval(single) == [round(x, 4) for x in stats.wilson(30, 40)]
    # The same 60% correct, but the epochs of a question always agree: as uncertain as 20
    # questions, not 60 rows; wider than Wilson over all rows would claim.
    agreeing = {f"q{i}": [i < 12] * 3 for i in range(20)}
    low, high = stats.accuracy_interval(agreeing)
    naive_low, naive_high = stats.wilson(36, 60)
    assert low < naive_low and high > naive_high
    assert low < 0.6 < high


def test_clustered_interval_lies_between_one_answer_per_question_and_independent_rows():
    rng = random.Random(3)
    skill = [rng.random() for _ in range(50)]
    by_question = [[rng.random() < s for _ in range(4)] for s in skill]
    rows = [r for q in by_question for r in q]
    low, high = stats.clustered(by_question)
    as_questions = stats.wilson(sum(rows) / 4, 50)  # the epochs of a question all agreeing
    as_rows = stats.wilson(sum(rows), 200)  # every row a new question
    assert as_questions[0] <= low <= as_rows[0] and as_rows[1] <= high <= as_questions[1]
    assert (low, high) != as_rows  # the questions here differ, so their epochs are not independent


def test_clustered_interval_at_the_edges_is_as_sure_as_one_answer_per_question():
    assert stats.clustered([[True] * 3] * 20) == stats.wilson(20, 20)
    assert stats.clustered([[False] * 5] * 8) == stats.wilson(0, 8)


def _pass_at_k_by_enumeration(n: int, c: int, k: int) -> Fraction:
    samples = [True] * c + [False] * (n - c)
    draws = list(itertools.combinations(range(n), k))
    return Fraction(sum(any(samples[i] for i in draw) for draw in draws), len(draws))


@pytest.mark.parametrize("n", [1, 2, 5, 8])
def test_pass_at_k_is_the_chance_that_k_draws_hold_a_pass(n):
    for c in range(n + 1):
        for k in range(1, n + 1):
            assert stats.pass_at_k(n, c, k) == pytest.approx(
                float(_pass_at_k_by_enumeration(n, c, k)), abs=1e-12
            )


def test_pass_at_1_is_the_share_passing_and_pass_at_k_needs_k_samples():
    assert stats.pass_at_k(10, 3, 1) == pytest.approx(0.3)
    assert stats.pass_at_k(200, 0, 100) == 0.0
    with pytest.raises(ValueError, match="1 <= k <= n"):
        stats.pass_at_k(3, 1, 4)
    by_problem = {"a": [True, False, False], "b": [False, False, False], "c": [True, True, True]}
    assert stats.mean_pass_at_k(by_problem, 1) == round((1 / 3 + 0 + 1) / 3, 4)
    assert stats.mean_pass_at_k(by_problem, 3) == round((1 + 0 + 1) / 3, 4)


def _mcnemar_by_brute_force(only_a: int, only_b: int) -> float:
    n = only_a + only_b
    observed = abs(only_a - only_b)
    extreme = sum(math.comb(n, i) for i in range(n + 1) if abs(i - (n - i)) >= observed)
    return float(Fraction(extreme, 2**n))


@pytest.mark.parametrize(
    ("only_a", "only_b"), [(0, 0), (10, 2), (2, 10), (5, 5), (0, 7), (40, 61), (700, 600)]
)
def test_mcnemar_exact_p_value(only_a, only_b):
    assert stats.mcnemar_exact(only_a, only_b) == pytest.approx(
        min(1.0, _mcnemar_by_brute_force(only_a, only_b)), rel=1e-9, abs=1e-300
    )


def table(
    both: int, only_a: int, only_b: int, neither: int
) -> tuple[dict[str, list[bool]], dict[str, list[bool]]]:
    """Two models' answers, one per question, from the cells of their paired 2x2 table."""
    a: dict[str, list[bool]] = {}
    b: dict[str, list[bool]] = {}
    for count, (right_a, right_b) in (
        (both, (True, True)),
        (only_a, (True, False)),
        (only_b, (False, True)),
        (neither, (False, False)),
    ):
        for _ in range(count):
            a[f"q{len(a):03d}"], b[f"q{len(b):03d}"] = [right_a], [right_b]
    return a, b


def one_each(scores: dict[str, float]) -> dict[str, list[bool]]:
    return {q: [bool(s)] for q, s in scores.items()}


def test_paired_comparison_uses_only_shared_questions_and_the_disagreements():
    a = one_each({f"q{i}": 1.0 for i in range(100)})
    b = one_each({f"q{i}": float(i >= 10) for i in range(100)}) | {"only-b": [False]}
    result = stats.paired(a, b)
    assert result["shared"] == 100
    assert result["difference"] == 10.0
    assert (result["onlyA"], result["onlyB"]) == (10, 0)
    low, high = result["ci95"]
    assert 0 < low < 10 < high
    assert result["distinguishable"] is True
    assert result["mcnemarP"] == round(2 / 2**10, 4)


def test_paired_comparison_of_equal_models_is_not_distinguishable():
    rng = random.Random(7)
    a = one_each({f"q{i}": float(rng.random() < 0.6) for i in range(400)})
    right, wrong = [q for q, v in a.items() if v[0]], [q for q, v in a.items() if not v[0]]
    flipped = set(right[:12] + wrong[:10])  # 12 only A gets, 10 only B gets
    b = {q: [not v[0]] if q in flipped else v for q, v in a.items()}
    result = stats.paired(a, b)
    assert result["ci95"][0] < 0 < result["ci95"][1]
    assert result["distinguishable"] is False
    assert stats.paired(a, {"elsewhere": [True]}) is None


def test_paired_comparison_with_epochs_has_no_mcnemar():
    result = stats.paired(
        {"q1": [True, False], "q2": [True, True]}, {"q1": [False, False], "q2": [True, True]}
    )
    assert "mcnemarP" not in result
    assert result["difference"] == 25.0


# Newcombe (1998), "Improved confidence intervals for the difference between binomial proportions
# based on paired data", Statistics in Medicine 17:2635-2650, table II, method 10 (the hybrid score
# interval): (both right, only A, only B, neither) -> the 95% interval of A's share minus B's.
NEWCOMBE_PAIRED = [
    ((36, 12, 2, 0), (0.0569, 0.3404)),
    ((18, 12, 2, 18), (0.0562, 0.3290)),
    ((53, 0, 0, 1), (-0.0729, 0.0729)),  # no disagreement: still an interval, not the point 0
    ((0, 30, 0, 0), (0.8395, 1.0)),  # A right on all, B on none: +100 points, and yet not exactly
]


@pytest.mark.parametrize(("cells", "published"), NEWCOMBE_PAIRED)
def test_paired_interval_matches_newcombes_published_values(cells, published):
    result = stats.paired(*table(*cells))
    assert [bound / 100 for bound in result["ci95"]] == pytest.approx(published, abs=6e-5)


def test_a_difference_at_its_bound_keeps_its_width():
    # The board once read "Full vs Refused: +100.0 points, 95% CI [+100.0, +100.0]": one model right
    # on 25 questions, the other on none, and a normal interval around a difference with no spread.
    full, refused = table(0, 25, 0, 0)
    result = stats.paired(full, refused)
    assert result["difference"] == 100.0
    assert result["ci95"] == [
        81.16,
        100.0,
    ]  # 25 questions cannot prove +100 exactly; nothing above 100
    assert result["distinguishable"] is True
    assert stats.paired(refused, full)["ci95"] == [-100.0, -81.16]


@pytest.mark.parametrize(
    ("cells", "low", "high"),
    [
        (
            (1, 0, 0, 0),
            -79.35,
            79.35,
        ),  # one question, both right: Wilson's 1 of 1 is [0.207, 1] for each
        ((0, 1, 0, 0), -12.21, 100.0),  # one question, only A right
        ((0, 0, 0, 1), -79.35, 79.35),  # one question, both wrong
        (
            (20, 0, 0, 0),
            -16.11,
            16.11,
        ),  # every question a tie, all right: as wide as Wilson's 20 of 20 leaves room
        # every question a tie, some right (b = c = 0): Wilson's 7 of 20 is [0.181, 0.567], and the two
        # models' agreement (Newcombe's phi, 0.89) narrows it: sqrt(0.169^2 + 0.217^2 - 2 * 0.89 * 0.169 * 0.217)
        ((7, 0, 0, 13), -10.19, 10.19),
    ],
)
def test_edge_cases_keep_a_width_and_stay_possible(cells, low, high):
    result = stats.paired(*table(*cells))
    assert result["ci95"] == [low, high]
    assert result["distinguishable"] is (low > 0 or high < 0)


def test_every_small_table_gives_a_possible_interval_around_its_difference_and_its_mirror_image():
    for n in range(1, 9):
        for both, only_a, only_b in itertools.product(range(n + 1), repeat=3):
            if both + only_a + only_b > n:
                continue
            a, b = table(both, only_a, only_b, n - both - only_a - only_b)
            forward, backward = stats.paired(a, b), stats.paired(b, a)
            low, high = forward["ci95"]
            assert -100.0 <= low <= forward["difference"] <= high <= 100.0 and low < high
            assert (
                backward["ci95"] == [-high, -low]
                and backward["difference"] == -forward["difference"]
            )
            assert backward["distinguishable"] is forward["distinguishable"]


def _coverage(n: int, chances: tuple[float, float, float, float], interval) -> float:
    """The exact chance that `interval(cells)` holds the true difference, over every 2x2 table of
    n paired questions drawn with these chances of (both right, only A, only B, neither)."""
    truth = 100 * (chances[1] - chances[2])
    covered = 0.0
    for both, only_a, only_b in itertools.product(range(n + 1), repeat=3):
        neither = n - both - only_a - only_b
        if neither < 0:
            continue
        cells = (both, only_a, only_b, neither)
        ways = math.factorial(n) // math.prod(math.factorial(c) for c in cells)
        chance = ways * math.prod(p**c for p, c in zip(chances, cells))
        low, high = interval(cells)
        covered += chance if low <= truth <= high else 0.0
    return covered


def _normal_interval(cells: tuple[int, int, int, int]) -> tuple[float, float]:
    """The interval the board used before: the mean per-question difference +- 1.96 standard errors."""
    diffs = [0] * (cells[0] + cells[3]) + [1] * cells[1] + [-1] * cells[2]
    n = len(diffs)
    mean = sum(diffs) / n
    half = stats.Z95 * math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1) / n)
    return 100 * max(-1.0, mean - half), 100 * min(1.0, mean + half)


@pytest.mark.parametrize(
    ("n", "chances"),
    [
        (
            10,
            (0.0, 0.95, 0.05, 0.0),
        ),  # A nearly always right where B is wrong: the difference near +100
        (25, (0.02, 0.96, 0.01, 0.01)),
        (25, (0.9, 0.02, 0.0, 0.08)),  # nearly every question a tie
        (10, (0.0, 0.9, 0.0, 0.1)),  # A right on 9 in 10 that B gets wrong, both wrong on the rest
    ],
)
def test_the_interval_keeps_its_coverage_near_the_bounds_on_few_questions(n, chances):
    assert _coverage(n, chances, lambda cells: stats.paired(*table(*cells))["ci95"]) >= 0.91
    assert _coverage(n, chances, _normal_interval) < 0.75  # the normal interval's misses there


def test_epochs_at_the_bounds_and_in_full_agreement_keep_a_width():
    always = {f"q{i}": [True, True, True] for i in range(10)}
    never = {f"q{i}": [False, False, False] for i in range(10)}
    assert stats.paired(always, never)["ci95"][0] < 100.0
    # epochs that disagree: two models with the same answers still differ by an unknown amount
    mixed = {f"q{i}": [i % 2 == 0, i % 3 == 0, True] for i in range(12)}
    same = stats.paired(mixed, {q: list(v) for q, v in mixed.items()})
    assert same["difference"] == 0.0 and same["ci95"][0] < 0.0 < same["ci95"][1]
    assert same["ci95"][0] == -same["ci95"][1]
    half = {f"q{i}": [True, False] for i in range(20)}
    assert stats.paired(half, half)["ci95"][1] > 0.0
    other = {f"q{i}": [i < 15, i < 12] for i in range(20)}
    forward, backward = stats.paired(mixed | other, other), stats.paired(other, mixed | other)
    assert backward["ci95"] == [-forward["ci95"][1], -forward["ci95"][0]]


def test_the_average_of_independent_scores_combines_their_intervals():
    # 0.7 - sqrt(0.1^2 + 0.1^2 + 0.05^2) / 3 = 0.65 below, the same above (these are symmetric)
    assert stats.average_interval([(0.5, [0.4, 0.6]), (0.7, [0.6, 0.8]), (0.9, [0.85, 0.95])]) == [
        0.65,
        0.75,
    ]
    assert stats.average_interval([(0.3, [0.2, 0.45])]) == [
        0.2,
        0.45,
    ]  # one score: its own interval
    # 0.99 - sqrt(0.08^2 + 0.05^2) / 2 below, 0.99 + sqrt(0.02^2 + 0) / 2 above
    assert stats.average_interval([(0.98, [0.9, 1.0]), (1.0, [0.95, 1.0])]) == [0.9428, 1.0]
    assert stats.average_interval([]) == [0.0, 1.0]


def test_an_average_at_100_percent_is_no_surer_than_its_parts_allow():
    # Three evals all right, on 10, 25 and 12 questions: each Wilson interval leaves room below 100%,
    # and so does their average, by more than the half-widths the board once combined.
    parts = [(1.0, [round(x, 4) for x in stats.wilson(n, n)]) for n in (10, 25, 12)]
    low, high = stats.average_interval(parts)
    assert high == 1.0
    assert low == round(1 - math.sqrt(sum((1 - lo) ** 2 for _, (lo, _) in parts)) / 3, 4)
    assert low < 1 - math.sqrt(sum(((1 - lo) / 2) ** 2 for _, (lo, _) in parts)) / 3
    assert stats.average_interval(parts[1:2]) == parts[1][1]


def test_a_paired_interval_never_leaves_the_possible_range():
    a = one_each({"q1": 1.0, "q2": 1.0, "q3": 1.0, "q4": 0.0})
    b = one_each({"q1": 0.0, "q2": 0.0, "q3": 0.0, "q4": 0.0})
    low, high = stats.paired(a, b)["ci95"]
    assert -100.0 <= low < 75.0 < high <= 100.0
