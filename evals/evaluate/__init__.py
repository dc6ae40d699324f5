"""`evaluate`: run the leaderboard's evals for one model, then publish the results.

    uv run evaluate "GPT 5.5" --model gpt-5.5 --provider openai --effort medium \
        --provider-name OpenAI --url https://openai.com --release-date 2026-08-01 \
        --price-input 1.25 --price-output 10
    uv run evaluate "GPT 5.5"              # resume what was last planned, or reproduce the published run
    uv run evaluate "GPT 5.5" --status     # progress of each eval's run
    uv run evaluate --verify ["GPT 5.5"]   # rescore the published runs offline

The first argument is the model's display name, its entry in data/models.json. A bare
`evaluate NAME` resumes the identity last planned for NAME (kept in data/plans/), or, for a
model published before any plan was kept, the identity its result files record; any identity
flag on top starts a different run. Everything is checked before the first paid request:
flags per provider, judges and API keys, and the models.json entry the run would publish.
Each eval runs as its own `pytest` process, one after another or all at once (--parallel).
An eval whose run is already published is reproduced offline, never run again. When the
results of every eval on the board are finished they are published into models.json and the
site is rebuilt, together."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evals import registry, urls
from evals.atomic import why_unwritable
from evals.config import results_path, run_dir
from evals.errors import EvalError, RegistryError, UsageError
from evals.evaluate import saved_plans
from evals.extensions import in_words, on_board
from evals.flags import Flag, add_evaluate_arguments, forwarded, how_to_run, refusals, remembered, resume, usd
from evals.grading.judges import JudgeSpec, default_judges
from evals.identity import FIELDS, Identity, add_identity_options, from_values, identity_from_config, parse_datasets, to_flags
from evals.plan import Planned, plan
from evals.providers import check_keys, make_provider
from evals.publish import finished_results, publish
from evals.results import Prices, read_result
from evals.scrub import escape_unencodable, printable
from evals.tasks import TAGS, TASKS

ROOT = Path(__file__).resolve().parents[2]
EVALS = TAGS  # "ff" -> "freeform", in the order the evals run
# The exit status, for a script: 0 published (or left alone as asked, or waiting in a batch),
# 1 refused or failed, 2 a usage error (nothing started), 130 interrupted.
REFUSED_OR_FAILED, USAGE, INTERRUPTED = 1, 2, 130
PYTEST_USAGE_ERROR = 4


# evaluate's own: the price models.json records for a local model's electricity.
PRICE_ELECTRICITY = Flag("--price-electricity", "USD per kWh (local models)", float, pytest=False, evaluate_group="meta", check=usd)


def _board_tags() -> list[str]:
    """The evals `evaluate` runs by default: those on the leaderboard."""
    return [task.tag for task in on_board().values()]


def _evals_help() -> str:
    board = _board_tags()
    default = f"all {in_words(len(board))}" if len(board) == len(EVALS) else f"the board's, {','.join(board)}"
    return f"comma list of {', '.join(EVALS)} (default {default})"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="evaluate", description=__doc__.split("\n\n")[0])
    ap.add_argument("name", nargs="?", help="display name: the model's entry in data/models.json")
    ap.add_argument("--verify", action="store_true", help="rescore every published run (or only NAME's) offline from its run folder and compare it with its result file")
    ap.add_argument("--regrade", action="store_true", help="rescore every published run (or only NAME's) offline with today's graders and publish the new scores (with --dry-run: only show them)")
    ident = ap.add_argument_group("run identity", "defaults: what was last planned for NAME; any of these starts a different run")
    add_identity_options(ident.add_argument, defaults=False)

    how = ap.add_argument_group("how to run (not part of the run identity)")
    add_evaluate_arguments(how.add_argument, how_to_run(), "how")
    how.add_argument("--evals", default=",".join(_board_tags()), help=_evals_help())
    how.add_argument("--parallel", action="store_true", help="run the evals at once, each line prefixed by its eval")
    how.add_argument("--no-build", action="store_true", help="run, but leave models.json and the site alone")
    how.add_argument("--dry-run", action="store_true", help="print the plan (commands, run folders, result files, requests it would make), then every problem found; "
                     "exit as the command would: 2 for a usage error, 1 for another problem")
    how.add_argument("--status", action="store_true", help="print each eval's progress and exit")
    how.add_argument("--data-dir", type=Path, default=ROOT / "data", help=argparse.SUPPRESS)

    meta = ap.add_argument_group("models.json metadata (a new model needs them; looked up when left out)")
    meta.add_argument("--provider-name", help='display provider, e.g. "OpenAI"')
    meta.add_argument("--url", help="the model's page")
    meta.add_argument("--release-date", help="YYYY-MM-DD")
    meta.add_argument("--size", nargs="+", metavar="BYTES_OR_LINK", help="weights size: byte counts or Hugging Face links, added up")
    add_evaluate_arguments(meta.add_argument, (*how_to_run(), PRICE_ELECTRICITY), "meta")

    args = ap.parse_args(argv)
    if args.name is None and not (args.verify or args.regrade):
        ap.error("the display NAME is required (or --verify, to rescore every published run)")
    args.tags = [t.strip() for t in args.evals.split(",") if t.strip()]
    if not args.tags or any(t not in EVALS for t in args.tags):
        ap.error(f"--evals takes a comma list of {', '.join(EVALS)} (got {args.evals!r})")
    for value in args.size or []:
        if not (value.isdigit() or value.startswith(("http://", "https://"))):
            ap.error(f"--size takes byte counts or Hugging Face links (got {value!r})")
    # A value of the right type that no run can use (nan, inf, 0 or 1e308 seconds, 0 workers):
    # one line, before any plan, as pytest refuses it (argparse's usage would bury it).
    if refused := refusals(lambda dest: getattr(args, dest), (*how_to_run(), PRICE_ELECTRICITY), evaluate=True):
        ap.exit(2, f"evaluate: error: {refused[0]}\n")
    if args.price_electricity is not None and (args.price_input is not None or args.price_output is not None):
        ap.error("--price-electricity excludes --price-input/--price-output")
    return args


def main(argv: list[str] | None = None) -> None:
    try:
        _main(argv)
    except BrokenPipeError:
        # The reader went away (`evaluate ... | head`): nothing more to say, and not the
        # "error: : Broken pipe" that the OSError below would print. The descriptor is pointed at
        # devnull so that the interpreter's last flush cannot fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise SystemExit(1) from None


def _main(argv: list[str] | None) -> None:
    escape_unencodable(sys.stdout, line_buffering=True)
    args = parse_args(argv)
    if args.verify:
        from evals.verify import verify_published

        data = args.data_dir.resolve()
        raise SystemExit(verify_published(data / "models.json", data / "results", data / "runs", args.name))
    if args.regrade:
        raise SystemExit(_regrade(args))
    try:
        raise SystemExit(evaluate(args))
    except EvalError as error:
        print(printable(f"error: {error}"), file=sys.stderr)
        raise SystemExit(USAGE if isinstance(error, UsageError) else REFUSED_OR_FAILED) from None
    except BrokenPipeError:
        raise  # the reader's, not a data folder's (`main`)
    except OSError as error:  # a data folder that fails while the command runs (a full disk)
        raise SystemExit(f"error: {error.filename or ''}: {error.strerror or error}") from None
    except KeyboardInterrupt:
        print(f"\ninterrupted: every answer so far is cached; `evaluate {args.name!r}` resumes", file=sys.stderr)
        raise SystemExit(INTERRUPTED) from None


@dataclass
class Eval:
    """One eval of the command: its identity, its planned run, where it lands."""

    tag: str
    identity: Identity
    dataset: str
    planned: Planned
    run_folder: Path
    result_file: Path
    published: bool  # its result file is named by models.json: reproduced, never run again
    finished: bool = False  # its result file is reproduced by its run folder now and nothing is left to retry: not run again

    @property
    def name(self) -> str:
        return EVALS[self.tag]

    @property
    def key(self) -> str:
        return TASKS[self.name].key


def evaluate(args: argparse.Namespace) -> int:
    data = args.data_dir.resolve()
    models_path, results_dir, runs_dir = data / "models.json", data / "results", data / "runs"
    if not (args.status or args.dry_run) and (why := why_unwritable(data)):
        raise UsageError(f"{data}: {why}; the plan, run folders, result files and models.json are written there")
    models = registry.load_models(models_path, results=results_dir)
    entry = registry.find_entry(models, args.name)
    saved = saved_plans.load(data / "plans", args.name)
    if saved:
        _resume_how_to_run(args, saved)
    published = registry.published_files(models_path, results=results_dir)
    # The board's evals are planned (and remembered) even when --evals picks some of them: a
    # model is published once it has them all. An eval off the board only when picked.
    evals = {tag: _plan_eval(tag, args, saved, entry, published, results_dir, runs_dir)
             for tag in EVALS if tag in args.tags or TASKS[EVALS[tag]].on_board}
    smoke = any(e.planned.config.is_smoke_test for e in evals.values())
    reference = any(e.identity.spec.provider == "reference" for e in evals.values())
    publishing = not (smoke or reference or args.no_build)
    selected = [evals[tag] for tag in args.tags]
    if not args.status:
        for e in selected:
            e.finished = _reproduced(e, args, runs_dir)

    # Every check before the first paid request; the first mistake stops the command, and
    # with --dry-run every one is kept, to follow the plan.
    problems: list[EvalError] | None = [] if args.dry_run else None
    if not args.status:
        _found(problems, _check_keys, selected)
        _found(problems, _check_energy, args)
    if args.status:
        metadata: dict[str, Any] = {}
    elif publishing:
        metadata = _found(problems, _metadata, args, saved, entry, next(iter(evals.values()))) or {}
    else:  # kept in the plan for the run that publishes, which checks them
        metadata = _found(problems, _given_metadata, args, saved, entry) or {}
    _found(problems, _check_force, args, selected)

    print(f"{args.name}:")
    commands = {}
    for e in selected:
        commands[e.tag] = _command(e, args, data)
        shown = ("published: reproduced offline, not run again" if e.published
                 else "finished: reproduced offline from its run folder, not run again" if e.finished
                 else subprocess.list2cmdline(commands[e.tag][3:]))
        print(f"  {e.tag}: {shown}")
        print(f"      run folder  {e.run_folder}")
        print(f"      results     {e.result_file}")
        if args.dry_run:
            print(f"      requests    {_requests(e)}")
    if args.dry_run:
        for problem in problems or ():
            print(printable(f"error: {problem}"), file=sys.stderr)
        return max((USAGE if isinstance(p, UsageError) else REFUSED_OR_FAILED for p in problems or ()), default=0)
    if args.status:
        for e in selected:
            print(_status(e))
            for line in _batch_status(e, args):
                print(printable(f"      {line}"))  # a batch's problem quotes its server
        return 0

    saved_plans.save(data / "plans", args.name, {e.name: {"config": _remembered(e), "dataset": e.dataset, **_credentials_given(e)} for e in evals.values()},
               {**(saved or {}).get("metadata", {}), **metadata}, remembered(args, how_to_run()))
    to_run = {tag: command for tag, command in commands.items() if not (evals[tag].published or evals[tag].finished)}
    codes = _run_parallel(to_run) if args.parallel else _run_serial(to_run)
    if any(code == PYTEST_USAGE_ERROR for code in codes.values()):
        print("error: stopped at a usage error (above); fix the command and run it again", file=sys.stderr)
        return USAGE
    reproduced = {e.key: e.result_file for e in evals.values() if e.finished}  # checked just now: not rescored twice
    finished, notes = finished_results({e.key: e.result_file for e in evals.values() if not e.finished}, run_root=runs_dir)
    finished = {**reproduced, **finished}
    board = {key: path for key, path in finished.items() if key in registry.RESULT_KEYS}  # an eval off the board is never published
    if to_run:  # the summary below their logs, under the name again
        print(f"\n{args.name}:")
    for note in notes:
        print(printable(f"  {note}"))

    refused = False
    lines: list[str] = []
    if not publishing:
        why = "--no-build" if args.no_build else "smoke test or reference run"
        print(f"  {why}: models.json left alone")
    elif not board:
        print("  nothing finished so far: models.json left alone")
    else:
        from evals.site import rebuild_site  # only when publishing: the site brings pydantic

        lines = publish(args.name, board, metadata=metadata or None, kwh=_measured_kwh(board) if args.energy else None,
                        allow_errors=args.allow_errors, models_path=models_path, results_dir=results_dir, rebuild=rebuild_site(data))
        for line in lines:
            print(f"  {line}")
        refused = any(line.startswith("not published:") for line in lines)
    unfinished = [tag for tag in args.tags if evals[tag].key not in finished]
    from evals.batch import has_batches

    waiting = [tag for tag in unfinished if has_batches(evals[tag].run_folder)]
    fate = _fate(publishing, args.no_build, lines)
    price = metadata.get("price") or ((saved or {}).get("metadata") or {}).get("price") or (entry or {}).get("price")
    for line in _table([evals[tag] for tag in args.tags], finished, {tag: "waiting in a batch" if tag in waiting else "did not finish" for tag in unfinished},
                       fate, price):
        print(line)
    if waiting and waiting == unfinished:
        print(f"  {', '.join(waiting)}: waiting in batches; `evaluate {args.name!r}` collects them when they are done "
              f"(`evaluate {args.name!r} --status` shows their progress)")
        return REFUSED_OR_FAILED if refused else 0
    if unfinished:
        failed = ", ".join(f"{tag} (pytest exit {codes[tag]})" if tag in codes else tag for tag in unfinished)
        print(f"error: {failed} did not finish (see the log above); {_next_step(args.name, unfinished, codes)}", file=sys.stderr)
        return REFUSED_OR_FAILED
    return REFUSED_OR_FAILED if refused else 0


def _fate(publishing: bool, no_build: bool, lines: list[str]) -> str:
    """What happened to models.json, in a few words for the summary's last column."""
    if not publishing:
        return "left alone (--no-build)" if no_build else "not publishable (smoke test or reference run)"
    for line in lines:
        for start, words in (("still published", "still published"), ("published", "published"),
                             ("not published yet", "waits for the other evals"), ("not published", "not published (above)")):
            if line.startswith(start):
                return words
    return "left alone (nothing finished)"


def _table(shown: list[Eval], finished: dict[str, Path], unfinished: dict[str, str], fate: str, price: dict[str, float] | None) -> list[str]:
    """The run in one table, an eval a row: its score and interval, its errors, its cost (the
    model's tokens at its price per token, as the board counts it; else its tokens or the
    energy measured), and what models.json says of it now (the lines above say why)."""
    rows = [("eval", "score", "95% CI", "errors", "cost", "models.json")]
    for e in shown:
        if e.key not in finished:
            rows.append((e.tag, "-", "-", "-", "-", unfinished.get(e.tag, "did not finish")))
            continue
        result = read_result(finished[e.key])
        summary = result["summary"]
        overall = summary.get("overall", summary)
        low, high = overall["ci95"]
        errors = f"{overall['apiErrors']} API"
        for key, word in (("unparseable", "unparseable"), ("judgeUnparseable", "unparseable verdicts")):
            if key in overall:
                errors += f", {overall[key]} {word}"
        cost = _cost(overall, result.get("energy"), price)
        where = fate if e.key in registry.RESULT_KEYS else "off the board"
        rows.append((e.tag, f"{overall['accuracy']:.1%}", f"{low:.1%}-{high:.1%}", errors, cost, where))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]


def _cost(overall: dict[str, Any], energy: dict[str, Any] | None, price: dict[str, float] | None) -> str:
    tokens = overall["tokens"]
    if price and "input" in price:
        batched = (overall.get("batch") or {}).get("tokens")
        return f"${Prices(price['input'], price['output']).cost(tokens, batched):,.3f}"
    if price and energy and energy.get("kWh") is not None:
        return f"${energy['kWh'] * price['electricity']:,.3f}"
    return f"{tokens['input'] + tokens['output']:,} tokens"


# pytest's exits that a resume would meet again: the answers cached so far do not change them.
NOT_RESUMABLE = {3: "stopped at an internal error (above), which a resume would meet again", 5: "collected no item"}


def _next_step(name: str, unfinished: list[str], codes: dict[str, int]) -> str:
    """What helps the evals that did not finish: a resume, only where one can (an interrupted
    run, API errors, an eval not reached), and the cause for the others."""
    stuck = {tag: NOT_RESUMABLE[codes[tag]] for tag in unfinished if codes.get(tag) in NOT_RESUMABLE}
    causes = "; ".join(f"{tag} {why}" for tag, why in stuck.items())
    if not stuck:
        return f"`evaluate {name!r}` resumes"
    return causes + (f"; `evaluate {name!r}` resumes the others" if len(stuck) < len(unfinished) else "")


def _regrade(args: argparse.Namespace) -> int:
    """`--regrade [NAME]`: nothing is asked of any model (evals.evaluate.regrade)."""
    from evals.site import rebuild_site
    from evals.evaluate.regrade import regrade

    data = args.data_dir.resolve()
    return regrade(data / "models.json", data / "results", data / "runs", args.name, dry_run=args.dry_run, render=rebuild_site(data))


def _resume_how_to_run(args: argparse.Namespace, saved: dict[str, Any]) -> None:
    """The how-to-run flags the plan kept, for those left out today: a bare resume sends its
    requests as the first attempt did (the same key variable, the same API, the same meter)."""
    first: dict[str, Any] = next(iter(saved["evals"].values()), {})
    planned = first.get("config", {})
    resume(args, how_to_run(), saved.get("howToRun") or {}, same_provider=args.provider in (None, planned.get("provider")))


def _plan_eval(tag: str, args: argparse.Namespace, saved: dict[str, Any] | None, entry: dict[str, Any] | None,
               published: set[Path], results_dir: Path, runs_dir: Path) -> Eval:
    """The eval's run: what was last planned for the model (or published), flags on top."""
    name = EVALS[tag]
    base, source = _base_config(name, saved, entry, results_dir)
    given = {f.name: getattr(args, f.name) for f in FIELDS}
    if base is None and not (given["provider"] and (given["model"] or given["provider"] == "reference")):
        raise UsageError(f"nothing is planned for {args.name!r}: a new model needs --model and --provider "
                         f"(and --provider-name, --url, --release-date and prices, or they are looked up)")
    datasets = parse_datasets(args.dataset)
    if base is not None:
        ident = identity_from_config(base, source)
        if base["eval"] != name:  # a sibling eval's identity: its dataset and judges are not this eval's
            ident = ident.replace(datasets=(), judges=())
        if given["provider"] and given["provider"] != ident.spec.provider:
            ident = ident.replace(base_url=None, effort=None, thinking=False, route=None)  # they belonged to the old provider
        values = {**ident.fields(), **{k: v for k, v in given.items() if v is not None}}
        judges, datasets = ident.judges, {**dict(ident.datasets), **datasets}
    else:
        values, judges = given, ()
    if args.judge:
        judges = tuple(_judge(text) for text in args.judge)
    if not judges and TASKS[name].uses_judges:
        judges = default_judges(values["provider"])
    ident = from_values(values, datasets=datasets.items(), judges=judges, api_key_env=args.api_key_env, responses_api=args.responses_api,
                        device=args.device)
    _check_credentials(ident, (saved or {}).get("evals", {}).get(name, {}).get("credentialsGiven", ()))
    planned = plan(TASKS[name], ident)
    result_file = results_path(results_dir, planned.config)
    return Eval(tag, ident, datasets.get(name, "bundled"), planned, run_dir(runs_dir, planned.config), result_file, result_file in published)


def _endpoints(ident: Identity) -> list[str]:
    return [url for url in (ident.spec.base_url, *(judge.base_url for judge in ident.judges)) if url]


def _credentials_given(e: Eval) -> dict[str, Any]:
    """Which of the eval's URLs were given with credentials: never saved, so the plan says
    they must be given again (not which they were)."""
    given = [url for url in _endpoints(e.identity) if urls.given_with_credentials(url)]
    return {"credentialsGiven": given} if given else {}


def _check_credentials(ident: Identity, needed: list[str]) -> None:
    """Refuse to resume an endpoint planned with credentials that were not given again."""
    for url in _endpoints(ident):
        if url in needed and not urls.given_with_credentials(url):
            raise UsageError(f"{url} was given with credentials (user info or a key in its query), which are never saved: "
                             "pass the URL with them again (--base-url, or --judge PROVIDER:MODEL@URL)")


def _remembered(e: Eval) -> dict[str, Any]:
    """The config a bare rerun starts from: a smoke test's --limit and --split are left out,
    so that `evaluate NAME --limit 3` then `evaluate NAME` is the check, then the real run."""
    config = {k: v for k, v in e.planned.config.to_dict().items() if k not in ("limit", "split")}
    # What a provider records in place of a flag (a local checkpoint's content hash for its
    # folder) cannot be asked for again: the flag as given is what a bare rerun passes.
    given = {f.key: e.identity.value(f) for f in FIELDS}
    return {**config, **{key: given[key] for key in dict(e.identity.spec.recorded) if given.get(key) is not None}}


def _base_config(name: str, saved: dict[str, Any] | None, entry: dict[str, Any] | None, results_dir: Path) -> tuple[dict[str, Any] | None, str | None]:
    """The config to start from: the saved plan's, else the published result file's, else
    a sibling eval's of either; with the dataset source the plan recorded."""
    planned = (saved or {}).get("evals", {})
    if name in planned:
        return planned[name]["config"], planned[name].get("dataset")
    if entry and (files := entry.get("resultFiles")):
        key = TASKS[name].key if TASKS[name].key in files else next(iter(files))  # off the board: a sibling's
        return read_result(registry.result_path(entry, key, results_dir))["config"], None
    sibling = next(iter(planned.values()), None)
    return (sibling["config"], None) if sibling else (None, None)


def _judge(text: str) -> JudgeSpec:
    try:
        return JudgeSpec.parse(text)
    except ValueError as error:
        raise UsageError(str(error)) from None


def _found(problems: list[EvalError] | None, check, *values: Any) -> Any:
    """`check(*values)`: its mistake stops the command, or with --dry-run (`problems` a list)
    is kept there and the checks go on."""
    try:
        return check(*values)
    except EvalError as error:
        if problems is None:
            raise
        problems.append(error)
        return None


def _check_keys(selected: list[Eval]) -> None:
    """Every provider the command will call: its API keys, all missing ones in one line, then
    the candidate built, before anything is paid for. A published eval calls nothing."""
    running = [e for e in selected if not (e.published or e.finished)]
    candidates = [(f"--provider {e.identity.spec.provider}", e.identity.spec) for e in running]
    judges = [judge.flagged() for e in running if TASKS[e.name].uses_judges for judge in e.identity.judges]
    check_keys([*candidates, *judges])
    for e in running:
        make_provider(e.identity.spec)


def _check_energy(args: argparse.Namespace) -> None:
    """The energy flags, and the power source they name able to measure now (a RAPL zone, a
    HWiNFO log being written): each eval's pytest would stop at it, after the evals before it."""
    from evals import energy

    if source := energy.chosen(lambda dest: getattr(args, dest, None)):
        try:
            source.check()
        except EvalError as error:
            raise UsageError(f"--energy: {error}") from None


def _check_force(args: argparse.Namespace, selected: list[Eval]) -> None:
    if args.force and (published := [e for e in selected if e.published]):
        raise UsageError(f"{', '.join(e.tag for e in published)}: the run is published in models.json and stays as it is; "
                         "--force would start over a published run (remove its resultFiles from models.json first)")


# How-to-run flags that change what a finished run's result file says (its grading):
# given today, the eval runs again from its cache to write it anew.
RESULT_FLAGS = ("luau_timeout", "jest_url")


def _reproduced(e: Eval, args: argparse.Namespace, runs_dir: Path) -> bool:
    """Whether a run of the eval could only write its result file again as it is: its run
    folder reproduces the file now (verify's rescoring, which the publish step needs anyway),
    no API error is left for a rerun to retry, and no flag given today changes what the file
    says. Such an eval is not run again: a pytest start-up for nothing (issue 19.14)."""
    if e.published or args.force or not e.result_file.is_file() or any(getattr(args, key) is not None for key in RESULT_FLAGS):
        return False
    from evals.verify import compare

    if compare(e.result_file, run_root=runs_dir)[0] != "ok":
        return False
    summary = read_result(e.result_file)["summary"]
    return not summary.get("overall", summary)["apiErrors"]


def _command(e: Eval, args: argparse.Namespace, data: Path) -> list[str]:
    command = [sys.executable, "-m", "pytest", "-m", e.name, *to_flags(e.identity)]
    command += [f"--run-dir={data / 'runs'}", f"--results-dir={data / 'results'}"]
    return command + forwarded(args, how_to_run())


def _cached(e: Eval) -> tuple[int, int]:
    """(answered, errors) among the eval's candidate calls its run folder holds."""
    from evals.cache import RunCache

    cache = RunCache(e.run_folder, session=None)
    answered = errors = 0
    for sample in e.planned.samples:
        record = cache.read(sample.id, "candidate")
        answered += bool(record and "response" in record)
        errors += bool(record and "error" in record)
    return answered, errors


def _requests(e: Eval) -> str:
    """The model requests the eval would make, for --dry-run: an item not answered yet is
    asked once, and judged by each judge (retries and calls cached since come on top or off)."""
    if e.published:
        return "none (published: reproduced offline)"
    if e.finished:
        return "none (finished: reproduced offline)"
    answered = _cached(e)[0]
    n = len(e.planned.samples)
    judges = len(e.identity.judges) if TASKS[e.name].uses_judges else 0
    judged = f" + {(n - answered) * judges:,} to {in_words(judges)} judge{'s' if judges != 1 else ''}" if judges else ""
    return f"about {(n - answered) * (1 + judges):,}: {n - answered:,} to the model{judged} ({answered:,} of {n:,} items cached)"


def _status(e: Eval) -> str:
    answered, errors = _cached(e)
    n = len(e.planned.samples)
    done = "published" if e.published else "result file written" if e.result_file.is_file() else "no result file yet"
    return f"  {e.tag}: {answered} of {n} answered (cached), {errors} errors, {n - answered} remaining; {done}"


def _measured_kwh(finished: dict[str, Path]) -> dict[str, float]:
    """The kilowattHour figures of models.json (`registry.KWH_KEYS`: an eval's own, or one per
    band of an eval with bands) from the energy the result files record; a figure none records
    is left out, with a warning, so such an entry is not published as electricity-priced."""
    kwh: dict[str, float] = {}
    for key, path in finished.items():
        measured = read_result(path).get("energy") or {}
        figures = measured.get("bands", {}) if TASKS[registry.RESULT_KEYS[key]].bands else {key: measured.get("kWh")}
        kwh.update({k: v for k, v in figures.items() if v is not None})
    for key in registry.KWH_KEYS:
        if key not in kwh:
            print(f"  warning: no energy measured for {key} (its requests ran without --energy, or the source took no readings then)")
    return kwh


def _batch_status(e: Eval, args: argparse.Namespace) -> list[str]:
    """The run's recorded batches, each asked once for its state; a provider that cannot be
    reached (its key is not set) says so once, and its batches show their last recorded state."""
    from evals.batch import describe
    from evals.providers import ProviderSpec, make_provider

    problems: list[str] = []

    def api_for(entry: dict[str, Any]):
        spec = ProviderSpec.from_identity(entry["provider"], responses_api=entry.get("responsesApi", False),
                                          api_key_env=args.api_key_env if entry["provider"] == e.identity.spec.identity() else None)
        try:
            return make_provider(spec).batch_api()
        except EvalError as error:
            if str(error) not in problems:
                problems.append(str(error))
            return None

    lines = describe(e.run_folder, api_for)
    return [f"cannot ask the batches' state ({problem}): showing the state last recorded" for problem in problems] + lines


def _metadata(args: argparse.Namespace, saved: dict[str, Any] | None, entry: dict[str, Any] | None, ff: Eval) -> dict[str, Any]:
    """The entry fields this command sets (earlier flags for NAME, then today's), checked as
    the entry they would make; a new model's missing ones are looked up, then required."""
    fields = _given_metadata(args, saved, entry)
    if entry is None:
        _look_up_missing(fields, ff.planned.config.to_dict())
    try:
        registry.check_entry({**(entry or {"name": args.name, "size": None}), **fields})
    except RegistryError as error:  # the flags' values: a usage error, as a wrong flag is
        raise UsageError(str(error)) from None
    return fields


def _given_metadata(args: argparse.Namespace, saved: dict[str, Any] | None, entry: dict[str, Any] | None) -> dict[str, Any]:
    """The entry fields given for NAME: earlier flags (kept in its plan), then today's."""
    fields: dict[str, Any] = dict((saved or {}).get("metadata") or {})
    for key, value in (("provider", args.provider_name), ("url", args.url), ("releaseDate", args.release_date)):
        if value is not None:
            fields[key] = value
    if args.size is not None:
        fields["size"] = _size(args.size)
    if args.price_electricity is not None:
        fields["price"] = {"electricity": args.price_electricity}
    elif args.price_input is not None or args.price_output is not None:
        fields["price"] = _token_price(args, fields.get("price") or (entry or {}).get("price"), entry is not None)
    return fields


def _token_price(args: argparse.Namespace, before: dict[str, Any] | None, existing: bool) -> dict[str, Any]:
    """The price per token after --price-input and/or --price-output: one of them alone updates
    that price of an entry priced per token, keeping the other; a new model needs both."""
    given = {key: value for key, value in (("input", args.price_input), ("output", args.price_output)) if value is not None}
    if len(given) == 2:
        return given
    alone = "--price-input" if "input" in given else "--price-output"
    if not existing:
        raise UsageError(f"--price-input and --price-output go together for a new model: pass both, in USD per million tokens (got {alone} alone)")
    if not before or "electricity" in before:
        raise UsageError(f"{alone} alone updates one price per token, and {args.name!r} is priced per kWh: "
                         "pass --price-input and --price-output together")
    return {**before, **given}


# The models.json fields a new model needs, and the flags that give them.
NEEDED = (("provider", "--provider-name"), ("url", "--url"), ("releaseDate", "--release-date"),
          ("price", "--price-input/--price-output or --price-electricity"))


def _look_up_missing(fields: dict[str, Any], config: dict[str, Any]) -> None:
    from evals import metadata

    if all(key in fields for key, _ in NEEDED):
        return  # size is optional: unknown for closed models
    missing = [flag for key, flag in NEEDED if key not in fields]
    try:
        found = metadata.lookup(config, fields.get("url"))
    except metadata.MetadataError as error:
        # Offline, the lookup can only fail: the flags it stands in for need no network.
        raise metadata.MetadataError(f"{error}; or pass {_and(missing)}, and nothing is looked up") from None
    for key in (*(key for key, _ in NEEDED), "size"):
        if key not in fields and key in found:
            fields[key] = found[key]
            print(f"  looked up {key}: {found[key]}")
    if missing := [flag for key, flag in NEEDED if key not in fields]:
        raise UsageError(f"a new model needs {', '.join(missing)} (not found by lookup either)")


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _size(values: list[str]) -> int:
    from evals import metadata

    total = 0
    for value in values:
        try:
            size = int(value) if value.isdigit() else metadata.weights_size(value)
        except metadata.MetadataError as error:
            raise metadata.MetadataError(f"{error}; or pass --size as a number of bytes, and nothing is looked up") from None
        if not value.isdigit():
            print(f"  looked up --size {value}: {size:,} bytes")
        total += size
    return total


def _child_env() -> dict[str, str]:
    return {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONIOENCODING": "utf-8"}


def _quiet_after_first(commands: dict[str, list[str]]) -> dict[str, list[str]]:
    """pytest's header (platform, rootdir, plugins) once, from the first eval: the same for all."""
    return {tag: command if i == 0 else [*command, "--no-header"] for i, (tag, command) in enumerate(commands.items())}


def _run_serial(commands: dict[str, list[str]]) -> dict[str, int]:
    codes = {}
    for tag, command in _quiet_after_first(commands).items():
        print(f"\n===== {tag}", flush=True)
        codes[tag] = subprocess.run(command, cwd=ROOT, env=_child_env(), check=False).returncode
        if codes[tag] == PYTEST_USAGE_ERROR:
            break  # the next eval would print the same error
    return codes


def _run_parallel(commands: dict[str, list[str]]) -> dict[str, int]:
    """Every eval at once; each output line is prefixed with its eval's tag."""
    printing = threading.Lock()

    def pump(tag: str, process: subprocess.Popen[str]) -> None:
        assert process.stdout is not None  # a pipe (PIPE below)
        for line in process.stdout:
            with printing:
                print(f"[{tag}] {line}", end="", flush=True)

    processes = {
        tag: subprocess.Popen(command, cwd=ROOT, env=_child_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              encoding="utf-8", errors="replace")  # as _child_env has them write, whatever the locale
        for tag, command in _quiet_after_first(commands).items()
    }
    pumps = [threading.Thread(target=pump, args=item, daemon=True) for item in processes.items()]
    for thread in pumps:
        thread.start()
    try:
        codes = {tag: process.wait() for tag, process in processes.items()}
    except KeyboardInterrupt:
        for process in processes.values():
            process.terminate()
        raise
    for thread in pumps:
        thread.join()
    return codes


if __name__ == "__main__":
    main()
