"""Housekeeping of a session store: old sessions, old checkpoints, orphan parts, VACUUM.

- **Old sessions**: a session whose last checkpoint is older than ``older_than`` seconds
  is deleted (all namespaces, all writes).
- **Old checkpoints**: in a *finished* session (nothing left to run, no question
  waiting), only the last ``keep_last`` checkpoints of the main run are kept; their
  sub-runs stay. History before them is gone, so is forking from it.
- **Orphan parts**: the texts, messages and message lists of compact checkpoints
  (:mod:`jarvis_graph.checkpoint_parts`) that no checkpoint or pending write refers to
  any more, and older than ``grace`` seconds, are deleted; so are blob files of earlier
  versions. A part is refreshed whenever a checkpoint is about to refer to it, so the
  grace period covers a run writing while the collection runs.
- **VACUUM**: a SQLite store (both files) is rewritten to give the space back.

A session held by a run (the per-thread lock) is left alone and reported busy.
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from jarvis_graph.checkpoint_parts import DIGEST_BYTES, TABLES, CheckpointError, Parts
from jarvis_graph.checkpointing import list_threads
from jarvis_graph.thread_lock import ThreadBusyError, hold_thread

GRACE = 3600.0
"""Seconds an unreferenced part is kept (a run may be about to refer to it)."""

_LIST_REF = re.compile(rb"(?:\x00|\\u0000)jarvis-list:([0-9a-f]{%d})" % (2 * DIGEST_BYTES))
_TEXT_REF = re.compile(rb"(?:\x00|\\u0000)jarvis-blob:([0-9a-f]{64})")
_KEY = "thread_id, checkpoint_ns, checkpoint_id"
"""The columns naming the checkpoint a row of the checkpoints or writes table belongs to."""


@dataclass
class PruneReport:
    """What a prune removed (or would remove, on a dry run)."""

    sessions: list[str] = field(default_factory=list)
    checkpoints: int = 0
    parts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TABLES, 0))
    files: int = 0
    busy: list[str] = field(default_factory=list)
    freed: int = 0
    """Bytes of data in what goes (rows and files); a dry run's estimate of the space freed."""
    bytes_before: int | None = None
    bytes_after: int | None = None


def parse_duration(text: str) -> float:
    """``"30d"``, ``"12h"``, ``"90m"``, ``"45s"`` (or plain seconds) in seconds.

    Raises:
        ValueError: Not a duration.
    """
    found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*", text)
    if not found:
        msg = f"{text!r} is not a duration; write it as 30d, 12h, 90m or 45s"
        raise ValueError(msg)
    unit = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}[found.group(2)]
    return float(found.group(1)) * unit


def prune(
    saver: Any,
    *,
    older_than: float | None = None,
    keep_last: int | None = None,
    finished: Callable[[str], bool] = lambda _thread: False,
    grace: float = GRACE,
    dry_run: bool = False,
    now: float | None = None,
) -> PruneReport:
    """Prune ``saver``'s store (see the module docstring).

    ``finished(thread)`` tells whether a session has nothing left to run.

    Raises:
        CheckpointError: The store cannot be read or written.
    """
    if keep_last is not None and keep_last < 1:
        msg = "--keep-last must be at least 1 (the last checkpoint is the session)"
        raise CheckpointError(msg)
    store = _Store.of(saver)
    now = time.time() if now is None else now
    report = PruneReport(bytes_before=store.size())
    dropped: dict[str, list[str] | None] = {}  # thread -> its checkpoints that go (None: all)
    for row in list_threads(saver):
        thread = row.thread_id
        old = older_than is not None and now - store.last_time(thread) > older_than
        trim = not old and keep_last is not None and row.checkpoints > keep_last
        if not (old or (trim and finished(thread))):
            continue
        try:
            with hold_thread(saver, thread):
                dropped[thread] = _drop(store, thread, None if old else keep_last, dry_run, report)
        except ThreadBusyError:
            report.busy.append(thread)
    # a dry run keeps what it would drop: the parts only that refers to count as orphans
    _collect(store, now - grace, dry_run, report, dropped if dry_run else {})
    if not dry_run:
        store.vacuum()
    report.bytes_after = store.size()
    return report


def _drop(
    store: _Store, thread: str, keep: int | None, dry_run: bool, report: PruneReport
) -> list[str] | None:
    """Delete ``thread`` (``keep`` None) or all but its last ``keep`` checkpoints.

    Returns:
        The ids of the checkpoints that go, ``None`` when the whole session does.
    """
    if keep is None:
        report.sessions.append(thread)
        report.checkpoints += store.count(thread)
        report.freed += store.row_bytes(thread)
        if not dry_run:
            store.saver.delete_thread(thread)
        return None
    gone = store.root_checkpoints(thread)[keep:]
    report.checkpoints += len(gone)
    if gone:
        report.freed += store.row_bytes(thread, gone)
        if not dry_run:
            store.delete_checkpoints(thread, gone)
    return gone


def _collect(
    store: _Store,
    before: float,
    dry_run: bool,
    report: PruneReport,
    dropped: dict[str, list[str] | None],
) -> None:
    """Mark the parts the checkpoints refer to, then sweep the others older than ``before``.

    Checkpoints in ``dropped`` (thread -> ids, ``None`` for all) do not count as referring.
    """
    parts = store.parts
    if parts is None:
        return
    lists_used: set[bytes] = set()
    texts_used: set[str] = set()
    for blob in store.serialized(dropped):
        lists_used.update(bytes.fromhex(m.decode()) for m in _LIST_REF.findall(blob))
        texts_used.update(m.decode() for m in _TEXT_REF.findall(blob))
    lists = {row[0]: row for row in parts.scan("lists")}
    messages_used: set[bytes] = set()
    todo = list(lists_used)
    while todo:  # a list extends its parent: keep the whole chain
        node = lists.get(todo.pop())
        if node is None:
            continue
        items = node[2]
        messages_used.update(
            items[i : i + DIGEST_BYTES] for i in range(0, len(items), DIGEST_BYTES)
        )
        parent = node[1]
        if parent is not None and parent not in lists_used:
            lists_used.add(parent)
            todo.append(parent)
    doomed: dict[str, list[Any]] = {}
    old_messages = []
    for digest, _kind, data, added in parts.scan("messages"):
        if digest in messages_used:
            texts_used.update(m.decode() for m in _TEXT_REF.findall(data))
        elif added < before:
            old_messages.append(digest)
            report.freed += len(data)
    doomed["messages"] = old_messages
    doomed["lists"] = [d for d, row in lists.items() if d not in lists_used and row[-1] < before]
    doomed["texts"] = [
        digest
        for digest, added in parts.ages("texts")
        if digest not in texts_used and added < before
    ]
    report.freed += sum(len(lists[d][2]) for d in doomed["lists"])
    report.freed += sum(len(body.encode()) for body in parts.texts(doomed["texts"]).values())
    for table in TABLES:
        report.parts[table] = len(doomed[table])
        if not dry_run:
            parts.delete(table, doomed[table])
    report.files, files_bytes = store.sweep_files(texts_used, before, dry_run)
    report.freed += files_bytes


class _Store:
    """The store-specific side of a prune: SQLite file or PostgreSQL database."""

    def __init__(self, saver: Any) -> None:
        self.saver = saver
        serde = getattr(saver, "serde", None)
        self.parts: Parts | None = getattr(serde, "parts", None)
        self.folder: Path | None = getattr(serde, "folder", None)

    @classmethod
    def of(cls, saver: Any) -> _Store:
        conn = getattr(saver, "conn", None)
        if isinstance(conn, sqlite3.Connection):
            return _SqliteStore(saver)
        if conn is not None and hasattr(conn, "getconn"):
            return _PostgresStore(saver)
        msg = "sessions prune works on the project's SQLite or PostgreSQL session store"
        raise CheckpointError(msg)

    def last_time(self, thread: str) -> float:
        """When the last checkpoint of ``thread`` was written (seconds since the epoch)."""
        tup = self.saver.get_tuple({"configurable": {"thread_id": thread, "checkpoint_ns": ""}})
        if tup is None:
            return 0.0
        return datetime.fromisoformat(tup.checkpoint["ts"]).astimezone(UTC).timestamp()

    def count(self, thread: str) -> int:  # noqa: D102
        raise NotImplementedError

    def row_bytes(self, thread: str, ids: list[str] | None = None) -> int:
        """Bytes of the checkpoints and writes of ``thread`` (only main-run ``ids`` if given)."""
        raise NotImplementedError

    def root_checkpoints(self, thread: str) -> list[str]:
        """The checkpoint ids of the main run of ``thread``, newest first."""
        raise NotImplementedError

    def delete_checkpoints(self, thread: str, ids: list[str]) -> None:  # noqa: D102
        raise NotImplementedError

    def serialized(self, dropped: dict[str, list[str] | None]) -> Iterable[bytes]:
        """The stored checkpoints and writes, except those of ``dropped`` (see ``_collect``)."""
        raise NotImplementedError

    def size(self) -> int | None:  # noqa: D102
        return None

    def vacuum(self) -> None:  # noqa: D102
        return None

    def sweep_files(self, texts_used: set[str], before: float, dry_run: bool) -> tuple[int, int]:
        """Blob files of earlier versions (``<blobs>/<2 hex>/<sha256>.z``) no one uses.

        Returns:
            How many files went (or would go) and their bytes.
        """
        if self.folder is None or not self.folder.is_dir():
            return 0, 0
        count = size = 0
        for path in self.folder.glob("??/*.z"):
            stat = path.stat()
            if path.stem in texts_used or stat.st_mtime >= before:
                continue
            count += 1
            size += stat.st_size
            if not dry_run:
                path.unlink(missing_ok=True)
        return count, size


class _SqliteStore(_Store):
    def _rows(self, sql: str, *params: Any) -> list[Any]:
        with self.saver.lock:
            return list(self.saver.conn.execute(sql, params).fetchall())

    def _write(self, statements: list[tuple[str, tuple[Any, ...]]]) -> None:
        with self.saver.lock, self.saver.conn:
            for sql, params in statements:
                self.saver.conn.execute(sql, params)

    def count(self, thread: str) -> int:
        return int(self._rows("SELECT COUNT(*) FROM checkpoints WHERE thread_id = ?", thread)[0][0])

    def root_checkpoints(self, thread: str) -> list[str]:
        return [
            r[0]
            for r in self._rows(
                "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' "
                "ORDER BY checkpoint_id DESC",
                thread,
            )
        ]

    def row_bytes(self, thread: str, ids: list[str] | None = None) -> int:
        where, params = "thread_id = ?", [thread]
        if ids is not None:
            where += f" AND checkpoint_ns = '' AND checkpoint_id IN ({','.join('?' * len(ids))})"
            params += ids
        sizes = "SELECT COALESCE(SUM(LENGTH(checkpoint) + LENGTH(metadata)), 0) FROM checkpoints"
        writes = "SELECT COALESCE(SUM(LENGTH(value)), 0) FROM writes"
        return sum(
            int(self._rows(f"{sql} WHERE {where}", *params)[0][0])  # noqa: S608
            for sql in (sizes, writes)
        )

    def delete_checkpoints(self, thread: str, ids: list[str]) -> None:
        marks = ",".join("?" * len(ids))
        where = f"thread_id = ? AND checkpoint_ns = '' AND checkpoint_id IN ({marks})"
        self._write(
            [
                (f"DELETE FROM writes WHERE {where}", (thread, *ids)),  # noqa: S608
                (f"DELETE FROM checkpoints WHERE {where}", (thread, *ids)),  # noqa: S608
            ]
        )

    def serialized(self, dropped: dict[str, list[str] | None]) -> Iterable[bytes]:
        for table, column in (("checkpoints", "checkpoint"), ("writes", "value")):
            sql = f"SELECT {_KEY}, {column} FROM {table}"  # noqa: S608
            for thread, ns, checkpoint, blob in self._rows(sql):
                if not _dropped(dropped, thread, ns, checkpoint):
                    yield bytes(blob or b"")

    def _files(self) -> list[Path]:
        main = next(
            (Path(r[2]) for r in self._rows("PRAGMA database_list") if r[1] == "main"), None
        )
        files = [main] if main else []
        if self.parts is not None:
            files.append(Path(self.parts.path))
        return files

    def size(self) -> int:
        total = 0
        for path in self._files():
            for part in (path, Path(f"{path}-wal")):
                total += part.stat().st_size if part.exists() else 0
        return total

    def vacuum(self) -> None:
        with self.saver.lock:
            self.saver.conn.execute("VACUUM")
            self.saver.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        if self.parts is not None and Path(self.parts.path).exists():
            conn = sqlite3.connect(str(self.parts.path), timeout=30)
            try:
                conn.execute("VACUUM")
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            finally:
                conn.close()


class _PostgresStore(_Store):
    def _rows(self, sql: str, *params: Any) -> list[Any]:
        with self.saver.conn.connection() as conn, conn.cursor() as cur:
            cur.execute(sql, params)
            return [tuple(r.values()) if isinstance(r, dict) else r for r in cur.fetchall()]

    def count(self, thread: str) -> int:
        return int(
            self._rows("SELECT COUNT(*) FROM checkpoints WHERE thread_id = %s", thread)[0][0]
        )

    def root_checkpoints(self, thread: str) -> list[str]:
        return [
            r[0]
            for r in self._rows(
                "SELECT checkpoint_id FROM checkpoints WHERE thread_id = %s AND checkpoint_ns = '' "
                "ORDER BY checkpoint_id DESC",
                thread,
            )
        ]

    def row_bytes(self, thread: str, ids: list[str] | None = None) -> int:
        where = "thread_id = %s"
        params: list[Any] = [thread]
        if ids is not None:
            where += " AND checkpoint_ns = '' AND checkpoint_id = ANY(%s)"
            params.append(ids)
        queries = [
            "SELECT COALESCE(SUM(pg_column_size(checkpoint) + pg_column_size(metadata)), 0) "
            "FROM checkpoints",
            "SELECT COALESCE(SUM(octet_length(blob)), 0) FROM checkpoint_writes",
        ]
        if ids is None:  # a trim keeps the values its kept checkpoints still refer to
            queries.append("SELECT COALESCE(SUM(octet_length(blob)), 0) FROM checkpoint_blobs")
        return sum(
            int(self._rows(f"{sql} WHERE {where}", *params)[0][0])  # noqa: S608
            for sql in queries
        )

    def delete_checkpoints(self, thread: str, ids: list[str]) -> None:
        where = "thread_id = %s AND checkpoint_ns = '' AND checkpoint_id = ANY(%s)"
        with self.saver.conn.connection() as conn, conn.transaction():
            conn.execute(f"DELETE FROM checkpoint_writes WHERE {where}", (thread, ids))  # noqa: S608
            conn.execute(f"DELETE FROM checkpoints WHERE {where}", (thread, ids))  # noqa: S608
            # channel values no kept checkpoint of the thread refers to
            conn.execute(
                "DELETE FROM checkpoint_blobs AS b WHERE b.thread_id = %s AND NOT EXISTS ("
                "SELECT 1 FROM checkpoints AS c WHERE c.thread_id = b.thread_id "
                "AND c.checkpoint_ns = b.checkpoint_ns "
                "AND c.checkpoint -> 'channel_versions' ->> b.channel = b.version)",
                (thread,),
            )

    def serialized(self, dropped: dict[str, list[str] | None]) -> Iterable[bytes]:
        # Channel values are the thread's, not one checkpoint's: those of a dropped thread
        # are left out; those a trim would drop still count (a dry run's estimate is low).
        sql = "SELECT thread_id, blob FROM checkpoint_blobs WHERE blob IS NOT NULL"
        for thread, blob in self._rows(sql):
            if dropped.get(thread, []) is not None:
                yield bytes(blob)
        for table, column in (("checkpoint_writes", "blob"), ("checkpoints", "checkpoint::text")):
            sql = f"SELECT {_KEY}, {column} FROM {table}"  # noqa: S608
            for thread, ns, checkpoint, value in self._rows(sql):
                if not _dropped(dropped, thread, ns, checkpoint):
                    yield value.encode() if isinstance(value, str) else bytes(value)


def _dropped(dropped: dict[str, list[str] | None], thread: str, ns: str, checkpoint: str) -> bool:
    """Whether a row of checkpoint ``checkpoint`` (namespace ``ns``) of ``thread`` goes."""
    if thread not in dropped:
        return False
    ids = dropped[thread]
    return ids is None or (ns == "" and checkpoint in ids)
