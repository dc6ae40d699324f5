"""The budget before a run, the spend during it, a cap on it (issue 30 item 2), through the real
`pytest` and `evaluate` against loopback servers, with prices given: the dry run's tokens and
dollars, the progress line, --max-cost and what it keeps, the estimate against the cost."""

from __future__ import annotations

import re

from tests.support.board import META, evaluate, model_flags
from tests.support.harness import fail_first_mc, out

BUDGET = re.compile(
    r"budget      about ([\d,]+) input \+ ([\d,]+) output tokens to the model "
    r"\(\$([\d.]+) at \$1.25/\$10 per million\)"
)


def budgets(stdout: str) -> list[tuple[int, int, float]]:
    return [
        (int(i.replace(",", "")), int(o.replace(",", "")), float(usd))
        for i, o, usd in BUDGET.findall(stdout)
    ]


def test_evaluate_dry_run_gives_each_eval_its_tokens_and_dollars_for_what_is_left(
    server, student, tmp_path
):
    data = tmp_path / "data"
    fresh = evaluate(data, "Budget", *model_flags(server), *META, "--evals=mc,ff", "--dry-run")
    assert fresh.returncode == 0 and not server.requests, out(fresh)
    (mc, mc_out, mc_usd), (ff, ff_out, ff_usd) = budgets(fresh.stdout)
    assert mc_out == 40 * 1_000 and ff_out == 25 * 1_000  # no --max-tokens: 1,000 a reply
    assert mc_usd == round((mc * 1.25 + mc_out * 10) / 1e6, 4)
    assert "50 judge calls, about " in fresh.stdout and "(not priced)" in fresh.stdout
    assert "budget in all: about 115 requests, about $" in fresh.stdout
    assert "requests    about 40: 40 to the model (0 of 40 items cached)" in fresh.stdout

    fail_first_mc(server, 4)
    evaluate(data, "Budget", *model_flags(server), *META, "--evals=mc")  # 4 API errors to retry
    resumed = evaluate(data, "Budget", "--evals=mc", "--max-tokens=300", "--dry-run")
    # --max-tokens is identity: a new run folder, every item left again, 300 tokens a reply
    assert budgets(resumed.stdout)[0][1] == 40 * 300, resumed.stdout
    left = evaluate(data, "Budget", "--evals=mc", "--dry-run")
    [(left_in, left_out, _)] = budgets(left.stdout)
    assert left_out == 4 * 1_000 and 0 < left_in < mc / 5, left.stdout  # only the 4 not answered


def test_without_prices_the_budget_gives_tokens_and_says_what_gives_dollars(server, tmp_path):
    done = evaluate(tmp_path / "data", "Unpriced", *model_flags(server), "--evals=mc", "--dry-run")
    assert (
        "budget      about 6,199 input + 40,000 output tokens to the model (no price: "
        "--price-input and --price-output give dollars)"
    ) in done.stdout, out(done)
