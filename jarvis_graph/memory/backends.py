"""The process-wide memory backends the memory store routes to.

One :class:`FaissStore` per folder (opened on first use) and one ``InMemoryStore`` for
short-term memories; :func:`close_stores` closes them all (tests, exit). Only the memory
store (:mod:`jarvis_graph.memory.router`) and the tiers use them directly.
"""

from __future__ import annotations

import atexit
import threading
from pathlib import Path

from langgraph.store.base import IndexConfig
from langgraph.store.memory import InMemoryStore

from jarvis_graph.memory.embedder import MINILM_DIMS, default_embedder
from jarvis_graph.memory.pg_store import close_shared
from jarvis_graph.memory.store import FaissStore, prepare_store_folder


def _index() -> IndexConfig:
    return {"dims": MINILM_DIMS, "embed": default_embedder(), "fields": ["content"]}


_stores: dict[Path, FaissStore] = {}
_short_term: InMemoryStore | None = None
_stores_lock = threading.Lock()


def open_store(folder: Path) -> FaissStore:
    """The process-wide :class:`FaissStore` of ``folder`` (opened on first use)."""
    prepare_store_folder(folder)  # before resolve(), which would follow a planted link
    key = folder.resolve()
    with _stores_lock:
        store = _stores.get(key)
        if store is None:
            store = _stores[key] = FaissStore(key, index=_index())
        return store


def existing_store(folder: Path) -> FaissStore | None:
    """The store of ``folder`` if it is open or its file exists (reads create nothing)."""
    prepare_store_folder(folder, create=False)
    key = folder.resolve()
    with _stores_lock:
        if key not in _stores and not (key / "store.sqlite").is_file():
            return None
    return open_store(key)


_shared_folders: set[Path] = set()


def remember_folder(folder: Path) -> None:
    """Note a store folder this process used in the shared store (no local store opens)."""
    with _stores_lock:
        _shared_folders.add(folder.resolve())


def open_folders() -> list[Path]:
    """The folders of the stores this process has open (or used in the shared store)."""
    with _stores_lock:
        return list(dict.fromkeys([*_stores, *sorted(_shared_folders)]))


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
        _shared_folders.clear()
        _short_term = None
    close_shared()
