"""Several server workers: the project's graphs behind LangGraph's API server, on PostgreSQL.

``jarvis serve`` runs the stock ``langgraph-api`` server (the API that LangGraph Studio and
``langgraph_sdk`` speak, as under ``langgraph dev``) with the open PostgreSQL + Redis
runtime ``langgraph-runtime-pg`` (MIT): assistants, threads and the run queue live in
PostgreSQL, run streams and worker heartbeats in Redis. Any number of ``jarvis serve``
processes on one database and one Redis serve the same threads; a run whose worker died
(no heartbeat) is taken up again by another worker from its last checkpoint.

Checkpoints are the project's compact ones (:func:`checkpointer`, from
``JARVIS_CHECKPOINT_URL``: the same tables ``jarvis sessions`` reads) and memory is the
project's store (``langgraph.json``'s ``store``; ``JARVIS_STORE_URL`` puts it on PostgreSQL
for all workers).

The runtime pins its own ``langgraph-api``, which differs from the one ``langgraph dev``
uses, so it lives in an environment of its own: ``make serve-env`` builds ``.venv-serve``.
"""

from __future__ import annotations

import json
import logging
import os
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jarvis_graph.api_auth import AUTH_PATH, OPEN_ENV, TOKEN_ENV, TOKEN_HEADER, guard_config
from jarvis_graph.checkpointing import (
    error_reason,
    open_postgres_checkpointer,
    postgres_setup_lock,
    redact_url,
)

RUNTIME_EDITION = "pg"
CHECKPOINTER_PATH = "jarvis_graph.serve.checkpointer"
"""Import path of :func:`checkpointer` in the form ``langgraph-api`` loads (dots only)."""
DEFAULT_PORT = 2024
LOOPBACK = ("127.0.0.1", "localhost", "::1")
CONNECT_TIMEOUT = 5.0
DEFAULT_HEARTBEAT = 10.0
"""Seconds between a running run's heartbeats in Redis. Another worker takes up a run whose
heartbeat stopped (its worker died) within about two of these; the runtime's own default,
120 s, would leave such a run waiting for minutes."""


class ServeError(Exception):
    """``jarvis serve`` cannot start: the message says why and what to do."""


@asynccontextmanager
async def checkpointer() -> AsyncIterator[Any]:
    """The session store of every worker: compact checkpoints on ``JARVIS_CHECKPOINT_URL``.

    ``langgraph-api`` enters this once per server process (``checkpointer.path`` in the
    server's configuration). Opening and closing block (a pool, table set-up), so they run
    in a worker thread, off the server's event loop.
    """
    url = os.environ.get("JARVIS_CHECKPOINT_URL", "")
    if not url.startswith(("postgresql://", "postgres://")):
        msg = "the server's checkpointer needs JARVIS_CHECKPOINT_URL=postgresql://..."
        raise ServeError(msg)
    # deferred: LangGraph's savers load in the server process only
    from jarvis_graph.checkpoint_async import entered_in_thread

    async with entered_in_thread(open_postgres_checkpointer(url)) as saver:
        yield saver


@dataclass(frozen=True)
class ServeOptions:
    """What ``jarvis serve`` was asked for (URLs as given: they may hold a password)."""

    config: Path
    database_url: str
    redis_url: str
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    jobs: int = 10
    workers: int = 1
    heartbeat: float = DEFAULT_HEARTBEAT
    allow_unauthenticated: bool = False


def server_config(path: Path) -> dict[str, Any]:
    """``langgraph.json`` read and checked, with the project's checkpointer set in it.

    Unless the file names its own, the auth is Jarvis' (:mod:`jarvis_graph.api_auth`: the
    token of ``JARVIS_API_TOKEN``, and the context a caller may set), on every route but
    ``/ok``, and no web page of another origin may read the answers
    (:func:`jarvis_graph.api_auth.guard_config`).
    """
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        msg = f"{path} not found: run jarvis serve in the project root or pass --config"
        raise ServeError(msg) from None
    except (OSError, ValueError) as exc:
        raise ServeError(f"cannot read {path}: {exc}") from None
    if not isinstance(config, dict) or not isinstance(config.get("graphs"), dict):
        raise ServeError(f"{path} has no 'graphs' to serve")
    if config.get("node_version"):
        raise ServeError(f"{path} declares JavaScript graphs; jarvis serve runs Python graphs")
    config.setdefault("checkpointer", {"path": CHECKPOINTER_PATH})
    return guard_config(config)


def _has_own_auth(path: Path) -> bool:
    """Whether ``langgraph.json`` names an auth of its own (unreadable: no; reported later).

    Jarvis' auth named there is not one: without a token it lets every caller in. An
    ``auth`` without a ``path`` is none at all.
    """
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    auth = config.get("auth") if isinstance(config, dict) else None
    return isinstance(auth, dict) and auth.get("path") not in (None, "", AUTH_PATH)


def check_exposure(options: ServeOptions) -> None:
    """Refuse to listen where other machines reach a server that asks no one for a token.

    Raises:
        ServeError: ``--host`` is not loopback, neither ``JARVIS_API_TOKEN`` nor an auth of
            ``langgraph.json``'s own is set, and ``--allow-unauthenticated`` was not given.
    """
    if options.host in LOOPBACK or options.allow_unauthenticated:
        return
    if os.environ.get(TOKEN_ENV) or _has_own_auth(options.config):
        return
    msg = (
        f"--host {options.host} lets other machines run tools on this server, and it has no "
        f"token: set {TOKEN_ENV} (clients send it as {TOKEN_HEADER}, langgraph_sdk's "
        "api_key), or pass --allow-unauthenticated if that is what you want"
    )
    raise ServeError(msg)


def _port_free(host: str, port: int) -> None:
    """Refuse a port in use.

    The upstream server would move to another one, and the banner, the user's clients and
    the other workers would all point at the wrong server.
    """
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server will
        try:
            sock.bind((host, port))
        except OSError as exc:
            reason = exc.strerror or exc
            msg = f"cannot listen on {host}:{port}: {reason}; pass --port with a free one"
            raise ServeError(msg) from None


def check_options(options: ServeOptions) -> dict[str, Any]:
    """Everything the server needs, checked before it starts; its configuration.

    Raises:
        ServeError: The server would be reachable from other machines without a token, the
            runtime is not installed, a URL is missing or wrong, or PostgreSQL or Redis cannot
            be reached (the message never holds a password).
    """
    check_exposure(options)
    try:
        import langgraph_runtime_pg  # noqa: F401
    except ImportError:
        msg = (
            "jarvis serve needs the server runtime (langgraph-runtime-pg), which pins its own "
            "langgraph-api and so lives in an environment of its own: run `make serve-env`, "
            "then `.venv-serve/bin/jarvis serve`"
        )
        raise ServeError(msg) from None
    if not options.database_url:
        msg = "no database: set JARVIS_CHECKPOINT_URL=postgresql://... or pass --database-url"
        raise ServeError(msg)
    if not options.database_url.startswith(("postgresql://", "postgres://")):
        where = redact_url(options.database_url)
        raise ServeError(f"--database-url {where!r} is not a postgresql:// URL")
    if not options.redis_url:
        raise ServeError("no Redis: set JARVIS_REDIS_URL=redis://... or pass --redis-url")
    if not options.redis_url.startswith(("redis://", "rediss://", "unix://")):
        where = redact_url(options.redis_url)
        raise ServeError(f"--redis-url {where!r} is not a redis:// URL")
    if options.jobs < 1 or options.workers < 1:
        raise ServeError("--jobs and --workers must be at least 1")
    if options.heartbeat < 1:
        raise ServeError("--heartbeat must be at least 1 second")
    config = server_config(options.config)
    _reach_postgres(options.database_url)
    _reach_redis(options.redis_url)
    _port_free(options.host, options.port)
    return config


def _reach_postgres(url: str) -> None:
    import psycopg

    try:
        psycopg.connect(url, connect_timeout=int(CONNECT_TIMEOUT)).close()
    except psycopg.Error as exc:
        reason = error_reason(exc, url, first_line=True)
        raise ServeError(f"cannot reach PostgreSQL at {redact_url(url)}: {reason}") from None


def _reach_redis(url: str) -> None:
    import redis

    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=CONNECT_TIMEOUT)
        client.ping()
        client.close()
    except (redis.RedisError, OSError) as exc:
        reason = error_reason(exc, url)
        raise ServeError(f"cannot reach Redis at {redact_url(url)}: {reason}") from None


def _migrate(url: str) -> None:
    """The runtime's tables and ours, set up by one process at a time.

    Workers started together on a new database would otherwise race in ``CREATE TABLE``
    (one dies at start-up with a unique violation). What each worker then sets up at start
    is already there.
    """
    import psycopg
    from langgraph.store.postgres import PostgresStore
    from langgraph_runtime_pg.migrate import upgrade_head
    from psycopg.rows import dict_row

    try:
        with postgres_setup_lock(url):
            upgrade_head(url)  # the runtime's assistants, threads, runs, crons
            # the runtime also sets up a plain store at start (the served store is ours)
            with psycopg.connect(url, autocommit=True, row_factory=dict_row) as conn:
                PostgresStore(conn).setup()
        with open_postgres_checkpointer(url):  # the checkpoint tables (under the same lock)
            pass
    except Exception as exc:  # SQLAlchemy's, psycopg's or ours: one line, no password
        reason = error_reason(exc, url, first_line=True)
        msg = f"cannot set up the server's tables in {redact_url(url)}: {reason}"
        raise ServeError(msg) from None


UPSTREAM_WELCOME = "This in-memory server is designed for development and testing"


class _Welcome(logging.Filter):
    """Put our banner in place of the stock server's, which calls itself in-memory."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def filter(self, record: logging.LogRecord) -> bool:
        if UPSTREAM_WELCOME in str(record.msg):
            record.msg, record.args = self.text, ()
        return True


def welcome(options: ServeOptions) -> str:
    """The banner: where the API is, and what the worker is attached to (no passwords)."""
    shown = "127.0.0.1" if options.host in ("0.0.0.0", "::") else options.host  # noqa: S104
    url = f"http://{shown}:{options.port}"
    store_url = os.environ.get("JARVIS_STORE_URL")
    store = redact_url(store_url) if store_url else "local to this machine (JARVIS_STORE_URL unset)"
    docs = f"{url}/docs" + (f" with {TOKEN_HEADER}" if os.environ.get(TOKEN_ENV) else "")
    return (
        f"jarvis serve: API {url} (docs {docs}; LangGraph Studio and langgraph_sdk connect "
        "here)\n"
        f"  database {redact_url(options.database_url)}, Redis {redact_url(options.redis_url)}\n"
        f"  memory {store}\n"
        f"  {options.workers} process(es) x {options.jobs} runs at once; heartbeat "
        f"{options.heartbeat:g} s"
    )


def serve(options: ServeOptions) -> None:
    """Check everything, then run the server until it is stopped (Ctrl-C or SIGTERM)."""
    config = check_options(options)
    # The workers' checkpointer and the memory router read these in the server process.
    os.environ["JARVIS_CHECKPOINT_URL"] = options.database_url
    os.environ["LANGGRAPH_RUNTIME_EDITION"] = RUNTIME_EDITION
    os.environ["LG_BG_JOB_HEARTBEAT"] = f"{options.heartbeat:g}"
    os.environ.setdefault("LANGGRAPH_NO_VERSION_CHECK", "true")  # offline: no PyPI lookup
    os.environ.setdefault("LANGGRAPH_CLI_NO_ANALYTICS", "1")
    os.environ.setdefault("LANGSMITH_TRACING", "false")
    # Jarvis' auth lets callers in without a token only when told so: here, where the
    # exposure check passed with no token (loopback, or --allow-unauthenticated)
    if os.environ.get(TOKEN_ENV):
        os.environ.pop(OPEN_ENV, None)
    else:
        os.environ[OPEN_ENV] = "1"
    _migrate(options.database_url)
    os.environ["LG_RUNTIME_PG_AUTO_MIGRATE"] = "false"  # done above, under the set-up lock
    from langgraph_api.cli import run_server

    logging.getLogger("langgraph_api.cli").addFilter(_Welcome(welcome(options)))
    extra: dict[str, Any] = {"workers": options.workers} if options.workers > 1 else {}
    run_server(
        options.host,
        options.port,
        False,
        config["graphs"],
        n_jobs_per_worker=options.jobs,
        env=config.get("env") if isinstance(config.get("env"), dict) else None,
        store=config.get("store"),
        auth=config.get("auth"),
        http=config.get("http"),
        checkpointer=config["checkpointer"],
        runtime_edition=RUNTIME_EDITION,  # type: ignore[arg-type]
        server_level="WARNING",
        __database_uri__=options.database_url,
        __redis_uri__=options.redis_url,
        __migrations_path__=None,
        **extra,
    )
