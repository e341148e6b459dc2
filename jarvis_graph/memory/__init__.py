"""Memory: a FAISS-backed LangGraph store, embedders, the three tiers and memory tools."""

from jarvis_graph.memory.embedder import HashingEmbedder, MiniLMEmbedder, default_embedder
from jarvis_graph.memory.records import MEMORY_TYPES, MemoryInputError, new_record
from jarvis_graph.memory.store import FaissStore
from jarvis_graph.memory.tiers import Hit, MemoryTiers

__all__ = [
    "MEMORY_TYPES",
    "FaissStore",
    "HashingEmbedder",
    "Hit",
    "MemoryInputError",
    "MemoryTiers",
    "MiniLMEmbedder",
    "default_embedder",
    "new_record",
]
