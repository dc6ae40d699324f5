"""The `Asker`: how a process's runs ask their calls ahead of the items.

One is chosen per process, as pytest-xdist chooses a scheduler (`plugins.items`, overridable
through the `pytest_evals_make_asker` hook), and handed to every run at construction; the run
asks it before each item's first cache read. The strategies are the other modules of this
package: `threads` (background threads of this process), `processes` (child processes),
`batch` (the providers' Batch APIs, then one of the others)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

# When a session ends early (Ctrl-C, a fatal error, its parent gone), no new call is started
# and those in flight get this long to be answered and stored: the rerun does not pay for
# them again. What the user is told while they are waited for:
GRACE = 10.0
KEEPING = (
    f"keeping the replies in flight: waiting up to {GRACE:.0f} s for them to be stored "
    "(Ctrl-C again leaves them, to be asked again)"
)


def once(say: Callable[[str], None] | None) -> Callable[[str], None]:
    """`say`, told only the first line it is given: an asker's one notice, however many
    children or threads it waits for (nothing, when `say` is None)."""
    told = False

    def tell(line: str) -> None:
        nonlocal told
        if say is not None and not told:
            told = True
            say(line)

    return tell


# The runs an asker asks for (`evals.run.EvalRun`), a parameter so that this interface, which
# the run module imports, imports nothing of it back (no cycle, not even for the type checker).
EvalRun = TypeVar("EvalRun", contravariant=True)


class Asker(Protocol[EvalRun]):
    """How a process's runs ask their calls ahead of the items. One is chosen per process
    (`plugins.items`, overridable through the `pytest_evals_make_asker` hook) and handed to
    every run at construction; the run asks it before each item's first cache read."""

    def start(self, runs: Sequence[tuple[EvalRun, Sequence[Any]]]) -> None:
        """Begin asking each run's selected samples (in their order) ahead of its items."""

    def wait(self, run: EvalRun, item_id: str) -> None:
        """Return once whoever asks ahead is done with the item's calls (or will make none)."""

    def waiting(self, run: EvalRun, key: tuple[str, str]) -> Any:
        """Where the call `key` (item, role) waits in a Batch API batch (`evals.askers.batch.Waiting`),
        or None: then the item makes it itself when it is not cached."""

    def stop(self) -> str | None:
        """Stop asking: no new call, those in flight given `GRACE` seconds to be stored; what
        went wrong with it, if anything did (one line)."""
