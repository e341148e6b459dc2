"""Checkpointer factories shared by the CLI, notebooks and tests.

Sessions live in ``<project>/.jarvis/sessions.sqlite`` unless ``checkpoint_url``
(``JARVIS_CHECKPOINT_URL``) names another store: ``sqlite:///path`` or a path, or a
``postgresql://`` URL (the ``postgres`` extra: ``langgraph-checkpoint-postgres`` on a
``psycopg_pool`` pool; the parts of compact checkpoints then live in the same database).
Beside a SQLite store, large message texts, messages and message lists are kept once in
``blobs/parts.sqlite`` (compact checkpoints, see :mod:`jarvis_graph.checkpoint_blobs`).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jarvis_graph import secrets
from jarvis_graph.checkpoint_parts import CheckpointError, PostgresParts, retry_locked
from jarvis_graph.owned_paths import OwnedPathError, check_owned, owned_file, split_owned
from jarvis_graph.thread_lock import setup_postgres

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.base import BaseCheckpointSaver


def default_sessions_path(workspace: Path) -> Path:
    """Where a project's sessions are stored by default."""
    return workspace / ".jarvis" / "sessions.sqlite"


def sqlite_path(url: str | None, workspace: Path) -> Path | None:
    """The SQLite file a URL points at, or ``None`` for a non-SQLite URL."""
    if not url:
        return default_sessions_path(workspace)
    if url.startswith("sqlite:///"):
        return Path(url.removeprefix("sqlite:///")).expanduser()
    if "://" in url:
        return None
    return Path(url).expanduser()


@contextmanager
def open_checkpointer(workspace: Path, url: str | None = None) -> Iterator[BaseCheckpointSaver]:
    """Open the session store for ``workspace`` and close it afterwards.

    Raises:
        CheckpointError: The URL scheme is unsupported or its package is missing.
    """
    path = sqlite_path(url, workspace)
    if path is not None:
        # deferred with the saver: LangGraph's SQLite saver and serde load only here
        from jarvis_graph.checkpoint_async import ThreadedSqliteSaver
        from jarvis_graph.checkpoint_blobs import BlobSerializer, blob_folder

        if path == default_sessions_path(workspace):  # Jarvis' own: private, through no link
            try:
                owned_file(workspace, path.relative_to(workspace))
                # the parts beside it are written later, in a step: refuse a link up front
                check_owned(*split_owned(blob_folder(path)))
            except OwnedPathError as exc:
                raise CheckpointError(str(exc)) from None
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(path), check_same_thread=False)
        # Texts, messages and message lists are stored once beside the database.
        serde = BlobSerializer(blob_folder(path))
        try:
            saver = ThreadedSqliteSaver(conn, serde=serde)  # async methods for API servers
            _setup_sqlite(saver, path)
            yield saver
        finally:
            conn.close()
            serde.close()
        return
    assert url is not None
    if url.startswith(("postgres://", "postgresql://")):
        with open_postgres_checkpointer(url) as pg_saver:
            yield pg_saver
        return
    msg = f"unsupported checkpoint URL scheme in {url.split('://')[0]!r}; use sqlite:/// or postgresql://"
    raise CheckpointError(msg)


POOL_SIZE = 8
"""Connections of a PostgreSQL session store per process (a run uses two at a time)."""


def redact_url(url: str) -> str:
    """``url`` for messages and logs: no user name or password.

    The query may hold a password: only its ``host`` and ``port`` (a socket folder, for
    instance) are kept.
    """
    return secrets.redact_url(url, keep_query=("host", "port"))


@contextmanager
def open_postgres_checkpointer(url: str) -> Iterator[BaseCheckpointSaver]:
    """A PostgresSaver on a connection pool, with compact checkpoints kept in the database.

    The saver (``checkpoint_pg.PooledPostgresSaver``) also has async methods, run in worker
    threads, so an API server's event loop can use it (``jarvis serve``).

    Statements are not prepared and the saver does not pipeline, so the store also works
    behind PgBouncer-style poolers (transaction mode) and over TLS; a broken pooled
    connection is replaced when it is taken.

    Raises:
        CheckpointError: The PostgreSQL packages are missing or the server cannot be reached.
    """
    where = redact_url(url)
    try:
        from psycopg import Error as PsycopgError
        from psycopg_pool import PoolTimeout

        # deferred: the postgres extra loads only for a postgresql:// store
        from jarvis_graph.checkpoint_pg import PooledPostgresSaver
    except ImportError as exc:
        msg = (
            f"checkpoint URL {where!r} needs PostgreSQL support: "
            "pip install 'jarvis-graph[postgres]'"
        )
        raise CheckpointError(msg) from exc
    # deferred with the saver: the blob serializer loads langgraph's serde
    from jarvis_graph.checkpoint_blobs import BlobSerializer

    try:  # one connection first: a server that is down or refuses us says why at once
        import psycopg

        psycopg.connect(url, connect_timeout=int(CONNECT_TIMEOUT)).close()
    except PsycopgError as exc:
        raise CheckpointError(_cannot_open(where, url, exc)) from None
    pool = postgres_pool(url, "jarvis-sessions")
    try:
        try:
            pool.open(wait=True, timeout=CONNECT_TIMEOUT)
            parts = PostgresParts(pool, where)
            saver = PooledPostgresSaver(pool, serde=BlobSerializer(None, parts=parts))
            saver.supports_pipeline = False  # poolers drop pipelined connections
            with postgres_setup_lock(url):
                saver.setup()
                parts.setup()
                setup_postgres(pool)
        except (PoolTimeout, PsycopgError) as exc:
            raise CheckpointError(_cannot_open(where, url, exc)) from None
        yield saver
    finally:
        pool.close()


SETUP_LOCK = (0x4A415256, 1)
"""Advisory lock key (two-int form, apart from the per-thread locks' one-bigint keys) held
while tables are set up: PostgreSQL can fail two ``CREATE TABLE IF NOT EXISTS`` of one table
run at once (a unique violation in ``pg_type``), as when several workers start together."""


SETUP_WAIT = 300.0
"""Seconds to wait for another process's table set-up before giving up."""


@contextmanager
def postgres_setup_lock(url: str) -> Iterator[None]:
    """Hold :data:`SETUP_LOCK` on a connection of its own (freed when it closes).

    The wait polls ``pg_try_advisory_lock`` instead of blocking in ``pg_advisory_lock``: a
    statement blocked on a lock is an open transaction, and the holder's ``CREATE INDEX
    CONCURRENTLY`` (LangGraph's set-up runs some) waits for every open transaction to end,
    so the two would wait for each other for ever.

    Raises:
        CheckpointError: Another process held the lock for :data:`SETUP_WAIT` seconds.
    """
    import psycopg

    with psycopg.connect(url, autocommit=True, connect_timeout=int(CONNECT_TIMEOUT)) as conn:
        deadline = time.monotonic() + SETUP_WAIT
        while not conn.execute("SELECT pg_try_advisory_lock(%s, %s)", SETUP_LOCK).fetchone()[0]:  # type: ignore[index]
            if time.monotonic() > deadline:
                msg = (
                    f"{redact_url(url)}: another process has been setting up the tables "
                    f"for {SETUP_WAIT:g} s"
                )
                raise CheckpointError(msg)
            time.sleep(0.1)
        yield


def error_reason(exc: BaseException, url: str, *, first_line: bool = False) -> str:
    """``exc``'s message on one line, for a message about ``url``, its password masked.

    ``first_line``: only the message's first line (SQLAlchemy's go on with the statement).
    """
    text = str(exc).strip()
    if first_line:
        text = text.splitlines()[0] if text else ""
    reason = " ".join(text.split()) or type(exc).__name__
    password = secrets.split_url(url).password
    if password:  # the servers' messages do not quote it; make sure of it
        reason = reason.replace(password, "***")
    return reason


def _cannot_open(where: str, url: str, exc: Exception) -> str:
    return f"cannot open the session store {where}: {error_reason(exc, url)}"


CONNECT_TIMEOUT = 10.0
"""Seconds to wait for the PostgreSQL server when a session store is opened."""


def postgres_pool(url: str, name: str) -> Any:
    """A ``psycopg_pool`` pool (not opened) of autocommit connections, fit for poolers.

    Statements are not prepared (PgBouncer in transaction mode cannot keep them) and a
    broken connection is replaced when it is taken. Rows come back as dicts, as
    LangGraph's PostgreSQL saver and store expect.
    """
    from psycopg.rows import dict_row
    from psycopg_pool import ConnectionPool

    return ConnectionPool(
        url,
        min_size=1,
        max_size=POOL_SIZE,
        kwargs={"autocommit": True, "prepare_threshold": None, "row_factory": dict_row},
        check=ConnectionPool.check_connection,
        open=False,
        name=name,
    )


def _setup_sqlite(saver: Any, path: Path, wait: float = 30.0) -> None:
    """Create the tables, waiting while another process does the same (see ``retry_locked``)."""
    try:
        retry_locked(saver.setup, wait)
    except sqlite3.OperationalError as exc:
        msg = f"cannot open the session store {path}: {exc}"
        raise CheckpointError(msg) from exc


def run_position() -> dict[str, Any]:
    """Thread id and the id of the checkpoint the running step started from.

    The checkpoint id is ``None`` outside a checkpointed run. Its messages are the ones
    the step sees, so ``(thread, checkpoint, index)`` anchors a message exactly.
    """
    from langgraph.config import get_config

    try:
        configurable = get_config().get("configurable", {})
    except RuntimeError:
        return {"thread_id": "default", "checkpoint_id": None}
    # LangGraph gives each step the id of the checkpoint it runs from, keyed by the
    # namespace of the graph that step belongs to ("" for the root graph).
    ns = str(configurable.get("checkpoint_ns") or "")
    parent_ns = ns.rsplit("|", 1)[0] if "|" in ns else ""
    checkpoint = (configurable.get("checkpoint_map") or {}).get(parent_ns)
    thread = str(configurable.get("thread_id") or "default")
    return {"thread_id": thread, "checkpoint_id": checkpoint}


@dataclass(frozen=True)
class ThreadRow:
    """One session in a listing."""

    thread_id: str
    checkpoints: int
    last_checkpoint_id: str


def list_threads(saver: BaseCheckpointSaver) -> list[ThreadRow]:
    """Every thread in the store, newest first."""
    conn = getattr(saver, "conn", None)
    if isinstance(conn, sqlite3.Connection):
        rows = conn.execute(
            "SELECT thread_id, COUNT(*), MAX(checkpoint_id) FROM checkpoints "
            "WHERE checkpoint_ns = '' GROUP BY thread_id ORDER BY MAX(checkpoint_id) DESC"
        ).fetchall()
        return [ThreadRow(str(t), int(n), str(c)) for t, n, c in rows]
    if conn is not None and hasattr(conn, "getconn"):  # a psycopg pool: a PostgreSQL store
        with conn.connection() as pooled, pooled.cursor() as cur:
            cur.execute(
                "SELECT thread_id, COUNT(*) AS n, MAX(checkpoint_id) AS last FROM checkpoints "
                "WHERE checkpoint_ns = '' GROUP BY thread_id ORDER BY MAX(checkpoint_id) DESC"
            )
            return [
                ThreadRow(str(r["thread_id"]), int(r["n"]), str(r["last"])) for r in cur.fetchall()
            ]
    latest: dict[str, ThreadRow] = {}
    for tup in saver.list(None):
        cfg = tup.config["configurable"]
        tid, cid = cfg["thread_id"], cfg["checkpoint_id"]
        old = latest.get(tid)
        latest[tid] = ThreadRow(
            tid,
            (old.checkpoints if old else 0) + 1,
            max(cid, old.last_checkpoint_id if old else cid),
        )
    return sorted(latest.values(), key=lambda r: r.last_checkpoint_id, reverse=True)


def fork_thread(
    saver: BaseCheckpointSaver, thread_id: str, new_thread_id: str, checkpoint_id: str | None = None
) -> str:
    """Copy ``thread_id`` up to ``checkpoint_id`` (default: latest) into ``new_thread_id``.

    The copy holds the same checkpoints and parents, so the new thread resumes exactly
    where the source was at that checkpoint, before its next step ran.

    Returns:
        The id of the checkpoint the fork starts from.

    Raises:
        CheckpointError: The thread or checkpoint does not exist.
    """
    source: RunnableConfig = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    tuples = {t.config["configurable"]["checkpoint_id"]: t for t in saver.list(source)}
    if not tuples:
        msg = f"no session {thread_id!r}"
        raise CheckpointError(msg)
    head = checkpoint_id or max(tuples)
    if head not in tuples:
        msg = f"session {thread_id!r} has no checkpoint {head!r}"
        raise CheckpointError(msg)
    chain = []
    current: str | None = head
    while current is not None:
        tup = tuples[current]
        chain.append(tup)
        parent = tup.parent_config
        current = parent["configurable"]["checkpoint_id"] if parent else None
    parent_id: str | None = None
    for tup in reversed(chain):
        cfg: RunnableConfig = {"configurable": {"thread_id": new_thread_id, "checkpoint_ns": ""}}
        if parent_id:
            cfg["configurable"]["checkpoint_id"] = parent_id
        # Pending writes are not copied: they belong to steps the source ran after this
        # checkpoint, and the fork must run its next step afresh.
        saver.put(cfg, tup.checkpoint, tup.metadata, tup.checkpoint["channel_versions"])
        parent_id = tup.checkpoint["id"]
    return head
