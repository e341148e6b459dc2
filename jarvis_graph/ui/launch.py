"""Start what ``jarvis ui`` needs: the LangGraph API server (unless given) and the console."""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from jarvis_graph.config import ConfigError
from jarvis_graph.context import JarvisContext, resolve_settings
from jarvis_graph.ui.server import ConsoleConfig, create_app, langgraph_config
from jarvis_graph.ui.sessions import WORKSPACE_ENV

START_TIMEOUT = 120.0
PR_SET_PDEATHSIG = 1


class ApiServerError(RuntimeError):
    """The LangGraph API server could not be started or reached; the message says why."""


def free_port() -> int:
    """A free TCP port on loopback."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def api_server(workspace: Path, given: str = "") -> Iterator[str]:
    """The API server's URL: ``given`` once it answers, else a ``langgraph dev`` started here.

    The started server keeps its state in ``<workspace>/.jarvis/ui/`` and is stopped when
    the block ends.

    Raises:
        ApiServerError: ``given`` does not answer, the workspace's configuration is broken,
            or the server did not start.
    """
    if given:
        _wait_ok(given.rstrip("/"), None, 10.0)
        yield given.rstrip("/")
        return
    try:  # the server opens the workspace's session store, named by its configuration
        resolve_settings(JarvisContext(workspace=str(workspace)))
    except ConfigError as exc:
        raise ApiServerError(str(exc)) from None
    langgraph = Path(sys.executable).with_name("langgraph")
    if not langgraph.is_file():
        msg = f"{langgraph} is missing: install the ui extra (pip install 'jarvis-graph[ui]')"
        raise ApiServerError(msg)
    home = workspace / ".jarvis" / "ui"
    config = langgraph_config(home / "langgraph.json")
    port = free_port()
    log_path = home / "api.log"
    env = {
        **os.environ,
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGGRAPH_NO_VERSION_CHECK": "true",
        "LANGSMITH_TRACING": "false",
        WORKSPACE_ENV: str(workspace.resolve()),  # whose session store it keeps runs in
    }
    cmd = [str(langgraph), "dev", "--config", str(config), "--host", "127.0.0.1"]
    cmd += ["--port", str(port), "--no-browser", "--no-reload"]
    print("starting the LangGraph API server…", flush=True)  # noqa: T201 - progress for the user
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            cmd,
            cwd=home,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_end_with_parent,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_ok(url, proc, START_TIMEOUT, log_path)
        yield url
    finally:
        stop_server(proc)


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
            tail = log.read_text(errors="replace")[-2000:] if log else ""
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


def serve_console(api_url: str, token: str, workspace: Path, host: str, port: int) -> None:
    """Serve the console until interrupted."""
    import uvicorn

    def stop(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    # uvicorn hands SIGTERM back to the process when it has shut down: end like Ctrl-C
    # does, through the callers' cleanup (which stops the API server it started)
    previous = signal.signal(signal.SIGTERM, stop)
    app = create_app(ConsoleConfig(api_url=api_url, token=token, workspace=workspace))
    try:
        uvicorn.run(app, host=host, port=port, log_level="warning")
    finally:
        signal.signal(signal.SIGTERM, previous)
