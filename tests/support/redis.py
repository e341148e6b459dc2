"""A real Redis server for tests: Debian's ``redis-server`` on loopback, in a temporary folder.

Nothing is saved to disk (no RDB snapshots, no append-only file); the server stops with the
fixture that started it.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

from jarvis_graph.loopback import PortError, start_listening


class RedisServer:
    """One ``redis-server`` on 127.0.0.1, its working folder ``folder``."""

    def __init__(self, folder: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            msg = "redis-server is needed for these tests: apt-get install redis-server"
            raise RuntimeError(msg)
        self.binary = binary
        self.folder = folder
        self.port = 0  # given by start()
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 30.0) -> None:
        """Start the server; return once it answers PING."""
        self.folder.mkdir(parents=True, exist_ok=True)
        log = self.folder / "redis.log"

        def on(port: int) -> subprocess.Popen[bytes]:
            args = [self.binary, "--bind", "127.0.0.1", "--port", str(port)]
            args += ["--save", "", "--appendonly", "no", "--dir", str(self.folder)]
            args += ["--logfile", str(log), "--protected-mode", "yes"]
            with (self.folder / "redis.out").open("ab") as out:
                return subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT)

        def describe(_proc: subprocess.Popen[bytes]) -> str:
            out_text = (self.folder / "redis.out").read_text(errors="replace")
            return out_text + (log.read_text(errors="replace") if log.exists() else "")

        try:
            self._proc, self.port = start_listening(on, timeout, describe)
        except PortError as exc:
            raise RuntimeError(f"redis-server: {exc}") from None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                msg = f"redis-server exited ({self._proc.returncode}): {describe(self._proc)}"
                raise RuntimeError(msg)
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"redis-server did not answer on port {self.port} in {timeout:g} s")

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after 10 s)."""
        if self._proc is None or self._proc.poll() is not None:
            return
        self._proc.terminate()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait(timeout=10)
