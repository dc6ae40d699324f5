"""Benchmark: what a record lock costs: flock on the item's folder, on a lock file, and filelock.

    uv run python bench/locks.py [--records 2000] [--repeat 5] [--smoke]

A run takes a lock per call that is not cached yet (`evals.locks`): on POSIX flock on the
item's folder, which the lock makes and the item's records are written into (`FolderLock`);
where a folder cannot be flocked, flock on a lock file of its own (`FlockLock`); on Windows
filelock's FileLock on that lock file (`PortableLock`, which on Linux is filelock's flock
backend). Each repeat takes and releases the lock of `--records` new items in a fresh folder,
as a first run does, then the same ones again, as a resumed run does. A new item's folder is
made either way (a lock file's run made it when storing the record): it is counted in each.
Prints the CPU (process time) and wall time per lock, the median over repeats, and each
implementation's ratio to `FolderLock`.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench._common import parse_args
from evals import locks

SMOKE = {"records": 20, "repeat": 1}


def once(lock_class: type, folder: Path, records: int) -> tuple[float, float]:
    """(CPU s, wall s) per lock taken and released, over `records` items."""
    items = [folder / "calls" / f"item-{i:05d}" for i in range(records)]
    cpu, wall = time.process_time(), time.perf_counter()
    for item in items:
        if lock_class is locks.FolderLock:
            lock = lock_class(item, folder / "locks" / f"{item.name}.candidate.lock")
        else:
            lock = lock_class(folder / "locks" / f"{item.name}.candidate.lock")
            item.mkdir(parents=True, exist_ok=True)  # where the record goes, made by the lock above
        assert lock.acquire(wait=False)
        lock.release()
    return (time.process_time() - cpu) / records, (time.perf_counter() - wall) / records


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parse_args(parser, SMOKE)
    if sys.platform == "win32":
        sys.exit("bench/locks.py compares flock with filelock: flock is POSIX only")
    classes = {
        "FolderLock": locks.FolderLock,
        "FlockLock": locks.FlockLock,
        "PortableLock": locks.PortableLock,
    }
    figures: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for _ in range(args.repeat):
        for name, lock_class in classes.items():  # alternating, so machine load falls on both
            with tempfile.TemporaryDirectory() as folder:
                figures.setdefault((name, "new"), []).append(
                    once(lock_class, Path(folder), args.records)
                )
                figures.setdefault((name, "existing"), []).append(
                    once(lock_class, Path(folder), args.records)
                )
    print(f"{args.records} record locks, median of {args.repeat} repeats, per lock:")
    median: dict[tuple[str, str], tuple[float, float]] = {}
    for (name, case), runs in figures.items():
        median[name, case] = (
            statistics.median(r[0] for r in runs),
            statistics.median(r[1] for r in runs),
        )
        cpu, wall = median[name, case]
        print(f"  {name:13} {case:9} CPU {cpu * 1e6:7.1f} us   wall {wall * 1e6:7.1f} us")
    for case in ("new", "existing"):
        folder = median["FolderLock", case]
        for name in ("FlockLock", "PortableLock"):
            other = median[name, case]
            print(
                f"  {name} / FolderLock, {case} items: CPU "
                f"{other[0] / folder[0]:.2f} x, wall {other[1] / folder[1]:.2f} x"
            )


if __name__ == "__main__":
    main()
