"""Local provider throughput: generated tokens per second, batched vs one prompt at a time.

Builds a small random Llama on the spot (no download; `tests/support/tiny_model.py`, wider and deeper
than the tests'), then answers the bundled multiple-choice prompts twice on the CPU (or the GPU
with --device): one by one, and through `complete` called from as many threads as EvalRun's
prefetch uses, so the generation thread batches them. Greedy replies must be equal both ways.

    uv run --extra local python bench/local.py [--prompts 32] [--max-new-tokens 32] [--layers 4]
                                               [--hidden 256] [--smoke]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench._common import ROOT, parse_args
from evals.providers import ProviderSpec, Request, effective_spec, make_provider
from tests.support.tiny_model import build_checkpoint

SMOKE = {"prompts": 4, "max_new_tokens": 4, "layers": 1, "hidden": 64}


def prompts(count: int, max_new: int) -> list[Request]:
    rows = [
        json.loads(line)
        for line in (ROOT / "data" / "robloxqa" / "multiple_choice.jsonl").read_text().splitlines()
        if line.strip()
    ]
    return [
        Request(
            prompt=f"{row['question']}\n" + "\n".join(row["choices"]),
            system="You are a Roblox expert.",
            max_tokens=max_new,
        )
        for row in (rows * (count // len(rows) + 1))[:count]
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prompts", type=int, default=32)
    ap.add_argument("--max-new-tokens", type=int, default=32)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--device", default="auto")
    args = parse_args(ap, SMOKE)

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["ROBLOX_EVALS_CACHE"] = str(Path(tmp) / "cache")
        checkpoint = build_checkpoint(
            Path(tmp) / "checkpoint", layers=args.layers, hidden=args.hidden, vocab=2000
        )
        provider = make_provider(
            effective_spec(ProviderSpec("local", str(checkpoint), device=args.device))
        )
        requests = prompts(args.prompts, args.max_new_tokens)
        provider.complete_all(requests[:2])  # load and warm up

        started = time.perf_counter()
        alone = [provider.complete_all([request])[0] for request in requests]
        one_by_one = time.perf_counter() - started

        provider.batches.clear()
        batched: dict[int, object] = {}

        def ask(i: int) -> None:
            batched[i] = provider.complete(requests[i], timeout=600)

        started = time.perf_counter()
        threads = [threading.Thread(target=ask, args=(i,)) for i in range(len(requests))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        together = time.perf_counter() - started

    tokens = sum(c.usage.output for c in alone)
    same = all(batched[i].text == alone[i].text for i in range(len(requests)))
    print(
        f"model: {args.layers} layers, hidden {args.hidden}, device {provider.model.device}; {len(requests)} prompts, "
        f"{tokens} generated tokens"
    )
    print(f"one by one: {tokens / one_by_one:8.1f} tokens/s ({one_by_one:.2f} s)")
    print(
        f"batched:    {tokens / together:8.1f} tokens/s ({together:.2f} s), batches of {provider.batches}"
    )
    print(f"ratio batched / one by one: {one_by_one / together:.2f}; replies equal: {same}")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
