"""The parts database of compact checkpoints: texts, messages and message lists, each stored once.

``<blobs>/parts.sqlite`` beside the session store holds three content-addressed tables:

- ``texts``: a large message text, keyed by the SHA-256 of its UTF-8 bytes (uncompressed,
  so a restore costs no decompression);
- ``messages``: one message (its large text replaced by a reference), keyed by a digest
  of its encoded form;
- ``lists``: a message list as a chain of nodes: a node is its parent (the list it
  extends, or none) and the digests of the messages it appends. A node may also carry
  those messages' rows (``packed``), so that a restore reads them with the node instead of
  one ``messages`` row each; the ``messages`` rows are written all the same.

A checkpoint of a run with N messages so adds one node of a few digests, not N references:
the sessions database grows linearly with the run. Rows are only ever added, and a row is
committed before any checkpoint that refers to it.
"""

from __future__ import annotations

import random
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple, Protocol, TypeVar

from jarvis_graph.owned_paths import owned_file, split_owned

T = TypeVar("T")

DIGEST_BYTES = 16
"""Message and list digests: the first 16 bytes of a SHA-256."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS texts (
    digest TEXT PRIMARY KEY, body TEXT NOT NULL, added REAL NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS messages (
    digest BLOB PRIMARY KEY, kind TEXT NOT NULL, data BLOB NOT NULL,
    added REAL NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS lists (
    digest BLOB PRIMARY KEY, parent BLOB, items BLOB NOT NULL, added REAL NOT NULL DEFAULT 0,
    packed BLOB
);
"""
TABLES = ("texts", "messages", "lists")
"""``added``: when a row was last written (seconds since the epoch; 0 before it was kept).
Writing a row that exists refreshes it, so a row a checkpoint is about to refer to is
never older than that checkpoint: the orphan collection keeps rows younger than its grace
period (:mod:`jarvis_graph.session_prune`)."""
_COLUMNS = {
    "texts": ("digest", "body"),
    "messages": ("digest", "kind", "data"),
    "lists": ("digest", "parent", "items", "packed"),
}
_ADDED_LATER = {"added": "REAL NOT NULL DEFAULT 0", "packed": "BLOB"}
"""Columns a store written by an earlier version may lack, and how they are added."""


def _scanned(table: str) -> tuple[str, ...]:
    """The columns a scan of ``table`` reads: not a list's packed rows.

    They copy rows the ``messages`` table holds: a scan of every list would be as big.
    """
    return tuple(c for c in _COLUMNS[table] if c != "packed")


def _upsert(table: str, name: str, mark: str) -> str:
    """Insert a row of ``table`` (named ``name`` in the database), or refresh its time."""
    columns = _COLUMNS[table]
    values = ", ".join([mark] * (len(columns) + 1))
    return (
        f"INSERT INTO {name} ({', '.join(columns)}, added) VALUES ({values}) "  # noqa: S608
        "ON CONFLICT (digest) DO UPDATE SET added = excluded.added"
    )


_CHAIN = """
WITH RECURSIVE chain(digest, parent, items, packed, depth) AS (
    SELECT digest, parent, items, packed, 0 FROM lists WHERE digest = ?
    UNION ALL
    SELECT l.digest, l.parent, l.items, l.packed, chain.depth + 1
    FROM lists AS l JOIN chain ON l.digest = chain.parent
)
SELECT digest, parent, items, packed FROM chain ORDER BY depth DESC
"""

_BATCH = 500
"""Digests per ``IN (...)`` query (well under SQLite's parameter limit)."""


def retry_locked(action: Callable[[], T], wait: float = 30.0) -> T:
    """``action()``, tried again while SQLite answers "database is locked".

    Two processes creating a database at once both switch it to WAL; SQLite answers one of
    them "locked" at once instead of waiting (it would deadlock), so the busy timeout alone
    does not help. Any other error, or a lock lasting past ``wait`` seconds, is raised.
    """
    deadline = time.monotonic() + wait
    while True:
        try:
            return action()
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(random.uniform(0.01, 0.1))


class CheckpointError(RuntimeError):
    """The session store cannot be opened or read."""


class MissingPartError(CheckpointError):
    """A checkpoint refers to a stored part that is gone."""


class Node(NamedTuple):
    """One node of a stored message list, as :meth:`Parts.chain` returns it."""

    digest: bytes
    items: bytes
    """The digests of the messages the node appends, ``DIGEST_BYTES`` each."""
    packed: bytes | None
    """Those messages' rows, when the node carries them (see ``checkpoint_blobs``)."""


def _nodes(rows: list[Any], where: Any) -> list[Node]:
    """The nodes of a chain query's rows (oldest first), checked to start a list."""
    if not rows or rows[0][1] is not None:  # the oldest node must start the list
        msg = f"a saved session refers to a message list missing from {where}"
        raise MissingPartError(msg)
    return [
        Node(bytes(digest), bytes(items), None if packed is None else bytes(packed))
        for digest, _parent, items, packed in rows
    ]


MMAP_BYTES = 1 << 30


class Parts(Protocol):
    """Where compact checkpoints keep their parts: :class:`PartsDB` or :class:`PostgresParts`."""

    path: Any
    """How the store is named in error messages."""

    def close(self) -> None: ...  # noqa: D102

    def add(  # noqa: D102
        self,
        texts: Iterable[tuple[str, str]] = (),
        messages: Iterable[tuple[bytes, str, bytes]] = (),
        lists: Iterable[tuple[bytes, bytes | None, bytes, bytes | None]] = (),
    ) -> None: ...

    def texts(self, digests: list[str]) -> dict[str, str]: ...  # noqa: D102

    def messages(self, digests: list[bytes]) -> dict[bytes, tuple[str, bytes]]: ...  # noqa: D102

    def chain(self, digest: bytes) -> list[Node]: ...  # noqa: D102

    def scan(self, table: str) -> Iterator[tuple[Any, ...]]: ...  # noqa: D102

    def ages(self, table: str) -> Iterator[tuple[Any, float]]: ...  # noqa: D102

    def delete(self, table: str, digests: list[Any]) -> None: ...  # noqa: D102


class PartsDB:
    """One ``parts.sqlite``, opened on first use and shared by the threads of a process."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def _connect(self, create: bool) -> sqlite3.Connection | None:
        if self._conn is not None:
            return self._conn
        if not create and not self.path.exists():
            return None
        base, rel = split_owned(self.path)  # Jarvis' own: private, through no planted link
        owned_file(base, rel)
        conn = sqlite3.connect(str(self.path), timeout=30, check_same_thread=False)

        def setup() -> None:
            # 16 KB pages: a large text is read in a few pages, with little space left unused
            conn.execute("PRAGMA page_size=16384")
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            # restoring a long session reads every large text: mapped, not copied page by page
            conn.execute(f"PRAGMA mmap_size={MMAP_BYTES}")
            conn.executescript(_SCHEMA)
            for table in TABLES:  # stores written by earlier versions
                names = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
                for column in (*_COLUMNS[table], "added"):
                    if column not in names:
                        kind = _ADDED_LATER[column]
                        conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")

        try:
            retry_locked(setup)
        except sqlite3.Error as exc:
            conn.close()
            msg = (
                f"cannot open {self.path} ({exc}): it holds the messages of this project's "
                "sessions; restore it from a backup, or move it away together with "
                "sessions.sqlite to start with no sessions"
            )
            raise CheckpointError(msg) from exc
        self._conn = conn
        return conn

    def close(self) -> None:
        """Close the connection (it is opened again on next use)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def add(
        self,
        texts: Iterable[tuple[str, str]] = (),
        messages: Iterable[tuple[bytes, str, bytes]] = (),
        lists: Iterable[tuple[bytes, bytes | None, bytes, bytes | None]] = (),
    ) -> None:
        """Store new rows in one transaction (rows already there are kept as they are)."""
        texts, messages, lists = list(texts), list(messages), list(lists)
        if not (texts or messages or lists):
            return
        with self._lock:
            conn = self._connect(create=True)
            assert conn is not None
            with conn:
                now = time.time()
                tables: tuple[list[tuple[Any, ...]], ...] = (texts, messages, lists)
                for table, rows in zip(TABLES, tables, strict=True):
                    if rows:
                        conn.executemany(_upsert(table, table, "?"), [(*r, now) for r in rows])

    def texts(self, digests: list[str]) -> dict[str, str]:
        """The stored texts among ``digests``."""
        return dict(self._select("SELECT digest, body FROM texts WHERE digest IN ", digests))

    def messages(self, digests: list[bytes]) -> dict[bytes, tuple[str, bytes]]:
        """``digest -> (kind, data)`` of the stored messages among ``digests``."""
        rows = self._select("SELECT digest, kind, data FROM messages WHERE digest IN ", digests)
        return {bytes(row[0]): (str(row[1]), bytes(row[2])) for row in rows}

    def chain(self, digest: bytes) -> list[Node]:
        """The nodes of the list ``digest``, oldest first: their items make the list.

        Raises:
            MissingPartError: The list, or a list it extends, is not stored.
        """
        with self._lock:
            conn = self._connect(create=False)
            rows = conn.execute(_CHAIN, (digest,)).fetchall() if conn is not None else []
        return _nodes(rows, self.path)

    def scan(self, table: str) -> Iterator[tuple[Any, ...]]:
        """Every row of ``table`` (its columns but ``packed``, then ``added``), in one pass."""
        yield from self._all(f"SELECT {', '.join(_scanned(table))}, added FROM {table}")  # noqa: S608

    def ages(self, table: str) -> Iterator[tuple[Any, float]]:
        """``(digest, added)`` of every row of ``table``."""
        yield from self._all(f"SELECT digest, added FROM {table}")  # noqa: S608

    def _all(self, query: str) -> list[Any]:
        with self._lock:
            conn = self._connect(create=False)
            return conn.execute(query).fetchall() if conn is not None else []

    def delete(self, table: str, digests: list[Any]) -> None:
        """Delete the rows of ``table`` keyed by ``digests``, in one transaction."""
        with self._lock:
            conn = self._connect(create=False)
            if conn is None or not digests:
                return
            with conn:
                conn.executemany(
                    f"DELETE FROM {table} WHERE digest = ?",  # noqa: S608
                    [(d,) for d in digests],
                )

    def _select(self, query: str, keys: list[str] | list[bytes]) -> list[Any]:
        unique = list(dict.fromkeys(keys))
        rows: list[Any] = []
        with self._lock:
            conn = self._connect(create=False)
            if conn is None:
                return rows
            for start in range(0, len(unique), _BATCH):
                part = unique[start : start + _BATCH]
                marks = ",".join("?" * len(part))
                rows += conn.execute(f"{query}({marks})", part).fetchall()  # noqa: S608
        return rows


_PG_SCHEMA = """
CREATE TABLE IF NOT EXISTS jarvis_texts (
    digest TEXT PRIMARY KEY, body BYTEA NOT NULL, added DOUBLE PRECISION NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS jarvis_messages (
    digest BYTEA PRIMARY KEY, kind TEXT NOT NULL, data BYTEA NOT NULL,
    added DOUBLE PRECISION NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS jarvis_lists (
    digest BYTEA PRIMARY KEY, parent BYTEA, items BYTEA NOT NULL,
    added DOUBLE PRECISION NOT NULL DEFAULT 0, packed BYTEA
);
"""
_PG_PACKED = """
SELECT 1 FROM information_schema.columns
WHERE table_schema = current_schema() AND table_name = 'jarvis_lists' AND column_name = 'packed'
"""

_PG_CHAIN = _CHAIN.replace("FROM lists", "FROM jarvis_lists").replace("= ?", "= %s")


class PostgresParts:
    """The parts of compact checkpoints in the PostgreSQL database of the sessions.

    The tables of :class:`PartsDB`, prefixed ``jarvis_``; a text is kept as its UTF-8
    bytes (PostgreSQL text cannot hold NUL). Every worker sharing the database shares them.
    Each call takes its own connection from the pool, never the one the saver is writing
    a checkpoint on: the rows a checkpoint refers to are committed before it.

    Args:
        pool: A ``psycopg_pool.ConnectionPool`` of autocommit connections.
        where: How the database is named in messages (its URL without credentials).
    """

    def __init__(self, pool: Any, where: str) -> None:
        self.pool = pool
        self.path = where

    def close(self) -> None:
        """Nothing to close: the pool belongs to the saver."""

    def setup(self) -> None:
        """Create the tables (every statement is idempotent)."""
        with self._cursor() as cur:
            cur.execute(_PG_SCHEMA)
            if cur.execute(_PG_PACKED).fetchone() is None:  # a store of an earlier version
                cur.execute("ALTER TABLE jarvis_lists ADD COLUMN IF NOT EXISTS packed BYTEA")

    def add(
        self,
        texts: Iterable[tuple[str, str]] = (),
        messages: Iterable[tuple[bytes, str, bytes]] = (),
        lists: Iterable[tuple[bytes, bytes | None, bytes, bytes | None]] = (),
    ) -> None:
        """Store new rows in one transaction (rows already there are kept as they are)."""
        now = time.time()
        encoded = [(d, t.encode("utf-8", "surrogatepass")) for d, t in texts]
        tables: list[tuple[str, list[tuple[Any, ...]]]] = [
            ("texts", encoded),
            ("messages", list(messages)),
            ("lists", list(lists)),
        ]
        if not any(rows for _, rows in tables):
            return
        with self._cursor(transaction=True) as cur:
            for table, rows in tables:
                if rows:
                    sql = _upsert(table, f"jarvis_{table}", "%s")
                    cur.executemany(sql, [(*r, now) for r in rows])

    def scan(self, table: str) -> Iterator[tuple[Any, ...]]:
        """Every row of ``table`` (its columns but ``packed``, then ``added``), streamed."""
        columns = ", ".join(_scanned(table))
        with self._cursor() as cur:
            cur.execute(f"SELECT {columns}, added FROM jarvis_{table}")  # noqa: S608
            for row in cur:
                yield tuple(bytes(v) if isinstance(v, memoryview) else v for v in row)

    def ages(self, table: str) -> Iterator[tuple[Any, float]]:
        """``(digest, added)`` of every row of ``table``."""
        with self._cursor() as cur:
            cur.execute(f"SELECT digest, added FROM jarvis_{table}")  # noqa: S608
            for digest, added in cur:
                yield (bytes(digest) if isinstance(digest, memoryview) else digest), float(added)

    def delete(self, table: str, digests: list[Any]) -> None:
        """Delete the rows of ``table`` keyed by ``digests``, in one transaction."""
        if not digests:
            return
        with self._cursor(transaction=True) as cur:
            cur.execute(f"DELETE FROM jarvis_{table} WHERE digest = ANY(%s)", (digests,))  # noqa: S608

    def texts(self, digests: list[str]) -> dict[str, str]:
        """The stored texts among ``digests``."""
        rows = self._select("SELECT digest, body FROM jarvis_texts", digests)
        return {str(d): bytes(b).decode("utf-8", "surrogatepass") for d, b in rows}

    def messages(self, digests: list[bytes]) -> dict[bytes, tuple[str, bytes]]:
        """``digest -> (kind, data)`` of the stored messages among ``digests``."""
        rows = self._select("SELECT digest, kind, data FROM jarvis_messages", digests)
        return {bytes(d): (str(k), bytes(v)) for d, k, v in rows}

    def chain(self, digest: bytes) -> list[Node]:
        """The nodes of the list ``digest``, oldest first (see :meth:`PartsDB.chain`)."""
        with self._cursor() as cur:
            cur.execute(_PG_CHAIN, (digest,))
            rows = cur.fetchall()
        return _nodes(rows, self.path)

    def _select(self, query: str, keys: list[str] | list[bytes]) -> list[Any]:
        unique = list(dict.fromkeys(keys))
        if not unique:
            return []
        with self._cursor() as cur:
            cur.execute(f"{query} WHERE digest = ANY(%s)", (unique,))
            return cur.fetchall()

    @contextmanager
    def _cursor(self, transaction: bool = False) -> Iterator[Any]:
        from psycopg.rows import tuple_row

        with self.pool.connection() as conn:
            if transaction:
                with conn.transaction(), conn.cursor(row_factory=tuple_row) as cur:
                    yield cur
            else:
                with conn.cursor(row_factory=tuple_row) as cur:
                    yield cur
