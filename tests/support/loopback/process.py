"""`ServerProcess`: a loopback server in a child process (`python -m tests.support.loopback.serve`)."""

from __future__ import annotations

import os
import select
import subprocess
import sys
from pathlib import Path

from tests.support import ROOT as REPO_ROOT

from .core import read_log


class ServerProcess:
    """A `serve` subprocess. `extra_args` are passed to the CLI, e.g. ["--fail-next", "2"]."""

    def __init__(
        self,
        kind: str,
        *,
        latency: float = 0.0,
        log_path: str | Path | None = None,
        extra_args: list[str] = (),
        start_timeout: float = 60.0,
    ):
        self.log_path = Path(log_path) if log_path else None
        self._cmd = [
            sys.executable,
            "-m",
            "tests.support.loopback.serve",
            "--kind",
            kind,
            "--latency",
            str(latency),
            *extra_args,
        ]
        if self.log_path:
            self._cmd += ["--log", str(self.log_path)]
        self._start_timeout = start_timeout
        self.proc: subprocess.Popen | None = None
        self.url: str = ""

    def start(self) -> ServerProcess:
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(
                filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])
            ),
        }
        self.proc = subprocess.Popen(
            self._cmd, cwd=REPO_ROOT, env=env, text=True, stdout=subprocess.PIPE
        )
        # Bounded wait: a server that never prints must fail the test, not hang it.
        ready, _, _ = select.select([self.proc.stdout], [], [], self._start_timeout)
        self.url = self.proc.stdout.readline().strip() if ready else ""
        if not self.url.startswith("http://"):
            self.stop()
            raise RuntimeError(f"loopback server did not start: {self._cmd}")
        return self

    def requests(self) -> list[dict]:
        """Requests logged so far (needs log_path)."""
        return read_log(self.log_path) if self.log_path else []

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc and self.proc.stdout:
            self.proc.stdout.close()

    def __enter__(self) -> ServerProcess:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
