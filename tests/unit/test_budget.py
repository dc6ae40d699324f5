"""The dry run's estimator and the progress line (`evals.budget`), called as the commands call them."""

from __future__ import annotations

import math

from evals.budget import (
    ASSUMED_REPLY_TOKENS,
    ASSUMED_VERDICT_TOKENS,
    Progress,
    duration,
    estimate,
    tokens_of,
)
from evals.messages import Completion, Request
from evals.results import TokenPrices
from evals.tasks import TASKS
from tests.support.clock import Clock


def test_a_request_is_a_token_for_every_four_characters_of_its_system_prompt_and_prompt():
    assert tokens_of(Request(prompt="x" * 9, system="y" * 3)) == 3
    assert tokens_of(Request(prompt="")) == 0


def test_the_estimate_builds_the_prompts_the_run_sends_and_leaves_out_what_is_answered():
    mc = TASKS["multiple_choice"]
    samples, _ = mc.load("bundled", "test")
    sent = sum(
        tokens_of(mc.request(s, system_prompt_prefix="Be brief.", max_tokens=None)) for s in samples
    )
    whole = estimate(mc, samples, judges=0, max_tokens=None, system_prompt_prefix="Be brief.")
    assert (whole.items, whole.of, whole.input) == (len(samples), len(samples), sent)
    assert whole.output == ASSUMED_REPLY_TOKENS * len(samples) and whole.requests == len(samples)

    first = samples[0].id
    rest = estimate(
        mc,
        samples,
        judges=0,
        max_tokens=50,
        system_prompt_prefix="Be brief.",
        answered=lambda s: s.id != first,
    )
    assert (rest.items, rest.output) == (1, 50)
    assert rest.input == tokens_of(
        mc.request(samples[0], system_prompt_prefix="Be brief.", max_tokens=50)
    )


def test_each_judge_reads_the_question_the_reference_and_a_reply_as_long_as_the_one_assumed():
    ff = TASKS["freeform"]
    samples, _ = ff.load("bundled", "test")
    one = estimate(ff, samples[:1], judges=3, max_tokens=100, system_prompt_prefix=None)
    judged = ff.judge_request(samples[0], Completion(text="x" * 400))
    assert judged is not None
    assert (
        one.judge_input == 3 * tokens_of(judged) and one.judge_output == 3 * ASSUMED_VERDICT_TOKENS
    )
    assert one.requests == 4


def test_dollars_are_the_models_tokens_at_its_prices_and_the_judges_are_not_priced():
    mc = TASKS["multiple_choice"]
    samples, _ = mc.load("bundled", "test")
    e = estimate(mc, samples, judges=0, max_tokens=10, system_prompt_prefix=None)
    prices = TokenPrices(1.25, 10)
    assert math.isclose(e.cost(prices), (e.input * 1.25 + e.output * 10) / 1e6, abs_tol=1e-6)
    assert f"(${e.cost(prices):,.4f} at $1.25/$10 per million)" in e.line(prices)
    assert "no price" in e.line(None)


def test_the_progress_line_counts_done_rate_time_left_tokens_and_spend_never_text():
    clock = Clock()
    progress = Progress(10, TokenPrices(1.0, 2.0), clock=clock)
    clock.now += 4
    for _ in range(2):
        progress.add(
            {
                "id": "q",
                "reply": "\x1b]0;owned\x07 IGNORE",
                "usage": {"input": 1_000_000, "output": 500_000},
                "judgeUsage": {"input": 10, "output": 5},
            }
        )
    line = progress.line()
    assert line == (
        "progress: 2 of 10 items, 0.5/s, ETA 16s, tokens 2,000,000 in 1,000,000 out "
        "(+30 to judges), $4.0000 spent"
    )
    progress.add({"usage": {"input": 1_000_000, "output": 0}, "batched": ["candidate"]})
    assert progress.spent == 4.5  # a Batch API's tokens at half the price
    assert "$" not in Progress(3, None, clock=clock).line()


def test_a_log_gets_the_line_at_each_tenth_every_few_seconds_and_at_the_end():
    clock = Clock()
    progress = Progress(100, None, clock=clock)
    shown = []
    for i in range(100):
        progress.add({})
        clock.now += 0.1
        if progress.due(every=3.0):
            shown.append(progress.done)
    assert shown == [1, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100]  # 0.1 s apart: the tenths

    slow = Progress(100, None, clock=clock)
    slow.add({})
    assert slow.due(every=3.0)  # the first
    clock.now += 2
    slow.add({})
    assert not slow.due(every=3.0)  # neither a tenth nor 3 s
    clock.now += 2
    slow.add({})
    assert slow.due(every=3.0)  # 4 s since the last line, within the first tenth


def test_prices_handed_down_that_are_no_prices_are_none(monkeypatch):
    """`evaluate` hands its children the prices in the environment; nan there made a cap that
    never stopped the run ("$nan spent")."""
    from evals.budget import PRICES_ENV, spend_prices_given

    for bad in ("nan,nan", "inf,1", "-1,-1", "abc", "1"):
        monkeypatch.setenv(PRICES_ENV, bad)
        assert spend_prices_given() is None, bad
    monkeypatch.setenv(PRICES_ENV, "1.25,10")
    assert spend_prices_given() == TokenPrices(1.25, 10)


def test_a_cap_of_nothing_is_refused():
    from evals.flags import FLAGS

    (cap,) = [flag for flag in FLAGS if flag.name == "--max-cost"]
    assert cap.check is not None
    assert cap.check(0.0) and cap.check(float("nan")) and cap.check(-1.0)
    assert cap.check(0.01) is None


def test_durations_read_as_a_clock():
    assert [duration(s) for s in (0, 45.4, 725, 12_000)] == ["0s", "45s", "12m05s", "3h20m"]
