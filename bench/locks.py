"""Benchmark: what a record lock costs, flock(2) against filelock's FileLock.

    uv run python bench/locks.py [--records 2000] [--repeat 5]

A run takes one record lock per call that is not cached yet (`evals.locks`): on POSIX a bare
flock on a lock file of its own (`FlockLock`), on Windows filelock's FileLock
(`PortableLock`, which on Linux is filelock's flock backend). Each repeat takes and releases
the lock of `--records` new records in a fresh folder, as a first run does, then the same
records again, as a resumed run does. Prints the CPU (process time) and wall time per lock,
the median over repeats, and the ratio PortableLock / FlockLock: flock is kept on POSIX
only while that ratio says it is measurably cheaper.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evals import locks  # noqa: E402


def once(lock_class: type, folder: Path, records: int) -> tuple[float, float]:
    """(CPU s, wall s) per lock taken and released, over `records` locks."""
    paths = [folder / "locks" / f"item-{i:05d}.candidate.lock" for i in range(records)]
    cpu, wall = time.process_time(), time.perf_counter()
    for path in paths:
        lock = lock_class(path)
        assert lock.acquire(wait=False)
        lock.release()
    return (time.process_time() - cpu) / records, (time.perf_counter() - wall) / records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if sys.platform == "win32":
        sys.exit("bench/locks.py compares flock with filelock: flock is POSIX only")
    classes = {"FlockLock": locks.FlockLock, "PortableLock": locks.PortableLock}
    figures: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for _ in range(args.repeat):
        for name, lock_class in classes.items():  # alternating, so machine load falls on both
            with tempfile.TemporaryDirectory() as folder:
                figures.setdefault((name, "new"), []).append(once(lock_class, Path(folder), args.records))
                figures.setdefault((name, "existing"), []).append(once(lock_class, Path(folder), args.records))
    print(f"{args.records} record locks, median of {args.repeat} repeats, per lock:")
    median: dict[tuple[str, str], tuple[float, float]] = {}
    for (name, case), runs in figures.items():
        median[name, case] = (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs))
        cpu, wall = median[name, case]
        print(f"  {name:13} {case:9} CPU {cpu * 1e6:7.1f} us   wall {wall * 1e6:7.1f} us")
    for case in ("new", "existing"):
        flock, portable = median["FlockLock", case], median["PortableLock", case]
        print(f"  PortableLock / FlockLock, {case} lock files: CPU {portable[0] / flock[0]:.2f} x, wall {portable[1] / flock[1]:.2f} x")


if __name__ == "__main__":
    main()
