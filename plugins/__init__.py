"""The harness's pytest plugins, one file per concern. pytest loads this package through the
`pytest11` entry point in pyproject.toml, before it parses the command line, so the eval
options are known in every process, xdist workers included."""

import sys

from evals.fetcher import prestart

# Before the plugins' own imports: the process that asks the model starts importing its SDK now.
prestart(sys.argv)

pytest_plugins = ["plugins.options", "plugins.items", "plugins.collector", "plugins.energy", "plugins.verify", "plugins.session"]
