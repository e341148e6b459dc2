"""Memory records: Jarvis' fields, validated; plain dicts so they store as JSON."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, get_args

MemoryType = Literal["short_term", "project_long_term", "global_long_term"]
MEMORY_TYPES: tuple[str, ...] = get_args(MemoryType)
LONG_TERM_TYPES: tuple[str, ...] = ("project_long_term", "global_long_term")
MAX_CONTENT_CHARS = 100_000
"""A memory is a fact or a lesson; a text longer than this belongs in the documents index."""
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
CLOCK_SKEW = timedelta(days=1)
"""How far in the future a record's time may be (another machine's clock, time zones)."""
FIELDS = ("id", "type", "tags", "content", "created_at", "updated_at", "merged_from")


class MemoryInputError(ValueError):
    """A memory record or request is invalid; the message says what to change."""


class MemoryStoreError(MemoryInputError):
    """The shared memory store cannot be used (unreachable, no pgvector, missing packages)."""


def now_iso() -> str:
    """The current time, UTC, ISO 8601 with seconds."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def new_id() -> str:
    """A new record id: sortable by creation time, unique."""
    return f"{datetime.now(UTC):%Y%m%d%H%M%S}-{uuid.uuid4().hex[:8]}"


def check_type(memory_type: str) -> str:
    """``memory_type`` if it is one of the three tiers.

    Raises:
        MemoryInputError: It is not.
    """
    if memory_type not in MEMORY_TYPES:
        msg = f"unknown memory type {memory_type!r}; use one of {', '.join(MEMORY_TYPES)}"
        raise MemoryInputError(msg)
    return memory_type


def clean_tags(tags: Any) -> list[str]:
    """Tags stripped, lower-cased and de-duplicated, in their first order.

    Raises:
        MemoryInputError: ``tags`` is not a list of strings.
    """
    if tags is None:
        return []
    if isinstance(tags, str) or not isinstance(tags, list | tuple):
        msg = f"tags must be a list of strings, e.g. ['python', 'testing'], not {tags!r}"
        raise MemoryInputError(msg)
    out: list[str] = []
    for tag in tags:
        if not isinstance(tag, str):
            msg = f"tag {tag!r} is not a string; tags must be a list of strings"
            raise MemoryInputError(msg)
        t = " ".join(tag.split()).lower()
        if t and t not in out:
            out.append(t)
    return out


def new_record(
    memory_type: str,
    tags: Any,
    content: str,
    *,
    record_id: str | None = None,
    merged_from: list[str] | None = None,
) -> dict[str, Any]:
    """A validated record with a new id and timestamps.

    Raises:
        MemoryInputError: Unknown type, empty content or malformed tags.
    """
    if not isinstance(content, str) or not content.strip():
        msg = "memory content is empty; write the fact or lesson to remember"
        raise MemoryInputError(msg)
    stamp = now_iso()
    return {
        "id": record_id or new_id(),
        "type": check_type(memory_type),
        "tags": clean_tags(tags),
        "content": content.strip(),
        "created_at": stamp,
        "updated_at": stamp,
        "merged_from": list(merged_from or []),
    }


def coerce_record(data: Any, default_type: str | None = None) -> dict[str, Any]:
    """A stored record from a dict read from a file (export or Jarvis memory file).

    Missing timestamps become now; ``id`` is kept when present.

    Raises:
        MemoryInputError: The dict lacks content or has an unknown type.
    """
    if not isinstance(data, dict):
        msg = f"a memory record must be a JSON object, got {type(data).__name__}"
        raise MemoryInputError(msg)
    memory_type = data.get("type") or data.get("memory_type") or default_type
    if not memory_type:
        msg = f"record {data.get('id', '?')!r} has no type; give 'type' or choose --type"
        raise MemoryInputError(msg)
    content = data.get("content", "")
    if isinstance(content, str) and len(content) > MAX_CONTENT_CHARS:
        msg = (
            f"record {data.get('id', '?')!r} holds {len(content):,} characters, more than "
            f"the {MAX_CONTENT_CHARS:,} a memory may; keep the fact itself (index long texts "
            "with `jarvis docs add`)"
        )
        raise MemoryInputError(msg)
    rec = new_record(
        str(memory_type),
        data.get("tags") or [],
        content,
        record_id=str(data["id"]) if data.get("id") else None,
        merged_from=[str(x) for x in data.get("merged_from") or []],
    )
    for field in ("created_at", "updated_at"):
        if data.get(field):
            rec[field] = _timestamp(data[field], field)
    return rec


def _timestamp(value: Any, field: str) -> str:
    """``value`` as Jarvis writes times (UTC, ISO 8601 with seconds), if it is a sane one.

    ``newer`` imports compare these strings: an unparsable or far-future value would win
    every comparison (``"9999"``), so it is refused rather than kept.

    Raises:
        MemoryInputError: Not an ISO 8601 date and time, or before 1970 or in the future.
    """
    try:
        when = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        when = None
    shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
    if when is None:
        msg = f"{field} {shown} is not an ISO 8601 date and time such as 2024-01-02T10:15:00"
        raise MemoryInputError(msg)
    when = when if when.tzinfo is not None else when.replace(tzinfo=UTC)
    if not EARLIEST <= when <= datetime.now(UTC) + CLOCK_SKEW:
        msg = f"{field} {shown} is not between 1970 and now; correct or remove it"
        raise MemoryInputError(msg)
    return when.astimezone(UTC).isoformat(timespec="seconds")
