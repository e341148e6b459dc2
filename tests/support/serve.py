"""``jarvis serve`` workers for tests and benches: real processes of ``.venv-serve`` on loopback.

``make serve-env`` (``make test`` runs it) builds that environment. Workers are started all
at once (on a new database they race to set up its tables, which ``jarvis serve`` must
survive) and stopped with SIGTERM, then SIGKILL.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from jarvis_graph.loopback import PortError, start_listening
from jarvis_graph.ui.launch import stop_server

REPO = Path(__file__).resolve().parents[2]
SERVE_JARVIS = REPO / ".venv-serve" / "bin" / "jarvis"
STARTUP_TIMEOUT = 90.0


class WorkerError(RuntimeError):
    """A worker did not start: its log is in the message."""


@dataclass
class Worker:
    url: str
    log: Path
    proc: subprocess.Popen[bytes]

    def kill(self) -> None:
        """kill -9: no shutdown, no clean-up, as when a machine dies."""
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=15)

    def started(self, run_id: str) -> bool:
        """Whether this worker started ``run_id`` (its "Starting background run" log line)."""
        lines = self.log.read_text(errors="replace").splitlines()
        return any("Starting background run" in line and run_id in line for line in lines)


def serve_jarvis() -> Path:
    """The ``jarvis`` of the server environment."""
    if not SERVE_JARVIS.is_file():
        raise WorkerError(f"{SERVE_JARVIS} missing: run `make serve-env`")
    return SERVE_JARVIS


def server_env(database_url: str, redis_url: str, **extra: str) -> dict[str, str]:
    """This process's environment (HOME and JARVIS_HOME included) with the server's URLs."""
    env = os.environ.copy()
    env.update(JARVIS_CHECKPOINT_URL=database_url, JARVIS_REDIS_URL=redis_url, **extra)
    env.update(LANGGRAPH_NO_VERSION_CHECK="true", LANGSMITH_TRACING="false")
    return env


@contextmanager
def workers(
    names: str, env: dict[str, str], folder: Path, *, heartbeat: float = 2, jobs: int = 10
) -> Iterator[list[Worker]]:
    """One ``jarvis serve`` per character of ``names``, all started at once; yields them
    once each listens on a port of its own and answers ``/ok`` there.

    Raises:
        WorkerError: One exited on every port it was given or was not ready in
            :data:`STARTUP_TIMEOUT` seconds.
    """
    started: list[Worker] = []

    def start(name: str) -> Worker:
        cwd = folder / f"worker-{name}"
        cwd.mkdir()
        log = folder / f"worker-{name}.log"

        def on(port: int) -> subprocess.Popen[bytes]:
            cmd = [str(serve_jarvis()), "serve", "--port", str(port), "--jobs", str(jobs)]
            cmd += ["--heartbeat", f"{heartbeat:g}", "--config", str(REPO / "langgraph.json")]
            with log.open("ab") as out:
                return subprocess.Popen(
                    cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
                    start_new_session=True,
                )  # fmt: skip

        try:
            proc, port = start_listening(on, STARTUP_TIMEOUT, lambda _p: log.read_text())
        except PortError as exc:
            raise WorkerError(f"{log.name}: {exc}") from None
        worker = Worker(f"http://127.0.0.1:{port}", log, proc)
        started.append(worker)
        return worker

    try:
        serve_jarvis()
        with ThreadPoolExecutor(len(names)) as pool:  # at once: they race to set up the tables
            ready = list(pool.map(start, names))
        for w in ready:
            deadline = time.monotonic() + STARTUP_TIMEOUT
            while True:
                if w.proc.poll() is not None:
                    msg = f"{w.log.name}: exited ({w.proc.returncode}):\n{w.log.read_text()}"
                    raise WorkerError(msg)
                try:
                    if httpx.get(f"{w.url}/ok", timeout=2.0).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    msg = f"{w.log.name}: not ready in {STARTUP_TIMEOUT:g} s:\n{w.log.read_text()}"
                    raise WorkerError(msg)
                time.sleep(0.2)
        yield ready
    finally:
        for w in started:
            stop_server(w.proc, grace=20.0)
