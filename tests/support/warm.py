"""Warm starts for the commands under test: `python -m pytest`, `python -m evals.evaluate` and
`python -m evals.site` forked from a process that has imported what they import (pytest, the
harness; the SDKs for evaluate, which builds its providers to check them) once, instead of an
interpreter that imports it again for every command (~1 s of CPU each).

A forked command is still a process of its own: its own pid, environment, working folder,
standard streams, exit status and session; what it imports or leaves behind is gone with it.
What it shares is only the modules imported before the fork, which read nothing of the
environment at import. A command is exec'd cold instead when warmth could change what it
does: an interpreter variable in its environment that differs from this one's (PYTHONPATH,
-X flags), another executable or module, or `ROBLOX_EVALS_TESTS_COLD=1` (every command cold:
the way to check that nothing depends on this file). Tests whose point is the interpreter's
start (imports, start-up time) or a signal's path through a real exec use `harness.start`.

The server is `python -m tests.support.warm SOCKET MODULE`, one per kind of command and test
process, started on first use and ended with it (its stdin is a pipe from the test process: EOF ends it). Per command
it receives the child's three standard streams (SCM_RIGHTS) and a JSON request, forks, sends
back the child's pid, and once the child ends, its exit status as `subprocess` reports it
(negative: the signal that ended it). The server is one thread: it waits on the listening
socket and on a pidfd per child.
"""

from __future__ import annotations

import atexit
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

# What each kind of command has imported for it before the fork. Never a pytest plugin's
# package (pytest warns that it cannot rewrite one imported before it starts: xdist, syrupy,
# anyio, the harness's `plugins`) nor, for pytest, an SDK (openai and anthropic import anyio;
# pytest's own process never needs one: the asking children import it).
_EVALS = ("evals.run", "evals.fetcher", "evals.batch", "evals.verify", "evals.site", "evals.publish", "evals.registry",
          "evals.tasks.multiple_choice", "evals.tasks.freeform", "evals.tasks.leetcode", "evals.providers.openai",
          "evals.providers.anthropic", "evals.providers.live", "evals.providers.reference", "evals.luau", "httpx")
PRELOAD = {
    "pytest": ("pytest", *_EVALS),
    "evals.evaluate": ("evals.evaluate", *_EVALS, "openai", "anthropic"),
    "evals.site": ("evals.site", *_EVALS),
}
WARM_MODULES = tuple(PRELOAD)
# Read by the interpreter as it starts: a command whose environment sets one differently from
# the server's would not start the same interpreter.
STARTUP_VARIABLES = ("PYTHONPATH", "PYTHONHOME", "PYTHONSAFEPATH", "PYTHONHASHSEED", "PYTHONDONTWRITEBYTECODE",
                     "PYTHONWARNINGS", "PYTHONDEVMODE", "PYTHONUTF8", "PYTHONIOENCODING", "PYTHONNODEBUGRANGES",
                     "PYTHONINTMAXSTRDIGITS", "PYTHONOPTIMIZE", "PYTHONMALLOC", "PYTHONFAULTHANDLER",
                     "PYTHONTRACEMALLOC", "PYTHONPROFILEIMPORTTIME", "PYTHONEXECUTABLE", "PYTHONPLATLIBDIR")


def warm_module(command: list[str], env: dict[str, str]) -> str | None:
    """The module a warm start can run `command` as, or None (exec'd cold)."""
    if os.environ.get("ROBLOX_EVALS_TESTS_COLD") == "1" or sys.platform != "linux":
        return None
    if len(command) < 3 or command[0] != sys.executable or command[1] != "-m" or command[2] not in WARM_MODULES:
        return None
    if any(env.get(name) != os.environ.get(name) for name in STARTUP_VARIABLES):
        return None
    return command[2]


class WarmProcess:
    """As much of `subprocess.Popen` as the tests use, for a command forked by the server."""

    def __init__(self, command: list[str], module: str, *, env: dict[str, str], cwd: Path | str,
                 stdin=None, stdout=None, stderr=None, text: bool = False, start_new_session: bool = False):
        self.args, self.returncode, self._text = command, None, text
        ends = [], []  # (the child's, ours)
        child_in = open(os.devnull, "rb") if stdin in (None, subprocess.DEVNULL) else stdin
        streams = []
        for wanted, default in ((stdout, 1), (stderr, 2)):
            if wanted == subprocess.PIPE:
                read, write = os.pipe()
                ends[0].append(write)
                ends[1].append(read)
                streams.append(os.fdopen(read, "r" if text else "rb", encoding="utf-8" if text else None,
                                         errors="replace" if text else None))
            elif wanted == subprocess.STDOUT:
                ends[0].append(ends[0][0])
                streams.append(None)
            elif wanted == subprocess.DEVNULL:
                ends[0].append(os.open(os.devnull, os.O_WRONLY))
                streams.append(None)
            else:
                ends[0].append(default if wanted is None else wanted.fileno())
                streams.append(None)
        self.stdout, self.stderr = streams
        request = {"module": module, "args": command[3:], "env": env, "cwd": str(cwd), "session": start_new_session}
        self._channel = _server(module).connect()
        fds = [child_in.fileno(), *ends[0]]
        socket.send_fds(self._channel, [json.dumps(request).encode()], fds)
        for fd in set(ends[0]):
            if fd > 2:
                os.close(fd)
        if child_in is not stdin:
            child_in.close()
        self._lines = self._channel.makefile("r")
        self.pid = int(self._lines.readline())
        self._ended = threading.Event()
        threading.Thread(target=self._wait_for_status, daemon=True).start()

    def _wait_for_status(self) -> None:
        line = self._lines.readline()
        self.returncode = int(line) if line.strip() else -signal.SIGKILL  # the server gone: as killed
        self._lines.close()
        self._channel.close()
        self._ended.set()

    def poll(self) -> int | None:
        return self.returncode if self._ended.is_set() else None

    def wait(self, timeout: float | None = None) -> int:
        if not self._ended.wait(timeout):
            raise subprocess.TimeoutExpired(self.args, timeout)
        return self.returncode

    def communicate(self, input=None, timeout: float | None = None):
        assert input is None, "a warm command reads no input"
        outputs: dict[int, list] = {}
        readers = [threading.Thread(target=lambda i=i, s=s: outputs.setdefault(i, [s.read()]), daemon=True)
                   for i, s in enumerate((self.stdout, self.stderr)) if s is not None]
        for reader in readers:
            reader.start()
        for reader in readers:
            reader.join(timeout)
            if reader.is_alive():
                raise subprocess.TimeoutExpired(self.args, timeout)
        self.wait(timeout)
        for stream in (self.stdout, self.stderr):
            if stream is not None:
                stream.close()
        return tuple(outputs.get(i, [None])[0] for i in (0, 1))

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def run(command: list[str], module: str, *, timeout: float | None = None, **kwargs) -> subprocess.CompletedProcess:
    """`subprocess.run(command, capture_output=True, ...)` through the server."""
    process = WarmProcess(command, module, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


# -- the server, as this process's client sees it --------------------------------------------------

class _Server:
    def __init__(self, module: str):
        self.folder = tempfile.mkdtemp(prefix="warm-")
        self.path = os.path.join(self.folder, "socket")
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.process = subprocess.Popen([sys.executable, "-m", "tests.support.warm", self.path, module], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, env=env, cwd=Path(__file__).resolve().parents[2])
        ready = self.process.stdout.readline()  # written once it listens, after its imports
        if ready.strip() != b"ready":
            raise RuntimeError(f"the warm-start server did not start (it printed {ready!r})")
        atexit.register(self.stop)

    def connect(self) -> socket.socket:
        channel = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        channel.connect(self.path)
        return channel

    def stop(self) -> None:
        self.process.stdin.close()
        self.process.wait()
        self.process.stdout.close()
        for name in os.listdir(self.folder):
            os.unlink(os.path.join(self.folder, name))
        os.rmdir(self.folder)


_started: dict[str, _Server] = {}
_lock = threading.Lock()


def _server(module: str) -> _Server:
    """The server for `module`'s commands, started on first use (one per kind: each has
    imported what its commands need, and nothing that would change what they do)."""
    with _lock:
        if module not in _started or _started[module].process.poll() is not None:
            _started[module] = _Server(module)
        return _started[module]


# -- the server itself ------------------------------------------------------------------------------

def serve(path: str, module: str) -> None:
    import importlib

    for name in PRELOAD[module]:
        importlib.import_module(name)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "accept")
    selector.register(sys.stdin, selectors.EVENT_READ, "stop")
    print("ready", flush=True)
    children: dict[int, tuple[int, socket.socket]] = {}  # pidfd: (pid, channel)
    while True:
        for key, _ in selector.select():
            if key.data == "stop":
                return
            if key.data == "accept":
                channel, _ = listener.accept()
                message, fds, _, _ = socket.recv_fds(channel, 1 << 20, 3)
                pid = os.fork()
                if pid == 0:
                    listener.close()
                    channel.close()
                    _child(json.loads(message), fds)  # never returns
                for fd in fds:
                    os.close(fd)
                channel.sendall(f"{pid}\n".encode())
                pidfd = os.pidfd_open(pid)
                children[pidfd] = (pid, channel)
                selector.register(pidfd, selectors.EVENT_READ, "child")
            else:
                pidfd = key.fd
                pid, channel = children.pop(pidfd)
                selector.unregister(pidfd)
                os.close(pidfd)
                _, status = os.waitpid(pid, 0)
                try:
                    channel.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())
                except OSError:
                    pass  # the test gave up on it
                channel.close()


def _child(request: dict, fds: list[int]) -> None:
    """In the forked child: become the command, run it as `python -m` does, exit with its status."""
    import runpy
    import traceback

    code = 1
    try:
        if request["session"]:
            os.setsid()
        for sig in (signal.SIGTERM, signal.SIGCHLD, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        os.closerange(3, 1 << 16)  # as exec with close_fds: nothing of the server's or the other commands'
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        sys.path[0] = request["cwd"]  # what `python -m` puts first
        sys.argv = [request["module"], *request["args"]]
        sys.modules.pop(request["module"], None)  # run as `python -m` runs it: as __main__, not imported first
        runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as exit:
        if exit.code is None:
            code = 0
        elif isinstance(exit.code, int):
            code = exit.code
        else:
            print(exit.code, file=sys.stderr)
            code = 1
    except KeyboardInterrupt:
        traceback.print_exc()
        code = -signal.SIGINT
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        try:
            atexit._run_exitfuncs()
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:
            pass
        if code == -signal.SIGINT:  # as an interpreter ended by an uncaught KeyboardInterrupt
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGINT)
        os._exit(code & 0xFF)


if __name__ == "__main__":
    serve(sys.argv[1], sys.argv[2])
