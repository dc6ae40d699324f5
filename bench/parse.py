"""Benchmark: reply parsing time per MB on adversarial replies.

    uv run python bench/parse.py [--sizes 32,128,512,1024] [--repeat 5] [--budget 2] [--only NAME,...] [--smoke]

Every reply of `tests/support/adversarial_replies.py` (repeated and unclosed fences, thousands of
"Answer:" leads, runs of parentheses, markup, whitespace, newlines, ...) is built at each size
(KB) and given to each parser: code extraction (`extract_code`), letter extraction
(`extract_letter`), verdict parsing (`parse_verdict`), the reasoning splitter
(`evals.reasoning.split`). A row prints the parser's ms per MB at
each size (best of --repeat runs, in CPU time of this process: load from other processes on a
shared machine does not count) and the growth of its time from one size to the next: a
linear parser grows as the sizes do (x4 x4 x2 for the default sizes), a quadratic one as their
squares (x16 x16 x4). A parser that takes more than --budget seconds at one size is not run at
the larger ones ("-"). The last lines give, per parser, the worst ms/MB at the largest size
(target: under 50) and the worst growth over the whole range against the sizes' ratio (1 is
linear; rows under 0.1 ms at the smallest size are left out of it, their ratios are noise).
"""

from __future__ import annotations

import argparse
import time

from bench._common import parse_args
from tests.support.adversarial_replies import PARSERS, REPLIES

MB = 1024 * 1024
SMOKE = {"sizes": "1,2", "repeat": 1, "budget": 0.5}
NOISE = 1e-4  # s: a smaller time at the smallest size is too noisy for the growth summary


def best_time(parse, reply: str, repeat: int, budget: float) -> float:
    """The fastest of `repeat` runs, in seconds; one run when it alone exceeds a tenth of the budget."""
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        parse(reply)
        best = min(best, time.process_time() - started)
        if best > budget / 10:
            break
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="32,128,512,1024", help="reply sizes in KB, ascending")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--budget", type=float, default=2.0, help="seconds; slower parsers skip the larger sizes"
    )
    parser.add_argument("--only", default="", help="comma-separated reply names")
    args = parse_args(parser, SMOKE)
    sizes = [int(kb) * 1024 for kb in args.sizes.split(",")]
    replies = [r for r in REPLIES if not args.only or r.name in args.only.split(",")]

    steps = " ".join(f"x{b / a:g}" for a, b in zip(sizes, sizes[1:]))
    print(
        f"ms per MB at {', '.join(f'{s // 1024} KB' for s in sizes)}; growth from size to size (linear: {steps})"
    )
    worst: dict[str, tuple[float, str]] = {}
    worst_growth: dict[str, tuple[float, str]] = {}
    for reply in replies:
        texts = [reply.build(size) for size in sizes]
        for name, parse in PARSERS.items():
            times: list[float] = []
            for text in texts:
                if times and times[-1] > args.budget:
                    break
                times.append(best_time(parse, text, args.repeat, args.budget))
            per_mb = [t * 1000 / (len(text) / MB) for t, text in zip(times, texts)]
            growth = [b / a if a > 0 else float("inf") for a, b in zip(times, times[1:])]
            cells = [f"{v:9.1f}" for v in per_mb] + ["        -"] * (len(sizes) - len(times))
            print(
                f"{reply.name:28} {name:8}"
                + "".join(cells)
                + "   "
                + " ".join(f"x{g:<5.1f}" for g in growth)
            )
            if len(times) == len(sizes) and per_mb[-1] > worst.get(name, (-1.0, ""))[0]:
                worst[name] = (per_mb[-1], reply.name)
            if len(times) == len(sizes):
                overall = times[-1] / times[0] / (len(texts[-1]) / len(texts[0]))
                if times[0] >= NOISE and overall > worst_growth.get(name, (-1.0, ""))[0]:
                    worst_growth[name] = (overall, reply.name)
            else:
                worst_growth[name] = (float("inf"), reply.name)
                worst[name] = (float("inf"), reply.name)
    print()
    for name in PARSERS:
        ms, where = worst.get(name, (0.0, "-"))
        growth, gwhere = worst_growth.get(name, (0.0, "-"))
        print(
            f"{name:8} worst {ms:.1f} ms/MB at {sizes[-1] // 1024} KB "
            f"({where}); worst growth / size ratio {growth:.2f} ({gwhere})"
        )


if __name__ == "__main__":
    main()
