"""Record locks: exclusive between processes and between threads, held while a call is made.

One small interface, `acquire(wait=...) -> bool` and `release()`, and three ways to hold it:

  * `FolderLock` (POSIX): flock(2) on the folder of the item's records itself. The folder is
    made for the records anyway, so taking a lock creates no file: creating a lock file of its
    own was most of a lock's cost (`bench/locks.py`: 1,255 us of CPU per new item with a lock
    file, its folder included, against 570 us, on the development machine's ext4). One lock
    per item, not per call: an item's calls (the candidate's, then
    each judge's) are made one after another, never two at once, so none waits on another of
    its own item. Held while its descriptor is open, so a killed process never leaves it held.
  * `FlockLock` (POSIX): flock(2) on a lock file of its own, where a filesystem cannot flock a
    folder (NFS emulates flock with POSIX locks, which need a file open for writing).
  * `PortableLock` (everywhere else, Windows): filelock's `FileLock` on a lock file, which locks
    with LockFileEx on Windows and is released by the system when its process dies too
    (filelock does fork checks, path resolution and reentrancy bookkeeping: 3 x flock's CPU
    per new lock file, 18 x per existing one, so POSIX does without it).

`record_lock(folder, lock_file)` is the first where the platform has flock, the third on Windows."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from filelock import BaseFileLock


class RecordLock(Protocol):
    def acquire(self, *, wait: bool) -> bool:
        """Take the lock: wait for it, or else return False when someone holds it."""

    def release(self) -> None:
        """Let go of it (nothing when it is not held)."""


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

    def record_lock(folder: Path, lock_file: Path) -> RecordLock:
        """The lock of the records in `folder`: a lock file of their own, `lock_file`."""
        return PortableLock(lock_file)

else:
    import errno
    import fcntl

    # What flock on a folder fails with where the filesystem cannot do it (NFS: EBADF, the
    # folder not being open for writing; ENOLCK, no lock manager), rather than a lock held.
    _NO_FOLDER_LOCKS = frozenset({errno.EBADF, errno.ENOLCK, errno.EINVAL, errno.EOPNOTSUPP})

    def _opened(path: Path, flags: int, folder: Path, mode: int = 0o644) -> int:
        """A new descriptor of `path`, its `folder` made when missing (a first lock)."""
        try:
            return os.open(path, flags, mode)
        except FileNotFoundError:
            folder.mkdir(parents=True, exist_ok=True)
            return os.open(path, flags, mode)

    def _flocked(fd: int, wait: bool) -> bool:
        """flock `fd`: True once held, False (the descriptor closed) when someone holds it.
        Each open is its own open file description, so two threads of one process exclude
        each other too; a waiting flock waits in the kernel, without the GIL."""
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        except BaseException:
            os.close(fd)
            raise
        return True

    class FlockLock:
        """A record lock through flock(2) on a lock file: POSIX only."""

        def __init__(self, path: Path):
            self.path = path
            self._fd: int | None = None

        def acquire(self, *, wait: bool) -> bool:
            """Take the lock: wait for it, or else return False when someone holds it."""
            fd = _opened(self.path, os.O_RDWR | os.O_CREAT, self.path.parent)
            if not _flocked(fd, wait):
                return False
            self._fd = fd
            return True

        def release(self) -> None:
            fd, self._fd = self._fd, None
            if fd is not None:
                os.close(fd)  # closing the descriptor releases the lock

    class FolderLock:
        """A record lock through flock(2) on the records' folder, made when missing: POSIX only.
        Where the filesystem cannot flock a folder, the lock file `fallback` is locked instead
        (`FlockLock`): every process on that filesystem falls back alike, so they exclude each
        other still."""

        def __init__(self, folder: Path, fallback: Path):
            self.folder, self.fallback = folder, fallback
            self._fd: int | None = None
            self._file: FlockLock | None = None

        def acquire(self, *, wait: bool) -> bool:
            """Take the lock: wait for it, or else return False when someone holds it."""
            # Its first call makes the item's folder here, which its first record goes into.
            fd = _opened(self.folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0), self.folder)
            try:
                if not _flocked(fd, wait):
                    return False
            except OSError as error:
                if error.errno not in _NO_FOLDER_LOCKS:
                    raise
                self._file = FlockLock(self.fallback)
                return self._file.acquire(wait=wait)
            self._fd = fd
            return True

        def release(self) -> None:
            fd, self._fd = self._fd, None
            file, self._file = self._file, None
            if fd is not None:
                os.close(fd)  # closing the descriptor releases the lock
            if file is not None:
                file.release()

    def record_lock(folder: Path, lock_file: Path) -> RecordLock:
        """The lock of the records in `folder`: flock on the folder, or on `lock_file` where the
        filesystem cannot lock a folder."""
        return FolderLock(folder, lock_file)
