"""Memory: a FAISS-backed LangGraph store, embedders, the three tiers and memory tools.

The names below load on first use: importing a submodule (the memory store a graph is
compiled with, the memory tools) must not load numpy, FAISS or the embedders.
"""

from __future__ import annotations

import importlib
from typing import Any

_HOMES = {
    "MEMORY_TYPES": "records",
    "FaissStore": "store",
    "HashingEmbedder": "embedder",
    "Hit": "tiers",
    "MemoryInputError": "records",
    "MemoryStore": "router",
    "MemoryTiers": "tiers",
    "MiniLMEmbedder": "embedder",
    "default_embedder": "embedder",
    "memory_store": "router",
    "new_record": "records",
}
__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        msg = f"module {__name__!r} has no attribute {name!r}"
        raise AttributeError(msg)
    return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
