"""The harness's pytest plugins, one file per concern. pytest loads this package through the
`pytest11` entry point in pyproject.toml, before it parses the command line, so the eval
options are known in every process, xdist workers included. Importing it starts nothing."""

from __future__ import annotations

pytest_plugins = ["plugins.options", "plugins.items", "plugins.collector", "plugins.energy", "plugins.verify", "plugins.session"]


def pytest_load_initial_conftests(early_config, parser, args: list[str]) -> None:
    """The earliest hook an installed plugin gets, before the command line is parsed: the
    process that asks the model starts importing its SDK now (`evals.fetcher.prestart`), if
    the command line names a provider that asks over the network."""
    from evals.fetcher import prestart

    named = [value.removeprefix("--provider=") for value in args if value.startswith("--provider=")]
    named += [after for flag, after in zip(args, args[1:]) if flag == "--provider"]
    if named:
        prestart(named[-1])
