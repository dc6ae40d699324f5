"""Eval items: one parametrized test per sample, and the `graded` fixture that answers it.

Each process (the only one, or each xdist worker) loads the datasets, builds one `EvalRun`
per eval on first use, and starts prefetching the items it collected in the background.
An item's row rides its test report (`user_properties`) to the controller, where the
results collector writes the result file."""

from __future__ import annotations

import functools
import json
import sys
from dataclasses import dataclass
from typing import Any

import pytest

from evals import registry
from evals.atomic import remove_stale_temp_files
from evals.config import results_path, run_dir
from evals.energy import SpanLog
from evals.errors import DatasetError, EvalError, FatalError, StorageError
from evals.fetcher import Fetchers, Work, discard_prestarted
from evals.plan import Planned, plan
from evals.providers import PROVIDERS, configured_secrets
from evals.run import BatchWaiting, EvalRun, start_over
from evals.tasks import TASKS
from evals.verify import CachedOnly

from .options import judge_provider, reachable_evals, settings, settings_key, verifying

ROW_PROPERTY = "eval_row"
WAITING_PROPERTY = "eval_waiting"  # an item whose call waits in a Batch API batch

loaded_key = pytest.StashKey[dict[str, Planned]]()
published_key = pytest.StashKey[set[str]]()
runs_key = pytest.StashKey[dict[str, EvalRun]]()
stopping_key = pytest.StashKey[str]()
fetcher_key = pytest.StashKey[Fetchers]()


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    if settings_key not in config.stash:
        discard_prestarted()
        return
    s = settings(config)
    reachable = reachable_evals(config)
    if fetching(config, reachable):  # first: they make the candidate's provider while this process plans and collects
        try:
            config.stash[fetcher_key] = Fetchers([s.identity.spec], s.concurrency)
        except OSError:  # no process can be started (a process limit): this one asks, on its threads
            discard_prestarted()
    else:
        discard_prestarted()
    try:
        config.stash[loaded_key] = {name: plan(TASKS[name], s.identity) for name in reachable}
        published = registry.published_files(s.results_root.parent / "models.json", results=s.results_root)
    except EvalError as error:
        raise pytest.UsageError(str(error)) from None
    config.stash[published_key] = {name for name, item in loaded(config).items() if results_path(s.results_root, item.config) in published}
    if s.force and config.stash[published_key]:
        names = ", ".join(sorted(config.stash[published_key]))
        raise pytest.UsageError(f"--force: the {names} run is published in models.json and stays as it is (remove its resultFiles there first)")
    config.stash[runs_key] = {}


def fetching(config: pytest.Config, reachable: list[str]) -> bool:
    """Whether a child process makes this process's model calls (`evals.fetcher`): for
    providers that ask over the network, not in an xdist controller (it asks nothing), nor
    with --batch (the Batch API pass asks from here)."""
    s = settings(config)
    judged = any(TASKS[name].uses_judges for name in reachable)
    specs = [s.identity.spec, *(j.provider_spec() for j in s.identity.judges if judged)]
    return (s.candidate is not None and not s.batch and not config.option.collectonly
            and all(spec.provider in PROVIDERS and PROVIDERS[spec.provider].network for spec in specs))


def loaded(config: pytest.Config) -> dict[str, Planned]:
    return config.stash[loaded_key]


def published(config: pytest.Config, name: str) -> bool:
    """Whether the eval's run is published: then it is only reproduced from its run folder."""
    return name in config.stash[published_key]


def pytest_report_header(config: pytest.Config) -> list[str]:
    if published_key not in config.stash or hasattr(config, "workerinput"):
        return []
    return [f"{name}: published in models.json; reproduced from its run folder, no model is asked" for name in sorted(config.stash[published_key])]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "sample" not in metafunc.fixturenames:
        return
    name = _task_name(metafunc.definition)
    if verifying(metafunc.config):
        metafunc.parametrize("sample", [])  # deselected: verify mode runs only the verify items
        return
    if loaded_key not in metafunc.config.stash:
        raise pytest.UsageError("eval items need the run identity: pass --model and --provider (or --provider reference)")
    if name not in loaded(metafunc.config):  # -m deselects it: nothing planned
        metafunc.parametrize("sample", [])
        return
    samples = loaded(metafunc.config)[name].samples
    metafunc.parametrize("sample", samples, ids=[s.id for s in samples])


def _task_name(node: pytest.Item) -> str:
    names = [m.name for m in node.iter_markers() if m.name in TASKS]
    if len(names) != 1:
        raise pytest.UsageError(f"{node.nodeid}: an eval item needs exactly one eval marker ({', '.join(TASKS)})")
    return names[0]


def eval_run(config: pytest.Config, name: str) -> EvalRun:
    """The eval's run in this process, built when its first item needs it. --force starts
    it over then, so only the evals this command really runs are set aside."""
    runs = config.stash[runs_key]
    if name not in runs:
        s = settings(config)
        item = loaded(config)[name]
        folder = run_dir(s.run_root, item.config)
        judges = [judge_provider(j) for j in s.identity.judges] if TASKS[name].uses_judges else []
        candidate, session = s.candidate, s.session
        if published(config, name):
            candidate, session = CachedOnly(s.identity.spec), None  # None: recorded errors are replayed too
            judges = [(j.name, CachedOnly(j.provider_spec())) for j in s.identity.judges] if judges else []
        elif s.force:
            try:
                start_over(folder, results_path(s.results_root, item.config), s.session)
            except OSError as error:
                raise StorageError(f"--force: cannot set {folder} aside ({error.strerror or error}); nothing was asked") from None
        remove_stale_temp_files(folder, recursive=True)  # left by a run killed mid-write
        remove_stale_temp_files(results_path(s.results_root, item.config).parent)
        runs[name] = EvalRun(
            TASKS[name],
            item.config,
            item.samples,
            candidate=candidate,
            judges=judges,
            folder=folder,
            session=session,
            concurrency=s.concurrency,
            resources=TASKS[name].resources(s),
            secrets=[key for j in s.identity.judges for key in configured_secrets(j.provider_spec())],
            spans=SpanLog(folder) if s.energy else None,
        )
    return runs[name]


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Build the runs of the evals whose items are selected, now that -m, -k and file
    arguments have chosen them: a judge's missing API key stops the command here, before
    anything is asked, and only when a judged eval really runs."""
    if runs_key not in config.stash or config.option.collectonly:
        return
    try:
        for name in sorted({_task_name(item) for item in items if "sample" in getattr(item, "fixturenames", ())}):
            eval_run(config, name)
        _batch_pass(config, items)
    except EvalError as error:
        config.stash[stopping_key] = str(error)
        if not hasattr(config, "workerinput"):
            pytest.exit(f"ERROR: {error}", returncode=pytest.ExitCode.USAGE_ERROR)
        # An xdist worker cannot end the command itself: it runs nothing and passes the line
        # to the controller, which stops with it.
        config.hook.pytest_deselected(items=list(items))
        items.clear()
        session.shouldstop = f"ERROR: {error}"


def _batch_pass(config: pytest.Config, items: list[pytest.Item]) -> None:
    """--batch: collect the batches that ended, submit what the selected items still need, and
    with --batch-wait wait for it all; an xdist worker that comes second finds it recorded.
    Without --batch, batches an earlier run left are still collected, and their calls never
    asked directly (that would pay twice)."""
    from evals.batch import Batcher, has_batches

    mode = settings(config).batch
    runs = [(eval_run(config, name), chosen) for name, chosen in _selected_samples(items).items() if not published(config, name)]
    if not mode:
        runs = [(run, chosen) for run, chosen in runs if has_batches(run.folder)]
    if not runs:
        return
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    say = reporter.write_line if reporter and not hasattr(config, "workerinput") else lambda line: print(line, file=sys.stderr)
    Batcher(runs, wait=mode == "wait", submit=mode is not None, say=say).run()


def _selected_samples(items: list[pytest.Item]) -> dict[str, list[Any]]:
    """Each eval's samples among `items`, in their order."""
    by_task: dict[str, list[Any]] = {}
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec and "sample" in callspec.params:
            by_task.setdefault(_task_name(item), []).append(callspec.params["sample"])
    return by_task


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """Start answering this process's selected items in the background, in their order. An
    xdist worker does not know which items it will run: the load scheduler hands them out in
    this order, a chunk at a time to whichever worker is free. So every worker prefetches every
    item in this order too, and their threads share one front (a call another worker is asking
    is skipped, not waited for): the answers come in the order some worker needs them. (Workers
    that started at different points each answered items no worker would run for a while:
    at 2,000 items, half of them were still to run when the last answer came.)"""
    if runs_key not in session.config.stash or session.config.option.collectonly or stopping_key in session.config.stash:
        return  # stopping: pytest_collection_modifyitems said why (this hook runs in its `finally`)
    config, work = session.config, []
    fetcher = config.stash.get(fetcher_key, None)
    for name, samples in _selected_samples(session.items).items():
        run = eval_run(config, name)
        if fetcher is not None and not published(config, name) and run.waiting is None:
            s = settings(config)
            judges = [(j.name, j.provider_spec()) for j in s.identity.judges] if run.judges else []
            work.append(Work(name, run.config, samples, s.identity.spec, judges, [j.provider_spec() for j in s.identity.judges],
                             run.folder, s.session, run.concurrency, bool(s.energy)))
            run.ahead = functools.partial(fetcher.wait, name)
        else:
            run.prefetch(samples, threads=run.concurrency)
    if fetcher is not None and work:
        fetcher.start(work, on_fatal={each.eval: eval_run(config, each.eval).end_with for each in work})


def pytest_sessionfinish(session: pytest.Session) -> None:
    for run in session.config.stash.get(runs_key, {}).values():
        run.stop()
    fetcher = session.config.stash.get(fetcher_key, None)
    if fetcher is not None and (problem := fetcher.stop()):
        problem = next(iter(session.config.stash[runs_key].values())).scrub.text(problem)  # its last line may quote anything
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None and not hasattr(session.config, "workerinput"):
            reporter.write_line(f"note: {problem}")
        else:
            print(f"note: {problem}", file=sys.stderr)


class ApiError(Exception):
    """The item's model call failed for good: reported as an error, not a wrong answer."""


class WrongAnswer(pytest.fail.Exception):
    """The model's wrong answer: the item fails with its one-line explanation."""


@dataclass(frozen=True)
class Outcome:
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
        report.longrepr = f"{call.excinfo.typename}: {call.excinfo.value}"
    return report


@pytest.hookimpl(tryfirst=True, specname="pytest_runtest_makereport")
def pytest_runtest_makereport_of_wrong_answer(item: pytest.Item, call: pytest.CallInfo) -> pytest.TestReport | None:
    """A wrong answer's report, made as pytest makes it but with its one line as the failure:
    pytest's own would filter and format the failure's traceback (a stat of every file in
    it), ~1 ms of CPU per wrong answer, for a traceback nobody sees (the collector lists
    wrong answers itself)."""
    if call.when != "call" or call.excinfo is None or not call.excinfo.errisinstance(WrongAnswer):
        return None
    sections = [(f"Captured {key} {when}", content) for when, key, content in item._report_sections]
    report = pytest.TestReport(item.nodeid, item.location, dict.fromkeys(item.keywords, 1), "failed", str(call.excinfo.value), "call",
                               sections, call.duration, call.start, call.stop, user_properties=item.user_properties)
    report.wrong_answer = True  # the model's wrong answer (rides to the xdist controller with the report)
    return report


@pytest.fixture
def graded(request: pytest.FixtureRequest, sample: Any) -> Outcome:
    name = _task_name(request.node)
    run = eval_run(request.config, name)
    try:
        row = run.answer(sample)
    except FatalError as error:
        request.session.shouldstop = f"stopped: {error}"
        raise
    except BatchWaiting as waiting:
        request.node.user_properties.append((WAITING_PROPERTY, json.dumps({"eval": name, "batch": waiting.batch})))
        pytest.skip(str(waiting))
    request.node.user_properties.append((ROW_PROPERTY, json.dumps({"eval": name, "row": row})))
    if row["status"] == "apiError":
        raise ApiError(row["error"])
    if row["status"] == "datasetError":  # an error of the item, never the model's wrong answer
        origin = getattr(sample, "origin", "")
        raise DatasetError(f"{origin} ({sample.id}): {row['error']}" if origin else f"{sample.id}: {row['error']}")
    return Outcome(row, TASKS[name].explain(row))
