"""What the harness needs of its platform: Windows and macOS have no flock, fchmod, signal
masks or forkserver. The Windows branches are run here by forcing them: in a subprocess whose
`sys.platform` says win32 and whose POSIX-only calls are gone, or by taking the portable
implementation directly."""

from __future__ import annotations

import json
import subprocess
import sys
import threading

import pytest

from evals import locks
from tests.harness import ROOT

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
    script = f"from evals.locks import {backend.__name__} as L; import pathlib, sys; print(L(pathlib.Path(sys.argv[1])).acquire(wait=False))"
    other = subprocess.run([sys.executable, "-c", script, str(path)], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert other.stdout.strip() == "False", other.stderr
    held.release()
    again = backend(path)
    assert again.acquire(wait=True)
    again.release()


def test_the_cache_and_atomic_writes_run_without_posix_calls(tmp_path):
    """On Windows `import evals.cache` failed (fcntl), and every write called os.fchmod."""
    script = AS_WINDOWS + """
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
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["PortableLock", "True", "False", "B"]
    assert (tmp_path / "result.json").read_text() == "{}"
    assert json.loads((tmp_path / "calls" / "mc-001" / "candidate.json").read_text())["response"]["text"] == "B"


@pytest.mark.parametrize("platform, says", [
    ("win32", "hwinfo: the HWiNFO log C:\\hwinfo\\eval.csv does not exist: start HWiNFO's sensor logging into that file before the run"),
    ("darwin", "rapl: RAPL counters are read from Linux's powercap, which darwin does not have: choose --energy-source nvml "
               "(an NVIDIA GPU) or hwinfo (--energy-log=PATH, HWiNFO's CSV log)"),
])
def test_energy_alone_measures_with_the_platforms_source(tmp_path, platform, says):
    """Windows: HWiNFO's log where the original harness had it; macOS has no RAPL: one line."""
    script = AS_WINDOWS.replace('"win32"', repr(platform)) + """
from evals import energy
from evals.errors import UsageError
given = {"energy": True} if sys.platform == "win32" else {"energy": True, "energy_powercap": sys.argv[1]}  # an empty one
source = energy.chosen(given.get)
try:
    source.check()
except UsageError as error:
    print(f"{source.name}: {error}")
"""
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == says
