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
site is rebuilt, together.

The command is a pipeline of phases, a module each, `run` calling them in order: `plan` (each
eval's run, from `saved_plans` or the published files, today's flags on top), `checks` (every
check before the first paid request; with --dry-run all kept), `entry` (the models.json fields
it sets), `report` (the plan shown, and the summary), `status` (--status; --dry-run's requests);
then the run phase, imported only past --dry-run and --status: `children` (each eval's pytest)
and `publishing`. `regrade` is --regrade; --verify is `evals.verify`."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, NoReturn

from evals.budget import CAPPED
from evals.entry_points import ExtensionError
from evals.errors import EvalError, UsageError
from evals.evaluate import checks
from evals.evaluate.entry import entry_fields, given_fields
from evals.evaluate.plan import EVALS, Plan, plan_command, save_plan
from evals.evaluate.report import price_of, show_plan, show_summary, spent, token_prices
from evals.evaluate.status import show_status
from evals.command_line import how_to_run
from evals.flags import Flag, add_evaluate_arguments, refusals, usd
from evals.identity import add_identity_options
from evals.scrub import escape_unencodable, printable
from evals.tasks import on_board
from evals.words import did_you_mean, in_words

ROOT = Path(__file__).resolve().parents[2]
# The exit status, for a script: 0 published (or left alone as asked, or waiting in a batch),
# 1 refused or failed, 2 a usage error (nothing started), 130 interrupted.
REFUSED_OR_FAILED, USAGE, INTERRUPTED = 1, 2, 130


# evaluate's own: the price models.json records for a local model's electricity.
PRICE_ELECTRICITY = Flag(
    "--price-electricity",
    "USD per kWh (local models)",
    float,
    pytest=False,
    evaluate_group="meta",
    check=usd,
)


def _board_tags() -> list[str]:
    """The evals `evaluate` runs by default: those on the leaderboard."""
    return [task.tag for task in on_board().values()]


def _evals_help() -> str:
    board = _board_tags()
    default = (
        f"all {in_words(len(board))}"
        if len(board) == len(EVALS)
        else f"the board's, {','.join(board)}"
    )
    return (
        f"comma list of {', '.join(EVALS)} (default: what NAME's last plan picked, else {default})"
    )


class _Parser(argparse.ArgumentParser):
    """One line for a mistake, as every other refusal is: argparse's usage of evaluate runs to
    twenty lines and buries the message (`evaluate --help` shows it)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {printable(message)}\n")

    def parse_args(self, args=None, namespace=None):
        parsed, unknown = self.parse_known_args(args, namespace)
        if unknown:
            self.error(f"unrecognized argument {unknown[0]!r}{self._suggestion(unknown[0])}")
        return parsed

    def _suggestion(self, given: str) -> str:
        if not given.startswith("-"):
            return ""
        options = [name for action in self._actions for name in action.option_strings]
        return did_you_mean(given.split("=", 1)[0], options)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = _Parser(prog="evaluate", description=__doc__.split("\n\n")[0])
    ap.add_argument("name", nargs="?", help="display name: the model's entry in data/models.json")
    ap.add_argument(
        "--verify",
        action="store_true",
        help=(
            "rescore every published run (or only NAME's) offline from its run folder and compare "
            "it with its result file"
        ),
    )
    ap.add_argument(
        "--regrade",
        action="store_true",
        help=(
            "rescore every published run (or only NAME's) offline with today's graders and publish "
            "the new scores (with --dry-run: only show them)"
        ),
    )
    ident = ap.add_argument_group(
        "run identity",
        "defaults: what was last planned for NAME; any of these starts a different run",
    )
    add_identity_options(ident.add_argument, defaults=False)

    how = ap.add_argument_group("how to run (not part of the run identity)")
    add_evaluate_arguments(how.add_argument, how_to_run(), "how")
    how.add_argument("--evals", help=_evals_help())
    how.add_argument(
        "--parallel",
        action="store_true",
        help="run the evals at once, each line prefixed by its eval",
    )
    how.add_argument(
        "--no-build", action="store_true", help="run, but leave models.json and the site alone"
    )
    how.add_argument("--status", action="store_true", help="print each eval's progress and exit")
    how.add_argument("--data-dir", type=Path, default=ROOT / "data", help=argparse.SUPPRESS)

    meta = ap.add_argument_group(
        "models.json metadata (a new model needs them; looked up when left out)"
    )
    meta.add_argument("--provider-name", help='display provider, e.g. "OpenAI"')
    meta.add_argument("--url", help="the model's page")
    meta.add_argument("--release-date", help="YYYY-MM-DD")
    meta.add_argument(
        "--size",
        nargs="+",
        metavar="BYTES_OR_LINK",
        help="weights size: byte counts or Hugging Face links, added up",
    )
    add_evaluate_arguments(meta.add_argument, (*how_to_run(), PRICE_ELECTRICITY), "meta")

    args = ap.parse_args(argv)
    if args.name is None and not (args.verify or args.regrade):
        ap.error("the display NAME is required (or --verify, to rescore every published run)")
    # Left out: what the saved plan picked last (a bare resume runs what the first run ran),
    # else the board's (evals.evaluate.plan.picked).
    args.tags = None
    if args.evals is not None:
        args.tags = [t.strip() for t in args.evals.split(",") if t.strip()]
        if not args.tags or any(t not in EVALS for t in args.tags):
            ap.error(f"--evals takes a comma list of {', '.join(EVALS)} (got {args.evals!r})")
    for value in args.size or []:
        if not (value.isdigit() or value.startswith(("http://", "https://"))):
            ap.error(f"--size takes byte counts or Hugging Face links (got {value!r})")
    # A value of the right type that no run can use (nan, inf, 0 or 1e308 seconds, 0 workers):
    # one line, before any plan, as pytest refuses it (argparse's usage would bury it).
    if refused := refusals(
        lambda dest: getattr(args, dest), (*how_to_run(), PRICE_ELECTRICITY), evaluate=True
    ):
        ap.exit(2, f"evaluate: error: {refused[0]}\n")
    if args.price_electricity is not None and (
        args.price_input is not None or args.price_output is not None
    ):
        ap.error("--price-electricity excludes --price-input/--price-output")
    return args


def main(argv: list[str] | None = None) -> None:
    try:
        _main(argv)
    except ExtensionError as error:
        # two installed packages claim one name, or one is broken: every mode, from its flags on
        print(printable(f"error: {error}"), file=sys.stderr)
        raise SystemExit(USAGE) from None
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
        raise SystemExit(
            verify_published(data / "models.json", data / "results", data / "runs", args.name)
        )
    if args.regrade:
        raise SystemExit(_regrade(args))
    try:
        raise SystemExit(run(args))
    except EvalError as error:
        print(printable(f"error: {error}"), file=sys.stderr)
        raise SystemExit(_exit_status(error)) from None
    except BrokenPipeError:
        raise  # the reader's, not a data folder's (`main`)
    except OSError as error:  # a data folder that fails while the command runs (a full disk)
        raise SystemExit(f"error: {error.filename or ''}: {error.strerror or error}") from None
    except KeyboardInterrupt:
        print(
            f"\ninterrupted: every answer so far is cached; `evaluate {args.name!r}` resumes",
            file=sys.stderr,
        )
        raise SystemExit(INTERRUPTED) from None


def run(args: argparse.Namespace) -> int:
    """`evaluate NAME`, phase by phase: the plan, every check before the first paid request,
    the plan shown; then --dry-run and --status return, before the run phase is imported."""
    data = args.data_dir.resolve()
    if not (args.status or args.dry_run):
        checks.check_writable(data)
    plan = plan_command(args, data)
    # Every check before the first paid request; the first mistake stops the command, and
    # with --dry-run every one is kept, to follow the plan.
    problems: list[EvalError] | None = [] if args.dry_run else None
    if not args.status:
        checks.found(problems, checks.check_api_keys, plan.selected)
        checks.found(problems, checks.check_energy, args)
    metadata = {} if args.status else checks.found(problems, entry_fields, args, plan)
    if metadata is None:  # a lookup failed (--dry-run goes on): the flags' price still counts
        metadata = checks.found([], given_fields, args, plan) or {}
    checks.found(problems, checks.check_force, args, plan.selected)
    if not args.status:
        checks.found(problems, checks.check_cap, args.max_cost, price_of(plan, metadata))
    show_plan(plan, dry_run=args.dry_run, price=price_of(plan, metadata))
    if args.dry_run:
        return _dry_run(problems or [])
    if args.status:
        show_status(plan, args)
        return 0
    return _run_phase(plan, args, metadata)


def _dry_run(problems: list[EvalError]) -> int:
    """Every problem found, after the plan; the exit status the command would have had."""
    for problem in problems:
        print(printable(f"error: {problem}"), file=sys.stderr)
    return max((_exit_status(problem) for problem in problems), default=0)


def _run_phase(plan: Plan, args: argparse.Namespace, metadata: dict[str, Any]) -> int:
    """The plan saved, the evals run (those not finished already), what finished published."""
    from evals.evaluate.children import PYTEST_USAGE_ERROR, Spending, run_children
    from evals.evaluate.publishing import publish_finished
    from evals.publish import written_notes

    save_plan(plan, metadata, args)
    to_run = plan.to_run()
    with tempfile.TemporaryDirectory(
        prefix="evaluate-written-"
    ) as written:  # what the runs wrote: not rescored
        prices = token_prices(price_of(plan, metadata))
        spending = Spending(
            prices,
            args.max_cost,
            lambda tag: spent(plan.evals[tag], prices),
            # What an earlier `evaluate` of NAME spent on the evals it finished: the same cap.
            before=sum(spent(e, prices) for e in plan.selected if e.finished and not e.published),
        )
        codes = run_children(
            to_run, parallel=args.parallel, cwd=ROOT, written=Path(written), spending=spending
        )
        if any(code == PYTEST_USAGE_ERROR for code in codes.values()):
            print(
                "error: stopped at a usage error (above); fix the command and run it again",
                file=sys.stderr,
            )
            return USAGE
        finished, lines = publish_finished(
            plan, args, metadata, ran=bool(to_run), written=written_notes(Path(written))
        )
    failed = show_summary(plan, args, finished, lines, codes, metadata)
    if CAPPED in codes.values() or (args.max_cost is not None and len(codes) < len(to_run)):
        return CAPPED  # the cap's line is above (its eval's pytest), and the next step
    return REFUSED_OR_FAILED if failed else 0


def _exit_status(error: EvalError) -> int:
    return USAGE if isinstance(error, UsageError) else REFUSED_OR_FAILED


def _regrade(args: argparse.Namespace) -> int:
    """`--regrade [NAME]`: nothing is asked of any model (evals.evaluate.regrade)."""
    from evals.site import rebuild_site
    from evals.evaluate.regrade import regrade

    data = args.data_dir.resolve()
    return regrade(
        data / "models.json",
        data / "results",
        data / "runs",
        args.name,
        dry_run=args.dry_run,
        render=rebuild_site(data),
    )
