"""What the harness needs of its platform: Windows and macOS have no flock, fchmod, signal
masks or forkserver. Record locks exclude other threads and processes, a call is locked on its
item's folder, the cache and atomic writes run without POSIX calls, `--energy` picks the
platform's source, and every name a run files is valid on Windows. The rest is
tests/unit/test_portable.py.

The Windows branches run in real execs: a `python -c` interpreter whose `sys.platform` says win32
and whose POSIX-only calls are gone before the harness is imported. Other processes try the locks
the test or another process holds. Whole runs are `pytest` started warm (tests/support/warm.py)
against a loopback server on a thread of the test."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading

import pytest

from evals import locks
from tests.support.harness import ROOT, mc_file, read_result, run_harness
from tests.support.loopback import Answer, OpenAIServer

BACKENDS = [locks.PortableLock] + ([locks.FlockLock] if sys.platform != "win32" else [])

# A process that looks like Windows to the harness: no fcntl, no os.fchmod, no signal masks.
# The standard library and filelock are imported first: they keep the Linux code this machine
# can run (they would import _winapi, msvcrt); what the harness imports after sees win32.
AS_WINDOWS = """
import os, signal, sys
import asyncio, filelock, multiprocessing.connection, shutil, subprocess, tempfile
sys.platform = "win32"
sys.modules["fcntl"] = None
del os.fchmod, signal.pthread_sigmask
"""


@pytest.mark.parametrize("backend", BACKENDS, ids=lambda b: b.__name__)
def test_a_record_lock_excludes_other_threads_and_processes_until_released(tmp_path, backend):
    path = tmp_path / "locks" / "mc-001.candidate.lock"  # its folder does not exist yet
    held = backend(path)
    assert held.acquire(wait=False)
    assert not backend(path).acquire(wait=False)
    in_thread: list[bool] = []
    thread = threading.Thread(target=lambda: in_thread.append(backend(path).acquire(wait=False)))
    thread.start()
    thread.join()
    assert in_thread == [False]
    script = (
        f"from evals.locks import {backend.__name__} as L; import pathlib, "
        "sys; print(L(pathlib.Path(sys.argv[1])).acquire(wait=False))"
    )
    other = subprocess.run(
        [sys.executable, "-c", script, str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert other.stdout.strip() == "False", other.stderr
    held.release()
    again = backend(path)
    assert again.acquire(wait=True)
    again.release()


# Where a filesystem cannot flock a folder (NFS: EBADF on a folder open for reading only).
NO_FOLDER_FLOCK = """
import errno, fcntl, os, stat
_flock = fcntl.flock
def flock(fd, operation):
    if stat.S_ISDIR(os.fstat(fd).st_mode):
        raise OSError(errno.EBADF, "Bad file descriptor")
    return _flock(fd, operation)
fcntl.flock = flock
"""


@pytest.mark.skipif(
    sys.platform == "win32",
    reason="flock is POSIX: Windows locks a lock file (PortableLock, above)",
)
@pytest.mark.parametrize("folders", ["lockable", "not lockable"])
def test_a_call_is_locked_on_its_items_folder_and_creates_no_lock_file(tmp_path, folders):
    """Creating a lock file per call was most of a first run's lock cost: the lock is on the
    item's folder, which its records go into anyway; a lock file only where a folder cannot be
    flocked. Either way it excludes other threads and processes until released."""
    script = (
        (NO_FOLDER_FLOCK if folders == "not lockable" else "")
        + """
import pathlib, sys, threading
from evals.cache import RunCache
store = RunCache(pathlib.Path(sys.argv[1]), "session")
held = store.lock("mc-001", "candidate")
if sys.argv[2] == "hold":
    print(held.acquire(wait=False), store.lock("mc-001", "judge-0").acquire(wait=False), \
store.lock("mc-002", "candidate").acquire(wait=False))
    got = []
    thread = threading.Thread(target=lambda: got.append(store.lock("mc-001", "candidate").acquire(wait=False)))
    thread.start(); thread.join()
    print(got[0])
    sys.stdout.flush()
    sys.stdin.readline()
    held.release()
    print(store.lock("mc-001", "candidate").acquire(wait=False))
else:
    print(held.acquire(wait=False))
"""
    )
    root = tmp_path / "run"
    holder = subprocess.Popen(
        [sys.executable, "-c", script, str(root), "hold"],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # The item's other calls wait too where the folder is the lock; a lock file is the call's own.
        assert holder.stdout.readline().split() == [
            "True",
            "False" if folders == "lockable" else "True",
            "True",
        ]
        assert holder.stdout.readline().strip() == "False"  # another thread
        other = subprocess.run(
            [sys.executable, "-c", script, str(root), "try"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert other.stdout.strip() == "False", other.stderr  # another process
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == "True"  # released
    finally:
        holder.kill()
        holder.wait()
    assert sorted(path.name for path in (root / "calls").iterdir()) == ["mc-001", "mc-002"]
    lock_files = (
        sorted(path.name for path in (root / "locks").iterdir())
        if (root / "locks").exists()
        else []
    )
    assert lock_files == (
        []
        if folders == "lockable"
        else ["mc-001.candidate.lock", "mc-001.judge-0.lock", "mc-002.candidate.lock"]
    )


def test_the_cache_and_atomic_writes_run_without_posix_calls(tmp_path):
    """On Windows `import evals.cache` failed (fcntl), and every write called os.fchmod."""
    script = (
        AS_WINDOWS
        + """
from pathlib import Path
from evals import cache, locks
from evals.atomic import write_text_atomic
from evals.providers import Completion
root = Path(sys.argv[1])
store = cache.RunCache(root, "session")
lock = store.lock("mc-001", "candidate")
print(type(lock).__name__, lock.acquire(wait=False), store.lock("mc-001", "candidate").acquire(wait=False))
store.store("mc-001", "candidate", {"q": 1}, Completion(text="B"))
lock.release()
write_text_atomic(root / "result.json", "{}")
print(store.lookup("mc-001", "candidate", {"q": 1}).text)
"""
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["PortableLock", "True", "False", "B"]
    assert (tmp_path / "result.json").read_text() == "{}"
    assert (
        json.loads((tmp_path / "calls" / "mc-001" / "candidate.json").read_text())["response"][
            "text"
        ]
        == "B"
    )


@pytest.mark.parametrize(
    "platform, says",
    [
        (
            "win32",
            "hwinfo: the HWiNFO log C:\\hwinfo\\eval.csv does not exist: "
            "start HWiNFO's sensor logging into that file before the run",
        ),
        (
            "darwin",
            "rapl: RAPL counters are read from Linux's powercap, "
            "which darwin does not have: choose --energy-source nvml "
            "(an NVIDIA GPU) or hwinfo (--energy-log=PATH, HWiNFO's CSV log)",
        ),
    ],
)
def test_energy_alone_measures_with_the_platforms_source(tmp_path, platform, says):
    """Windows: HWiNFO's log where the original harness had it; macOS has no RAPL: one line."""
    script = (
        AS_WINDOWS.replace('"win32"', repr(platform))
        + """
from evals import energy
from evals.errors import UsageError
given = {"energy": True} if sys.platform == "win32" else \
{"energy": True, "energy_powercap": sys.argv[1]}  # an empty one
source = energy.chosen(given.get)
try:
    source.check()
except UsageError as error:
    print(f"{source.name}: {error}")
"""
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == says


# -- names on Windows ------------------------------------------------------------------------------

# What Windows refuses in a file or folder name: a device name (with any extension), a character
# of <>:"/\|?* or a control character, a trailing dot or space, more than 255 characters.
DEVICE = re.compile(
    r"(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$) *(\..*)?", re.IGNORECASE
)
WINDOWS_IDS = [
    "CON",
    "nul.txt",
    "com1",
    "Lpt9.json",
    "a.",
    "a ",
    'x<>:"|?*y',
    "tab\there",
    "COM¹",
    "conin$",
    "x" * 300,
    "mc-001",
]


def valid_on_windows(name: str) -> bool:
    return (
        bool(name)
        and not DEVICE.fullmatch(name)
        and not re.search(r'[<>:"/\\|?*\x00-\x1f]', name)
        and not name.endswith((".", " "))
        and len(name) <= 255
    )


def test_every_name_a_run_files_is_valid_on_windows(tmp_path):
    """Ids, the model's name and the run folders' and result files' names they make: each part
    of every path the run writes is a name Windows takes."""
    dataset = mc_file(tmp_path / "windows-ids.jsonl", WINDOWS_IDS)
    with OpenAIServer(lambda request: Answer("Answer: A")) as server:
        done = run_harness(
            "--provider=openai",
            "--model=CON. <1>:a|b?",
            f"--base-url={server.url}/v1",
            "-m",
            "multiple_choice",
            f"--dataset=mc={dataset}",
            run_dir=tmp_path / "runs",
            results_dir=tmp_path / "results",
        )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    written = [p for folder in ("runs", "results") for p in (tmp_path / folder).rglob("*")]
    assert len([p for p in written if p.parent.name == "calls"]) == len(
        WINDOWS_IDS
    )  # each id a record of its own
    invalid = {
        part
        for p in written
        for part in p.relative_to(tmp_path).parts
        if not valid_on_windows(part)
    }
    assert invalid == set()
    assert read_result(tmp_path / "results", "multiple_choice")["summary"]["n"] == len(WINDOWS_IDS)


def test_records_filed_under_a_windows_device_name_are_still_found(tmp_path):
    """`nul.txt~<hash>` is now `_nul.txt~<hash>`: a run folder made before (on Linux, where the
    old name worked) is resumed from its records, not asked again."""
    dataset = mc_file(tmp_path / "ids.jsonl", ["nul.txt", "mc-001"])
    with OpenAIServer(lambda request: Answer("Answer: A")) as server:
        args = [
            "--provider=openai",
            "--model=m",
            f"--base-url={server.url}/v1",
            "-m",
            "multiple_choice",
            f"--dataset=mc={dataset}",
        ]
        first = run_harness(*args, run_dir=tmp_path / "runs", results_dir=tmp_path / "results")
        (now,) = (tmp_path / "runs").glob("*/*/calls/_nul.txt~*")
        now.rename(now.with_name(now.name.removeprefix("_")))  # where the earlier harness filed it
        (tmp_path / "results" / "multiple_choice").rename(tmp_path / "results-before")
        again = run_harness(*args, run_dir=tmp_path / "runs", results_dir=tmp_path / "results")
    assert first.returncode == 0 and again.returncode == 0, again.stdout[-3000:]
    assert len(server.requests) == 2  # the first run's two; the second asked nothing
