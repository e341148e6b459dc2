"""One run per thread, across processes: a lock that lives with the session store.

A SQLite store keeps its locks in a ``thread_locks`` table of the same database file, one
row per held thread naming the holder: pid, host, the process's start time and since when.
A second run finds the row, sees the holder alive and stops with :class:`ThreadBusyError`.
A row whose process is gone (same host; the pid no longer exists or now belongs to a
process started at another time) is stale: the next run takes it over and says so.

A PostgreSQL store (``postgresql://`` checkpoint URL) holds a session-level advisory lock on
a connection of its own, which the server frees when the holder's connection ends; the
holder's pid and host are written beside it for the error message. Other savers (in memory)
live in one process and get no cross-process lock.

Within one process the lock is re-entrant: ``jarvis chat`` holds its thread for the whole
REPL and each message's run takes it again.
"""

from __future__ import annotations

import logging
import os
import socket
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jarvis_graph.checkpoint_parts import CheckpointError

logger = logging.getLogger(__name__)

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS thread_locks (thread_id TEXT PRIMARY KEY, "
    "pid INTEGER NOT NULL, host TEXT NOT NULL, start TEXT NOT NULL, since REAL NOT NULL)"
)
_PG_SCHEMA = _SCHEMA.replace("thread_locks", "jarvis_thread_locks").replace(
    "REAL", "DOUBLE PRECISION"
)


def process_stat(pid: int | str) -> list[str]:
    """The fields of ``/proc/<pid>/stat`` after the command name; ``[]`` if unreadable.

    Index 0 is the state (``Z`` zombie, ``X`` dead), 2 the process group, 19 the start time.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:  # gone, or no /proc
        return []
    # The command name (field 2) may hold spaces and parentheses; fields after it don't.
    return stat.rsplit(")", 1)[-1].split()


def process_start(pid: int) -> str:
    """When process ``pid`` started (clock ticks after boot, from /proc); ``""`` if unknown.

    A pid is reused after its process ends; the start time tells two processes apart.
    """
    fields = process_stat(pid)
    return fields[19] if len(fields) > 19 else ""


def pid_alive(pid: int, start: str) -> bool:
    """Whether ``pid`` on this host is still the process that started at ``start``."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by another user
        pass
    now = process_start(pid)
    return not (start and now and now != start)


@dataclass(frozen=True)
class Holder:
    """The process holding a thread: pid, host, the process's start time, since when."""

    pid: int
    host: str
    start: str
    since: float

    @classmethod
    def me(cls) -> Holder:
        """This process, holding from now."""
        return cls(os.getpid(), socket.gethostname(), process_start(os.getpid()), time.time())

    def same_process(self, other: Holder) -> bool:
        """Whether both name the same process."""
        return (self.pid, self.host, self.start) == (other.pid, other.host, other.start)

    def alive(self) -> bool:
        """Whether the holder still runs (a process on another host is taken as running)."""
        return self.host != socket.gethostname() or pid_alive(self.pid, self.start)

    def describe(self) -> str:
        """``pid 4242 on host build-1 since 2026-05-01 10:12:03``."""
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.since))
        return f"pid {self.pid} on host {self.host} since {since}"


class ThreadBusyError(CheckpointError):
    """Another run holds the thread."""

    def __init__(self, thread_id: str, holder: Holder) -> None:
        self.thread_id, self.holder = thread_id, holder
        here = holder.host == socket.gethostname()
        stop = (
            f"kill {holder.pid}"
            if here
            else f"stop it there, or if it is gone: jarvis sessions unlock {thread_id}"
        )
        super().__init__(
            f"session {thread_id} is in use by another run ({holder.describe()}); "
            f"wait for it to finish or stop it ({stop}), then try again"
        )


_held: dict[tuple[str, str], list[Any]] = {}  # (store, thread) -> [count, release]
_held_lock = threading.Lock()


@contextmanager
def hold_thread(saver: Any, thread_id: str) -> Iterator[Holder | None]:
    """Hold ``thread_id`` in ``saver``'s store while the block runs.

    Yields:
        The holder of a stale lock that was taken over (its process is gone), else ``None``.

    Raises:
        ThreadBusyError: A live process holds the thread.
        CheckpointError: The lock cannot be taken for another reason.
    """
    store = _store_key(saver)
    key = (store, thread_id)
    with _held_lock:
        if key in _held:
            _held[key][0] += 1
            reentered = True
        else:
            reentered = False
    if reentered:
        try:
            yield None
        finally:
            _leave(key)
        return
    stale, release = _acquire(saver, store, thread_id)
    with _held_lock:
        _held[key] = [1, release]
    try:
        yield stale
    finally:
        _leave(key)


def _leave(key: tuple[str, str]) -> None:
    with _held_lock:
        entry = _held[key]
        entry[0] -= 1
        if entry[0]:
            return
        del _held[key]
    entry[1]()


def release_all() -> None:
    """Release every lock this process holds (before ``os._exit``, which runs no cleanup)."""
    with _held_lock:
        releases = [entry[1] for entry in _held.values()]
        _held.clear()
    for release in releases:
        release()


class LiveHolderError(CheckpointError):
    """``unlock`` of a thread whose holder still runs on this host."""

    def __init__(self, thread_id: str, holder: Holder) -> None:
        self.thread_id, self.holder = thread_id, holder
        super().__init__(
            f"session {thread_id} is held by a run that is still running here "
            f"({holder.describe()}); unlock is for a run on another host that is gone. "
            f"Wait for it to finish or stop it (kill {holder.pid}): the next run then takes "
            "the session over"
        )


def break_lock(saver: Any, thread_id: str) -> Holder | None:
    """Remove ``thread_id``'s lock row (``jarvis sessions unlock``), unless its holder lives here.

    For a holder on another host that is gone: this host cannot tell whether it still runs.
    A holder on this host is checked as a run taking the lock over checks it (same pid,
    same start time): a live one keeps its lock, since releasing it would let a second
    run write the session at the same time; a dead one is removed.

    Returns:
        The holder that was removed, or ``None`` when the thread was not held.

    Raises:
        LiveHolderError: The holder is a process alive on this host.
    """
    store = _store_key(saver)
    if not store or store == "postgres":  # advisory locks end with their connection
        return None
    conn = _connect(Path(store))
    try:
        holder = _holder(conn, thread_id)
        if holder is not None and holder.host == socket.gethostname() and holder.alive():
            conn.execute("ROLLBACK")
            raise LiveHolderError(thread_id, holder)
        conn.execute("DELETE FROM thread_locks WHERE thread_id = ?", (thread_id,))
        conn.execute("COMMIT")
    except sqlite3.Error as exc:
        msg = f"cannot unlock session {thread_id} in {store}: {exc}"
        raise CheckpointError(msg) from exc
    finally:
        conn.close()
    return holder


def _store_key(saver: Any) -> str:
    conn = getattr(saver, "conn", None)
    if isinstance(conn, sqlite3.Connection):
        with getattr(saver, "lock", threading.Lock()):
            rows = conn.execute("PRAGMA database_list").fetchall()
        return next((str(r[2]) for r in rows if r[1] == "main"), "")
    if any(c.__module__.startswith("langgraph.checkpoint.postgres") for c in type(saver).__mro__):
        return "postgres"  # one per process: open_checkpointer opens one PostgreSQL store
    return ""


def _acquire(saver: Any, store: str, thread_id: str) -> tuple[Holder | None, Any]:
    if store == "postgres":
        return _acquire_postgres(saver, thread_id)
    if not store:  # an in-memory store lives in this process only
        return None, lambda: None
    me = Holder.me()
    return _acquire_sqlite(Path(store), thread_id, me), lambda: _release_sqlite(
        Path(store), thread_id, me
    )


def _connect(path: Path) -> sqlite3.Connection:
    # Autocommit mode, so BEGIN IMMEDIATE below is the only transaction.
    return sqlite3.connect(str(path), timeout=30, isolation_level=None)


def _holder(conn: sqlite3.Connection, thread_id: str) -> Holder | None:
    """``thread_id``'s lock row, read in a transaction that holds the write lock.

    The caller writes (or rolls back) under the same lock: no other process changes the row
    in between.
    """
    conn.execute("BEGIN IMMEDIATE")
    conn.execute(_SCHEMA)
    row = conn.execute(
        "SELECT pid, host, start, since FROM thread_locks WHERE thread_id = ?", (thread_id,)
    ).fetchone()
    return Holder(int(row[0]), str(row[1]), str(row[2]), float(row[3])) if row else None


def _acquire_sqlite(path: Path, thread_id: str, me: Holder) -> Holder | None:
    """Write this process's lock row; the stale row taken over, if any."""
    conn = _connect(path)
    try:
        old = _holder(conn, thread_id)
        if old is not None and not old.same_process(me) and old.alive():
            conn.execute("ROLLBACK")
            raise ThreadBusyError(thread_id, old)
        conn.execute(
            "INSERT OR REPLACE INTO thread_locks VALUES (?, ?, ?, ?, ?)",
            (thread_id, me.pid, me.host, me.start, me.since),
        )
        conn.execute("COMMIT")
    except sqlite3.Error as exc:
        msg = f"cannot lock session {thread_id} in {path}: {exc}"
        raise CheckpointError(msg) from exc
    finally:
        conn.close()
    return old if old is not None and not old.same_process(me) else None


def _release_sqlite(path: Path, thread_id: str, me: Holder) -> None:
    try:
        conn = _connect(path)
        try:
            conn.execute(
                "DELETE FROM thread_locks WHERE thread_id = ? AND pid = ? AND host = ? "
                "AND start = ?",
                (thread_id, me.pid, me.host, me.start),
            )
        finally:
            conn.close()
    except sqlite3.Error:  # the next run sees this process gone and takes the row over
        logger.warning("could not release the lock of session %s", thread_id, exc_info=True)


def setup_postgres(pool: Any) -> None:
    """Create the lock table of a PostgreSQL store (when the store is opened)."""
    with pool.connection() as conn:
        conn.execute(_PG_SCHEMA)


def _acquire_postgres(saver: Any, thread_id: str) -> tuple[Holder | None, Any]:
    """A session-level advisory lock on a connection of its own, held until the release.

    The server frees it when that connection ends, so a holder killed with -9 leaves no
    lock behind; its row (pid, host) names it in the error message until it is replaced.
    """
    import psycopg

    conninfo = getattr(saver.conn, "conninfo", None)
    if conninfo is None:
        msg = "the session lock needs the PostgreSQL store opened by open_checkpointer (a pool)"
        raise CheckpointError(msg)
    key, me = f"jarvis-thread:{thread_id}", Holder.me()
    try:
        conn = psycopg.connect(conninfo, autocommit=True, connect_timeout=10)
    except psycopg.Error as exc:
        msg = f"cannot lock session {thread_id}: {str(exc).strip()}"
        raise CheckpointError(msg) from exc
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT pg_try_advisory_lock(hashtextextended(%s, 0))", (key,))
            got = _first(cur.fetchone())
            cur.execute(
                "SELECT pid, host, start, since FROM jarvis_thread_locks WHERE thread_id = %s",
                (thread_id,),
            )
            row = cur.fetchone()
            old = Holder(int(row[0]), str(row[1]), str(row[2]), float(row[3])) if row else None
            if not got:
                raise ThreadBusyError(
                    thread_id, old or Holder(0, "an unknown host", "", time.time())
                )
            cur.execute(
                "INSERT INTO jarvis_thread_locks VALUES (%s, %s, %s, %s, %s) "
                "ON CONFLICT (thread_id) DO UPDATE SET pid = EXCLUDED.pid, "
                "host = EXCLUDED.host, start = EXCLUDED.start, since = EXCLUDED.since",
                (thread_id, me.pid, me.host, me.start, me.since),
            )
    except psycopg.Error as exc:
        conn.close()
        msg = f"cannot lock session {thread_id}: {str(exc).strip()}"
        raise CheckpointError(msg) from exc
    except BaseException:
        conn.close()
        raise

    def release() -> None:
        try:
            conn.execute(
                "DELETE FROM jarvis_thread_locks WHERE thread_id = %s AND pid = %s AND host = %s",
                (thread_id, me.pid, me.host),
            )
        except psycopg.Error:  # the lock itself ends with the connection below
            logger.warning("could not remove the lock row of session %s", thread_id)
        finally:
            conn.close()

    return old, release


def _first(row: Any) -> Any:
    return next(iter(row.values())) if isinstance(row, dict) else row[0]
