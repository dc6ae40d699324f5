"""Eval items: one parametrized test per sample, and the `graded` fixture that answers it.

Each process (the only one, or each xdist worker) loads the datasets, builds one `EvalRun`
per eval on first use, and starts prefetching the items it collected in the background.
An item's row rides its test report (`user_properties`) to the controller, where the
results collector writes the result file."""

from __future__ import annotations

import datetime as dt
import functools
import json
import os
from dataclasses import dataclass
from typing import Any

import pytest

from evals.config import run_dir
from evals.errors import EvalError, FatalProviderError
from evals.luau import run_tests_isolated
from evals.plan import Planned, plan
from evals.run import EvalRun
from evals.tasks import TASKS

from .options import judge_provider, may_run, settings, settings_key, verifying

ROW_PROPERTY = "eval_row"

loaded_key = pytest.StashKey[dict[str, Planned]]()
runs_key = pytest.StashKey[dict[str, EvalRun]]()
notices_key = pytest.StashKey[list[str]]()


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    if settings_key not in config.stash:
        return
    try:
        config.stash[loaded_key] = {name: plan(task, settings(config).identity) for name, task in TASKS.items()}
    except EvalError as error:
        raise pytest.UsageError(str(error)) from None
    config.stash[runs_key] = {}
    if settings(config).force and not hasattr(config, "workerinput"):
        _start_over(config)


def loaded(config: pytest.Config) -> dict[str, Planned]:
    return config.stash[loaded_key]


def _start_over(config: pytest.Config) -> None:
    """--force: rename each existing run folder of this identity out of the way, and say so."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    for name, item in loaded(config).items():
        if not may_run(config, name):
            continue  # `evaluate --parallel --force` runs each eval in its own process
        folder = run_dir(settings(config).run_root, item.config)
        if folder.exists():
            kept = folder.with_name(f"{folder.name}.replaced-{stamp}")
            folder.rename(kept)
            config.stash.setdefault(notices_key, []).append(f"--force: the previous run folder is kept as {kept}")


def pytest_report_header(config: pytest.Config) -> list[str]:
    return config.stash.get(notices_key, [])


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "sample" not in metafunc.fixturenames:
        return
    name = _task_name(metafunc.definition)
    if verifying(metafunc.config):
        metafunc.parametrize("sample", [])  # deselected: verify mode runs only the verify items
        return
    if loaded_key not in metafunc.config.stash:
        raise pytest.UsageError("eval items need the run identity: pass --model and --provider (or --provider reference)")
    samples = loaded(metafunc.config)[name].samples
    metafunc.parametrize("sample", samples, ids=[s.id for s in samples])


def _task_name(node: pytest.Item) -> str:
    names = [m.name for m in node.iter_markers() if m.name in TASKS]
    if len(names) != 1:
        raise pytest.UsageError(f"{node.nodeid}: an eval item needs exactly one eval marker ({', '.join(TASKS)})")
    return names[0]


def eval_run(config: pytest.Config, name: str) -> EvalRun:
    runs = config.stash[runs_key]
    if name not in runs:
        s = settings(config)
        item = loaded(config)[name]
        judges = []
        if TASKS[name].uses_judges:  # -k may select judged items that -m/-k did not announce
            judges = s.judge_providers or [judge_provider(j) for j in s.identity.judges]
        runs[name] = EvalRun(
            TASKS[name],
            item.config,
            item.samples,
            candidate=s.candidate,
            judges=judges,
            folder=run_dir(s.run_root, item.config),
            session=s.session,
            concurrency=s.concurrency,
            luau=_luau_backend(s),
        )
    return runs[name]


def _luau_backend(s):
    """Model-written Luau runs in an isolated worker process (a VM crash or a runaway C call
    cannot take the run down), or on a JestLuaTestServer with --jest-url."""
    if s.jest_url:
        from evals.luau.remote import run_remote

        return functools.partial(run_remote, url=s.jest_url, api_key=os.environ.get("JEST_SERVER_API_KEY"), timeout=max(60.0, s.luau_timeout))
    return functools.partial(run_tests_isolated, timeout=s.luau_timeout)


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """Start answering this process's selected items in the background."""
    if runs_key not in session.config.stash or session.config.option.collectonly:
        return
    by_task: dict[str, list[Any]] = {}
    for item in session.items:
        callspec = getattr(item, "callspec", None)
        if callspec and "sample" in callspec.params:
            by_task.setdefault(_task_name(item), []).append(callspec.params["sample"])
    worker = getattr(session.config, "workerinput", None)
    for name, samples in by_task.items():
        if worker:  # workers start at different points so they do not queue on the same locks
            start = int(worker["workerid"].removeprefix("gw")) * len(samples) // worker["workercount"]
            samples = samples[start:] + samples[:start]
        try:
            run = eval_run(session.config, name)
        except EvalError:
            continue  # its items will report the error themselves
        run.prefetch(samples, threads=run.concurrency)


def pytest_sessionfinish(session: pytest.Session) -> None:
    for run in session.config.stash.get(runs_key, {}).values():
        run.stop()


class ApiError(Exception):
    """The item's model call failed for good: reported as an error, not a wrong answer."""


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
            pytest.fail(self.explanation, pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    if call.excinfo is not None and call.excinfo.errisinstance((ApiError, EvalError)):
        report.longrepr = f"{call.excinfo.typename}: {call.excinfo.value}"
    return report


@pytest.fixture
def graded(request: pytest.FixtureRequest, sample: Any) -> Outcome:
    name = _task_name(request.node)
    run = eval_run(request.config, name)
    try:
        row = run.answer(sample)
    except FatalProviderError as error:
        request.session.shouldstop = f"stopped: {error}"
        raise
    request.node.user_properties.append((ROW_PROPERTY, json.dumps({"eval": name, "row": row})))
    if row["status"] == "apiError":
        raise ApiError(row["error"])
    return Outcome(row, TASKS[name].explain(row))
