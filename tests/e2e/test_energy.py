"""evals/energy/spans.py's span log across processes: spans written at once by threads and by child
processes are all read back, one file per process. The children are forked with multiprocessing,
since a process of its own, writing its own file, is what is tested. The rest of evals/energy/
is tests/unit/test_energy.py."""

from __future__ import annotations

import multiprocessing
import threading

from evals.energy import Span, SpanLog

# ---------------------------------------------------------------- spans


def test_spans_of_threads_and_processes_are_all_read_back(tmp_path):
    log = SpanLog(tmp_path)
    log.record(Span(0.0, 1.0, "parent"))  # opens the parent's file before the fork

    def write(who: str, count: int):
        for i in range(count):
            log.record(Span(float(i), i + 0.5, who, "easy" if i % 2 else None))

    fork = multiprocessing.get_context(
        "fork"
    )  # forked before the threads start: fork() and threads do not mix
    children = [fork.Process(target=write, args=(f"child{n}", 50)) for n in range(2)]
    for child in children:
        child.start()
    threads = [threading.Thread(target=write, args=(f"thread{n}", 200)) for n in range(4)]
    for thread in threads:
        thread.start()
    for worker in threads + children:
        worker.join()
    assert [child.exitcode for child in children] == [0, 0]

    spans = SpanLog.read(tmp_path)
    by_eval = {
        name: sum(span.eval == name for span in spans) for name in {span.eval for span in spans}
    }
    assert by_eval == {
        "parent": 1,
        **{f"thread{n}": 200 for n in range(4)},
        "child0": 50,
        "child1": 50,
    }
    assert Span(3.0, 3.5, "child1", "easy") in spans
    files = sorted((tmp_path / "energy").glob("spans-*.jsonl"))
    assert len(files) == 3  # the parent's (its threads share it) and one per child
    assert all(line.count("{") == 1 for file in files for line in file.read_text().splitlines())


# ---------------------------------------------------------------- rapl


# ---------------------------------------------------------------- nvml


# ---------------------------------------------------------------- hwinfo


# ---------------------------------------------------------------- attribution
