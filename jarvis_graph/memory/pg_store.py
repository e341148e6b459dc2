"""Long-term memory on PostgreSQL: LangGraph's ``PostgresStore`` with a pgvector index.

With ``JARVIS_STORE_URL=postgresql://…`` the project and global tiers (and the project's
episodic archive) live in one PostgreSQL database that every worker shares, instead of
the FAISS stores on local disk; short-term memory stays in the process. Each local store
becomes a namespace prefix in the database (the router's ``PrefixedStore``), so the memory
router, the tiers, tags, filters, the organizer, export/import and the archive work on it
unchanged. Vectors come from the same embedder as the local stores (cosine distance, an
HNSW index). A server without the pgvector extension is refused at start-up, with the
reason: there is no silent fallback to local memory.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from jarvis_graph.checkpointing import (
    error_reason,
    postgres_pool,
    postgres_setup_lock,
    redact_url,
)
from jarvis_graph.memory.mem0_store import Mem0Store, is_mem0_url
from jarvis_graph.memory.records import MemoryStoreError

STORE_URL_VAR = "JARVIS_STORE_URL"
CONNECT_TIMEOUT = 10.0

_lock = threading.Lock()
_opened: dict[str, tuple[Any, Any]] = {}  # url -> (PostgresStore, pool)


def store_url() -> str | None:
    """The PostgreSQL URL of the shared memory store, or ``None`` for local memory."""
    url = os.environ.get(STORE_URL_VAR, "").strip()
    return url or None


def shared_store(url: str) -> Any:
    """The process-wide shared store of ``url`` (opened and set up on first use).

    A ``postgresql://`` URL gives LangGraph's ``PostgresStore``; a ``mem0+http(s)://`` URL
    a :class:`~jarvis_graph.memory.mem0_store.Mem0Store`.

    Raises:
        MemoryStoreError: The packages are missing, the server cannot be reached, or it
            has no pgvector extension.
    """
    with _lock:
        if url in _opened:
            return _opened[url][0]
        if is_mem0_url(url):  # a Mem0 server: opened without a request (it may be down)
            mem0 = Mem0Store(url)
            _opened[url] = (mem0, mem0)
            return mem0
        store, pool = _open(url)
        _opened[url] = (store, pool)
        return store


def _open(url: str) -> tuple[Any, Any]:
    where = redact_url(url)
    if not url.startswith(("postgres://", "postgresql://")):
        msg = f"{STORE_URL_VAR} must be a postgresql:// or mem0+http(s):// URL, not {where!r}"
        raise MemoryStoreError(msg)
    try:
        import psycopg
        from langgraph.store.postgres import PostgresStore
    except ImportError as exc:
        msg = f"{STORE_URL_VAR} needs PostgreSQL support: pip install 'jarvis-graph[postgres]'"
        raise MemoryStoreError(msg) from exc
    # deferred: the embedder loads ONNX Runtime on first use
    from jarvis_graph.memory.embedder import MINILM_DIMS, default_embedder

    try:
        with psycopg.connect(url, connect_timeout=int(CONNECT_TIMEOUT)) as conn:
            row = conn.execute(
                "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'"
            ).fetchone()
    except psycopg.Error as exc:
        msg = f"cannot open the memory store {where}: {error_reason(exc, url)}"
        raise MemoryStoreError(msg) from None
    if row is None:
        msg = (
            f"the memory store {where} has no pgvector extension, which semantic search "
            "needs: install pgvector on that server (https://github.com/pgvector/pgvector), "
            f"or unset {STORE_URL_VAR} to keep memory on this machine"
        )
        raise MemoryStoreError(msg)
    pool = postgres_pool(url, "jarvis-memory")
    pool.open(wait=False)
    index: Any = {
        "dims": MINILM_DIMS,
        "embed": default_embedder(),
        "fields": ["content"],
        "distance_type": "cosine",
        "ann_index_config": {"kind": "hnsw", "vector_type": "vector"},
    }
    store = PostgresStore(pool, index=index)
    try:
        with postgres_setup_lock(url):  # workers starting together must not race
            store.setup()  # creates the tables, the vector extension and the index
    except psycopg.Error as exc:
        pool.close()
        msg = f"cannot set up the memory store {where}: {error_reason(exc, url)}"
        raise MemoryStoreError(msg) from None
    return store, pool


def close_shared() -> None:
    """Close the shared stores' pools (tests, exit)."""
    with _lock:
        for _store, pool in _opened.values():
            pool.close()  # a Mem0Store closes its HTTP connections
        _opened.clear()


def prefix_of(workspace: str) -> tuple[str, ...]:
    """The namespace prefix in the shared store of a project, or of the global tier.

    A project is named by its workspace label, as the router names it; ``""`` is global.
    """
    return ("jarvis", "project", workspace) if workspace else ("jarvis", "global")
