"""The harness's pytest plugins, one file per concern. pytest loads this package through the
`pytest11` entry point in pyproject.toml, before it parses the command line, so the eval
options are known in every process, xdist workers included. Importing it starts nothing."""

from __future__ import annotations

import importlib
import os
import shlex
import sys

pytest_plugins = [
    "plugins.options",
    "plugins.items",
    "plugins.collector",
    "plugins.energy",
    "plugins.verify",
    "plugins.readings",
    "plugins.session",
]


def pytest_addoption(parser, pluginmanager) -> None:
    """The first hook pytest calls here: as this package is registered, before the other
    plugins declare their options (which loads every registered eval and provider) and
    before the command line is parsed. The process that asks the model starts importing its
    SDK now (`evals.askers.processes.prestart`) if the command line (or PYTEST_ADDOPTS) names a
    provider that asks over the network; one named elsewhere (an ini file, `pytest.main`'s
    arguments) only misses the head start.

    It also registers the plugins `pytest_plugins` names, so that pytest, finding them
    registered, does not look each up among every installed distribution's entry points
    first (`import_plugin(..., consider_entry_points=True)`: ~5 ms a name here, a third of
    `--collect-only`'s start-up beyond 905fadf's). A plugin blocked with `-p no:NAME` stays
    out, as pytest would keep it. The child first: it is the longest step to a first request."""
    from evals.askers.processes import prestart

    args = [*sys.argv[1:], *shlex.split(os.environ.get("PYTEST_ADDOPTS", ""))]
    named = [value.removeprefix("--provider=") for value in args if value.startswith("--provider=")]
    named += [after for flag, after in zip(args, args[1:]) if flag == "--provider"]
    if named:
        prestart(named[-1])

    for name in pytest_plugins:
        if not pluginmanager.is_blocked(name) and pluginmanager.get_plugin(name) is None:
            pluginmanager.register(importlib.import_module(name), name)
