"""The three memory tiers over LangGraph stores.

- ``short_term``: one ``InMemoryStore`` per process, namespace ``("short_term", thread)``
  (the thread id encoded by :func:`namespace_label`).
- ``project_long_term``: a :class:`FaissStore` in ``<project>/.jarvis/memory/``.
- ``global_long_term``: a :class:`FaissStore` in ``~/.jarvis/memory/global_long_term/``.

Retrieval combines tag filters (a record matches when it has any of the tags), semantic
similarity of the content to the query, and recency.
"""

from __future__ import annotations

import atexit
import threading
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from langgraph.store.base import BaseStore, IndexConfig, PutOp
from langgraph.store.memory import InMemoryStore

from jarvis_graph.config import jarvis_home
from jarvis_graph.memory.embedder import MINILM_DIMS, default_embedder
from jarvis_graph.memory.records import LONG_TERM_TYPES, MEMORY_TYPES, check_type, clean_tags
from jarvis_graph.memory.store import FaissStore

RECENCY_HALF_LIFE_DAYS = 30.0
SIMILARITY_WEIGHT = 0.8
"""Weight of similarity in a query's ranking; recency has the rest."""
SCAN_LIMIT = 100_000
"""Records read per tier when a request goes through them all (tags without a query)."""


def namespace_label(name: str) -> str:
    """``name`` (a folder name, a thread id: user input) as a store namespace label.

    LangGraph's stores join labels with ``.`` and refuse labels holding one, so ``.`` and
    the escape character ``%`` are percent-encoded: reversible, and every name without
    them (most) is its own label, as before.
    """
    return name.replace("%", "%25").replace(".", "%2E") or "%"


def project_memory_dir(workspace: Path) -> Path:
    """Where a project's long-term memory is stored."""
    return workspace / ".jarvis" / "memory"


def global_memory_dir() -> Path:
    """Where the user's global long-term memory is stored."""
    return jarvis_home() / "memory" / "global_long_term"


def _index() -> IndexConfig:
    return {"dims": MINILM_DIMS, "embed": default_embedder(), "fields": ["content"]}


_stores: dict[Path, FaissStore] = {}
_short_term: InMemoryStore | None = None
_stores_lock = threading.Lock()


def open_store(folder: Path) -> FaissStore:
    """The process-wide :class:`FaissStore` of ``folder`` (opened on first use)."""
    key = folder.resolve()
    with _stores_lock:
        store = _stores.get(key)
        if store is None:
            store = _stores[key] = FaissStore(key, index=_index())
        return store


def short_term_store() -> InMemoryStore:
    """The process-wide store of short-term memories."""
    global _short_term
    with _stores_lock:
        if _short_term is None:
            _short_term = InMemoryStore(index=_index())
        return _short_term


@atexit.register
def close_stores() -> None:
    """Close every open long-term store and forget short-term memories (tests, exit)."""
    global _short_term
    with _stores_lock:
        for store in _stores.values():
            store.close()
        _stores.clear()
        _short_term = None


@dataclass(frozen=True)
class Hit:
    """A retrieved record and its combined score (``None``: no query was given)."""

    record: dict[str, Any]
    score: float | None


class MemoryTiers:
    """Save, retrieve and clear memories of one workspace and thread."""

    def __init__(self, workspace: Path, thread_id: str = "default") -> None:
        self.workspace = workspace
        self.thread_id = thread_id

    def location(self, memory_type: str) -> tuple[BaseStore | None, tuple[str, ...]]:
        """The store and namespace of a tier (store ``None``: nothing saved there yet)."""
        check_type(memory_type)
        if memory_type == "short_term":
            return short_term_store(), ("short_term", namespace_label(self.thread_id))
        folder = (
            project_memory_dir(self.workspace)
            if memory_type == "project_long_term"
            else global_memory_dir()
        )
        if not (folder / "store.sqlite").is_file() and folder.resolve() not in _stores:
            return None, (memory_type,)
        return open_store(folder), (memory_type,)

    def _writable(self, memory_type: str) -> tuple[BaseStore, tuple[str, ...]]:
        store, ns = self.location(memory_type)
        if store is None:
            folder = (
                project_memory_dir(self.workspace)
                if memory_type == "project_long_term"
                else global_memory_dir()
            )
            store = open_store(folder)
        return store, ns

    def save(self, records: list[dict[str, Any]]) -> None:
        """Store records (validated by :mod:`records`); an existing id is replaced."""
        by_type: dict[str, list[dict[str, Any]]] = {}
        for rec in records:
            by_type.setdefault(check_type(rec["type"]), []).append(rec)
        for memory_type, recs in by_type.items():
            store, ns = self._writable(memory_type)
            store.batch([PutOp(ns, rec["id"], rec) for rec in recs])

    def records(
        self, memory_types: list[str] | None = None, tags: list[str] | None = None
    ) -> list[dict[str, Any]]:
        """Every record of the tiers carrying any of ``tags`` (all when none), newest first."""
        wanted = set(clean_tags(tags))
        out: list[dict[str, Any]] = []
        for memory_type in memory_types or list(MEMORY_TYPES):
            store, ns = self.location(memory_type)
            if store is None:
                continue
            for item in store.search(ns, limit=SCAN_LIMIT):
                if not wanted or wanted & set(item.value.get("tags", [])):
                    out.append(item.value)
        return sorted(out, key=lambda r: r.get("updated_at", ""), reverse=True)

    def retrieve(
        self,
        memory_types: list[str] | None = None,
        tags: list[str] | None = None,
        query: str | None = None,
        limit: int = 10,
    ) -> list[Hit]:
        """The best ``limit`` records for a query (or the newest, without one)."""
        if not query or not query.strip():
            return [Hit(r, None) for r in self.records(memory_types, tags)[:limit]]
        wanted = set(clean_tags(tags))
        fetch = SCAN_LIMIT if wanted else max(limit * 5, 50)
        hits: list[Hit] = []
        now = datetime.now(UTC)
        for memory_type in memory_types or list(MEMORY_TYPES):
            store, ns = self.location(memory_type)
            if store is None:
                continue
            for item in store.search(ns, query=query, limit=fetch):
                rec = item.value
                if wanted and not wanted & set(rec.get("tags", [])):
                    continue
                similarity = item.score if item.score is not None else 0.0
                score = SIMILARITY_WEIGHT * similarity + (1 - SIMILARITY_WEIGHT) * _recency(
                    rec, now
                )
                hits.append(Hit(rec, round(score, 4)))
        hits.sort(key=lambda h: h.score or 0.0, reverse=True)
        return hits[:limit]

    def clear(
        self,
        memory_types: list[str] | None = None,
        tags: list[str] | None = None,
        ids: list[str] | None = None,
    ) -> list[dict[str, Any]]:
        """Delete records by ids, or by tags within types; returns what was deleted."""
        targets = self.records(memory_types, None if ids else tags)
        if ids:
            targets = [r for r in targets if r["id"] in set(ids)]
        by_type: dict[str, list[str]] = {}
        for rec in targets:
            by_type.setdefault(rec["type"], []).append(rec["id"])
        for memory_type, keys in by_type.items():
            store, ns = self._writable(memory_type)
            store.batch([PutOp(ns, key, None) for key in keys])
        return targets

    def known_tags(self) -> Counter[str]:
        """How often each tag occurs in the long-term records."""
        counts: Counter[str] = Counter()
        for rec in self.records(list(LONG_TERM_TYPES)):
            counts.update(rec.get("tags", []))
        return counts


MAX_PROMPT_TAGS = 40


def memory_prompt(workspace: Path) -> str:
    """The system prompt's lines on memory: the tiers and the tags saved so far."""
    tags = MemoryTiers(workspace).known_tags()
    known = ", ".join(tag for tag, _ in tags.most_common(MAX_PROMPT_TAGS))
    more = f" (and {len(tags) - MAX_PROMPT_TAGS} more)" if len(tags) > MAX_PROMPT_TAGS else ""
    listing = f"Known memory tags: {known}{more}." if tags else "No memories are saved yet."
    return (
        "Memory: save_memory keeps facts for later (short_term: this session, "
        "project_long_term: this project, global_long_term: every project); retrieve_memory "
        f"finds them by query and tags. {listing}"
    )


def _recency(record: dict[str, Any], now: datetime) -> float:
    """1 for a record updated now, halving every ``RECENCY_HALF_LIFE_DAYS``."""
    try:
        updated = datetime.fromisoformat(str(record.get("updated_at")))
    except ValueError:
        return 0.0
    if updated.tzinfo is None:
        updated = updated.replace(tzinfo=UTC)
    days = max(0.0, (now - updated).total_seconds() / 86_400)
    return float(0.5 ** (days / RECENCY_HALF_LIFE_DAYS))
