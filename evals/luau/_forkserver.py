"""Preloaded into the sandbox's forkserver, and imported nowhere else.

Workers are forked from the forkserver with the runner (and the Luau VM) already imported.
And a worker whose caller vanished before sending it what to run (a Ctrl-C at that moment)
exits quietly: the standard library would print its EOFError traceback on the terminal.
"""

import sys

from evals.luau import isolated  # noqa: F401  (imported once here, not in every worker)


def _report_unless_the_caller_vanished(kind, value, traceback):
    if issubclass(kind, EOFError):
        return
    sys.__excepthook__(kind, value, traceback)


sys.excepthook = _report_unless_the_caller_vanished
