"""Compact checkpoints: large message texts are stored once, in content-addressed files.

A checkpointer saves the whole message list at every step, so a run with many large tool
outputs grows quadratically. :class:`BlobSerializer` wraps the checkpointer's serializer:
before a checkpoint or a pending write is serialized, the text of every message longer than
``min_chars`` is written once to ``<folder>/<2 hex>/<sha256>.z`` (zlib) and the message
carries a short reference instead; loading puts the text back. The graph, the model and
``get_state`` / ``get_state_history`` / forks see exactly the messages the run had.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
import zlib
from collections import OrderedDict
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

REF_PREFIX = "\x00jarvis-blob:"
"""Start of a reference; a real text that starts with it is always stored as a blob."""

MIN_CHARS = 2048
CACHE_CHARS = 64 * 1024 * 1024
"""Texts kept in memory (both directions) so repeated checkpoints cost no hashing or I/O."""

_MAX_DEPTH = 4  # checkpoint -> channel_values -> messages -> message


class MissingBlobError(RuntimeError):
    """A checkpoint refers to a stored text whose file is gone."""


class BlobSerializer(SerializerProtocol):
    """A serializer that stores large message texts once, as files, and references them.

    Args:
        folder: Where the texts are stored (created on first write).
        inner: The serializer doing the actual encoding (default: ``JsonPlusSerializer``).
        min_chars: Texts at least this long are stored as files.
    """

    def __init__(
        self, folder: Path, inner: SerializerProtocol | None = None, min_chars: int = MIN_CHARS
    ) -> None:
        self.folder = Path(folder)
        self.inner = inner or JsonPlusSerializer()
        self.min_chars = min_chars
        self._refs: OrderedDict[str, str] = OrderedDict()  # text -> ref
        self._texts: OrderedDict[str, str] = OrderedDict()  # ref -> text
        self._cached = 0
        self._lock = threading.Lock()

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        """Serialize ``obj`` with large message texts replaced by references."""
        return self.inner.dumps_typed(self._shrink(obj, 0))

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        """Deserialize and put the stored texts back into the messages."""
        obj = self.inner.loads_typed(data)
        self._expand(obj, 0)
        return obj

    def _shrink(self, obj: Any, depth: int) -> Any:
        if isinstance(obj, BaseMessage):
            content = obj.content
            if isinstance(content, str) and (
                len(content) >= self.min_chars or content.startswith(REF_PREFIX)
            ):
                return obj.model_copy(update={"content": self._store(content)})
            return obj
        if depth >= _MAX_DEPTH:
            return obj
        if isinstance(obj, list):
            return [self._shrink(item, depth + 1) for item in obj]
        if isinstance(obj, tuple) and not hasattr(obj, "_fields"):
            return tuple(self._shrink(item, depth + 1) for item in obj)
        if isinstance(obj, dict):
            return {key: self._shrink(value, depth + 1) for key, value in obj.items()}
        return obj

    def _expand(self, obj: Any, depth: int) -> None:
        if isinstance(obj, BaseMessage):
            if isinstance(obj.content, str) and obj.content.startswith(REF_PREFIX):
                obj.content = self._load(obj.content)
            return
        if depth >= _MAX_DEPTH:
            return
        items = obj.values() if isinstance(obj, dict) else obj
        if isinstance(obj, dict | list | tuple):
            for item in items:
                self._expand(item, depth + 1)

    def _path(self, digest: str) -> Path:
        return self.folder / digest[:2] / f"{digest}.z"

    def _store(self, text: str) -> str:
        with self._lock:
            ref = self._refs.get(text)
            if ref is not None:
                self._refs.move_to_end(text)
                return ref
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        path = self._path(digest)
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            data = zlib.compress(text.encode("utf-8", "surrogatepass"), 6)
            # Written under a temporary name and renamed: a crash never leaves half a text.
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp, path)
        ref = f"{REF_PREFIX}{digest}"
        self._remember(text, ref)
        return ref

    def _load(self, ref: str) -> str:
        with self._lock:
            text = self._texts.get(ref)
            if text is not None:
                self._texts.move_to_end(ref)
                return text
        path = self._path(ref.removeprefix(REF_PREFIX))
        try:
            text = zlib.decompress(path.read_bytes()).decode("utf-8", "surrogatepass")
        except FileNotFoundError:
            msg = (
                f"a saved session refers to the stored text {path}, which no longer exists; "
                "restore the folder from a backup or delete the session"
            )
            raise MissingBlobError(msg) from None
        self._remember(text, ref)
        return text

    def _remember(self, text: str, ref: str) -> None:
        with self._lock:
            if ref in self._texts:
                return
            self._refs[text] = ref
            self._texts[ref] = text
            self._cached += len(text)
            while self._cached > CACHE_CHARS and self._texts:
                old_ref, old_text = self._texts.popitem(last=False)
                self._refs.pop(old_text, None)
                self._cached -= len(old_text)


def blob_folder(database: Path) -> Path:
    """Where the texts of the sessions in ``database`` are stored: ``blobs/`` beside it."""
    return database.parent / "blobs"
