"""The SQLite side of FaissStore: the schema, texts to embed, and writing a batch of puts.

Tables: ``items`` (one row per record; its rowid is the insertion order), ``namespaces``
(order of first write), ``vectors`` (float32 blobs, one per embedded field, with the
sequence number of the batch that wrote them) and ``tombstones`` (ids of removed
vectors, so stale FAISS indexes can be caught up).
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from typing import Any

from langgraph.store.base import PutOp, get_text_at_path, tokenize_path

from jarvis_graph.memory.index_cache import Changes

Key = tuple[tuple[str, ...], str]
"""(namespace, key) of a record."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS namespaces (ns TEXT PRIMARY KEY, pos INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS items (
    ns TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL, PRIMARY KEY (ns, key));
CREATE TABLE IF NOT EXISTS vectors (
    vid INTEGER PRIMARY KEY AUTOINCREMENT, ns TEXT NOT NULL, key TEXT NOT NULL,
    path TEXT NOT NULL, seq INTEGER NOT NULL, vec BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS vectors_item ON vectors (ns, key);
CREATE INDEX IF NOT EXISTS vectors_seq ON vectors (ns, seq);
CREATE TABLE IF NOT EXISTS tombstones (
    vid INTEGER NOT NULL, ns TEXT NOT NULL, seq INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS tombstones_seq ON tombstones (ns, seq);
INSERT OR IGNORE INTO meta VALUES ('seq', '0');
"""


def ns_text(namespace: tuple[str, ...]) -> str:
    """A namespace as stored: labels joined by ``.`` (labels cannot contain one)."""
    return ".".join(namespace)


def texts_to_embed(
    puts: dict[Key, PutOp], fields: list[tuple[str, Any]]
) -> dict[str, list[tuple[Key, str]]]:
    """Texts to embed -> the (record, field path) pairs they belong to, as InMemoryStore does.

    A field holding several texts (``notes[*]``) gets one vector per text, at ``path.n``.
    """
    to_embed: dict[str, list[tuple[Key, str]]] = defaultdict(list)
    for (namespace, key), op in puts.items():
        if op.value is None or op.index is False:
            continue
        paths = fields if op.index is None else [(p, tokenize_path(p)) for p in op.index]
        for path, field in paths:
            texts = get_text_at_path(op.value, field)
            if len(texts) > 1:
                for n, text in enumerate(texts):
                    to_embed[text].append(((namespace, key), f"{path}.{n}"))
            elif texts:
                to_embed[texts[0]].append(((namespace, key), path))
    return to_embed


def write_puts(
    conn: sqlite3.Connection,
    encoded: dict[Key, str | None],
    vectors: dict[Key, list[tuple[str, bytes]]],
    seq: int,
    now: str,
) -> Changes:
    """Write a batch of puts (``None``: delete) inside the caller's transaction.

    Returns:
        Per namespace, the vector ids removed and the vectors added.
    """
    changes: Changes = defaultdict(lambda: ([], []))
    for (namespace, key), value in encoded.items():
        ns = ns_text(namespace)
        removed, added = changes[ns]
        old = [
            r[0]
            for r in conn.execute("SELECT vid FROM vectors WHERE ns = ? AND key = ?", (ns, key))
        ]
        if old:
            conn.execute("DELETE FROM vectors WHERE ns = ? AND key = ?", (ns, key))
            conn.executemany("INSERT INTO tombstones VALUES (?, ?, ?)", [(v, ns, seq) for v in old])
            removed.extend(old)
        if value is None:
            conn.execute("DELETE FROM items WHERE ns = ? AND key = ?", (ns, key))
            continue
        conn.execute(
            "INSERT OR IGNORE INTO namespaces VALUES "
            "(?, (SELECT COALESCE(MAX(pos), 0) + 1 FROM namespaces))",
            (ns,),
        )
        # An update keeps its row (and so its place in the order) and, as in
        # InMemoryStore, sets both timestamps.
        conn.execute(
            "INSERT INTO items VALUES (?, ?, ?, ?, ?) ON CONFLICT (ns, key) DO UPDATE SET "
            "value = excluded.value, created_at = excluded.created_at, "
            "updated_at = excluded.updated_at",
            (ns, key, value, now, now),
        )
        for path, blob in vectors.get((namespace, key), []):
            cur = conn.execute(
                "INSERT INTO vectors (ns, key, path, seq, vec) VALUES (?, ?, ?, ?, ?)",
                (ns, key, path, seq, blob),
            )
            added.append((int(cur.lastrowid or 0), blob))
    return changes
