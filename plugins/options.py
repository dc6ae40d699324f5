"""Every command-line option of the harness, declared and checked in one place.

`settings(config)` is the validated result. A wrong value stops the run at once with a
one-line message naming the flag and the fix, before any item is collected or paid for."""

from __future__ import annotations

import inspect
import os
import shlex
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _pytest.mark import MarkMatcher  # how pytest itself matches -m against an item's markers
from _pytest.mark.expression import Expression

from evals import energy
from evals.atomic import why_unwritable
from evals.command_line import how_to_run, takers
from evals.entry_points import ExtensionError, load as load_evals
from evals.budget import spend_prices_given
from evals.errors import EvalError
from evals.grading.judge_spec import JudgeSpec, capped, default_judges
from evals.identity import FIELD, add_identity_options, from_values, parse_datasets
from evals.flags import add_pytest_options, refusals
from evals.providers import (
    PROVIDERS,
    Provider,
    ProviderSpec,
    batch_providers,
    check_keys,
    deferred_provider,
    keys_message,
    limit_share,
    missing_keys,
)
from evals.results import TokenPrices
from evals.scrub import printable
from evals.tasks import TASKS

from .state import Settings, is_worker, session_of

ROOT = Path(__file__).resolve().parents[1]
EVALS_DIR = ROOT / "tests_evals"


def pytest_addoption(parser: pytest.Parser) -> None:
    try:  # the evals' tags are in the help: an eval that cannot be loaded is one line, here
        load_evals()
    except (
        ExtensionError
    ) as error:  # the installed packages, not the command line: exit 2, as evaluate and build do
        print(printable(f"ERROR: {error}"), file=sys.stderr)
        raise SystemExit(2) from None
    except EvalError as error:
        raise pytest.UsageError(printable(str(error))) from None
    ident = _declare(
        parser.getgroup(
            "run identity", "which model answers, and how (a different value is a different run)"
        )
    )
    add_identity_options(ident, defaults=True)

    how = _declare(parser.getgroup("how to run", "not part of the run identity"))
    add_pytest_options(how, how_to_run())


VALUE_OPTIONS: set[str] = set()  # every option of the harness that takes a value
FOLDER_OPTIONS: set[str] = set()  # those whose value is a folder the harness writes (type=Path)


def _declare(group: pytest.OptionGroup) -> Callable[..., None]:
    """`group.addoption`, noting which options take a value (see `_check_values_apart`)."""

    def add(*names: str, **attrs: Any) -> None:
        group.addoption(*names, **attrs)
        if attrs.get("action", "store") in ("store", "append"):
            VALUE_OPTIONS.update(names)
            if attrs.get("type") is Path:
                FOLDER_OPTIONS.update(names)

    return add


def targets_eval_items(config: pytest.Config) -> bool:
    """Whether this pytest run collects eval items (and so needs the run identity flags)."""
    for arg in config.args:
        path = Path(arg.split("::")[0])
        path = path if path.is_absolute() else Path(config.invocation_params.dir) / path
        path = path.resolve()
        if path == EVALS_DIR or EVALS_DIR in path.parents or path in EVALS_DIR.parents:
            return True
    return False


def configure(config: pytest.Config) -> None:
    """Step 1 of `plugins.session`'s configure."""
    for task in TASKS.values():  # each eval's items carry its marker
        config.addinivalue_line(
            "markers", f"{task.name}: {task.marker_help or f'{task.title or task.name} items'}"
        )
    _check_values_apart(config)
    if verifying(config) or not targets_eval_items(config):
        return
    _in_one_process_when_workers_cannot_help(config)
    try:
        session_of(config).settings = _settings(config)
    except EvalError as error:
        raise pytest.UsageError(printable(str(error))) from None


def reachable_evals(config: pytest.Config) -> list[str]:
    """The evals whose items -m can select: only they are planned, their datasets loaded
    (a Hugging Face set downloaded) and their run folders looked at. An eval item carries its
    eval's marker and no other, so the expression decides it exactly. A malformed -m is
    pytest's to report."""
    if not config.option.markexpr:
        return list(TASKS)
    try:
        expression = Expression.compile(config.option.markexpr)
    except SyntaxError:  # pytest reports it
        return list(TASKS)
    return [
        name
        for name in TASKS
        if expression.evaluate(MarkMatcher.from_markers([getattr(pytest.mark, name).mark]))
    ]


def _in_one_process_when_workers_cannot_help(config: pytest.Config) -> None:
    """`-n N` for evals whose items only wait on the model: run them in this one process.
    Workers would keep no more requests in flight (--concurrency holds for the command) and
    each would start pytest again, ~1 s that an API-bound run cannot win back (`bench/workers.py`:
    1.12-1.16 x the time of -n 0). They help where the items work themselves: an eval that
    grades locally (`Task.grades_locally`). Decided before xdist starts its workers (its configure
    hook runs last), from the
    evals -m can reach; the run says so at its end."""
    workers = config.getoption("numprocesses", None)
    if (
        workers
        and config.getoption("dist", "no") != "no"
        and not is_worker(config)
        and not config.option.collectonly
        and (
            config.getoption("dry_run", False)  # it asks and grades nothing
            or not any(TASKS[name].grades_locally for name in reachable_evals(config))
        )
    ):
        config.option.dist = "no"
        session_of(config).workers_skipped = workers


def worker_share(limit: int, worker: dict[str, Any]) -> int:
    """An xdist worker's part of --concurrency (`limit_share`)."""
    return limit_share(limit, int(worker["workerid"].removeprefix("gw")), worker["workercount"])


def _check_values_apart(config: pytest.Config) -> None:
    """pytest picks its root directory and settings file from the command line's paths before
    plugins declare their options, so in `--model /models/llama` it counts /models/llama as a
    test path: an existing folder outside the project moves the root directory, the project's
    settings (testpaths) are lost and whatever lies there is collected. Any option of the
    harness written apart from a value that does this stops here, with one line: write it with
    '='. A folder the harness writes (--run-dir) always, as it exists from the second run on."""
    args = [*shlex.split(os.environ.get("PYTEST_ADDOPTS", "")), *config.invocation_params.args]
    for flag, value in zip(args, args[1:]):
        if (
            flag in VALUE_OPTIONS
            and not value.startswith("-")
            and (flag in FOLDER_OPTIONS or _moves_pytest(config, value))
        ):
            raise pytest.UsageError(
                f"write {flag}={value} with '=': pytest decides its root directory and settings "
                f"before it knows {flag}, so a separate {value} counts as a test path there"
            )


def _moves_pytest(config: pytest.Config, value: str) -> bool:
    """Whether `value`, counted as a test path, gives pytest another root directory or
    settings file than the command's real test paths do."""
    path = Path(config.invocation_params.dir, value.split("::")[0])
    try:
        if not path.exists():
            return False
    except (OSError, ValueError):  # a NUL, a name too long: not a path pytest could take
        return False
    return _pytest_setup(config, [str(path)]) != _pytest_setup(config, [])


def _pytest_setup(config: pytest.Config, extra: list[str]) -> tuple[Path, Path | None]:
    """(rootdir, settings file) as pytest determines them from its test paths plus `extra`."""
    from _pytest.config.findpaths import determine_setup

    ns = config.known_args_namespace
    given = {
        "inifile": ns.inifilename,
        "override_ini": ns.override_ini,
        "args": [*ns.file_or_dir, *extra],
        "rootdir_cmd_arg": ns.rootdir or None,
        "invocation_dir": config.invocation_params.dir,
    }
    takes = inspect.signature(determine_setup).parameters
    rootpath, inipath, *_ = determine_setup(**{k: v for k, v in given.items() if k in takes})
    return rootpath, inipath


def run_root(config: pytest.Config) -> Path:
    return (config.getoption("run_dir") or ROOT / "data" / "runs").resolve()


def results_root(config: pytest.Config) -> Path:
    """Result files; models.json and the site's data sit beside this folder."""
    return (config.getoption("results_dir") or ROOT / "data" / "results").resolve()


def verifying(config: pytest.Config) -> bool:
    return config.getoption("verify_published") is not None


def verified_name(config: pytest.Config) -> str | None:
    """The model `--verify-published=NAME` picks; None: every published model."""
    value = config.getoption("verify_published")
    return value if isinstance(value, str) else None


def settings(config: pytest.Config) -> Settings:
    """The command's settings, once `pytest_configure` has read them."""
    s = session_of(config).settings
    assert s is not None, "read in pytest_configure"
    return s


def _settings(config: pytest.Config) -> Settings:
    opt = config.getoption
    if opt("provider") is None:
        raise EvalError(
            f"--provider is required to run the evals: one of {', '.join(PROVIDERS)} (or run "
            "`pytest tests` for the harness's own tests)"
        )
    _check_how_to_run(opt)
    measured = energy.chosen(
        opt
    )  # its mistakes (a log without --energy): one line, here, not an INTERNALERROR later
    try:
        judges = tuple(JudgeSpec.parse(j) for j in opt("judge")) or default_judges(opt("provider"))
        judges = capped(judges, opt("judge_max_tokens"))
    except ValueError as error:
        raise EvalError(str(error)) from None
    identity = from_values(
        {name: opt(name) for name in FIELD},
        datasets=parse_datasets(opt("dataset")).items(),
        judges=judges,
        api_key_env=opt("api_key_env"),
        responses_api=opt("responses_api"),
        device=opt("device"),
        options=_own_options(opt),
    )
    worker = getattr(config, "workerinput", None)
    if PROVIDERS[identity.spec.provider].in_process and (
        worker or config.getoption("numprocesses", None)
    ):
        raise EvalError(
            f"--provider {identity.spec.provider} loads the model once per process and batches prompts in it: "
            "run it without -n (or -n 0)"
        )
    batch = opt("batch") or opt("batch_wait")
    # An xdist controller asks nothing (with --batch, it asks whether there is a Batch API):
    # making the provider there would import its SDK (~0.7 s of CPU for openai's) before the
    # workers even start. Its key is checked all the same.
    controller = not worker and config.getoption("dist", "no") != "no" and not batch
    # A missing API key: fail now, not on every item; with the judges' that are missing too,
    # when the evals -m picks use them (-k may pick none: then the selection decides, later).
    if missing := missing_keys([(f"--provider {identity.spec.provider}", identity.spec)]):
        judged = not opt("keyword") and any(
            TASKS[name].uses_judges for name in reachable_evals(config)
        )
        raise EvalError(
            keys_message(
                missing + (missing_keys(judge.flagged() for judge in judges) if judged else [])
            )
        )
    candidate = None if controller else deferred_provider(identity.spec)
    if (
        batch and candidate is not None and candidate.batch_api() is None
    ):  # never None with --batch: no controller then
        raise EvalError(
            f"--batch: --provider {identity.spec.provider} has no Batch API ({batch_providers()} "
            "have one); run without --batch"
        )
    if not worker and not config.option.collectonly:  # listing the items writes nothing
        _check_folders({"--run-dir": run_root(config), "--results-dir": results_root(config)})
    return Settings(
        identity=identity,
        candidate=candidate,
        concurrency=opt("concurrency") if not worker else worker_share(opt("concurrency"), worker),
        batch="wait" if opt("batch_wait") else "submit" if opt("batch") else None,
        force=opt("force"),
        allow_errors=opt("allow_errors"),
        run_root=run_root(config),
        results_root=results_root(config),
        prices=(prices := _prices(opt("price_input"), opt("price_output"))),
        spend_prices=_spend_prices(prices, opt("max_cost")),
        request_timeout=opt("request_timeout"),
        eval_flags={
            name: {flag.dest: opt(flag.dest) for flag in task.flags} for name, task in TASKS.items()
        },
        energy=measured.name if measured else None,
        publish=opt("publish"),
        session=worker["testrunuid"] if worker else _session(config),
    )


def _check_folders(folders: dict[str, Path]) -> None:
    """A run or results folder that cannot be written stops the command before anything is
    asked, not at the first answer it cannot keep."""
    for flag, folder in folders.items():
        if why := why_unwritable(folder):
            raise EvalError(f"{flag}={folder}: {why}")


def _session(config: pytest.Config) -> str:
    """This command's id, shared with the xdist workers (they receive it as their
    testrunuid): a failure is retried by the next command, never by a sibling process."""
    session = getattr(config.option, "testrunuid", None) or uuid.uuid4().hex
    if hasattr(config.option, "testrunuid"):
        config.option.testrunuid = session
    return session


def judge_provider(judge: JudgeSpec) -> tuple[str, Provider]:
    """A judge's provider; an unknown provider or a missing key names the --judge."""
    check_keys([judge.flagged()])
    return judge.name, deferred_provider(judge.provider_spec())


def _check_how_to_run(opt) -> None:
    """The flags that are not identity (those are checked by `evals.identity.check`)."""
    provider = opt("provider")
    for flag in how_to_run():
        if (
            (owners := takers(flag.name)) and opt(flag.dest) and provider not in owners
        ):  # a provider's own flag
            raise EvalError(
                f"{flag.name} applies to --provider {', '.join(owners)}, not {provider}"
            )
    if refused := refusals(
        opt, how_to_run()
    ):  # nan, inf, 0 or 1e308 seconds, a URL that is none; no request in flight
        raise EvalError(refused[0])
    if opt("allow_errors") and not opt("publish"):
        raise EvalError(
            "--allow-errors is a decision taken when publishing: use it with --publish NAME (or "
            "`evaluate NAME --allow-errors`)"
        )
    if opt("api_key_env") and provider == "reference":
        raise EvalError("--api-key-env has no use with --provider reference")


def _own_options(opt) -> tuple[tuple[str, Any], ...]:
    """The provider's own flags that `ProviderSpec` has no field for, given: `spec.option(name)`."""
    info = PROVIDERS.get(opt("provider"))
    fields = ProviderSpec.__dataclass_fields__
    return tuple(
        (flag.dest, opt(flag.dest))
        for flag in (info.flags if info else ())
        if flag.dest not in fields and opt(flag.dest) not in (None, False)
    )


def _prices(price_input: float | None, price_output: float | None) -> TokenPrices | None:
    if (price_input is None) != (price_output is None):
        raise EvalError(
            "--price-input and --price-output go together: pass both, in USD per million tokens"
        )
    return (
        TokenPrices(price_input, price_output)
        if price_input is not None and price_output is not None
        else None
    )


def _spend_prices(prices: TokenPrices | None, cap: float | None) -> TokenPrices | None:
    """The prices the progress line and --max-cost count the spend at: the flags', else those
    `evaluate` hands the eval's pytest (`budget.PRICES_ENV`: its summary prices the result, so
    the file does not record them)."""
    prices = prices or spend_prices_given()
    if cap is not None and prices is None:
        raise EvalError(
            "--max-cost counts dollars: give the model's --price-input and --price-output too "
            "(USD per million tokens)"
        )
    return prices
