"""Memory: a FAISS-backed LangGraph store and text embedders."""

from jarvis_graph.memory.embedder import HashingEmbedder, MiniLMEmbedder, default_embedder
from jarvis_graph.memory.store import FaissStore

__all__ = ["FaissStore", "HashingEmbedder", "MiniLMEmbedder", "default_embedder"]
