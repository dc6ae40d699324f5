"""Eval items: one parametrized test per sample, and the `graded` fixture that answers it.

Each process (the only one, or each xdist worker) loads the datasets, chooses how its runs
ask ahead of the items (an `Asker`: `make_asker`, overridable through the
`pytest_evals_make_asker` hook), builds one `EvalRun` per eval on first use, and once
collected hands the asker the items it selected.
An item's row rides its test report (`user_properties`) to the controller, where the
results collector writes the result file."""

from __future__ import annotations

import inspect
import json
import sys
from dataclasses import dataclass
from typing import Any

import pytest

from evals import models_file
from evals.askers import Asker, Batches, ChildProcesses, Fetchers, Threads
from evals.askers.processes import discard_prestarted
from evals.atomic import remove_stale_temp_files
from evals.config import results_path, run_dir
from evals.errors import ApiError, BatchWaiting, DatasetError, EvalError, FatalError, StorageError
from evals.plan import Planned, plan
from evals.providers import PROVIDERS, Provider, check_keys
from evals.run import EvalRun, RunSpec, build_run, start_over
from evals.scrub import printable
from evals.results import read_result
from evals.tasks import TASKS, builtin, recorded_values
from evals.verify import CachedOnly

from .options import judge_provider, reachable_evals, settings, verifying
from .state import is_worker, session_of

ROW_PROPERTY = "eval_row"
NOTE_SHOWN = 500  # characters of a failed item's one line; its row keeps the whole text
WAITING_PROPERTY = "eval_waiting"  # an item whose call waits in a Batch API batch


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from plugins import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


def configure(config: pytest.Config) -> None:
    """Step 5 of `plugins.session`'s configure."""
    state = session_of(config)
    if state.settings is None:
        discard_prestarted()
        return
    s = state.settings
    reachable = reachable_evals(config)
    # First: child processes make the candidate's provider while this process plans and collects.
    state.asker = config.hook.pytest_evals_make_asker(config=config)
    try:
        state.planned = {name: plan(TASKS[name], s.identity) for name in reachable}
        published = models_file.published_files(
            s.results_root.parent / "models.json", results=s.results_root
        )
    except EvalError as error:
        raise pytest.UsageError(printable(str(error))) from None
    state.published = {
        name
        for name, item in state.planned.items()
        if results_path(s.results_root, item.config) in published
    }
    if s.force and state.published:
        names = ", ".join(sorted(state.published))
        raise pytest.UsageError(
            f"--force: the {names} run is published in models.json and stays as it is (remove its "
            "resultFiles there first)"
        )


@pytest.hookimpl(trylast=True)
def pytest_evals_make_asker(config: pytest.Config) -> Asker:
    """The harness's choice: child processes where they ask (`fetching`), else threads of this
    process; either way a Batch API pass first for the runs that use one (`Batches`)."""
    say = lambda line: _say(config, line)  # noqa: E731
    otherwise: Asker = Threads(say)
    if fetching(config, reachable_evals(config)):
        try:
            otherwise = ChildProcesses(
                Fetchers([settings(config).identity.spec], settings(config).concurrency), say
            )
        except (
            OSError
        ):  # no process can be started (a process limit): this one asks, on its threads
            discard_prestarted()
    else:
        discard_prestarted()
    return Batches(settings(config).batch, otherwise, say=say)


def _say(config: pytest.Config, line: str) -> None:
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    line = printable(line)  # a batch's problem quotes its server
    if reporter is not None and not is_worker(config):
        reporter.write_line(line)
    else:
        print(line, file=sys.stderr)


def fetching(config: pytest.Config, reachable: list[str]) -> bool:
    """Whether a child process makes this process's model calls (`evals.askers.processes`): for
    providers that ask over the network, not in an xdist controller (it asks nothing), nor
    with --batch (the Batch API pass asks from here)."""
    s = settings(config)
    judged = any(TASKS[name].uses_judges for name in reachable)
    specs = [s.identity.spec, *(j.provider_spec() for j in s.identity.judges if judged)]
    return (
        s.candidate is not None
        and not s.batch
        and not config.option.collectonly
        and not config.getoption("dry_run", False)  # nothing is asked
        and all(spec.provider in PROVIDERS and PROVIDERS[spec.provider].network for spec in specs)
    )


def loaded(config: pytest.Config) -> dict[str, Planned]:
    planned = session_of(config).planned
    assert planned is not None, "planned in pytest_configure"
    return planned


def published(config: pytest.Config, name: str) -> bool:
    """Whether the eval's run is published: then it is only reproduced from its run folder."""
    return name in session_of(config).published


def pytest_report_header(config: pytest.Config) -> list[str]:
    if is_worker(config):
        return []
    return [
        f"{name}: published in models.json; reproduced from its run folder, no model is asked"
        for name in sorted(session_of(config).published)
    ]


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: Any) -> list | None:
    """No item at all for an eval's test function that -m does not reach (its eval is not
    planned): parametrized with no sample, it made one empty item that -m then deselected,
    "collected 43 items / 3 deselected" for a user to wonder about."""
    planned = session_of(collector.config).planned
    if (
        planned is None
        or not inspect.isfunction(obj)
        or "graded" not in inspect.signature(obj).parameters
    ):
        return None
    if not (isinstance(collector, pytest.Module | pytest.Class) and collector.funcnamefilter(name)):
        return None
    names = [mark.name for mark in getattr(obj, "pytestmark", []) if mark.name in TASKS]
    reached = names[0] in planned if names else any(not builtin(name) for name in planned)
    return None if reached else []


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """One item per sample. A test function with an eval's marker takes that eval's samples;
    one without (tests_evals/test_registered.py) takes those of every eval another package
    registers, each item with its eval's marker and an id `EVAL:SAMPLE` (a marker has no ':',
    so two evals' ids never meet)."""
    if "sample" not in metafunc.fixturenames:
        return
    names = _eval_markers(metafunc.definition)
    if verifying(metafunc.config):
        metafunc.parametrize("sample", [])  # deselected: verify mode runs only the verify items
        return
    if session_of(metafunc.config).planned is None:
        raise pytest.UsageError(
            "eval items need the run identity: pass --model and --provider (or --provider reference)"
        )
    planned = loaded(
        metafunc.config
    )  # the evals -m can reach: one that it deselects has nothing planned
    if not names:
        params = [
            pytest.param(s, marks=getattr(pytest.mark, name), id=f"{name}:{s.id}")
            for name, item in planned.items()
            if not builtin(name)
            for s in item.samples
        ]
        if not params:  # -m reaches none of them: its one empty item is deselected as theirs are
            for name in (name for name in TASKS if not builtin(name)):
                metafunc.definition.add_marker(name)
        metafunc.parametrize("sample", params)
        return
    samples = planned[names[0]].samples if names[0] in planned else []
    metafunc.parametrize("sample", samples, ids=[s.id for s in samples])


def _eval_markers(node: pytest.Item) -> list[str]:
    names = [m.name for m in node.iter_markers() if m.name in TASKS]
    if len(names) > 1:
        raise pytest.UsageError(
            f"{node.nodeid}: an eval item needs exactly one eval marker ({', '.join(TASKS)})"
        )
    return names


def _task_name(node: pytest.Item) -> str:
    names = _eval_markers(node)
    if not names:
        raise pytest.UsageError(
            f"{node.nodeid}: an eval item needs exactly one eval marker ({', '.join(TASKS)})"
        )
    return names[0]


def eval_run(config: pytest.Config, name: str) -> EvalRun:
    """The eval's run in this process, built when its first item needs it. --force starts
    it over then, so only the evals this command really runs are set aside."""
    runs = session_of(config).runs
    if name not in runs:
        s = settings(config)
        item = loaded(config)[name]
        spec = run_spec(config, name)
        made: dict[str, Provider]
        if spec.published:
            made = {
                "candidate": CachedOnly(spec.candidate),
                **{f"judge-{i}": CachedOnly(judge) for i, (_, judge) in enumerate(spec.judges)},
            }
        else:  # made before --force sets anything aside: the judges' missing keys stop the command first
            if spec.judges:
                check_keys(judge.flagged() for judge in s.identity.judges)
            assert s.candidate is not None  # None only in an xdist controller, which builds no run
            made = {
                "candidate": s.candidate,
                **{
                    f"judge-{i}": judge_provider(j)[1]
                    for i, j in enumerate(s.identity.judges)
                    if spec.judges
                },
            }
            if s.force:
                try:
                    start_over(spec.folder, results_path(s.results_root, item.config), s.session)
                except OSError as error:
                    raise StorageError(
                        f"--force: cannot set {spec.folder} aside ({error.strerror or error}); nothing was asked"
                    ) from None
        remove_stale_temp_files(spec.folder, recursive=True)  # left by a run killed mid-write
        remove_stale_temp_files(results_path(s.results_root, item.config).parent)
        runs[name] = build_run(
            spec,
            lambda _, role: made[role],
            asker=session_of(config).asker,
            resources=TASKS[name].resources(eval_flags(config, name)),
        )
    return runs[name]


def eval_flags(config: pytest.Config, name: str) -> dict[str, Any]:
    """The eval's own flags' values its run grades with: today's, or for a published run
    (only reproduced) those its result file recorded, as verify rescores it."""
    s = settings(config)
    if not published(config, name):
        return s.eval_flags[name]
    try:
        return recorded_values(
            TASKS[name], read_result(results_path(s.results_root, loaded(config)[name].config))
        )
    except EvalError:  # the file cannot be read: the reproduction says so, graded with the defaults
        return recorded_values(TASKS[name], {})


def run_spec(config: pytest.Config, name: str) -> RunSpec:
    """What the eval's run in this process is built from."""
    s = settings(config)
    item = loaded(config)[name]
    judges = (
        [(j.name, j.provider_spec()) for j in s.identity.judges] if TASKS[name].uses_judges else []
    )
    return RunSpec(
        eval=name,
        config=item.config,
        samples=item.samples,
        candidate=s.identity.spec,
        judges=judges,
        redacted=[j.provider_spec() for j in s.identity.judges],
        folder=run_dir(s.run_root, item.config),
        session=None if published(config, name) else s.session,
        concurrency=s.concurrency,
        energy=bool(s.energy),
        published=published(config, name),
        request_timeout=s.request_timeout,
    )


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Build the runs of the evals whose items are selected, now that -m, -k and file
    arguments have chosen them: a judge's missing API key stops the command here, before
    anything is asked, and only when a judged eval really runs."""
    state = session_of(config)
    if (
        state.planned is None
        or state.asker is None
        or config.option.collectonly
        or config.getoption("dry_run", False)
    ):  # both set in pytest_configure
        return
    try:
        for name in sorted(
            {_task_name(item) for item in items if "sample" in getattr(item, "fixturenames", ())}
        ):
            eval_run(config, name)
        # Start answering this process's selected items in the background, in their order
        # (with a Batch API pass first where one is used; an xdist worker that comes second
        # finds the pass recorded). An xdist worker does not know which items it will run:
        # the load scheduler hands them out in this order, a chunk at a time to whichever
        # worker is free. So every worker asks ahead for every item in this order too, and
        # their threads share one front (a call another worker is asking is skipped, not
        # waited for): the answers come in the order some worker needs them. (Workers that
        # started at different points each answered items no worker would run for a while:
        # at 2,000 items, half of them were still to run when the last answer came.)
        state.asker.start(
            [(eval_run(config, name), samples) for name, samples in selected_samples(items).items()]
        )
    except EvalError as error:
        if not is_worker(config):  # pytest's own form of a usage error, as the options' are
            raise pytest.UsageError(printable(str(error))) from None
        # An xdist worker cannot end the command itself: it runs nothing and passes the line
        # to the controller, which stops with it.
        config.hook.pytest_deselected(items=list(items))
        items.clear()
        session.shouldstop = printable(f"ERROR: {error}")


def selected_samples(items: list[pytest.Item]) -> dict[str, list[Any]]:
    """Each eval's samples among `items`, in their order."""
    by_task: dict[str, list[Any]] = {}
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec and "sample" in callspec.params:
            by_task.setdefault(_task_name(item), []).append(callspec.params["sample"])
    return by_task


def pytest_sessionfinish(session: pytest.Session) -> None:
    _a_workers_usage_error_ends_the_command_as_one(session)
    state = session_of(session.config)
    for run in state.runs.values():
        run.stop()
    if state.asker is not None and (problem := state.asker.stop()):
        problem = next(iter(state.runs.values())).scrub.text(
            problem
        )  # its last line may quote anything
        _say(session.config, f"note: {problem}")


def _a_workers_usage_error_ends_the_command_as_one(session: pytest.Session) -> None:
    """An xdist worker's usage error (`pytest_collection_modifyitems`) reaches its controller
    as an interruption, exit 2, which `evaluate` would take for a run to resume: the command
    exits 4, as a usage error in this process does (the line is printed as xdist's
    `! xdist.dsession.Interrupted: ERROR: ... !`)."""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    memo = getattr(reporter, "_keyboardinterrupt_memo", None)  # what the reporter prints at its end
    line = str(getattr(getattr(memo, "reprcrash", None), "message", ""))
    if (
        not is_worker(session.config)
        and session.exitstatus == pytest.ExitCode.INTERRUPTED
        and "Interrupted: ERROR: " in line
    ):
        session.exitstatus = pytest.ExitCode.USAGE_ERROR


class WrongAnswer(pytest.fail.Exception):  # type: ignore[name-defined]  # pytest's public name of its Failed
    """The model's wrong answer: the item fails with its one-line explanation."""


@dataclass(frozen=True)
class ItemOutcome:
    row: dict[str, Any]
    explanation: str

    @property
    def passed(self) -> bool:
        return bool(self.row["correct"])

    def check(self) -> None:
        """Fail the item with its one-line explanation: a wrong answer is not a Python bug,
        and formatting hundreds of tracebacks would cost more than the run itself."""
        if not self.passed:
            raise WrongAnswer(self.explanation, pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    if call.excinfo is not None and call.excinfo.errisinstance((ApiError, EvalError)):
        report.longrepr = printable(f"{call.excinfo.typename}: {call.excinfo.value}", NOTE_SHOWN)
    return report


@pytest.hookimpl(tryfirst=True, specname="pytest_runtest_makereport")
def pytest_runtest_makereport_of_wrong_answer(
    item: pytest.Item, call: pytest.CallInfo
) -> pytest.TestReport | None:
    """A wrong answer's report, made as pytest makes it but with its one line as the failure:
    pytest's own would filter and format the failure's traceback (a stat of every file in
    it), ~1 ms of CPU per wrong answer, for a traceback nobody sees (the collector lists
    wrong answers itself)."""
    if call.when != "call" or call.excinfo is None or not call.excinfo.errisinstance(WrongAnswer):
        return None
    sections = [(f"Captured {key} {when}", content) for when, key, content in item._report_sections]
    # The model answered, wrongly: the eval did its work, so the item is not a failure of the
    # run (it is "wrong", W) unless --wrong-fails asks for the old meaning.
    fails = bool(item.config.getoption("wrong_fails", False))
    report = pytest.TestReport(
        item.nodeid,
        item.location,
        dict.fromkeys(item.keywords, 1),
        "failed" if fails else "passed",
        str(call.excinfo.value) if fails else None,
        "call",
        sections,
        call.duration,
        call.start,
        call.stop,
        user_properties=item.user_properties,
        wrong_answer=True,
    )  # the model's wrong answer (rides to the xdist controller with the report)
    return report


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config):
    """A wrong answer is its own outcome: "W" in the progress, "N wrong" in the counts (with
    --wrong-fails it is a failure, F, as pytest shows one)."""
    if getattr(report, "wrong_answer", False) and report.when == "call" and report.passed:
        return "wrong", "W", ("WRONG", {"red": True})
    return None


@pytest.fixture
def graded(request: pytest.FixtureRequest, sample: Any) -> ItemOutcome:
    name = _task_name(request.node)
    run = eval_run(request.config, name)
    try:
        row = run.answer(sample)
    except FatalError as error:
        request.session.shouldstop = printable(f"stopped: {error}")
        raise
    except BatchWaiting as waiting:
        request.node.user_properties.append(
            (
                WAITING_PROPERTY,
                json.dumps({"eval": name, "batch": waiting.batch, "since": waiting.since}),
            )
        )
        pytest.skip(str(waiting))
    request.node.user_properties.append((ROW_PROPERTY, json.dumps({"eval": name, "row": row})))
    if row["status"] == "apiError":
        raise ApiError(row["error"])
    if row["status"] == "datasetError":  # an error of the item, never the model's wrong answer
        origin = getattr(sample, "origin", "")
        raise DatasetError(
            f"{origin} ({sample.id}): {row['error']}" if origin else f"{sample.id}: {row['error']}"
        )
    return ItemOutcome(row, explanation(name, row))


def explanation(name: str, row: dict[str, Any]) -> str:
    """A failed item's one line, as its report and the wrong answers' list show it: its eval's
    explanation, which quotes the model (an error its code raised, a judge's words), escaped."""
    return printable(TASKS[name].explain(row), NOTE_SHOWN)
