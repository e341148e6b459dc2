"""A FastMCP server for the tests: a per-session counter, echo, add, pid, sleep, hang, fail, crash.

Run as ``python -m tests.support.mcp_fixture_server [stdio|sse|streamable-http] [PORT]``.
The counter counts per client session, so it proves that calls share one session.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
import weakref
from typing import Any

from mcp.server.fastmcp import Context, FastMCP

_counts: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()


def build(port: int = 8000) -> FastMCP:
    server = FastMCP("fixture", host="127.0.0.1", port=port, log_level="WARNING")

    @server.tool()
    def counter(ctx: Context) -> int:  # type: ignore[type-arg]
        """Add one to this session's counter and return it."""
        _counts[ctx.session] = _counts.get(ctx.session, 0) + 1
        return _counts[ctx.session]

    @server.tool()
    def echo(message: str) -> str:
        """Return the message unchanged."""
        return message

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    def pid() -> int:
        """The server's process id."""
        return os.getpid()

    @server.tool()
    async def sleep(seconds: float) -> str:
        """Wait, then answer."""
        await asyncio.sleep(seconds)
        return f"slept {seconds}"

    @server.tool()
    async def hang() -> str:
        """Block the server's event loop for an hour: it answers nothing, not even pings."""
        time.sleep(3600)
        return "woke up"

    @server.tool()
    def fail(reason: str) -> str:
        """Always fails with the given reason."""
        raise ValueError(reason)

    @server.tool()
    def crash() -> str:
        """End the server process in the middle of the call."""
        os._exit(1)

    @server.tool(name="dotted.name")
    def dotted() -> str:
        """A tool whose name is not a valid model tool name."""
        return "dotted ok"

    @server.resource("fixture://greeting", mime_type="text/plain")
    def greeting() -> str:
        """A fixed greeting."""
        return "hello from the fixture"

    @server.prompt()
    def review(code: str) -> str:
        """Ask for a review of some code."""
        return f"Please review:\n{code}"

    return server


if __name__ == "__main__":
    transport = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    port = int(sys.argv[2]) if len(sys.argv) > 2 else 8000
    build(port).run(transport)  # type: ignore[arg-type]
