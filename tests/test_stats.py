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
            assert stats.pass_at_k(n, c, k) == pytest.approx(float(_pass_at_k_by_enumeration(n, c, k)), abs=1e-12)


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


@pytest.mark.parametrize(("only_a", "only_b"), [(0, 0), (10, 2), (2, 10), (5, 5), (0, 7), (40, 61), (700, 600)])
def test_mcnemar_exact_p_value(only_a, only_b):
    assert stats.mcnemar_exact(only_a, only_b) == pytest.approx(min(1.0, _mcnemar_by_brute_force(only_a, only_b)), rel=1e-9, abs=1e-300)


def test_paired_comparison_uses_only_shared_questions_and_the_disagreements():
    a = {f"q{i}": 1.0 for i in range(100)}
    b = {f"q{i}": float(i >= 10) for i in range(100)} | {"only-b": 0.0}
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
    a = {f"q{i}": float(rng.random() < 0.6) for i in range(400)}
    right, wrong = [q for q, v in a.items() if v], [q for q, v in a.items() if not v]
    flipped = set(right[:12] + wrong[:10])  # 12 only A gets, 10 only B gets
    b = {q: 1.0 - v if q in flipped else v for q, v in a.items()}
    result = stats.paired(a, b)
    assert result["ci95"][0] < 0 < result["ci95"][1]
    assert result["distinguishable"] is False
    assert stats.paired(a, {"elsewhere": 1.0}) is None


def test_paired_comparison_with_epochs_has_no_mcnemar():
    result = stats.paired({"q1": 0.5, "q2": 1.0}, {"q1": 0.0, "q2": 1.0})
    assert "mcnemarP" not in result
    assert result["difference"] == 25.0


def test_the_average_of_independent_scores_combines_their_intervals():
    # half-widths 0.1, 0.1 and 0.05: sqrt(0.01 + 0.01 + 0.0025) / 3 = 0.05 around the mean 0.7
    assert stats.average_interval([(0.5, [0.4, 0.6]), (0.7, [0.6, 0.8]), (0.9, [0.85, 0.95])]) == [0.65, 0.75]
    assert stats.average_interval([(0.3, [0.2, 0.4])]) == [0.2, 0.4]  # one score: its own interval, made symmetric
    assert stats.average_interval([(0.98, [0.9, 1.0]), (1.0, [0.95, 1.0])]) == [0.962, 1.0]  # 0.99 +- 0.028, clipped at 1
    assert stats.average_interval([]) == [0.0, 1.0]


def test_a_paired_interval_never_leaves_the_possible_range():
    a = {"q1": 1.0, "q2": 1.0, "q3": 1.0, "q4": 0.0}
    b = {"q1": 0.0, "q2": 0.0, "q3": 0.0, "q4": 0.0}
    low, high = stats.paired(a, b)["ci95"]
    assert -100.0 <= low < 75.0 < high <= 100.0
