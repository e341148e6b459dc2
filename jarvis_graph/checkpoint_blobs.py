"""Compact checkpoints: a checkpoint refers to its message list instead of repeating it.

A checkpointer saves every channel at every step, so the message list of a run with N
steps is written N times: the sessions database grows as N². :class:`BlobSerializer`
wraps the checkpointer's serializer and stores the parts of a checkpoint once, in the
parts database beside it (:mod:`jarvis_graph.checkpoint_parts`):

- the text of every message longer than ``min_chars``, referenced by its SHA-256;
- every message of a list of at least ``LIST_MIN`` messages, and the list itself as a node
  that extends the list of the previous checkpoint. A checkpoint then holds one short
  reference for the whole list, and each step adds rows for its new messages only.

Every ``SPAN``-th node of a growing list is a *span* node: it extends the previous span
node (not the previous node) by every message since, and carries their rows. A restore
then walks at most ``SPAN - 1`` plain nodes and one span node per ``SPAN`` steps, and reads
most messages with the span nodes instead of one row each.

Loading puts everything back: the graph, the model and ``get_state`` /
``get_state_history`` / forks see exactly the messages the run had. Texts stored by
earlier versions as ``<folder>/<2 hex>/<sha256>.z`` files are still read.
"""

from __future__ import annotations

import functools
import gc
import hashlib
import operator
import threading
import time
import zlib
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import langchain_core.messages as lc_messages
import ormsgpack
from langchain_core.messages import BaseMessage
from langgraph.checkpoint.serde.base import SerializerProtocol

from jarvis_graph.checkpoint_parts import (
    DIGEST_BYTES,
    MissingPartError,
    Node,
    Parts,
    PartsDB,
)
from jarvis_graph.checkpoint_serde import ForbiddenValueError, checkpoint_serializer
from jarvis_graph.memo import ObjectMemo

REF_PREFIX = "\x00jarvis-blob:"
"""Start of a text reference; a real text that starts with it is always stored as a blob."""
LIST_PREFIX = "\x00jarvis-list:"
"""Start of a message-list reference."""

MIN_CHARS = 2048
LIST_MIN = 4
"""Message lists at least this long are stored as lists of the parts database."""
CACHE_CHARS = 64 * 1024 * 1024
"""Texts kept in memory (both directions) so repeated checkpoints cost no hashing or I/O."""
CACHE_MESSAGES = 50_000
REFRESH = 900.0
"""Seconds after which a remembered text's row is written again when reused: a quarter of
the orphan collection's grace period (``session_prune.GRACE``)."""
HEADS = 16
"""Recent lists remembered, so that a checkpoint finds the list its list extends."""
SPAN = 16
"""Nodes from one span node to the next (see the module's text)."""

_ESCAPED = "="  # after LIST_PREFIX: a stored value that starts like a reference
_MAX_DEPTH = 4  # checkpoint -> channel_values -> messages -> message


class MissingBlobError(MissingPartError):
    """A checkpoint refers to a stored text or message that is gone."""


@dataclass
class _Rows:
    """Rows one serialization adds to the parts database."""

    texts: list[tuple[str, str]] = field(default_factory=list)
    messages: list[tuple[bytes, str, bytes]] = field(default_factory=list)
    lists: list[tuple[bytes, bytes | None, bytes, bytes | None]] = field(default_factory=list)


@dataclass(frozen=True)
class _Since:
    """Where a remembered list stands since its last span node (``base``)."""

    base: bytes
    digests: tuple[bytes, ...] = ()
    """The messages appended since ``base``."""
    nodes: int = 0
    """Plain nodes since ``base``."""


class BlobSerializer(SerializerProtocol):
    """A serializer that stores message texts, messages and message lists once.

    Args:
        folder: Where the parts database is kept (created on first write), and texts of
            earlier versions are read from; ``None`` with ``parts``.
        inner: The serializer doing the actual encoding (default: :func:`checkpoint_serializer`).
        min_chars: Texts at least this long are stored separately.
        parts: Where the parts are kept instead of ``<folder>/parts.sqlite`` (a
            :class:`~jarvis_graph.checkpoint_parts.PostgresParts`).
    """

    def __init__(
        self,
        folder: Path | None,
        inner: SerializerProtocol | None = None,
        min_chars: int = MIN_CHARS,
        parts: Parts | None = None,
    ) -> None:
        self.folder = Path(folder) if folder is not None else None
        self.inner = inner or checkpoint_serializer()
        self.min_chars = min_chars
        if parts is None:
            if self.folder is None:
                msg = "BlobSerializer needs a folder or a parts store"
                raise ValueError(msg)
            parts = PartsDB(self.folder / "parts.sqlite")
        self.parts: Parts = parts
        self._refs: OrderedDict[str, str] = OrderedDict()  # text -> ref
        self._written: dict[str, float] = {}  # ref -> when its row was last written
        self._texts: OrderedDict[str, str] = OrderedDict()  # ref -> text
        self._cached = 0
        # message -> its digest, while it lives with the same content: encoded once
        self._digests: ObjectMemo[bytes] = ObjectMemo()
        # list digest -> (its messages, their watched fields when it was stored)
        self._heads: OrderedDict[bytes, tuple[list[BaseMessage], list[tuple[Any, Any]]]] = (
            OrderedDict()
        )
        self._since: dict[bytes, _Since] = {}  # remembered list -> its last span node
        # message digest -> its row (kind, data), as written or read
        self._rows: OrderedDict[bytes, tuple[str, bytes]] = OrderedDict()
        # loaded lists whose messages are not in ``_digests`` yet: list digest -> the
        # digests of its messages. A load that is never followed by a write (get_state,
        # history) does not pay for them.
        self._unsettled: OrderedDict[bytes, list[bytes]] = OrderedDict()
        self._lock = threading.RLock()

    def close(self) -> None:
        """Close the parts database."""
        self.parts.close()

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        """Serialize ``obj`` with large texts and message lists replaced by references."""
        rows = _Rows()
        with self._lock:
            self._settle_loaded()
            shrunk = self._shrink(obj, 0, rows)
            # committed before the checkpoint that refers to them is written
            self.parts.add(rows.texts, rows.messages, rows.lists)
        return self.inner.dumps_typed(shrunk)

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        """Deserialize and put the stored texts and lists back.

        Raises:
            ForbiddenValueError: The checkpoint, or a message it refers to, holds a value
                Jarvis does not read (see :class:`~jarvis_graph.checkpoint_serde.StrictSerializer`).
        """
        try:
            obj = self.inner.loads_typed(data)
            with self._lock, _COLLECTOR_PAUSED:
                return self._expand(obj, 0)
        except ForbiddenValueError as exc:
            msg = (
                f"{exc}. The session store was written or altered by other software: delete "
                "the session (jarvis sessions delete ID) or restore the store from a backup"
            )
            raise ForbiddenValueError(msg) from None

    # -- writing ----------------------------------------------------------------------

    def _shrink(self, obj: Any, depth: int, rows: _Rows) -> Any:
        if isinstance(obj, BaseMessage):
            return self._shrink_text(obj, rows)
        if isinstance(obj, str) and obj.startswith(LIST_PREFIX):  # a value, not a reference
            return LIST_PREFIX + _ESCAPED + obj
        if depth >= _MAX_DEPTH:
            return obj
        if isinstance(obj, list):
            if len(obj) >= LIST_MIN and all(isinstance(m, BaseMessage) for m in obj):
                return LIST_PREFIX + self._store_list(obj, rows).hex()
            return [self._shrink(item, depth + 1, rows) for item in obj]
        if isinstance(obj, tuple) and not hasattr(obj, "_fields"):
            return tuple(self._shrink(item, depth + 1, rows) for item in obj)
        if isinstance(obj, dict):
            return {key: self._shrink(value, depth + 1, rows) for key, value in obj.items()}
        return obj

    def _shrink_text(self, message: BaseMessage, rows: _Rows) -> BaseMessage:
        content = message.content
        if isinstance(content, str) and (
            len(content) >= self.min_chars or content.startswith(REF_PREFIX)
        ):
            return message.model_copy(update={"content": self._store_text(content, rows)})
        return message

    def _store_text(self, text: str, rows: _Rows) -> str:
        ref = self._refs.get(text)
        now = time.monotonic()
        if ref is not None:
            self._refs.move_to_end(text)
            if now - self._written.get(ref, 0.0) > REFRESH:
                # a remembered text may be in no checkpoint any more: its row is written
                # again (its time renewed) so that a prune keeps it (see session_prune)
                rows.texts.append((ref.removeprefix(REF_PREFIX), text))
                self._written[ref] = now
            return ref
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        rows.texts.append((digest, text))
        ref = f"{REF_PREFIX}{digest}"
        self._remember_text(text, ref)
        self._written[ref] = now
        return ref

    def _store_list(self, messages: list[BaseMessage], rows: _Rows) -> bytes:
        parent, known = self._known_prefix(messages)
        new = [self._store_message(m, rows) for m in messages[known:]]
        if not new and parent is not None:
            return parent
        since = None if parent is None else self._since.get(parent, _Since(parent))
        if since is None or since.nodes + 1 >= SPAN:  # a span node: a list's first, or due
            start = None if since is None else since.base
            added = new if since is None else [*since.digests, *new]
            items = b"".join(added)
            digest = _list_digest(start, items)
            rows.lists.append((digest, start, items, self._pack(added)))
            self._since[digest] = _Since(digest)
        else:
            assert parent is not None
            items = b"".join(new)
            digest = _list_digest(parent, items)
            rows.lists.append((digest, parent, items, None))
            self._since[digest] = _Since(since.base, (*since.digests, *new), since.nodes + 1)
        self._remember_head(digest, messages)
        return digest

    def _pack(self, digests: list[bytes]) -> bytes | None:
        """The rows of these messages as one msgpack array ``[kind, fields, kind, fields…]``.

        ``None`` when one of them is no longer at hand: the node is then read row by row.
        A ``lc:`` row's data is the msgpack of its fields and goes in as it is, so that one
        ``unpackb`` of the array gives every message's fields.
        """
        parts = [_array_header(2 * len(digests))]
        for key in digests:
            row = self._rows.get(key)
            if row is None:
                return None
            kind, data = row
            parts += (
                ormsgpack.packb(kind),
                data if kind.startswith("lc:") else ormsgpack.packb(data),
            )
        return b"".join(parts)

    def _known_prefix(self, messages: list[BaseMessage]) -> tuple[bytes | None, int]:
        """The longest remembered list that ``messages`` starts with, unchanged.

        The same message objects with the same contents: a node that replaced a message's
        content (rather than the message) must not reuse the old list.
        """
        best: tuple[bytes | None, int] = (None, 0)
        for digest, (head, watched) in self._heads.items():
            n = len(head)
            if best[1] < n <= len(messages) and messages[n - 1] is head[-1]:
                if all(map(operator.is_, messages[:n], head)) and all(
                    map(_same, map(_watched, head), watched)
                ):
                    best = (digest, n)
        return best

    def _store_message(self, message: BaseMessage, rows: _Rows) -> bytes:
        known = self._digests.get(message, *_watched(message))
        if known is not None:
            return known
        kind, data = self._encode(self._shrink_text(message, rows))
        digest = hashlib.sha256(kind.encode() + b"\0" + data).digest()[:DIGEST_BYTES]
        rows.messages.append((digest, kind, data))
        self._remember_message(message, digest)
        self._keep_rows({digest: (kind, data)})
        return digest

    def _encode(self, message: BaseMessage) -> tuple[str, bytes]:
        """A message's row: its fields as msgpack when they come back equal, else the serde's."""
        cls = type(message)
        if getattr(lc_messages, cls.__name__, None) is cls:
            fields = message.model_dump()
            try:
                data = ormsgpack.packb(fields)
            except TypeError:
                data = b""
            # tuples come back as lists, other types not at all: those take the serde's way
            if data and ormsgpack.unpackb(data) == fields:
                return f"lc:{cls.__name__}", data
        kind, data = self.inner.dumps_typed(message)
        return f"serde:{kind}", data

    # -- reading ----------------------------------------------------------------------

    def _expand(self, obj: Any, depth: int) -> Any:
        if isinstance(obj, BaseMessage):
            self._fill_texts([obj])
            return obj
        if isinstance(obj, str) and obj.startswith(LIST_PREFIX):
            if obj.startswith(LIST_PREFIX + _ESCAPED):
                return obj.removeprefix(LIST_PREFIX + _ESCAPED)
            return self._load_list(bytes.fromhex(obj.removeprefix(LIST_PREFIX)))
        if depth >= _MAX_DEPTH:
            return obj
        if isinstance(obj, dict):
            for key, value in obj.items():
                obj[key] = self._expand(value, depth + 1)
        elif isinstance(obj, list):
            obj[:] = [self._expand(item, depth + 1) for item in obj]
        elif isinstance(obj, tuple) and not hasattr(obj, "_fields"):
            return tuple(self._expand(item, depth + 1) for item in obj)
        return obj

    def _load_list(self, digest: bytes) -> list[BaseMessage]:
        try:
            nodes = self.parts.chain(digest)
        except MissingPartError as exc:
            raise MissingBlobError(str(exc)) from None
        digests: list[bytes] = []
        packed: list[tuple[str, Any] | None] = []  # per message: its row from a span node
        for node in nodes:
            keys = _split(node.items)
            fields = _unpack(node.packed, len(keys))
            digests += keys
            packed += [None] * len(keys) if fields is None else fields
        missing = [d for d, f in zip(digests, packed, strict=True) if f is None]
        self._keep_rows(self.parts.messages([d for d in missing if d not in self._rows]))
        try:
            messages = [
                self._decode(*self._rows[d]) if f is None else self._construct(*f)
                for d, f in zip(digests, packed, strict=True)
            ]
        except KeyError:
            msg = f"a saved session refers to a message missing from {self.parts.path}"
            raise MissingBlobError(msg) from None
        self._fill_texts(messages)
        self._remember_head(digest, messages)
        self._since[digest] = _loaded_since(nodes)
        self._unsettled[digest] = digests
        self._unsettled.move_to_end(digest)
        while len(self._unsettled) > HEADS:
            self._unsettled.popitem(last=False)
        return messages

    def _decode(self, kind: str, data: bytes) -> BaseMessage:
        if kind.startswith("lc:"):
            return self._construct(kind, ormsgpack.unpackb(data))
        return self._construct(kind, data)

    def _construct(self, kind: str, payload: Any) -> BaseMessage:
        """A message from its row's kind and its fields (``lc:``) or serde data."""
        if kind.startswith("lc:"):
            return _construct(kind, payload)
        return self.inner.loads_typed((kind.removeprefix("serde:"), payload))  # type: ignore[no-any-return]

    def _keep_rows(self, rows: dict[bytes, tuple[str, bytes]]) -> None:
        self._rows.update(rows)
        for _ in range(len(self._rows) - CACHE_MESSAGES):
            self._rows.popitem(last=False)

    def _fill_texts(self, messages: list[BaseMessage]) -> None:
        wanted = [
            m.content.removeprefix(REF_PREFIX)
            for m in messages
            if isinstance(m.content, str) and m.content.startswith(REF_PREFIX)
        ]
        if not wanted:
            return
        found = {d: t for d in wanted if (t := self._texts.get(REF_PREFIX + d)) is not None}
        found.update(self.parts.texts([d for d in wanted if d not in found]))
        for message in messages:
            content = message.content
            if isinstance(content, str) and content.startswith(REF_PREFIX):
                digest = content.removeprefix(REF_PREFIX)
                text = found.get(digest)
                if text is None:
                    text = found[digest] = self._legacy_text(digest)
                self._remember_loaded(content, text)
                message.__dict__["content"] = text  # a str for a str: nothing to validate

    def _legacy_text(self, digest: str) -> str:
        if self.folder is None:
            msg = (
                f"a saved session refers to the stored text {digest[:12]}…, which is not in "
                f"{self.parts.path}: it no longer exists; restore the database from a backup "
                "or delete the session"
            )
            raise MissingBlobError(msg)
        path = self.folder / digest[:2] / f"{digest}.z"
        try:
            return zlib.decompress(path.read_bytes()).decode("utf-8", "surrogatepass")
        except FileNotFoundError:
            msg = (
                f"a saved session refers to the stored text {digest[:12]}…, which is in "
                f"neither {self.parts.path} nor {path}: it no longer exists; restore the "
                "folder from a backup or delete the session"
            )
            raise MissingBlobError(msg) from None

    # -- caches -----------------------------------------------------------------------

    def _remember_text(self, text: str, ref: str) -> None:
        if ref not in self._texts:
            self._refs[text] = ref
            self._remember_loaded(ref, text)

    def _evict(self) -> None:
        while self._cached > CACHE_CHARS and self._texts:
            old_ref, old_text = self._texts.popitem(last=False)
            self._refs.pop(old_text, None)
            self._written.pop(old_ref, None)
            self._cached -= len(old_text)

    def _remember_loaded(self, ref: str, text: str) -> None:
        """Keep a loaded text for its reference only: hashing it for the reverse map costs more."""
        if ref not in self._texts:
            self._texts[ref] = text
            self._cached += len(text)
            self._evict()

    def _remember_message(self, message: BaseMessage, digest: bytes) -> None:
        self._digests.put(message, digest, *_watched(message))

    def _settle_loaded(self) -> None:
        """Remember the digests of loaded messages, with their fields as they were loaded."""
        while self._unsettled:
            head, digests = self._unsettled.popitem(last=False)
            remembered = self._heads.get(head)
            if remembered is None:  # gone from the heads: its messages are encoded again
                continue
            for message, watched, key in zip(*remembered, digests, strict=True):
                self._digests.put(message, key, *watched)

    def _remember_head(self, digest: bytes, messages: list[BaseMessage]) -> None:
        self._heads[digest] = (list(messages), [_watched(m) for m in messages])
        self._heads.move_to_end(digest)
        while len(self._heads) > HEADS:
            old, _ = self._heads.popitem(last=False)
            self._since.pop(old, None)


class _CollectorPause:
    """Python's cyclic garbage collector off while a restore builds its messages.

    A restore creates thousands of dicts and lists, none of them garbage; the collector's
    passes over them cost more than decoding them (as msgpack's own documentation warns).
    Nested and concurrent restores share one pause; a collector that was off stays off.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth = 0
        self._restore = False

    def __enter__(self) -> None:
        with self._lock:
            if self._depth == 0:
                self._restore = gc.isenabled()
                gc.disable()
            self._depth += 1

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._depth -= 1
            if self._depth == 0 and self._restore:
                gc.enable()


_COLLECTOR_PAUSED = _CollectorPause()


def _list_digest(parent: bytes | None, items: bytes) -> bytes:
    return hashlib.sha256((parent or b"") + items).digest()[:DIGEST_BYTES]


def _split(items: bytes) -> list[bytes]:
    return [items[i : i + DIGEST_BYTES] for i in range(0, len(items), DIGEST_BYTES)]


def _array_header(n: int) -> bytes:
    """The msgpack header of an array of ``n`` elements."""
    if n < 16:
        return bytes([0x90 | n])
    if n < 1 << 16:
        return b"\xdc" + n.to_bytes(2, "big")
    return b"\xdd" + n.to_bytes(4, "big")


def _unpack(packed: bytes | None, count: int) -> list[tuple[str, Any]] | None:
    """A span node's rows as ``(kind, fields or data)`` pairs.

    ``None`` when it carries none, or not ``count`` of them: its messages are then read row
    by row.
    """
    if packed is None:
        return None
    try:
        flat = ormsgpack.unpackb(packed)
    except ormsgpack.MsgpackDecodeError:
        return None
    if not isinstance(flat, list) or len(flat) != 2 * count:
        return None
    return list(zip(flat[0::2], flat[1::2], strict=True))


def _loaded_since(nodes: list[Node]) -> _Since:
    """Where a loaded list stands: its last span node (or first node), and what follows."""
    last = max((i for i, n in enumerate(nodes) if n.packed is not None), default=0)
    after = nodes[last + 1 :]
    return _Since(nodes[last].digest, tuple(d for n in after for d in _split(n.items)), len(after))


def _watched(message: BaseMessage) -> tuple[Any, Any]:
    """The fields a node may replace in a message it keeps: its content and tool calls.

    An encoded message is reused while these are the same objects (fields are replaced,
    not edited in place, by LangChain and by the run loop).
    """
    return message.content, message.__dict__.get("tool_calls")  # pydantic's getattr is slow


def _same(a: tuple[Any, Any], b: tuple[Any, Any]) -> bool:
    return a[0] is b[0] and a[1] is b[1]


@functools.cache
def _message_class(kind: str) -> tuple[type[BaseMessage], frozenset[str] | None]:
    """The class of an ``lc:`` row, and the field names ``_construct`` may fill in directly.

    The names are ``None`` for a class with private attributes, built the public way.

    Raises:
        MissingBlobError: The row names no message class (the database was altered).
    """
    cls = getattr(lc_messages, kind.removeprefix("lc:"), None)
    if not (isinstance(cls, type) and issubclass(cls, BaseMessage)):
        msg = f"a saved session holds a message of an unknown kind {kind!r}"
        raise MissingBlobError(msg)
    return cls, None if cls.__private_attributes__ else frozenset(cls.model_fields)


def _construct(kind: str, fields: dict[str, Any]) -> BaseMessage:
    """A message from the fields ``_encode`` stored: every field, from a valid message.

    What ``model_construct`` does for a complete set of fields, at half its cost (a restore
    builds hundreds of messages); a class with private attributes takes the public way.
    """
    cls, names = _message_class(kind)
    if names is None or fields.keys() != names:
        return cls.model_construct(**fields)
    message = cls.__new__(cls)
    object.__setattr__(message, "__dict__", fields)
    object.__setattr__(message, "__pydantic_fields_set__", set(fields))
    object.__setattr__(message, "__pydantic_extra__", None)
    object.__setattr__(message, "__pydantic_private__", None)
    return message


def blob_folder(database: Path) -> Path:
    """Where the parts of the sessions in ``database`` are stored: ``blobs/`` beside it."""
    return database.parent / "blobs"
