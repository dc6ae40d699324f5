"""`evaluate`: run the three leaderboard evals for one model, then publish the results.

    uv run evaluate "GPT 5.5" --model gpt-5.5 --provider openai --effort medium \
        --provider-name OpenAI --url https://openai.com --release-date 2026-08-01 \
        --price-input 1.25 --price-output 10
    uv run evaluate "GPT 5.5"              # resume, or reproduce the recorded run
    uv run evaluate "GPT 5.5" --status     # progress of each eval's run
    uv run evaluate --verify ["GPT 5.5"]   # rescore the published runs offline

The first argument is the model's display name, its entry in data/models.json. For a model on
the board the run identity comes from its published result files, so a bare `evaluate NAME`
resumes or reproduces exactly that run; any identity flag overrides it (a different run).
Each eval runs as its own `pytest` process, one after another or all at once (--parallel).
When all three results exist they are published into models.json and the site is rebuilt,
under one lock."""

from __future__ import annotations

import argparse
import dataclasses
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from evals import registry
from evals.cache import RunCache
from evals.config import results_path, run_dir
from evals.errors import EvalError
from evals.grading.judges import JudgeSpec, default_judges
from evals.plan import Identity, Planned, identity_from_config, plan, to_flags
from evals.providers import ProviderSpec
from evals.publish import publish, rebuild_site
from evals.results import read_result
from evals.tasks import TASKS

ROOT = Path(__file__).resolve().parents[1]
EVALS = {"ff": "freeform", "mc": "multiple_choice", "lc": "leetcode"}
KEY_OF = {task.name: task.key for task in TASKS.values()}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="evaluate", description=__doc__.split("\n\n")[0])
    ap.add_argument("name", nargs="?", help="display name: the model's entry in data/models.json")
    ap.add_argument("--verify", action="store_true", help="rescore every published run (or only NAME's) offline from its run folder and compare it with its result file")
    ident = ap.add_argument_group("run identity", "defaults come from the model's published result files; any of these starts a different run")
    ident.add_argument("--model")
    ident.add_argument("--provider", choices=["live", "openai", "anthropic", "reference"])
    ident.add_argument("--base-url")
    reasoning = ident.add_mutually_exclusive_group()
    reasoning.add_argument("--effort")
    reasoning.add_argument("--thinking", action="store_true", default=None)
    ident.add_argument("--route")
    ident.add_argument("--max-tokens", type=int)
    ident.add_argument("--system-prompt-prefix")
    ident.add_argument("--limit", type=int, help="smoke test: the first N items of each eval (never published)")
    ident.add_argument("--split", choices=["test", "train"], help="RobloxQA split; train is never published")
    ident.add_argument("--judge", action="append", help="freeform judge PROVIDER:MODEL[@BASE_URL] (repeatable)")

    how = ap.add_argument_group("how to run (not part of the run identity)")
    how.add_argument("--api-key-env")
    how.add_argument("--responses-api", action="store_true")
    how.add_argument("--workers", type=int, help="xdist workers per eval (pytest -n)")
    how.add_argument("--concurrency", type=int, help="model requests in flight per eval")
    how.add_argument("--allow-errors", action="store_true", help="publish despite more than 5%% failed answers")
    how.add_argument("--jest-url", help="JestLuaTestServer URL for leetcode (default $JEST_SERVER_URL)")
    how.add_argument("--evals", default="ff,mc,lc", help="comma list of ff, mc, lc (default all three)")
    how.add_argument("--parallel", action="store_true", help="run the evals at once, each line prefixed by its eval")
    how.add_argument("--force", action="store_true", help="start the runs over (the old run folders are kept, renamed)")
    how.add_argument("--no-build", action="store_true", help="run, but leave models.json and the site alone")
    how.add_argument("--dry-run", action="store_true", help="print the plan (commands, run folders, result files) and exit")
    how.add_argument("--status", action="store_true", help="print each eval's progress and exit")
    how.add_argument("--data-dir", type=Path, default=ROOT / "data", help=argparse.SUPPRESS)

    meta = ap.add_argument_group("models.json metadata (a new model needs them; looked up when left out)")
    meta.add_argument("--provider-name", help='display provider, e.g. "OpenAI"')
    meta.add_argument("--url", help="the model's page")
    meta.add_argument("--release-date", help="YYYY-MM-DD")
    meta.add_argument("--size", nargs="+", metavar="BYTES_OR_LINK", help="weights size: byte counts or Hugging Face links, added up")
    meta.add_argument("--price-input", type=float, help="USD per million input tokens")
    meta.add_argument("--price-output", type=float, help="USD per million output tokens")
    meta.add_argument("--price-electricity", type=float, help="USD per kWh (local models)")

    args = ap.parse_args(argv)
    if args.name is None and not args.verify:
        ap.error("the display NAME is required (or --verify, to rescore every published run)")
    args.tags = [t.strip() for t in args.evals.split(",") if t.strip()]
    if not args.tags or any(t not in EVALS for t in args.tags):
        ap.error(f"--evals takes a comma list of ff, mc, lc (got {args.evals!r})")
    for value in args.size or []:
        if not (value.isdigit() or value.startswith(("http://", "https://"))):
            ap.error(f"--size takes byte counts or Hugging Face links (got {value!r})")
    if args.price_electricity is not None and (args.price_input is not None or args.price_output is not None):
        ap.error("--price-electricity excludes --price-input/--price-output")
    return args


def main(argv: list[str] | None = None) -> None:
    sys.stdout.reconfigure(line_buffering=True)
    args = parse_args(argv)
    if args.verify:
        from evals.verify import verify_published

        data = args.data_dir.resolve()
        raise SystemExit(verify_published(data / "models.json", data / "results", data / "runs", args.name))
    try:
        raise SystemExit(evaluate(args))
    except EvalError as error:
        raise SystemExit(f"error: {error}") from None


def evaluate(args: argparse.Namespace) -> int:
    data = args.data_dir.resolve()
    models_path, results_dir, runs_dir = data / "models.json", data / "results", data / "runs"
    entry = registry.find_entry(registry.load_models(models_path, results=results_dir), args.name)
    if entry is None and (args.model is None or args.provider is None):
        raise EvalError(f'"{args.name}" is not in {models_path.name} yet: a new model needs --model and --provider')
    published = _published_configs(entry, results_dir)
    identities, plans = {}, {}
    for tag in EVALS:
        identities[tag], plans[tag] = _plan(tag, published, args)
    smoke = any(p.config.is_smoke_test for p in plans.values())
    reference = any(p.config.provider == "reference" for p in plans.values())

    print(f"{args.name}:")
    commands = {}
    for tag in args.tags:
        planned = plans[tag]
        commands[tag] = _command(tag, identities[tag], args, data)
        print(f"  {tag}: {subprocess.list2cmdline(commands[tag][3:])}")
        print(f"      run folder  {run_dir(runs_dir, planned.config)}")
        print(f"      results     {results_path(results_dir, planned.config)}")
    if args.dry_run:
        return 0
    if args.status:
        for tag in args.tags:
            print(_status(tag, plans[tag], runs_dir, results_dir))
        return 0

    metadata = None if smoke or reference or args.no_build else _metadata(args, entry, plans["ff"].config.to_dict())
    codes = _run_parallel(commands) if args.parallel else _run_serial(commands)
    finished = {KEY_OF[EVALS[tag]]: results_path(results_dir, p.config) for tag, p in plans.items() if results_path(results_dir, p.config).is_file()}
    unfinished = [tag for tag in args.tags if KEY_OF[EVALS[tag]] not in finished]

    if smoke or reference:
        print("  smoke test or reference run: models.json left alone")
    elif args.no_build:
        print("  --no-build: models.json and the site left alone")
    else:
        for line in publish(args.name, finished, metadata=metadata, allow_errors=args.allow_errors,
                            models_path=models_path, results_dir=results_dir, rebuild=rebuild_site(data)):
            print(f"  {line}")
    if unfinished:
        failed = ", ".join(f"{tag} (pytest exit {codes.get(tag)})" for tag in unfinished)
        print(f"error: {failed} did not finish (see the log above); rerun the same command to resume", file=sys.stderr)
        return 1
    return 0


def _published_configs(entry: dict[str, Any] | None, results_dir: Path) -> dict[str, dict[str, Any]]:
    """eval name -> the config of the entry's published result file for it."""
    configs = {}
    for key, name in registry.RESULT_KEYS.items():
        if entry and entry.get("resultFiles"):
            configs[name] = read_result(registry.result_path(entry, key, results_dir))["config"]
    return configs


def _plan(tag: str, published: dict[str, dict[str, Any]], args: argparse.Namespace) -> tuple[Identity, Planned]:
    """The eval's run: its published identity (or a sibling's), with the flags on top."""
    name = EVALS[tag]
    base = published.get(name) or next(iter(published.values()), None)
    ident = identity_from_config(base) if base else Identity(spec=ProviderSpec(args.provider, args.model))
    if base and name not in published:
        ident = dataclasses.replace(ident, datasets=(), judges=())  # a sibling's dataset is not this eval's
    flags = {
        "provider": args.provider, "model": args.model, "base_url": args.base_url, "effort": args.effort,
        "thinking": args.thinking, "route": args.route, "max_tokens": args.max_tokens,
    }
    spec = dataclasses.replace(ident.spec, **{k: v for k, v in flags.items() if v is not None})
    judges = tuple(JudgeSpec.parse(j) for j in args.judge or ()) or ident.judges
    if TASKS[name].uses_judges and not judges:
        judges = default_judges(spec.provider)
    ident = dataclasses.replace(
        ident,
        spec=spec,
        system_prompt_prefix=args.system_prompt_prefix if args.system_prompt_prefix is not None else ident.system_prompt_prefix,
        limit=args.limit if args.limit is not None else ident.limit,
        split=args.split or ident.split,
        judges=judges,
    )
    return ident, plan(TASKS[name], ident)


def _command(tag: str, ident: Identity, args: argparse.Namespace, data: Path) -> list[str]:
    command = [sys.executable, "-m", "pytest", "-m", EVALS[tag], *to_flags(ident)]
    command += [f"--run-dir={data / 'runs'}", f"--results-dir={data / 'results'}"]
    if args.workers is not None:
        command += ["-n", str(args.workers)]
    for flag, value in (("--api-key-env", args.api_key_env), ("--concurrency", args.concurrency), ("--jest-url", args.jest_url)):
        if value is not None:
            command.append(f"{flag}={value}")
    for flag, on in (("--responses-api", args.responses_api), ("--force", args.force), ("--allow-errors", args.allow_errors)):
        if on:
            command.append(flag)
    return command


def _status(tag: str, planned: Planned, runs_dir: Path, results_dir: Path) -> str:
    cache = RunCache(run_dir(runs_dir, planned.config), session=None)
    answered = errors = 0
    for sample in planned.samples:
        record = cache.read(sample.id, "candidate")
        answered += bool(record and "response" in record)
        errors += bool(record and "error" in record)
    n = len(planned.samples)
    done = "result file written" if results_path(results_dir, planned.config).is_file() else "no result file yet"
    return f"  {tag}: {answered} of {n} answered (cached), {errors} errors, {n - answered} remaining; {done}"


def _metadata(args: argparse.Namespace, entry: dict[str, Any] | None, config: dict[str, Any]) -> dict[str, Any]:
    """The entry fields the flags set; a new model's missing ones are looked up, then required."""
    fields: dict[str, Any] = {}
    for key, value in (("provider", args.provider_name), ("url", args.url), ("releaseDate", args.release_date)):
        if value is not None:
            fields[key] = value
    if args.size is not None:
        fields["size"] = _size(args.size)
    if args.price_electricity is not None:
        fields["price"] = {"electricity": args.price_electricity}
    elif args.price_input is not None or args.price_output is not None:
        fields["price"] = {**((entry or {}).get("price") or {}), **{k: v for k, v in (("input", args.price_input), ("output", args.price_output)) if v is not None}}
        fields["price"].pop("electricity", None)
    if entry is None:
        _look_up_missing(fields, config)
    return fields


def _look_up_missing(fields: dict[str, Any], config: dict[str, Any]) -> None:
    from evals import metadata

    needed = ("provider", "url", "releaseDate", "price")
    if all(k in fields for k in needed):
        return  # size is optional: unknown for closed models
    found = metadata.lookup(config, fields.get("url"))
    for key in (*needed, "size"):
        if key not in fields and key in found:
            fields[key] = found[key]
            print(f"  looked up {key}: {found[key]}")
    missing = [flag for key, flag in (("provider", "--provider-name"), ("url", "--url"), ("releaseDate", "--release-date"),
                                      ("price", "--price-input/--price-output or --price-electricity")) if key not in fields]
    if missing:
        raise EvalError(f"a new model needs {', '.join(missing)} (not found by lookup either)")


def _size(values: list[str]) -> int:
    from evals import metadata

    total = 0
    for value in values:
        size = int(value) if value.isdigit() else metadata.weights_size(value)
        if not value.isdigit():
            print(f"  looked up --size {value}: {size:,} bytes")
        total += size
    return total


def _child_env() -> dict[str, str]:
    return {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONIOENCODING": "utf-8"}


def _run_serial(commands: dict[str, list[str]]) -> dict[str, int]:
    codes = {}
    for tag, command in commands.items():
        print(f"\n===== {tag}", flush=True)
        codes[tag] = subprocess.run(command, cwd=ROOT, env=_child_env(), check=False).returncode
    return codes


def _run_parallel(commands: dict[str, list[str]]) -> dict[str, int]:
    """Every eval at once; each output line is prefixed with its eval's tag."""
    printing = threading.Lock()

    def pump(tag: str, process: subprocess.Popen) -> None:
        for line in process.stdout:
            with printing:
                print(f"[{tag}] {line}", end="", flush=True)

    processes = {
        tag: subprocess.Popen(command, cwd=ROOT, env=_child_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
        for tag, command in commands.items()
    }
    pumps = [threading.Thread(target=pump, args=item, daemon=True) for item in processes.items()]
    for thread in pumps:
        thread.start()
    codes = {tag: process.wait() for tag, process in processes.items()}
    for thread in pumps:
        thread.join()
    return codes


if __name__ == "__main__":
    main()
