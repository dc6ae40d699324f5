"""Warm starts for the commands under test: `python -m pytest`, `python -m evals.evaluate`,
`python -m evals.site`, and the harness's own children of them (the `pytest` runs `evaluate`
starts, the asking process `python -P -m evals.askers.processes` a run starts), forked from a process that
has imported what they import (pytest, the harness, the SDKs where the command needs them) once,
instead of an interpreter that imports it again for every command (~1 s of CPU each).

A forked command is still a process of its own: its own pid, environment, working folder,
standard streams (rebuilt as the interpreter builds them from PYTHONIOENCODING and
PYTHONUNBUFFERED), exit status and session; what it imports or leaves behind is gone with it.
What it shares is only the modules imported before the fork, which read nothing of the
environment at import. A command is exec'd cold instead when warmth could change what it
does: an interpreter variable in its environment that differs from its server's (PYTHONPATH,
the locale, -X flags), another executable, module or interpreter flag, or
`ROBLOX_EVALS_TESTS_COLD=1` (every command cold: the way to check that nothing depends on this
file). Tests whose point is the interpreter's start (imports, start-up time), a signal's path
through a real exec, or a process's parent (the asking process found by its parent's pid) use
`harness.start` or `subprocess` directly: nothing they start, nor its children, is warm.

The server is `python [FLAGS] -m tests.support.warm SOCKET KIND`, one per kind of command and
test process, started on first use and ended with it (its stdin is a pipe from the test
process: EOF ends it). Per command it receives the child's three standard streams (SCM_RIGHTS)
and a JSON request, forks, sends back the child's pid, and once the child ends, its exit status
as `subprocess` reports it (negative: the signal that ended it). The server is one thread: it
waits on the listening socket and on a pidfd per child. A forked command is told the test
process's servers of the kinds it starts (`CHILDREN`), and its `subprocess.Popen` forks those
commands from them too; any other command it starts is a real exec, as it would be.
"""

from __future__ import annotations

import atexit
import io
import json
import locale
import os
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Kind:
    """How a kind of command starts: `python FLAGS -m MODULE`, the modules imported for it
    before the fork, and the interpreter variables its server starts with, besides this
    process's (the asking process's PYTHONPATH, as `evals.askers.processes` sets it)."""

    module: str
    preload: tuple[str, ...]
    flags: tuple[str, ...] = ()
    variables: dict[str, str] = field(default_factory=dict)


# What each kind of command has imported for it before the fork. Never a pytest plugin's
# package (pytest warns that it cannot rewrite one imported before it starts: xdist, syrupy,
# anyio, the harness's `plugins`) nor, for pytest, an SDK (openai and anthropic import anyio;
# pytest's own process rarely needs one: the asking children import it).
_EVALS = (
    "evals.run",
    "evals.askers.processes",
    "evals.askers.batch",
    "evals.verify",
    "evals.site",
    "evals.publish",
    "evals.models_file",
    "evals.tasks.multiple_choice",
    "evals.tasks.freeform",
    "evals.tasks.leetcode",
    "evals.providers.openai",
    "evals.providers._openai",
    "evals.providers.anthropic",
    "evals.providers._anthropic",
    "evals.providers.live",
    "evals.providers._live",
    "evals.providers.reference",
    "evals.energy.hwinfo",
    "evals.energy.rapl",
    "evals.energy.nvml",
    "evals.luau",
    "httpx",
)
# `evals.askers.processes` as its parent starts it (evals/askers/processes.py): -P, the harness's
# root first on its path.
_FETCHER_PATH = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
KINDS = {
    "pytest": Kind("pytest", ("pytest", *_EVALS)),
    "evals.evaluate": Kind(
        "evals.evaluate",
        (
            "evals.evaluate",
            "evals.evaluate.children",
            "evals.evaluate.publishing",
            *_EVALS,
            "openai",
            "anthropic",
        ),
    ),
    "evals.site": Kind("evals.site", ("evals.site", *_EVALS)),
    "evals.askers.processes": Kind(
        "evals.askers.processes",
        (*_EVALS, "openai", "anthropic"),
        ("-P",),
        {"PYTHONPATH": _FETCHER_PATH},
    ),
}
WARM_MODULES = tuple(KINDS)
# The kinds of command each kind starts of its own (evaluate: a pytest per eval; pytest: its
# asking processes): their servers are started before the first such command is forked.
CHILDREN = {
    "evals.evaluate": ("pytest", "evals.askers.processes"),
    "pytest": ("evals.askers.processes",),
}
# Read by the interpreter as it starts: a command whose environment sets one differently from
# its server's would not start the same interpreter. (PYTHONIOENCODING and PYTHONUNBUFFERED
# are read too, but only to build the standard streams, which a forked command rebuilds.)
STARTUP_VARIABLES = (
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONSAFEPATH",
    "PYTHONHASHSEED",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONWARNINGS",
    "PYTHONDEVMODE",
    "PYTHONUTF8",
    "PYTHONNODEBUGRANGES",
    "PYTHONINTMAXSTRDIGITS",
    "PYTHONOPTIMIZE",
    "PYTHONMALLOC",
    "PYTHONFAULTHANDLER",
    "PYTHONTRACEMALLOC",
    "PYTHONPROFILEIMPORTTIME",
    "PYTHONEXECUTABLE",
    "PYTHONPLATLIBDIR",
    "PYTHONCOERCECLOCALE",
    "LC_ALL",
    "LC_CTYPE",
    "LANG",
)
STREAM_VARIABLES = ("PYTHONIOENCODING", "PYTHONUNBUFFERED")


def startup(env: dict[str, str] | os._Environ) -> dict[str, str | None]:
    return {name: env.get(name) for name in STARTUP_VARIABLES}


# The servers this process may fork commands from: those it started, or, in a forked command,
# the ones its request named ({kind: (socket path, startup variables)}).
_inherited: dict[str, tuple[str, dict[str, str | None]]] | None = None


def warm_module(command: list[str], env: dict[str, str]) -> str | None:
    """The kind of command a warm start can run `command` as, or None (exec'd cold)."""
    if os.environ.get("ROBLOX_EVALS_TESTS_COLD") == "1" or sys.platform != "linux":
        return None
    if len(command) < 3 or command[0] != sys.executable or "-m" not in command[1:-1]:
        return None
    at = command.index("-m", 1)
    kind = KINDS.get(command[at + 1])
    if kind is None or tuple(command[1:at]) != kind.flags:
        return None
    if _inherited is not None:
        known = _inherited.get(kind.module)
        return kind.module if known and startup(env) == known[1] else None
    return kind.module if startup(env) == startup(_server_env(kind)) else None


class WarmProcess:
    """As much of `subprocess.Popen` as the tests and the harness use, for a command forked
    by the server."""

    def __init__(
        self,
        command: list[str],
        module: str,
        *,
        env: dict[str, str] | None = None,
        cwd: Path | str | None = None,
        stdin=None,
        stdout=None,
        stderr=None,
        text: bool = False,
        universal_newlines: bool | None = None,
        encoding: str | None = None,
        errors: str | None = None,
        start_new_session: bool = False,
    ):
        self.args, self.returncode = command, None
        text = bool(text or universal_newlines or encoding or errors)
        opened = (
            {
                "encoding": encoding or "utf-8",
                "errors": errors or ("replace" if not encoding else "strict"),
            }
            if text
            else {}
        )
        theirs, opened_here = [], []  # the child's three descriptors; those of them made here
        if stdin == subprocess.PIPE:
            read, write = os.pipe()
            theirs.append(read)
            opened_here.append(read)
            self.stdin = os.fdopen(write, "w" if text else "wb", **opened)
        else:
            # A test's command reads nothing (its own stdin may be xdist's channel); a command a
            # forked command starts inherits that one's, as a real exec would.
            if stdin == subprocess.DEVNULL or (stdin is None and _inherited is None):
                opened_here.append(os.open(os.devnull, os.O_RDONLY))
                theirs.append(opened_here[-1])
            else:
                theirs.append(
                    0 if stdin is None else stdin if isinstance(stdin, int) else stdin.fileno()
                )
            self.stdin = None
        streams = []
        for wanted, default in ((stdout, 1), (stderr, 2)):
            if wanted == subprocess.PIPE:
                read, write = os.pipe()
                theirs.append(write)
                opened_here.append(write)
                streams.append(os.fdopen(read, "r" if text else "rb", **opened))
            elif wanted == subprocess.STDOUT:
                theirs.append(theirs[1])
                streams.append(None)
            elif wanted == subprocess.DEVNULL:
                opened_here.append(os.open(os.devnull, os.O_WRONLY))
                theirs.append(opened_here[-1])
                streams.append(None)
            else:
                theirs.append(
                    default
                    if wanted is None
                    else wanted
                    if isinstance(wanted, int)
                    else wanted.fileno()
                )
                streams.append(None)
        self.stdout, self.stderr = streams
        env = dict(os.environ) if env is None else env
        request = {
            "module": module,
            "args": command[command.index("-m", 1) + 2 :],
            "env": env,
            "cwd": str(cwd or os.getcwd()),
            "session": start_new_session,
            "servers": _servers_for(module),
            "argv": command,
        }
        self._channel = _connect(module)
        socket.send_fds(self._channel, [json.dumps(request).encode()], theirs)
        for fd in opened_here:
            os.close(fd)
        self._lines = self._channel.makefile("r")
        self.pid = int(self._lines.readline())
        self._ended = threading.Event()
        threading.Thread(target=self._wait_for_status, daemon=True).start()

    def _wait_for_status(self) -> None:
        line = self._lines.readline()
        self.returncode = (
            int(line) if line.strip() else -signal.SIGKILL
        )  # the server gone: as killed
        self._lines.close()
        self._channel.close()
        self._ended.set()

    def __enter__(self) -> WarmProcess:
        return self

    def __exit__(self, *exc) -> None:
        for stream in (self.stdin, self.stdout, self.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        self.wait()

    def poll(self) -> int | None:
        return self.returncode if self._ended.is_set() else None

    def wait(self, timeout: float | None = None) -> int:
        if not self._ended.wait(timeout):
            raise subprocess.TimeoutExpired(self.args, timeout)
        assert self.returncode is not None
        return self.returncode

    def communicate(self, input=None, timeout: float | None = None):
        outputs: dict[int, list] = {}
        threads = [
            threading.Thread(target=lambda i=i, s=s: outputs.setdefault(i, [s.read()]), daemon=True)
            for i, s in enumerate((self.stdout, self.stderr))
            if s is not None
        ]
        if self.stdin is not None:

            def feed(stream=self.stdin):
                try:
                    if input:
                        stream.write(input)
                    stream.close()
                except (BrokenPipeError, OSError):
                    pass

            threads.append(threading.Thread(target=feed, daemon=True))
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout)
            if thread.is_alive():
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


def run(
    command: list[str], module: str, *, timeout: float | None = None, **kwargs
) -> subprocess.CompletedProcess:
    """`subprocess.run(command, capture_output=True, ...)` through the server."""
    process = WarmProcess(command, module, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


# -- the servers, as this process sees them ------------------------------------------------------


def _server_env(kind: Kind) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if name not in STREAM_VARIABLES}
    return {**env, **kind.variables}


class _Server:
    def __init__(self, kind: Kind):
        self.folder = tempfile.mkdtemp(prefix="warm-")
        self.path = os.path.join(self.folder, "socket")
        self.env = _server_env(kind)
        self.process = subprocess.Popen(
            [sys.executable, *kind.flags, "-m", "tests.support.warm", self.path, kind.module],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=self.env,
            cwd=ROOT,
        )
        ready = self.process.stdout.readline()  # written once it listens, after its imports
        if ready.strip() != b"ready":
            raise RuntimeError(f"the warm-start server did not start (it printed {ready!r})")
        self.forked = 0  # commands forked so far, whoever asked (a line each from the server)
        self._counter = threading.Thread(target=self._count, daemon=True)
        self._counter.start()
        atexit.register(self.stop)

    def _count(self) -> None:
        for line in self.process.stdout:
            if line.startswith(b"forked "):
                self.forked += 1

    def stop(self) -> None:
        self.process.stdin.close()
        self.process.wait()
        self._counter.join()
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
            _started[module] = _Server(KINDS[module])
        return _started[module]


def forked(module: str) -> int:
    """How many commands of kind `module` this process's server has forked so far (0: none
    started), those its forked commands asked for included. Counted from the server's lines,
    read on a thread: a fork just made may not be counted yet (wait for it)."""
    with _lock:
        server = _started.get(module)
    return 0 if server is None else server.forked


def _servers_for(module: str) -> dict[str, tuple[str, dict[str, str | None]]]:
    """The servers a command of kind `module` may fork its own commands from."""
    if _inherited is not None:
        return {kind: _inherited[kind] for kind in CHILDREN.get(module, ()) if kind in _inherited}
    servers = {kind: _server(kind) for kind in CHILDREN.get(module, ())}
    return {kind: (server.path, startup(server.env)) for kind, server in servers.items()}


def _connect(module: str) -> socket.socket:
    path = _inherited[module][0] if _inherited is not None else _server(module).path
    channel = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    channel.connect(path)
    return channel


# -- the server itself ------------------------------------------------------------------------------


def serve(path: str, module: str) -> None:
    import importlib

    for name in KINDS[module].preload:
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
                print(f"forked {pid}", flush=True)
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


def _standard_streams(env: dict[str, str]) -> None:
    """sys.stdin, stdout and stderr on descriptors 0-2, as CPython builds them at start-up
    (Python/pylifecycle.c, create_stdio) from PYTHONIOENCODING and PYTHONUNBUFFERED; the
    defaults are the server's, which started with neither and with the same locale."""
    encoding, _, errors = env.get("PYTHONIOENCODING", "").partition(":")
    unbuffered = bool(env.get("PYTHONUNBUFFERED"))
    for fd, name, mode in ((0, "stdin", "r"), (1, "stdout", "w"), (2, "stderr", "w")):
        default = getattr(sys, f"__{name}__")
        raw = io.FileIO(fd, "rb" if mode == "r" else "wb", closefd=False)
        raw.name = f"<{name}>"
        binary = (
            raw
            if unbuffered and mode == "w"
            else (io.BufferedReader(raw) if mode == "r" else io.BufferedWriter(raw))
        )
        stream = io.TextIOWrapper(
            binary,
            encoding=encoding or default.encoding,
            errors="backslashreplace"
            if name == "stderr"
            else errors or (default.errors if not encoding else "strict"),
            newline="\n",
            line_buffering=not unbuffered and mode == "w" and (fd == 2 or raw.isatty()),
            write_through=unbuffered,
        )
        stream.mode = mode
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


class _Popen(subprocess.Popen):
    """In a forked command: `subprocess.Popen`, but a command of a kind whose server it was
    told of is forked from that server (what `subprocess.run` and the harness call)."""

    ACCEPTED = {
        "cwd",
        "env",
        "stdin",
        "stdout",
        "stderr",
        "text",
        "universal_newlines",
        "encoding",
        "errors",
        "start_new_session",
        "close_fds",
        "bufsize",
    }

    def __new__(cls, args=None, *more, **kwargs):
        if (
            not more
            and isinstance(args, list)
            and all(isinstance(a, str) for a in args)
            and set(kwargs) <= cls.ACCEPTED
            and kwargs.get("close_fds", True)
            and kwargs.get("bufsize", -1) == -1
        ):
            env = kwargs.get("env")
            module = warm_module(args, dict(os.environ) if env is None else dict(env))
            if module is not None:
                kwargs.pop("close_fds", None)
                kwargs.pop("bufsize", None)
                if any(
                    kwargs.get(name)
                    for name in ("text", "universal_newlines", "encoding", "errors")
                ):
                    # Popen's text defaults, not the tests' lenient ones (WarmProcess's).
                    kwargs["encoding"] = kwargs.get("encoding") or locale.getencoding()
                    kwargs["errors"] = kwargs.get("errors") or "strict"
                return WarmProcess(args, module, **kwargs)
        return super().__new__(cls)


def _child(request: dict, fds: list[int]) -> None:
    """In the forked child: become the command, run it as `python -m` does, exit with its status."""
    global _inherited
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
        os.closerange(
            3, 1 << 16
        )  # as exec with close_fds: nothing of the server's or the other commands'
        os.environ.clear()
        os.environ.update(request["env"])
        _standard_streams(request["env"])
        os.chdir(request["cwd"])
        if not sys.flags.safe_path:
            sys.path[0] = request["cwd"]  # what `python -m` puts first
        sys.argv = [request["module"], *request["args"]]
        sys.orig_argv = request["argv"]
        _inherited = {
            kind: (path, variables) for kind, (path, variables) in request["servers"].items()
        }
        subprocess.Popen = _Popen  # type: ignore[misc]
        sys.modules.pop(
            request["module"], None
        )  # run as `python -m` runs it: as __main__, not imported first
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
