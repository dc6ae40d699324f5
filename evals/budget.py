"""What a run will cost before it runs, and what it has spent while it runs.

`estimate` is the dry-run budget of one eval: the requests left to ask (an item already answered
in the run folder is not counted) and their tokens, from the very prompts the run would send
(`Task.request`, and each judge's `Task.judge_request` about a stand-in reply). Tokens are
approximated as one per CHARS_PER_TOKEN characters of the system prompt and the prompt (no
tokenizer: every vendor's counts differently, and this needs none offline); the model's reply
is --max-tokens when given, else ASSUMED_REPLY_TOKENS, and a judge's verdict
ASSUMED_VERDICT_TOKENS. Dollars are the candidate's tokens at --price-input/--price-output, as
a result file's cost counts them: the judges' tokens are shown, not priced.

`Progress` is the line a run shows while it runs: items done of the total, their rate, the
time left, the tokens and the spend so far. It counts the rows' own figures, never their
text, so no model text reaches it."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from evals.flags import usd
from evals.messages import Completion, Request
from evals.results import TokenPrices
from evals.plan import Planned
from evals.tasks import TASKS, Task
from evals.words import in_words

# The prices `evaluate` hands each eval's pytest, "INPUT,OUTPUT" in USD per million tokens, for
# its progress line and --max-cost (its result file records none: evaluate prices the summary).
PRICES_ENV = "ROBLOX_EVALS_SPEND_PRICES"
# The exit status of a run --max-cost stopped, `pytest`'s and `evaluate`'s (README, "Exit codes").
CAPPED = 6
# What the evals `evaluate` ran before this eval's pytest spent, USD: its --max-cost counts it.
SPENT_ENV = "ROBLOX_EVALS_SPENT"
CHARS_PER_TOKEN = 4  # the usual rule of thumb for English text and code
ASSUMED_REPLY_TOKENS = 1_000  # a reply's tokens (reasoning included) without --max-tokens
ASSUMED_VERDICT_TOKENS = 200  # a judge's reply: a verdict and a few lines of why


def tokens_of(request: Request) -> int:
    """The input tokens of `request`, approximated: one per CHARS_PER_TOKEN characters."""
    chars = len(request.system or "") + len(request.prompt)
    return math.ceil(chars / CHARS_PER_TOKEN)


@dataclass(frozen=True)
class Estimate:
    """The requests one eval has left to make and their tokens, approximated."""

    items: int  # items left (not answered in the run folder)
    of: int  # the eval's items
    input: int  # the candidate's tokens
    output: int
    judges: int  # judges asked about each reply
    judge_input: int
    judge_output: int

    @property
    def requests(self) -> int:
        return self.items * (1 + self.judges)

    def requests_line(self) -> str:
        """`about 75: 25 to the model + 50 to two judges (0 of 25 items cached)`."""
        judged = (
            f" + {self.items * self.judges:,} to {in_words(self.judges)} "
            f"judge{'s' if self.judges != 1 else ''}"
            if self.judges
            else ""
        )
        return (
            f"about {self.requests:,}: {self.items:,} to the model{judged} "
            f"({self.of - self.items:,} of {self.of:,} items cached)"
        )

    def cost(self, prices: TokenPrices) -> float:
        return prices.cost({"input": self.input, "output": self.output})

    def line(self, prices: TokenPrices | None) -> str:
        """`about 1,200 input + 20,000 output tokens to the model ($0.2015 at ...)`, and the judges'."""
        dollars = (
            f" (${self.cost(prices):,.4f} at ${prices.input:g}/${prices.output:g} per million)"
            if prices
            else " (no price: --price-input and --price-output give dollars)"
        )
        line = f"about {self.input:,} input + {self.output:,} output tokens to the model{dollars}"
        if self.judges and self.items:
            line += (
                f"; {self.items * self.judges:,} judge calls, about {self.judge_input:,} input + "
                f"{self.judge_output:,} output tokens (not priced)"
            )
        return line


def estimate(
    task: Task,
    samples: list[Any],
    *,
    judges: int,
    max_tokens: int | None,
    system_prompt_prefix: str | None,
    answered: Callable[[Any], bool] = lambda sample: False,
) -> Estimate:
    """The budget of asking `samples` not `answered` yet, each judged by `judges` judges."""
    reply = max_tokens if max_tokens is not None else ASSUMED_REPLY_TOKENS
    # What the judges are shown in place of the reply: a text as long as the reply assumed.
    stand_in = Completion(text="x" * (reply * CHARS_PER_TOKEN))
    left = [sample for sample in samples if not answered(sample)]
    inputs = judge_inputs = 0
    for sample in left:
        request = task.request(
            sample, system_prompt_prefix=system_prompt_prefix, max_tokens=max_tokens
        )
        inputs += tokens_of(request)
        if judges and (judged := task.judge_request(sample, stand_in)) is not None:
            judge_inputs += tokens_of(judged) * judges
    return Estimate(
        items=len(left),
        of=len(samples),
        input=inputs,
        output=reply * len(left),
        judges=judges,
        judge_input=judge_inputs,
        judge_output=ASSUMED_VERDICT_TOKENS * judges * len(left),
    )


def planned_estimate(
    planned: Planned, answered: Callable[[Any], bool] = lambda sample: False
) -> Estimate:
    """`estimate` of a planned run, with its identity's prompt prefix, --max-tokens and judges."""
    identity = planned.config.identity
    return estimate(
        TASKS[planned.config.eval],
        planned.samples,
        judges=len(planned.config.judges),
        max_tokens=identity.spec.max_tokens,
        system_prompt_prefix=identity.system_prompt_prefix,
        answered=answered,
    )


def spend_prices_given() -> TokenPrices | None:
    """The prices `evaluate` handed this pytest (`PRICES_ENV`), or None."""
    given = os.environ.get(PRICES_ENV, "")
    try:
        price_input, price_output = (float(part) for part in given.split(","))
    except ValueError:
        return None
    if usd(price_input) or usd(price_output):  # nan would make a cap that never stops the run
        return None
    return TokenPrices(price_input, price_output)


def spent_before() -> float:
    """What `evaluate`'s earlier evals spent (`SPENT_ENV`), 0 when it says nothing."""
    try:
        spent = float(os.environ.get(SPENT_ENV, "0"))
    except ValueError:
        return 0.0
    return spent if math.isfinite(spent) and spent > 0 else 0.0


def duration(seconds: float) -> str:
    """`45s`, `12m05s`, `3h20m`."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


class Progress:
    """The run so far, from its rows: done of `total`, rate, time left, tokens and spend. Spend
    is the candidate's tokens at `prices`, a Batch API's at its share, as the result's cost."""

    def __init__(
        self,
        total: int,
        prices: TokenPrices | None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.total = total
        self.prices = prices
        self.clock = clock
        self.started = self.last = clock()
        self.done = 0
        self.tokens = {"input": 0, "output": 0}  # the candidate's
        self.batched = {"input": 0, "output": 0}
        self.judge_tokens = {"input": 0, "output": 0}
        self.shown_at: float | None = None
        self.shown_step = -1

    def begin(self, total: int) -> None:
        """The run's items known (collected): its clock starts now."""
        self.total = total
        self.started = self.last = self.clock()

    def add(self, row: dict[str, Any]) -> None:
        self.done += 1
        self.last = self.clock()  # the rate is the rows', whenever the line is shown
        usage = row.get("usage") or {}
        batched = "candidate" in row.get("batched", ())
        for key in ("input", "output"):
            self.tokens[key] += usage.get(key) or 0
            if batched:
                self.batched[key] += usage.get(key) or 0
            self.judge_tokens[key] += (row.get("judgeUsage") or {}).get(key) or 0

    @property
    def spent(self) -> float | None:
        return self.prices.cost(self.tokens, self.batched) if self.prices else None

    def line(self) -> str:
        """`progress: 120 of 2,000 items, 3.1/s, ETA 10m05s, tokens 12,345 in 6,789 out, $0.0123 spent`."""
        elapsed = self.last - self.started
        rate = self.done / elapsed if elapsed > 0 else 0.0
        parts = [
            f"progress: {self.done:,} of {self.total:,} items"
            if self.total
            else f"progress: {self.done:,} items"
        ]
        parts.append(f"{rate:.1f}/s")
        if rate and self.total > self.done:
            parts.append(f"ETA {duration((self.total - self.done) / rate)}")
        tokens = f"tokens {self.tokens['input']:,} in {self.tokens['output']:,} out"
        judged = self.judge_tokens["input"] + self.judge_tokens["output"]
        parts.append(tokens + (f" (+{judged:,} to judges)" if judged else ""))
        if (spent := self.spent) is not None:
            parts.append(f"${spent:,.4f} spent")
        return ", ".join(parts)

    def due(self, every: float) -> bool:
        """Whether a log (not a terminal) gets the line now: every `every` seconds, at each
        tenth of the run, and at its end; marks it shown when it is."""
        now = self.clock()
        step = self.done * 10 // self.total if self.total else 0
        if (
            self.shown_at is None
            or now - self.shown_at >= every
            or step > self.shown_step
            or (self.total and self.done >= self.total)
        ):
            self.shown_at, self.shown_step = now, step
            return True
        return False


def total_cost(estimates: Iterable[Estimate], prices: TokenPrices) -> float:
    return sum(e.cost(prices) for e in estimates)
