"""Long-term memory on PostgreSQL: LangGraph's ``PostgresStore`` with a pgvector index.

With ``JARVIS_STORE_URL=postgresql://…`` the project and global tiers (and the project's
episodic archive) live in one PostgreSQL database that every worker shares, instead of
the FAISS stores on local disk; short-term memory stays in the process. Each local store
becomes a namespace prefix in the database (the router's ``PrefixedStore``), so the memory
router, the tiers, tags, filters, the organizer, export/import and the archive work on it
unchanged. Vectors come from the same embedder as the local stores (cosine distance, an
HNSW index), or from any OpenAI-compatible ``/embeddings`` endpoint
(``JARVIS_STORE_EMBED_MODEL``, ``JARVIS_STORE_EMBED_URL``, ``JARVIS_STORE_EMBED_KEY``); a
database set up with vectors of another length is refused with the reason. A server
without the pgvector extension is refused at start-up, with the reason: there is no silent
fallback to local memory.
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
EMBED_MODEL_VAR = "JARVIS_STORE_EMBED_MODEL"
EMBED_URL_VAR = "JARVIS_STORE_EMBED_URL"
EMBED_KEY_VAR = "JARVIS_STORE_EMBED_KEY"
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
    embed, dims = _embedder()
    try:
        with psycopg.connect(url, connect_timeout=int(CONNECT_TIMEOUT)) as conn:
            row = conn.execute(
                "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'"
            ).fetchone()
            column = conn.execute(
                "SELECT atttypmod FROM pg_attribute WHERE attrelid = to_regclass('store_vectors')"
                " AND attname = 'embedding'"
            ).fetchone()
    except psycopg.Error as exc:
        msg = f"cannot open the memory store {where}: {error_reason(exc, url)}"
        raise MemoryStoreError(msg) from None
    if column is not None and column[0] > 0 and column[0] != dims:
        msg = (
            f"the memory store {where} holds {column[0]}-dimension vectors and this embedder "
            f"gives {dims}: use the embedder it was set up with, or another database"
        )
        raise MemoryStoreError(msg)
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
        "dims": dims,
        "embed": embed,
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


def _embedder() -> tuple[Any, int]:
    """The store's embedder and its vector length: MiniLM, or an OpenAI-compatible endpoint.

    With ``JARVIS_STORE_EMBED_MODEL`` set, vectors come from ``/embeddings`` of
    ``JARVIS_STORE_EMBED_URL`` (default OpenAI's) with the key in ``JARVIS_STORE_EMBED_KEY``
    (else ``OPENAI_API_KEY``); the length is asked of the endpoint once.

    Raises:
        MemoryStoreError: The endpoint cannot be reached or refuses.
    """
    model = os.environ.get(EMBED_MODEL_VAR, "").strip()
    if not model:
        # deferred: the embedder loads ONNX Runtime on first use
        from jarvis_graph.memory.embedder import MINILM_DIMS, default_embedder

        return default_embedder(), MINILM_DIMS
    # deferred: langchain_openai costs seconds to import; only this store needs it here
    from langchain_openai import OpenAIEmbeddings
    from pydantic import SecretStr

    base = os.environ.get(EMBED_URL_VAR, "").strip() or None
    key = os.environ.get(EMBED_KEY_VAR) or os.environ.get("OPENAI_API_KEY") or "none"
    embed = OpenAIEmbeddings(
        model=model,
        base_url=base,
        api_key=SecretStr(key),
        check_embedding_ctx_length=False,  # plain strings: any compatible server takes them
        max_retries=1,
        timeout=CONNECT_TIMEOUT * 3,
    )
    try:
        dims = len(embed.embed_query("dimension probe"))
    except Exception as exc:  # the SDK's errors: connection, authentication, not found
        where = base or "https://api.openai.com/v1"
        msg = f"the embeddings endpoint {where} (model {model}) cannot be used: {exc}"
        raise MemoryStoreError(msg) from None
    return embed, dims


def prefix_of(workspace: str) -> tuple[str, ...]:
    """The namespace prefix in the shared store of a project, or of the global tier.

    A project is named by its workspace label, as the router names it; ``""`` is global.
    """
    return ("jarvis", "project", workspace) if workspace else ("jarvis", "global")
