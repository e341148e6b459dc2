"""What a stored checkpoint value may be: data, never code.

Every checkpoint Jarvis decodes (the session stores, the compact parts, ``sessions
import``) goes through :func:`checkpoint_serializer`: LangGraph's strict msgpack mode with
the types Jarvis stores allowed and everything else refused.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from langgraph.checkpoint.serde.event_hooks import SerdeEvent, register_serde_event_listener
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from jarvis_graph.checkpoint_parts import CheckpointError

READ_KINDS = frozenset({"null", "bytes", "bytearray", "msgpack"})
"""The kinds of value :class:`StrictSerializer` writes, so the only ones it reads: never
``pickle`` (unpickling runs code), nor ``json`` (LangGraph's format before msgpack, which
Jarvis never wrote)."""

JARVIS_TYPES: frozenset[tuple[str, str]] = frozenset()
"""``(module, name)`` of the types Jarvis stores beyond LangGraph's safe list
(``SAFE_MSGPACK_TYPES``: the LangChain messages, ``Send``, ``Interrupt``, ``Command``,
dates, ``UUID``…). None: the states are JSON-like, a message's artifact is stored as its
fields, and errors as their text. A type put into a state or an interrupt must be listed
here, or reading it back is refused."""


class ForbiddenValueError(CheckpointError):
    """A stored value names a type or kind Jarvis does not read; nothing of it was run."""


_REFUSED = threading.local()  # .names: what the decoding in progress on this thread refused


def _note_refusal(event: SerdeEvent) -> None:
    """Collect what LangGraph's strict decoder refused, for the thread that decodes."""
    names = getattr(_REFUSED, "names", None)
    if names is not None and event["kind"] in ("msgpack_blocked", "msgpack_method_blocked"):
        parts = (event["module"], event["name"], event.get("method"))
        names.append(".".join(str(p) for p in parts if p))


register_serde_event_listener(_note_refusal)


class _RefusalLogged(logging.Filter):
    """Drop LangGraph's "Blocked deserialization…" warning: Jarvis raises its own error.

    Its advice (add the type to ``allowed_msgpack_modules``) is for a program's author, not
    for someone whose session store holds a planted value.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Blocked deserialization")


logging.getLogger("langgraph.checkpoint.serde.jsonplus").addFilter(_RefusalLogged())


class StrictSerializer(JsonPlusSerializer):
    """LangGraph's serializer that rebuilds only the types Jarvis stores, and refuses the rest.

    LangGraph's default imports whatever module a stored value names and calls what it
    names in it: anyone who can write a checkpoint (an import file, a session store that
    came with a cloned repository, a shared database) could run code in every process
    reading it. This one is LangGraph's strict mode with :data:`JARVIS_TYPES` allowed,
    whatever ``LANGGRAPH_STRICT_MSGPACK`` says. A value naming another type is not
    imported nor called (LangGraph's strict mode keeps its arguments as plain data) and the
    whole read is refused: :class:`ForbiddenValueError` names the type. A value of a kind
    outside :data:`READ_KINDS` (``pickle``) is refused unread.
    """

    def __init__(self) -> None:
        super().__init__(allowed_msgpack_modules=JARVIS_TYPES, pickle_fallback=False)

    def with_msgpack_allowlist(self, extra_allowlist: Any) -> StrictSerializer:
        """The same serializer: :data:`JARVIS_TYPES` is the one list, not widened per graph."""
        return self

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        """Decode ``data``, a Jarvis type or plain data only.

        Raises:
            ForbiddenValueError: It is of another kind or names another type.
        """
        kind = data[0]
        if kind not in READ_KINDS:
            msg = (
                f"a stored value is of the kind {kind!r}, which Jarvis never writes, and was "
                "refused unread: stored data never runs as code"
            )
            raise ForbiddenValueError(msg)
        outer = getattr(_REFUSED, "names", None)
        refused: list[str] = []
        _REFUSED.names = refused
        try:
            value = super().loads_typed(data)
        finally:
            _REFUSED.names = outer
        if refused:
            names = ", ".join(dict.fromkeys(refused))
            msg = (
                f"a stored value names {names}, which is not a type Jarvis stores; it was "
                "refused, and nothing it names was imported or called"
            )
            raise ForbiddenValueError(msg)
        return value


def checkpoint_serializer() -> StrictSerializer:
    """The serializer every session store, export and import of Jarvis encodes and decodes with."""
    return StrictSerializer()
