"""MCP servers the tests start and stop: the FastMCP fixture and npm's server-everything."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from jarvis_graph.loopback import start_listening

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


@contextmanager
def _serving(
    cmd: Callable[[int], list[str]], env: Callable[[int], dict[str, str]] | None = None
) -> Iterator[int]:
    """Run ``cmd(port)`` until it listens on a port of its own; yield that port."""

    def on(port: int) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            cmd(port),
            cwd=REPO,
            env={**os.environ, **(env(port) if env else {})},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    proc, port = start_listening(on, 30.0)
    try:
        yield port
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
    base = [sys.executable, "-m", "tests.support.mcp_fixture_server", transport]
    with _serving(lambda port: [*base, str(port)]) as port:
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
    cmd = [node, str(EVERYTHING_JS), "streamableHttp"]
    with _serving(lambda _port: cmd, lambda port: {"PORT": str(port)}) as port:
        yield f"http://127.0.0.1:{port}/mcp"
