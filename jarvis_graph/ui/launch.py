"""Start what ``jarvis ui`` needs: the LangGraph API server (unless given) and the console."""

from __future__ import annotations

import ctypes
import hashlib
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from jarvis_graph.api_auth import OPEN_ENV, TOKEN_ENV, TOKEN_HEADER
from jarvis_graph.config import ConfigError, jarvis_home
from jarvis_graph.context import JarvisContext, resolve_settings
from jarvis_graph.loopback import PortError, start_listening
from jarvis_graph.owned_paths import OwnedPathError, open_owned, owned_dir
from jarvis_graph.ui.server import ConsoleConfig, create_app, langgraph_config
from jarvis_graph.ui.sessions import WORKSPACE_ENV

START_TIMEOUT = 120.0
PR_SET_PDEATHSIG = 1


class ApiServerError(RuntimeError):
    """The LangGraph API server could not be started or reached; the message says why."""


@dataclass(frozen=True)
class ApiServer:
    """A LangGraph API server the console fronts: its URL and the token it requires."""

    url: str
    token: str


def state_dir(workspace: Path) -> Path:
    """Where the API server of ``workspace`` keeps its files: the user's, not the project's.

    ``langgraph dev`` loads pickles from its working folder at start, and a repository can
    ship any file under its ``.jarvis/``; so the server works in a private folder (0700) of
    the Jarvis home, one per workspace (named by a hash of its path).

    Raises:
        ApiServerError: A part of that folder is a link or not a folder.
    """
    key = hashlib.sha256(str(workspace.resolve()).encode()).hexdigest()[:16]
    home = jarvis_home()
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        return owned_dir(home, Path("ui", key))
    except OwnedPathError as exc:
        raise ApiServerError(str(exc)) from None


@contextmanager
def api_server(workspace: Path, given: str = "") -> Iterator[ApiServer]:
    """The API server: ``given`` once it answers, else a ``langgraph dev`` started here.

    A started server requires a token drawn now, which only it and the console know; it
    keeps its state in :func:`state_dir` and is stopped when the block ends. A ``given``
    server is sent ``JARVIS_API_TOKEN`` (the token of a ``jarvis serve``), if set.

    Raises:
        ApiServerError: ``given`` does not answer or refuses the token, the workspace's
            configuration is broken, or the server did not start.
    """
    if given:
        server = ApiServer(given.rstrip("/"), os.environ.get(TOKEN_ENV, ""))
        _wait_ok(server.url, None, 10.0)
        _check_token(server)
        yield server
        return
    try:  # the server opens the workspace's session store, named by its configuration
        resolve_settings(JarvisContext(workspace=str(workspace)))
    except ConfigError as exc:
        raise ApiServerError(str(exc)) from None
    langgraph = Path(sys.executable).with_name("langgraph")
    if not langgraph.is_file():
        msg = f"{langgraph} is missing: install the ui extra (pip install 'jarvis-graph[ui]')"
        raise ApiServerError(msg)
    home = state_dir(workspace)
    try:
        config = langgraph_config(home / "langgraph.json")
        owned_dir(home, ".langgraph_api")  # its pickles: made here, never through a link
    except OwnedPathError as exc:
        raise ApiServerError(str(exc)) from None
    log_path = home / "api.log"
    token = secrets.token_urlsafe(32)
    env = {key: value for key, value in os.environ.items() if key != OPEN_ENV}
    env.update(
        LANGGRAPH_CLI_NO_ANALYTICS="1", LANGGRAPH_NO_VERSION_CHECK="true", LANGSMITH_TRACING="false"
    )
    # whose session store it keeps runs in, and the only workspace it runs tasks in
    env[WORKSPACE_ENV] = str(workspace.resolve())
    env[TOKEN_ENV] = token  # only this process and the console know it

    def start(port: int) -> subprocess.Popen[bytes]:
        cmd = [str(langgraph), "dev", "--config", str(config), "--host", "127.0.0.1"]
        cmd += ["--port", str(port), "--no-browser", "--no-reload"]
        try:
            log_fd = open_owned(home, "api.log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        except OwnedPathError as exc:
            raise ApiServerError(str(exc)) from None
        with os.fdopen(log_fd, "wb") as log:
            return subprocess.Popen(
                cmd,
                cwd=home,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_end_with_parent,
            )

    print("starting the LangGraph API server…", flush=True)  # noqa: T201 - progress for the user
    try:  # the token goes only to a server this process started, on a port it holds
        proc, port = start_listening(
            start,
            START_TIMEOUT,
            lambda _p: f"its log ({log_path}):\n{_tail(log_path)}",
            moves=True,
        )
    except PortError as exc:
        raise ApiServerError(f"the LangGraph API server: {exc}") from None
    server = ApiServer(f"http://127.0.0.1:{port}", token)
    try:
        _wait_ok(server.url, proc, START_TIMEOUT, log_path)
        yield server
    finally:
        stop_server(proc)


def _tail(log: Path) -> str:
    return log.read_text(errors="replace")[-2000:]


def _check_token(server: ApiServer) -> None:
    """Refuse a given server that does not accept the token (or its absence) up front."""
    headers = {TOKEN_HEADER: server.token} if server.token else {}
    try:
        reply = httpx.post(
            f"{server.url}/assistants/search", json={"limit": 1}, headers=headers, timeout=10.0
        )
    except httpx.HTTPError as exc:
        raise ApiServerError(f"the LangGraph API server at {server.url}: {exc}") from None
    if reply.status_code in (401, 403):
        what = f"refused the token in {TOKEN_ENV}" if server.token else "needs a token"
        msg = (
            f"the LangGraph API server at {server.url} {what}: set {TOKEN_ENV} to the token "
            "it was started with"
        )
        raise ApiServerError(msg)


def _end_with_parent() -> None:
    """In the server's process: be sent SIGTERM when ``jarvis ui`` dies, even by kill -9."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except OSError:  # not Linux: the process group is still ended on a normal exit
        pass


def _wait_ok(
    url: str, proc: subprocess.Popen[bytes] | None, timeout: float, log: Path | None = None
) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if proc is not None and proc.poll() is not None:
            tail = _tail(log) if log else ""
            code = proc.returncode
            msg = f"the LangGraph API server exited with code {code}; its log ({log}):\n{tail}"
            raise ApiServerError(msg)
        try:
            if httpx.get(f"{url}/ok", timeout=2.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            where = f" (its log: {log})" if log else ""
            msg = f"the LangGraph API server at {url} did not answer within {timeout:g} s{where}"
            raise ApiServerError(msg)
        time.sleep(0.25)


def stop_server(proc: subprocess.Popen[bytes], grace: float = 15.0) -> None:
    """End a server started in a session of its own (its process group).

    SIGTERM first, SIGKILL when it has not ended ``grace`` seconds later.
    """
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=grace)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=5)


def serve_console(api: ApiServer, token: str, workspace: Path, host: str, port: int) -> None:
    """Serve the console until interrupted."""
    import uvicorn

    def stop(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    # uvicorn hands SIGTERM back to the process when it has shut down: end like Ctrl-C
    # does, through the callers' cleanup (which stops the API server it started)
    previous = signal.signal(signal.SIGTERM, stop)
    console = ConsoleConfig(api_url=api.url, token=token, workspace=workspace, api_token=api.token)
    app = create_app(console)
    try:
        uvicorn.run(app, host=host, port=port, log_level="warning")
    finally:
        signal.signal(signal.SIGTERM, previous)
