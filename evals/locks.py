"""Record locks: one record's lock, exclusive between processes and between threads.

One small interface, `RecordLock(path)` with `acquire(wait=...) -> bool` and `release()`, and
two ways to hold it:

  * `FlockLock` (POSIX): flock(2) on a lock file of its own, held while its descriptor is
    open, so a killed process never leaves it held. A lock is taken on every call that is not
    cached yet, so it is kept to a few system calls: `bench/locks.py` measures filelock at 3 x
    its CPU per new record and 18 x per resumed one (filelock does fork checks, path
    resolution and reentrancy bookkeeping that a lock taken once, never nested, does not need).
  * `PortableLock` (everywhere else, Windows): filelock's `FileLock`, which locks with
    LockFileEx on Windows and is released by the system when its process dies too.

`RecordLock` is the first where the platform has flock, the second on Windows."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from filelock import BaseFileLock


class PortableLock:
    """A record lock through filelock, on any platform."""

    def __init__(self, path: Path):
        self.path = path
        self._lock: BaseFileLock | None = None

    def acquire(self, *, wait: bool) -> bool:
        """Take the lock: wait for it, or else return False when someone holds it."""
        from filelock import FileLock, Timeout  # here: a POSIX process never needs it

        lock = FileLock(self.path)  # one per acquire: two threads' locks exclude each other
        try:
            lock.acquire(timeout=-1 if wait else 0)  # it makes the lock's folder when missing
        except Timeout:
            return False
        self._lock = lock
        return True

    def release(self) -> None:
        lock, self._lock = self._lock, None
        if lock is not None:
            lock.release()


if sys.platform == "win32":
    RecordLock = PortableLock
else:
    import fcntl

    class FlockLock:
        """A record lock through flock(2): POSIX only."""

        def __init__(self, path: Path):
            self.path = path
            self._fd: int | None = None

        def acquire(self, *, wait: bool) -> bool:
            """Take the lock: wait for it, or else return False when someone holds it."""
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            except FileNotFoundError:  # the record's first lock: its folder is made once
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                # Each open is its own open file description, so two threads of one process
                # exclude each other too; a waiting flock waits in the kernel, without the GIL.
                fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                return False
            except BaseException:
                os.close(fd)
                raise
            self._fd = fd
            return True

        def release(self) -> None:
            fd, self._fd = self._fd, None
            if fd is not None:
                os.close(fd)  # closing the descriptor releases the lock

    RecordLock = FlockLock
