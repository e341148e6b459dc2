"""MCP servers the tests start and stop: the FastMCP fixture and npm's server-everything."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
EVERYTHING_DIR = REPO / ".cache" / "mcp-npm"
EVERYTHING_JS = (
    EVERYTHING_DIR / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist"
) / "index.js"


def fixture_stdio(name: str = "fixture", **extra: Any) -> dict[str, Any]:
    """Config entry (config.yaml form) for the fixture server over stdio."""
    return {
        "name": name,
        "type": "stdio",
        "command": sys.executable,
        "args": ["-m", "tests.support.mcp_fixture_server", "stdio"],
        "cwd": str(REPO),
        **extra,
    }


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            msg = f"server exited with code {proc.returncode} before listening on {port}"
            raise RuntimeError(msg)
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    msg = f"server did not listen on 127.0.0.1:{port} within {timeout} s"
    raise RuntimeError(msg)


@contextmanager
def _serving(cmd: list[str], port: int, env: dict[str, str] | None = None) -> Iterator[None]:
    proc = subprocess.Popen(
        cmd,
        cwd=REPO,
        env={**os.environ, **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for_port(port, proc)
        yield
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextmanager
def fixture_http(transport: str) -> Iterator[str]:
    """The fixture server over ``sse`` or ``streamable-http`` on loopback; yields its URL."""
    port = free_port()
    cmd = [sys.executable, "-m", "tests.support.mcp_fixture_server", transport, str(port)]
    with _serving(cmd, port):
        path = "/sse" if transport == "sse" else "/mcp"
        yield f"http://127.0.0.1:{port}{path}"


def require_everything() -> str:
    """The node binary, once server-everything is installed (else the test fails or skips)."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed; server-everything needs Node.js")
    if not EVERYTHING_JS.is_file():
        pytest.fail(
            f"@modelcontextprotocol/server-everything is not installed at {EVERYTHING_DIR}; "
            "run `make mcp-test-servers` (make test does it)"
        )
    return node


def everything_stdio(name: str = "everything") -> dict[str, Any]:
    """Config entry for server-everything over stdio."""
    return {
        "name": name,
        "type": "stdio",
        "command": require_everything(),
        "args": [str(EVERYTHING_JS), "stdio"],
    }


@contextmanager
def everything_http() -> Iterator[str]:
    """server-everything over streamable HTTP; yields its URL."""
    node = require_everything()
    port = free_port()
    with _serving([node, str(EVERYTHING_JS), "streamableHttp"], port, {"PORT": str(port)}):
        yield f"http://127.0.0.1:{port}/mcp"
