"""The evals other packages register (the `roblox_evals` entry point, docs/writing-an-eval.md):
one item per sample of each, with its eval's marker (`-m echo`) and an id `EVAL:SAMPLE`. The
harness's own evals have test functions of their own beside this one; with no other eval
installed there is no such test at all."""

from evals.tasks import builtin, tasks

if not all(builtin(name) for name in tasks()):

    def test_registered(graded):
        graded.check()
