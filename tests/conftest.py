"""Test isolation: no test sees the real home directory, config or API keys."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C as a terminal delivers it, whatever started the suite; unwaited processes
    say where they were started (``tests/support/popen_origin``).

    A job a script starts in the background without job control (``make test &`` in a
    non-interactive shell) has SIGINT ignored, and every process it starts inherits that:
    the CLI the Ctrl-C tests interrupt would never see the signal. The suite restores the
    default, which the processes it starts then get, as from a terminal.
    """
    import signal

    from tests.support import popen_origin

    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    popen_origin.install()  # an unwaited process says where it was started


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """Point HOME and JARVIS_HOME at a fresh folder and drop Jarvis/provider variables."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("JARVIS_HOME", str(home / ".jarvis"))
    import os

    for var in list(os.environ):
        if var.startswith("JARVIS_") and var != "JARVIS_HOME":
            monkeypatch.delenv(var)
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "LANGSMITH_API_KEY", "LANGCHAIN_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("LANGSMITH_TRACING", "false")
    # Local models are assembled under the test's home, never the user's cache.
    monkeypatch.setenv("JARVIS_MODELS_DIR", str(home / "models"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    yield home


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty workspace folder for a run."""
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture(autouse=True)
def fresh_process_caches() -> Iterator[None]:
    """What truly lives for a whole process starts empty in every test.

    - event buses: the named channels callers listen on (and the callbacks loaded into them);
    - platform plugins: entry points, loaded once per process;
    - tool registries: imported user tool files and MCP server processes (no server may
      outlive its test);
    - the background memory worker: its jobs finish before the stores close;
    - memory stores: open FAISS indexes and SQLite files of this test's folders.

    A run's tools, models and subscribers belong to the run (``RunServices``): nothing to reset.
    """
    from jarvis_graph.events import reset_event_buses
    from jarvis_graph.platforms.registry import reset_plugins
    from jarvis_graph.tools.registry import close_registries

    def reset() -> None:
        reset_event_buses()
        reset_plugins()
        close_registries()
        if "jarvis_graph.memory.background" in sys.modules:
            sys.modules["jarvis_graph.memory.background"].wait_for_background()
        if "jarvis_graph.memory.backends" in sys.modules:
            sys.modules["jarvis_graph.memory.backends"].close_stores()

    reset()
    yield
    reset()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[object]:
    """A PostgreSQL server on loopback for the whole session (see ``tests/support/postgres``)."""
    import shutil
    import tempfile

    from tests.support.postgres import PostgresServer

    # under /tmp itself: the server's user must reach the folder (pytest's are private)
    folder = Path(tempfile.mkdtemp(prefix="jarvis-pg-"))
    server = PostgresServer(folder)
    server.start()
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def pg_url(postgres_server: object) -> str:
    """The URL of a new, empty PostgreSQL database of the test's own."""
    return postgres_server.new_database()  # type: ignore[attr-defined]


@pytest.fixture(scope="session")
def pgvector_server() -> Iterator[object]:
    """A PostgreSQL server with pgvector for the whole session (a socket in a temp folder)."""
    import shutil
    import tempfile

    from tests.support.postgres import PgvectorServer

    folder = Path(tempfile.mkdtemp(prefix="jarvis-pgv-"))
    server = PgvectorServer(folder)
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def pgvector_url(pgvector_server: object) -> str:
    """The URL of a new, empty database on the pgvector server."""
    return pgvector_server.new_database()  # type: ignore[attr-defined]


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    """A Redis server of the test's own on loopback (see ``tests/support/redis``); its URL."""
    from tests.support.redis import RedisServer

    server = RedisServer(tmp_path / "redis")
    server.start()
    try:
        yield server.url
    finally:
        server.stop()
