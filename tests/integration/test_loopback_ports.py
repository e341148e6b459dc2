"""Servers the tests start on a picked port: a port taken in between never passes for them.

A picked port is free only until someone binds it. Each test here hands the server a port
that another process already holds (an impostor that answers the health check the support
code uses), as a busy machine does now and then, and checks that the server in use is the one
started, on a port of its own.
"""

from __future__ import annotations

import http.server
import socket
import socketserver
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from jarvis_graph import loopback
from jarvis_graph.loopback import listens, start_listening
from tests.support.redis import RedisServer

pytestmark = pytest.mark.slow


class _Ok(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the http.server hook's name
        body = b"impostor"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: object) -> None:
        pass


class _Pong(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        self.request.recv(64)
        self.request.sendall(b"+PONG\r\n")


@contextmanager
def _impostor(handler: type[socketserver.BaseRequestHandler]) -> Iterator[int]:
    """A server of this test process on a loopback port; yields the port."""
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


def _taken_first(monkeypatch: pytest.MonkeyPatch, taken: int) -> list[int]:
    """Make the next port picked be ``taken``, the later ones free; returns the picks."""
    picks: list[int] = []
    pick = loopback.free_port

    def picked() -> int:
        port = taken if not picks else pick()
        picks.append(port)
        return port

    monkeypatch.setattr(loopback, "free_port", picked)
    return picks


def test_a_server_whose_port_was_taken_is_started_again_on_another(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    root = tmp_path / "served"
    root.mkdir()
    (root / "mine.txt").write_text("the started server\n")

    def start(port: int) -> subprocess.Popen[bytes]:
        cmd = [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"]
        return subprocess.Popen(cmd, cwd=root, stderr=subprocess.DEVNULL)

    with _impostor(_Ok) as taken:
        picks = _taken_first(monkeypatch, taken)
        proc, port = start_listening(start, 30.0)
        try:
            assert picks[0] == taken and port != taken
            assert listens(proc.pid, port)
            reply = httpx.get(f"http://127.0.0.1:{port}/mine.txt", timeout=5)
            assert reply.text == "the started server\n"
        finally:
            proc.kill()
            proc.wait()


def test_a_server_that_never_listens_is_an_error_not_the_impostor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    never: Callable[[int], subprocess.Popen[bytes]] = lambda _port: subprocess.Popen(  # noqa: E731
        [sys.executable, "-c", "import time; time.sleep(60)"]
    )
    with _impostor(_Ok) as taken:
        _taken_first(monkeypatch, taken)
        with pytest.raises(loopback.PortError, match=f"did not listen on 127.0.0.1:{taken}"):
            start_listening(never, 2.0, lambda _p: "its log: nothing")


def test_redis_is_never_an_impostor_answering_ping(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with _impostor(_Pong) as taken:
        _taken_first(monkeypatch, taken)
        server = RedisServer(tmp_path / "redis")
        server.start()
        try:
            assert server.port != taken
            with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
                sock.sendall(b"INFO server\r\n")
                assert b"redis_version" in sock.recv(4096)
        finally:
            server.stop()
