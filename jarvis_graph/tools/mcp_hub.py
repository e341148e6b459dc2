"""Long-lived MCP sessions: one per server, owned by one background event-loop thread.

An MCP session lives in an asyncio loop, and its transport (a child process, an HTTP
stream) must be opened and closed by the same task. Graph nodes run in worker threads or in
other loops, so the hub owns a private loop in a daemon thread: each server's session is
held open by a task of that loop for the life of the run, and callers in any thread or loop
submit coroutines to it (:meth:`McpHub.call` from sync code, :meth:`McpHub.acall` from async
code).

A call that finds its server gone (the process died, the connection closed) fails with
:class:`McpServerDown`; the next call to that server opens a new session first.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, TypeVar

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import InitializeResult

from jarvis_graph.config import McpServerSpec
from jarvis_graph.owned_paths import open_owned, read_owned_tail, split_owned
from jarvis_graph.secrets import redact_url, redact_urls
from jarvis_graph.tools.mcp_config import expand_vars

logger = logging.getLogger(__name__)
T = TypeVar("T")
PING_TIMEOUT = 5.0
CLOSE_TIMEOUT = 10.0
LOG_TAIL_BYTES = 4096
"""Of a server's log, the end read for the last lines quoted when it fails (it may be huge)."""


class McpError(Exception):
    """An MCP call failed; the text is written for the model and the user."""


class McpServerDown(McpError):
    """The server stopped (crashed, killed, connection lost); the next call reconnects."""


class McpTimeout(McpError):
    """A call took longer than its timeout."""


@dataclass
class Session:
    """One open session and what the server said about itself when it opened."""

    session: ClientSession
    init: InitializeResult
    tools: list[Any]
    """``mcp.types.Tool`` descriptions, in the server's order."""
    stop: asyncio.Event
    task: asyncio.Task[None]
    adapters: dict[str, Any] = field(default_factory=dict)
    """langchain-mcp-adapters tools of this session, by original tool name."""


@dataclass
class _Server:
    spec: McpServerSpec
    current: Session | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    starts: int = 0


def _connection_closed(exc: BaseException) -> bool:
    from mcp.shared.exceptions import McpError as ProtocolError
    from mcp.types import CONNECTION_CLOSED

    return isinstance(exc, ProtocolError) and exc.error.code == CONNECTION_CLOSED


class CommandNotFound(McpError):
    """A stdio server's command is not an executable file that can be found."""


def resolve_command(spec: McpServerSpec) -> str:
    """The executable that starts a stdio server.

    A bare name is looked up on ``PATH``, then beside the Python running Jarvis (its
    virtualenv's ``bin``), so a server installed with Jarvis works without activating
    the environment; a name with a folder is taken relative to the server's ``cwd``.

    Raises:
        CommandNotFound: Nothing executable is found; the text says where it looked.
    """
    command = spec.command or ""
    if os.sep in command or (os.altsep and os.altsep in command):
        path = Path(spec.cwd or ".").expanduser() / Path(command).expanduser()
        if path.is_file() and os.access(path, os.X_OK):
            return command
        msg = (
            f"MCP server {spec.name!r}: command {command!r} is not an executable file "
            f"(looked at {path.absolute()}); fix `command` in its configuration"
        )
        raise CommandNotFound(msg)
    here = Path(sys.executable).parent  # not resolved: a venv's python is a symlink
    found = shutil.which(command) or shutil.which(command, path=str(here))
    if found:
        return found
    msg = (
        f"MCP server {spec.name!r}: command {command!r} was not found on PATH nor in {here}; "
        "install it, or give its full path in `command`"
    )
    raise CommandNotFound(msg)


def describe_error(exc: BaseException) -> str:
    """A one-line reason, looking inside exception groups (anyio raises those)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, McpError):
        return str(exc)
    text = str(exc).strip() or type(exc).__name__
    return text if type(exc).__name__ in text else f"{type(exc).__name__}: {text}"


class McpHub:
    """Sessions with a set of MCP servers, for one run."""

    def __init__(
        self,
        specs: list[McpServerSpec],
        log_dir: Path,
        start_timeout: float = 30.0,
        call_timeout: float = 60.0,
    ) -> None:
        self.default_timeout = call_timeout
        self._servers = {spec.name: _Server(spec) for spec in specs}
        self._log_dir = log_dir
        self._start_timeout = start_timeout
        self._holders: dict[asyncio.Task[None], asyncio.Event] = {}
        self._logs: list[IO[str]] = []
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="jarvis-mcp", daemon=True
        )
        self._thread.start()
        self._closed = False

    # --- running coroutines on the hub's loop --------------------------------------------

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``coro`` on the hub's loop and wait for it (from any other thread)."""
        if threading.current_thread() is self._thread:
            coro.close()
            msg = "McpHub.run called from the hub's own loop; await the coroutine instead"
            raise RuntimeError(msg)
        if self._closed:
            coro.close()
            msg = "the MCP sessions of this run are closed"
            raise McpError(msg)
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    async def arun(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await ``coro`` on the hub's loop from another event loop."""
        if self._closed:
            coro.close()
            msg = "the MCP sessions of this run are closed"
            raise McpError(msg)
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self._loop))

    # --- lifecycle -----------------------------------------------------------------------

    def start(self) -> dict[str, str]:
        """Open every session at once; returns ``{server: reason}`` for those that failed."""

        async def start_all() -> dict[str, str]:
            names = list(self._servers)
            results = await asyncio.gather(
                *(self._session(name) for name in names), return_exceptions=True
            )
            return {
                name: describe_error(res)
                for name, res in zip(names, results, strict=True)
                if isinstance(res, BaseException)
            }

        return self.run(start_all())

    def close(self) -> None:
        """Close every session (child processes end) and stop the loop thread."""
        if self._closed:
            return
        try:
            self.run(self._close_all(), timeout=CLOSE_TIMEOUT + 5)
        except Exception:
            logger.warning("closing MCP sessions failed", exc_info=True)
        finally:
            self._closed = True
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=5)
            if not self._thread.is_alive():
                self._loop.close()
            for log in self._logs:
                log.close()

    async def _close_all(self) -> None:
        for server in self._servers.values():
            server.current = None
        for stop in self._holders.values():
            stop.set()
        if self._holders:
            _done, pending = await asyncio.wait(set(self._holders), timeout=CLOSE_TIMEOUT)
            for task in pending:
                task.cancel()

    # --- sessions ------------------------------------------------------------------------

    def names(self) -> list[str]:
        """The servers this hub knows, in configuration order."""
        return list(self._servers)

    def spec(self, name: str) -> McpServerSpec:
        """The configuration of server ``name``."""
        return self._servers[name].spec

    def current(self, name: str) -> Session | None:
        """The open session with ``name``, if any (no I/O)."""
        server = self._servers[name]
        cur = server.current
        return cur if cur is not None and not cur.task.done() else None

    def starts(self, name: str) -> int:
        """How many sessions were opened with ``name`` (1 + reconnects)."""
        return self._servers[name].starts

    async def _session(self, name: str) -> Session:
        """The open session with ``name``; opens a new one when there is none."""
        server = self._servers[name]
        async with server.lock:
            cur = server.current
            if cur is not None and not cur.task.done():
                return cur
            if cur is not None:
                self._retire(server)
            server.current = await self._open(server)
            server.starts += 1
            return server.current

    async def _open(self, server: _Server) -> Session:
        ready: asyncio.Future[Session] = self._loop.create_future()
        stop = asyncio.Event()
        task = asyncio.ensure_future(self._hold(server.spec, ready, stop))
        self._holders[task] = stop
        task.add_done_callback(lambda t: self._holders.pop(t, None))
        try:
            return await asyncio.wait_for(asyncio.shield(ready), self._start_timeout)
        except TimeoutError:
            task.cancel()
            msg = f"it did not complete the MCP handshake within {self._start_timeout:g} s"
            raise McpError(msg) from None

    async def _hold(
        self, spec: McpServerSpec, ready: asyncio.Future[Session], stop: asyncio.Event
    ) -> None:
        """Keep one session open until ``stop`` is set or the transport fails."""
        try:
            async with self._connect(spec) as session:
                init = await session.initialize()
                tools = (await session.list_tools()).tools if init.capabilities.tools else []
                task = asyncio.current_task()
                assert task is not None
                ready.set_result(Session(session, init, list(tools), stop, task))
                await stop.wait()
        except BaseException as exc:
            if ready.done():
                logger.info("MCP server %s ended: %s", spec.name, describe_error(exc))
            elif isinstance(exc, asyncio.CancelledError):
                ready.cancel()
            else:
                ready.set_exception(McpError(self._start_failure(spec, exc)))
            if isinstance(exc, asyncio.CancelledError):
                raise

    def _start_failure(self, spec: McpServerSpec, exc: BaseException) -> str:
        reason = describe_error(exc)
        if spec.type != "stdio":
            return f"{redact_urls(reason)} (at {redact_url(spec.base_url or '')})"
        if isinstance(exc, CommandNotFound):
            return reason
        return f"{reason} (command {spec.command!r}){self._last_output(spec)}"

    def _last_output(self, spec: McpServerSpec) -> str:
        """``; its last output: ...; full log: <file>`` for a stdio server ("" for others)."""
        log = self._log_path(spec)
        data = read_owned_tail(*split_owned(log), LOG_TAIL_BYTES) if spec.type == "stdio" else None
        if data is None:
            return ""
        tail = data.decode("utf-8", errors="replace").strip().splitlines()[-3:]
        said = f"; its last output: {' | '.join(tail)}" if tail else ""
        return f"{said}; full log: {log}"

    def _log_path(self, spec: McpServerSpec) -> Path:
        return self._log_dir / f"{spec.name}.log"

    @contextlib.asynccontextmanager
    async def _connect(self, spec: McpServerSpec) -> AsyncIterator[ClientSession]:
        if spec.type == "stdio":
            env = {k: expand_vars(v.get_secret_value()) for k, v in spec.env.items()}
            params = StdioServerParameters(
                command=resolve_command(spec), args=spec.args, env=env or None, cwd=spec.cwd
            )
            # the server's stderr, in Jarvis' own folder (private, through no planted link)
            base, rel = split_owned(self._log_path(spec))
            fd = open_owned(base, rel, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            log = os.fdopen(fd, "w", encoding="utf-8")
            self._logs.append(log)
            async with (
                stdio_client(params, errlog=log) as (read, write),
                ClientSession(read, write) as session,
            ):
                yield session
            return
        from langchain_mcp_adapters.sessions import create_session

        headers = {k: expand_vars(v.get_secret_value()) for k, v in spec.headers.items()}
        transport = "sse" if spec.type == "sse" else "streamable_http"
        connection: Any = {"transport": transport, "url": spec.base_url, "headers": headers}
        async with create_session(connection) as session:
            yield session

    def _retire(self, server: _Server) -> None:
        """Let a broken session unwind in the background; the next call opens a new one."""
        if server.current is not None:
            server.current.stop.set()
            server.current = None

    # --- calls ---------------------------------------------------------------------------

    async def with_session(
        self, name: str, what: str, work: Callable[[Session], Awaitable[T]], timeout: float
    ) -> T:
        """Run ``work`` on the session with ``name`` (opening one if needed), within ``timeout``.

        Raises:
            McpServerDown: The server stopped before or during the call.
            McpTimeout: The call took longer than ``timeout`` seconds.
            McpError: The session could not be opened.
        """
        server = self._servers[name]
        try:
            sess = await self._session(name)
        except McpError as exc:
            msg = f"MCP server {name!r} could not be started: {exc}"
            raise McpServerDown(msg) from None
        call: asyncio.Future[T] = asyncio.ensure_future(work(sess))
        watched: set[asyncio.Future[Any]] = {call, sess.task}
        done, _ = await asyncio.wait(watched, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        if call in done:
            try:
                return call.result()
            except Exception as exc:
                if not _connection_closed(exc) and await self._alive(sess):
                    raise
                self._retire_if(server, sess)
                raise McpServerDown(self._down_text(name, what, exc)) from exc
        call.cancel()
        if call not in done and sess.task in done:  # the server ended during the call
            self._retire_if(server, sess)
            raise McpServerDown(self._down_text(name, what, None))
        raise await self._timed_out(server, sess, what, timeout)

    async def _timed_out(
        self, server: _Server, sess: Session, what: str, timeout: float
    ) -> McpTimeout:
        """The error for a call that took too long.

        A server that no longer answers a ping is stopped (it is started again on the next
        call); one that still answers keeps its session.
        """
        name = server.spec.name
        head = f"MCP {what} on server {name!r} timed out after {timeout:g} s"
        if await self._alive(sess, min(PING_TIMEOUT, max(timeout, 1.0))):
            msg = (
                f"{head} and was cancelled; the server still answers and keeps its session. "
                "Try a smaller request, or another way"
            )
            return McpTimeout(msg)
        self._retire_if(server, sess)
        msg = (
            f"{head}, and the server did not answer a ping either (it hangs), so it was "
            "stopped; it will be started again on the next call to one of its tools, "
            "and anything it held in memory is lost"
        )
        return McpTimeout(msg)

    def _retire_if(self, server: _Server, sess: Session) -> None:
        if server.current is sess:
            self._retire(server)

    @staticmethod
    async def _alive(sess: Session, within: float = PING_TIMEOUT) -> bool:
        if sess.task.done():
            return False
        try:
            await asyncio.wait_for(sess.session.send_ping(), within)
        except Exception:
            return False
        return not sess.task.done()

    def _down_text(self, name: str, what: str, exc: BaseException | None) -> str:
        why = f" ({describe_error(exc)})" if exc is not None else ""
        return (
            f"MCP server {name!r} stopped while running {what}{why}"
            f"{self._last_output(self.spec(name))}. It will be restarted on the next call "
            "to one of its tools; anything it held in memory is lost."
        )
