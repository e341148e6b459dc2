"""Stores for the memory tests: FaissStore and LangGraph's InMemoryStore, side by side."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from jarvis_graph.memory.embedder import HashingEmbedder
from jarvis_graph.memory.store import FaissStore

DIMS = 256
StoreFactory = Callable[..., BaseStore]


def hashing_index(fields: list[str] | None = None) -> dict[str, Any]:
    return {"dims": DIMS, "embed": HashingEmbedder(DIMS), "fields": fields or ["text"]}


@pytest.fixture(params=["in_memory", "faiss"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreFactory]:
    """A factory of fresh stores of one kind: ``make_store(index=...)``."""
    opened: list[FaissStore] = []

    def factory(**kwargs: Any) -> BaseStore:
        if request.param == "in_memory":
            return InMemoryStore(**kwargs)
        store = FaissStore(tmp_path / f"store{len(opened)}", **kwargs)
        opened.append(store)
        return store

    yield factory
    for store in opened:
        store.close()
