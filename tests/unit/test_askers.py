"""The asking strategies (`evals.askers`), called in this process: what an asking child (or a
thread asking ahead) does for a judged item. Asking children themselves, and what crosses the
pipe to them, are tests/e2e/test_fetcher.py."""

from __future__ import annotations

import threading

from evals.cache import RunCache
from evals.grading.judges import JudgeSpec
from evals.run import build_run
from evals.tasks import TASKS
from evals.verify import CachedOnly
from tests.support.runs import reference_run


def test_a_judged_item_asked_ahead_makes_the_judges_calls_and_is_scored_only_by_its_item(
    tmp_path, monkeypatch
):
    """The child (and a thread asking ahead) makes an item's model calls only: the candidate's,
    then each judge's; scoring is the item's, which reads those calls from the cache."""
    from evals.askers import processes

    task = TASKS["freeform"]
    spec = reference_run(
        "freeform",
        tmp_path / "run",
        judges=(JudgeSpec("reference", "judge-a"), JudgeSpec("reference", "judge-b")),
    )
    scored: list[str] = []
    score = type(task).score
    monkeypatch.setattr(
        type(task),
        "score",
        lambda self, sample, *rest: scored.append(sample.id) or score(self, sample, *rest),
    )

    _, threads = processes._answer(spec, {})
    for thread in threads:
        thread.join()

    cache = RunCache(spec.folder, None)
    assert all(
        "response" in cache.read(sample.id, role)
        for sample in spec.samples
        for role in ("candidate", "judge-0", "judge-1")
    )
    assert scored == []
    run = build_run(
        spec, lambda wanted, role: CachedOnly(wanted)
    )  # the items: nothing is asked again
    assert [run.answer(sample)["status"] for sample in spec.samples] == ["correct"] * len(
        spec.samples
    )
    assert scored == [sample.id for sample in spec.samples]


class _InFlight:
    """A run whose one call is in flight until `reply` is set; `stop` is what the asker says."""

    concurrency = 1

    def __init__(self, fatal=None):
        self.fatal = fatal
        self.reply = threading.Event()
        self.stored = threading.Event()
        self.stopped = False

    def prefetch(self, samples, *, threads, done=None):
        def call():
            self.reply.wait(30)
            self.stored.set()

        thread = threading.Thread(target=call, daemon=True)
        thread.start()
        return [thread]

    def stop(self):
        self.stopped = True
        self.reply.set()  # the reply arrives a moment after the session ends


def test_threads_stopping_give_the_calls_in_flight_their_grace_to_be_stored():
    """Stopping dropped the calls in flight (Ctrl-C's rerun paid them again); now they are
    waited for, GRACE seconds at most, and the user is told once while they are; a run that
    ended with a fatal error is not waited for."""
    from evals.askers.threads import Threads

    said: list[str] = []
    run, dead = _InFlight(), _InFlight(fatal=RuntimeError("dead endpoint"))
    dead.stop = lambda: setattr(dead, "stopped", True)  # its call never returns
    asker = Threads(said.append)
    asker.start([(run, ["q1"]), (dead, ["q2"])])

    asker.stop()

    assert run.stopped and dead.stopped
    assert run.stored.is_set() and not dead.stored.is_set()
    assert said == []  # the reply came within the first second: nothing to say


def test_threads_stopping_say_once_that_they_wait_for_a_slow_reply(monkeypatch):
    from evals.askers import threads as module

    said: list[str] = []
    run = _InFlight()
    run.stop = lambda: threading.Timer(1.5, run.reply.set).start()  # a reply 1.5 s away
    asker = module.Threads(said.append)
    asker.start([(run, ["q1"])])

    asker.stop()

    assert run.stored.is_set()
    assert said == [module.KEEPING] and "Ctrl-C again" in said[0]
