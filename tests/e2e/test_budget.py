"""The budget before a run, the spend during it, a cap on it (issue 30 item 2), through the real
`pytest` and `evaluate` against loopback servers, with prices given: the dry run's tokens and
dollars, the progress line, --max-cost and what it keeps, the estimate against the cost."""

from __future__ import annotations

import os
import pty
import re

from tests.support.board import META, evaluate, evaluate_command, model_flags
from tests.support.harness import (
    candidate_requests,
    fail_first_mc,
    harness_command,
    harness_env,
    run_cli,
    out,
    run_harness,
    start,
)


def folders(tmp_path) -> dict:
    return {"run_dir": tmp_path / "runs", "results_dir": tmp_path / "results"}


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


# -- the progress line --------------------------------------------------------------------------

PRICES = ("--price-input=1.25", "--price-output=10")


def student_flags(server) -> list[str]:
    return ["--provider=openai", "--model=student-1", f"--base-url={server.url}/v1"]


def progress_lines(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith("progress: ")]


def test_a_log_gets_a_progress_line_a_tenth_at_a_time_with_rate_time_left_tokens_and_spend(
    server, tmp_path
):
    done = run_harness(
        *student_flags(server), *PRICES, "-m", "multiple_choice", **folders(tmp_path)
    )
    assert done.returncode == 0, out(done)
    lines = progress_lines(done.stdout)
    assert 10 <= len(lines) <= 12, lines  # each tenth (and the first), not a line an item
    assert re.fullmatch(
        r"progress: 4 of 40 items, [\d.]+/s, ETA \d+s, tokens 480 in 120 out, \$0\.0018 spent",
        lines[1],
    ), lines
    # the loopback student's 120 + 30 tokens a reply, at $1.25 and $10 per million
    assert re.fullmatch(
        r"progress: 40 of 40 items, [\d.]+/s, tokens 4,800 in 1,200 out, \$0\.0180 spent", lines[-1]
    ), lines
    assert not any("Answer" in line or "\x1b" in line for line in lines)  # no model text
    # The last line comes after pytest's `[100%]`, which stays beside its dots.
    assert not [line for line in done.stdout.splitlines() if line.strip() == "[100%]"], out(done)


def test_xdist_workers_rows_reach_the_controllers_progress_line(server, tmp_path):
    done = run_harness(
        *student_flags(server),
        *PRICES,
        "-m",
        "leetcode",
        "--limit=4",
        "-n",
        "2",
        **folders(tmp_path),
    )
    assert done.returncode == 0 and "2 workers [4 items]" in done.stdout, out(done)
    lines = progress_lines(done.stdout)
    assert [line.split(",")[0] for line in lines] == [
        f"progress: {n} of 4 items" for n in (1, 2, 3, 4)
    ]
    assert lines[-1].endswith("tokens 1,600 in 1,000 out, $0.0120 spent"), lines


def test_on_a_terminal_the_line_is_redrawn_in_place_under_pytests_own(server, tmp_path):
    command = harness_command(
        *student_flags(server), *PRICES, "-m", "multiple_choice", **folders(tmp_path)
    )
    primary, secondary = pty.openpty()
    process = start(command, stdout=secondary, stderr=secondary)
    os.close(secondary)
    shown = b""
    while True:
        try:
            chunk = os.read(primary, 65536)
        except OSError:  # the terminal's other end closed: the command ended
            break
        if not chunk:
            break
        shown += chunk
    os.close(primary)
    assert process.wait(timeout=60) == 0, shown.decode(errors="replace")
    text = shown.decode()
    # drawn on the row below and the cursor taken back up to pytest's line, never a line of its own
    assert "\x1b[K\r\n\x1b[Kprogress: " in text and "\x1b[1A\r\x1b[" in text, text
    assert text.count("progress: 40 of 40 items") >= 1
    last = [line for line in text.splitlines() if line.startswith("progress: ")]
    assert last and last[-1].startswith("progress: 40 of 40 items"), last  # kept at the end


# -- --max-cost ---------------------------------------------------------------------------------


def test_max_cost_stops_asking_keeps_the_answers_and_a_higher_cap_resumes(
    server, student, tmp_path
):
    flags = (*student_flags(server), *PRICES, "-m", "multiple_choice")
    capped = run_harness(*flags, "--max-cost=0.005", **folders(tmp_path))

    assert capped.returncode == 6, out(capped)
    # 11 answers cost $0.00495, the 12th reaches the cap
    assert (
        "stopped at $0.0054 of $0.005 cap: 12 of 40 answered and kept; raise --max-cost and the "
        "same command resumes"
    ) in capped.stdout, out(capped)
    assert "Traceback" not in out(capped) and "Interrupted" not in out(capped)
    assert not (tmp_path / "results").exists() or not list((tmp_path / "results").rglob("*.json"))
    answered = list((tmp_path / "runs").glob("multiple_choice/*/calls/*/candidate.json"))
    assert len(answered) >= 12
    asked = len(candidate_requests(server, student))

    again = run_harness(*flags, "--max-cost=0.005", **folders(tmp_path))
    assert again.returncode == 6 and "of $0.005 cap: " in again.stdout, out(
        again
    )  # the run's spend

    resumed = run_harness(*flags, "--max-cost=1", **folders(tmp_path))
    assert resumed.returncode == 0, out(resumed)
    assert len(candidate_requests(server, student)) == 40  # each item asked once, over all three
    assert asked >= 12 and list((tmp_path / "results").rglob("*.json"))
    # the cap is no part of the identity: the run without one is the same run folder, finished
    uncapped = run_harness(*flags, **folders(tmp_path))
    assert "40 of 40 answers read back from the run folder, 0 asked now" in uncapped.stdout
    assert len(list((tmp_path / "runs" / "multiple_choice").iterdir())) == 1
    assert len(candidate_requests(server, student)) == 40


def test_a_cap_without_prices_is_one_line_before_anything_is_asked(server, tmp_path):
    done = run_harness(
        *student_flags(server), "-m", "multiple_choice", "--max-cost=1", **folders(tmp_path)
    )
    assert done.returncode == 4 and not server.requests, out(done)
    assert done.stderr.strip() == (
        "ERROR: --max-cost counts dollars: give the model's --price-input and --price-output too "
        "(USD per million tokens)"
    ), out(done)

    priceless = evaluate(
        tmp_path / "data", "Capped", *model_flags(server), "--limit=2", "--max-cost=1"
    )
    assert priceless.returncode == 2 and not server.requests, out(priceless)
    assert priceless.stderr.splitlines() == [
        "error: --max-cost counts dollars at the model's price per token: give --price-input and "
        "--price-output (USD per million tokens), or publish the model with them first"
    ], out(priceless)


def test_evaluate_relays_each_evals_progress_and_its_cap_counts_every_eval_it_ran(server, tmp_path):
    data = tmp_path / "data"
    done = evaluate(data, "Relay", *model_flags(server), *META, "--evals=mc,ff", "--max-cost=0.02")

    assert done.returncode == 6, out(done)
    lines = progress_lines(done.stdout)
    assert "progress: 40 of 40 items" in lines[len([l for l in lines if "of 40 items" in l]) - 1]
    assert any(
        line.startswith("progress: 1 of 25 items") and line.endswith("spent") for line in lines
    )
    # mc spent $0.018 of the $0.02: freeform stops at its 5th answer ($0.0005 each)
    assert "stopped at $0.0205 of $0.02 cap: 5 of 25 answered and kept" in done.stdout, out(done)
    assert done.stderr.splitlines()[-1] == (
        "error: ff (pytest exit 6) did not finish (see the log above); stopped at the --max-cost "
        "cap (above): raise --max-cost and `evaluate 'Relay'` resumes"
    ), out(done)

    # The same cap again: mc's $0.018, finished by the first command, counts too (it did not,
    # and ff alone was let spend the whole cap).
    again = evaluate(data, "Relay", "--evals=mc,ff", "--max-cost=0.02")
    assert again.returncode == 6, out(again)
    assert "stopped at $0.02" in again.stdout, out(again)

    resumed = evaluate(data, "Relay", "--evals=mc,ff", "--max-cost=1")
    assert resumed.returncode == 0 and "ff    72.0%" in resumed.stdout, out(resumed)
    assert "$0.018 (estimated $0.408)" in resumed.stdout  # the table: the cost, the estimate


def test_pytest_dry_run_asks_nothing_and_gives_the_budget_of_what_is_left(server, tmp_path):
    flags = (*student_flags(server), *PRICES, "-m", "multiple_choice")
    fresh = run_harness(*flags, "--dry-run", **folders(tmp_path))
    assert fresh.returncode == 0 and not server.requests, out(fresh)
    assert (
        "multiple_choice  requests about 40: 40 to the model (0 of 40 items cached)" in fresh.stdout
    )
    assert (
        "budget   about 6,199 input + 40,000 output tokens to the model ($0.4077 at $1.25/$10 per "
        "million)"
    ) in fresh.stdout, fresh.stdout

    run_harness(*flags, "-k", "mc-00", **folders(tmp_path))  # mc-001 ... mc-009 answered
    asked = len(server.requests)
    left = run_harness(*flags, "--dry-run", "-n", "2", **folders(tmp_path))
    assert left.returncode == 0 and len(server.requests) == asked, out(left)
    assert "requests about 31: 31 to the model (9 of 40 items cached)" in left.stdout, left.stdout
    assert "workers" not in left.stdout and "-n 2" not in left.stdout  # nothing to spread


def test_a_finished_eval_gives_its_cost_beside_the_estimate(server, tmp_path):
    done = run_harness(
        *student_flags(server),
        *PRICES,
        "-m",
        "multiple_choice",
        "--max-tokens=30",
        **folders(tmp_path),
    )
    # 40 replies of 30 tokens estimated: the loopback's prompts count 120 tokens, not ~155
    assert "cost $0.0180 (estimated $0.0197)" in done.stdout, out(done)


def test_with_xdist_the_cap_stops_the_workers_and_its_line_counts_what_they_answered(
    server, tmp_path
):
    done = run_harness(
        *student_flags(server),
        *PRICES,
        "-m",
        "leetcode",
        "--limit=6",
        "-n",
        "2",
        "--max-cost=0.005",
        **folders(tmp_path),
    )
    assert done.returncode == 6 and "2 workers [6 items]" in done.stdout, out(done)
    stopped = re.search(
        r"stopped at \$([\d.]+) of \$0.005 cap: (\d) of 6 answered and kept", done.stdout
    )
    assert stopped, out(done)
    spent, answered = float(stopped.group(1)), int(stopped.group(2))
    # each answer 400 + 250 tokens, $0.003: the cap reached at the second, and what the
    # workers held already run, every one of them counted
    assert 2 <= answered < 6 and spent == round(answered * 0.003, 4), out(done)
    assert f"partial run: {answered} of 6 items answered" in done.stdout
    assert "Interrupted" not in done.stdout and "Traceback" not in out(done)


def test_a_dry_run_prices_the_budget_at_the_flags_price_when_a_lookup_fails(server, tmp_path):
    """A new model's missing metadata is looked up (OpenRouter); offline, that lookup failed,
    and the dry run then dropped the prices given on its command line too ("no price")."""
    command = evaluate_command(
        tmp_path / "data", "Offline", *model_flags(server), *PRICES, "--evals=mc", "--dry-run"
    )
    # Nothing listens there: the lookup fails, as it does offline.
    done = run_cli(command, env=harness_env(OPENROUTER_API_BASE="http://127.0.0.1:9"))
    assert "could not fetch the OpenRouter model list" in done.stderr, out(done)
    [(tokens_in, tokens_out, usd)] = budgets(done.stdout)
    assert usd == round((tokens_in * 1.25 + tokens_out * 10) / 1e6, 4), out(done)
