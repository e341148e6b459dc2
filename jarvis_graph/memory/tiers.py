"""The three memory tiers over one LangGraph store (by default the run's store).

Each tier is a namespace of that store; the memory store
(:class:`jarvis_graph.memory.router.MemoryStore`) routes them to the process-wide
backends of :mod:`jarvis_graph.memory.backends`:

- ``("short_term", <thread>)``: one ``InMemoryStore`` per process;
- ``("project_long_term", <workspace>)``: a :class:`FaissStore` in
  ``<project>/.jarvis/memory/``;
- ``("global_long_term",)``: a :class:`FaissStore` in ``~/.jarvis/memory/global_long_term/``.

Labels are encoded by :func:`namespace_label`.

Retrieval combines tag filters (a record matches when it has any of the tags), semantic
similarity of the content to the query, and recency.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from langgraph.store.base import BaseStore, PutOp

from jarvis_graph.memory.backends import close_stores, open_store, short_term_store
from jarvis_graph.memory.records import LONG_TERM_TYPES, MEMORY_TYPES, check_type, clean_tags
from jarvis_graph.memory.router import (
    global_memory_dir,
    namespace_label,
    project_memory_dir,
    run_store,
    workspace_namespace,
)

__all__ = [
    "Hit",
    "MemoryTiers",
    "close_stores",
    "global_memory_dir",
    "memory_prompt",
    "namespace_label",
    "open_store",
    "project_memory_dir",
    "short_term_store",
]

RECENCY_HALF_LIFE_DAYS = 30.0
SIMILARITY_WEIGHT = 0.8
"""Weight of similarity in a query's ranking; recency has the rest."""
SCAN_LIMIT = 100_000
"""Records read per tier when a request goes through them all (tags without a query)."""


@dataclass(frozen=True)
class Hit:
    """A retrieved record and its combined score (``None``: no query was given)."""

    record: dict[str, Any]
    score: float | None


class MemoryTiers:
    """Save, retrieve and clear memories of one workspace and thread.

    Args:
        workspace: The project folder.
        thread_id: The session whose short-term memories these are.
        store: The store of the tiers; the run's store by default, else the memory store
            (:func:`jarvis_graph.memory.router.run_store`).
    """

    def __init__(
        self, workspace: Path, thread_id: str = "default", store: BaseStore | None = None
    ) -> None:
        self.workspace = workspace
        self.thread_id = thread_id
        self.store = store if store is not None else run_store()

    def namespace(self, memory_type: str) -> tuple[str, ...]:
        """The namespace of a tier in :attr:`store`."""
        check_type(memory_type)
        if memory_type == "short_term":
            return ("short_term", namespace_label(self.thread_id))
        if memory_type == "project_long_term":
            return workspace_namespace(self.workspace)
        return (memory_type,)

    def save(self, records: list[dict[str, Any]]) -> None:
        """Store records (validated by :mod:`records`); an existing id is replaced."""
        self.store.batch([PutOp(self.namespace(r["type"]), r["id"], r) for r in records])

    def records(
        self, memory_types: list[str] | None = None, tags: list[str] | None = None
    ) -> list[dict[str, Any]]:
        """Every record of the tiers carrying any of ``tags`` (all when none), newest first."""
        wanted = set(clean_tags(tags))
        out: list[dict[str, Any]] = []
        for memory_type in memory_types or list(MEMORY_TYPES):
            for item in self.store.search(self.namespace(memory_type), limit=SCAN_LIMIT):
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
            ns = self.namespace(memory_type)
            for item in self.store.search(ns, query=query, limit=fetch):
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
        self.store.batch(
            [PutOp(self.namespace(t), key, None) for t, keys in by_type.items() for key in keys]
        )
        return targets

    def known_tags(self) -> Counter[str]:
        """How often each tag occurs in the long-term records."""
        counts: Counter[str] = Counter()
        for rec in self.records(list(LONG_TERM_TYPES)):
            counts.update(rec.get("tags", []))
        return counts


MAX_PROMPT_TAGS = 40


def memory_prompt(workspace: Path, store: BaseStore | None = None) -> str:
    """The system prompt's lines on memory: the tiers and the tags saved so far."""
    tags = MemoryTiers(workspace, store=store).known_tags()
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
