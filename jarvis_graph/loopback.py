"""Servers this process starts on a loopback port it picked: started on a port that stays theirs.

A free port cannot be reserved for a child: it is found by binding port 0 and closing the
socket, and any process on the machine may take it before the child binds it. The child then
fails to bind and exits, while whatever took the port answers the health check in its place
(and is sent the token meant for the child). So a server counts as started only once its own
process (or one it started) holds a listening socket on the port; when it exits before that,
it is started again on another port, a few times.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable

import psutil

ATTEMPTS = 4


class PortError(RuntimeError):
    """A server did not come to listen on a port of its own; the message says why."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (see :func:`start_listening`)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def listening_ports(pid: int) -> set[int]:
    """The TCP ports process ``pid`` and its descendants listen on."""
    try:
        root = psutil.Process(pid)
        family = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return set()
    ports: set[int] = set()
    for proc in family:
        try:
            conns = proc.net_connections(kind="tcp")
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        ports |= {c.laddr.port for c in conns if c.status == psutil.CONN_LISTEN and c.laddr}
    return ports


def listens(pid: int, port: int) -> bool:
    """Whether process ``pid`` or a descendant holds a listening TCP socket on ``port``."""
    return port in listening_ports(pid)


def start_listening(
    start: Callable[[int], subprocess.Popen[bytes]],
    timeout: float,
    describe: Callable[[subprocess.Popen[bytes]], str] = lambda _proc: "",
    *,
    moves: bool = False,
) -> tuple[subprocess.Popen[bytes], int]:
    """Start a server with ``start(port)`` until it listens on that port itself.

    Args:
        start: Starts the server on the port it is given; returns its process.
        timeout: Seconds one start may take to listen.
        describe: What to add to an error about a process that exited (its log, say).
        moves: The server binds another port of its choice when the one given is taken
            (``langgraph dev`` does): then the one port it listens on is its port.

    Returns:
        The process and its port, once the process (or a child of it) listens there.

    Raises:
        PortError: The server exited on every port tried, or did not listen in time (the
            process is then stopped).
    """
    exits: list[str] = []
    for _ in range(ATTEMPTS):
        picked = free_port()
        proc = start(picked)
        deadline = time.monotonic() + timeout
        while proc.poll() is None:
            ports = listening_ports(proc.pid)
            if picked in ports:
                return proc, picked
            if moves and len(ports) == 1:
                return proc, ports.pop()
            if time.monotonic() > deadline:
                _kill(proc)
                msg = f"the server did not listen on 127.0.0.1:{picked} within {timeout:g} s"
                detail = describe(proc)
                raise PortError(f"{msg}\n{detail}" if detail else msg)
            time.sleep(0.1)
        exits.append(f"port {picked}: exited with code {proc.returncode}\n{describe(proc)}".strip())
    msg = f"the server exited before listening, {ATTEMPTS} times:\n" + "\n".join(exits)
    raise PortError(msg)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """Kill ``proc``, with its process group when it leads one (a server's workers)."""
    try:
        if os.getpgid(proc.pid) == proc.pid:
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except ProcessLookupError:
        pass
    proc.wait(timeout=10)
