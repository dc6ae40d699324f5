"""How a process's eval runs ask their model calls ahead of the items: one interface and one
module per strategy, as pytest-xdist lays out its schedulers.

    protocol.py   `Asker`, the interface; one is chosen per process (`plugins.items`, through
                  the `pytest_evals_make_asker` hook) and handed to every run it builds
    threads.py    `Threads`: background threads of this process
    processes.py  `Fetcher`, `Fetchers`, `ChildProcesses`: child processes that ask (the
                  child's side too: it runs as `python -P -m evals.askers.processes`)
    batch.py      `Ledger`, `Batcher`, `Batches`: the providers' Batch APIs (`--batch`)

The names here are imported on first use: the asking child imports this package before its
SDK, and nothing else of the harness waits in front of that."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evals.lazy import names_from

if TYPE_CHECKING:
    from .batch import Batcher, Batches, Ledger, Waiting
    from .processes import ChildProcesses, Fetcher, Fetchers
    from .protocol import Asker
    from .threads import Threads

_MODULE = {
    "Asker": "protocol",
    "Threads": "threads",
    "Fetcher": "processes",
    "Fetchers": "processes",
    "ChildProcesses": "processes",
    "Ledger": "batch",
    "Batcher": "batch",
    "Batches": "batch",
    "Waiting": "batch",
}
__all__ = sorted(_MODULE)

__getattr__ = names_from(__name__, _MODULE, globals())
