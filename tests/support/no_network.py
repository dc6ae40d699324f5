"""A pytest plugin (`-p tests.support.no_network`) that blocks every IP connection in the process,
to prove a command makes no network call. Unix sockets (the sandbox's worker pipes) work."""

import socket

_connect = socket.socket.connect
_connect_ex = socket.socket.connect_ex


def _blocked(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6):
        raise OSError(f"network blocked by tests/support/no_network.py: connect to {address}")
    return _connect(self, address)


def _blocked_ex(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6):
        raise OSError(f"network blocked by tests/support/no_network.py: connect to {address}")
    return _connect_ex(self, address)


socket.socket.connect = _blocked
socket.socket.connect_ex = _blocked_ex
