"""Export and import of sessions: move them between stores (a laptop's SQLite, PostgreSQL).

An export is JSON Lines. The first line is ``{"format": "jarvis-graph-sessions",
"version": 1, ...}``; then one line per checkpoint, every namespace of each thread (the
root run and its sub-runs), oldest first so that a parent comes before its children:

``{"thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id", "checkpoint",
"metadata", "writes"}``

``checkpoint`` and each pending write's value are LangGraph's serializer output (type
tag and base64 bytes) of the *whole* value: message texts the store keeps once are put
back, so the file needs nothing beside it. Importing writes the checkpoints through the
target saver's ``put`` / ``put_writes``, so the target stores them its own way (compact
parts and all). A session already in the target is left alone and named, unless asked
to be replaced.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from jarvis_graph.checkpoint_parts import CheckpointError
from jarvis_graph.checkpointing import list_threads

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

FORMAT = "jarvis-graph-sessions"
VERSION = 1


@dataclass
class TransferReport:
    """What an export or import did: sessions and checkpoints moved, sessions left alone."""

    threads: list[str] = field(default_factory=list)
    checkpoints: int = 0
    skipped: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)


def _serde() -> Any:
    # deferred: the serializer loads langgraph's checkpoint package
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    return JsonPlusSerializer()


def _typed(serde: Any, value: Any) -> list[str]:
    kind, data = serde.dumps_typed(value)
    return [kind, base64.b64encode(data).decode("ascii")]


def _untyped(serde: Any, typed: list[str]) -> Any:
    return serde.loads_typed((typed[0], base64.b64decode(typed[1])))


def export_sessions(
    saver: BaseCheckpointSaver, out: TextIO, threads: list[str] | None = None
) -> TransferReport:
    """Write the sessions ``threads`` (default: all) of ``saver`` to ``out``.

    Raises:
        CheckpointError: A named session does not exist.
    """
    known = [row.thread_id for row in list_threads(saver)]
    wanted = list(dict.fromkeys(threads)) if threads else known
    missing = [t for t in wanted if t not in known]
    if missing:
        msg = f"no session {', '.join(repr(t) for t in missing)} in this store"
        raise CheckpointError(msg)
    serde = _serde()
    report = TransferReport()
    out.write(json.dumps({"format": FORMAT, "version": VERSION, "threads": wanted}) + "\n")
    for thread in wanted:
        config: RunnableConfig = {"configurable": {"thread_id": thread}}
        tuples = sorted(
            saver.list(config),
            key=lambda t: (
                t.config["configurable"].get("checkpoint_ns", ""),
                t.config["configurable"]["checkpoint_id"],
            ),
        )
        for tup in tuples:
            out.write(json.dumps(_record(serde, tup)) + "\n")
            report.checkpoints += 1
        report.threads.append(thread)
    return report


def _record(serde: Any, tup: CheckpointTuple) -> dict[str, Any]:
    cfg = tup.config["configurable"]
    parent = tup.parent_config["configurable"]["checkpoint_id"] if tup.parent_config else None
    return {
        "thread_id": cfg["thread_id"],
        "checkpoint_ns": cfg.get("checkpoint_ns", ""),
        "checkpoint_id": cfg["checkpoint_id"],
        "parent_checkpoint_id": parent,
        "checkpoint": _typed(serde, tup.checkpoint),
        "metadata": _typed(serde, tup.metadata),
        "writes": [
            [task_id, channel, _typed(serde, value)]
            for task_id, channel, value in tup.pending_writes or []
        ],
    }


def read_export(path: Path) -> Iterator[dict[str, Any]]:
    """The checkpoint records of an export file, checked line by line.

    Raises:
        CheckpointError: The file is missing, not an export, or a line is broken.
    """
    try:
        handle = path.open(encoding="utf-8")
    except OSError as exc:
        msg = f"cannot read {path}: {exc.strerror or exc}"
        raise CheckpointError(msg) from None
    with handle:
        first = handle.readline()
        try:
            header = json.loads(first)
        except json.JSONDecodeError:
            header = None
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            msg = f"{path} is not a sessions export (it has no {FORMAT!r} first line)"
            raise CheckpointError(msg)
        if header.get("version") != VERSION:
            found = header.get("version")
            msg = f"{path} is a sessions export of version {found}; this version reads {VERSION}"
            raise CheckpointError(msg)
        for number, line in enumerate(handle, start=2):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                if not isinstance(record, dict) or not {"thread_id", "checkpoint"} <= set(record):
                    raise ValueError
            except ValueError:
                msg = f"{path}, line {number}: not a checkpoint record; nothing was imported"
                raise CheckpointError(msg) from None
            yield record


def import_sessions(
    saver: BaseCheckpointSaver, path: Path, replace: bool = False
) -> TransferReport:
    """Write the sessions of the export ``path`` into ``saver``.

    The whole file is read and checked before anything is written. A session the store
    already has is skipped (listed in the report), or deleted and imported when
    ``replace``.

    Raises:
        CheckpointError: The file cannot be read or is not a complete export.
    """
    serde = _serde()
    records = list(read_export(path))
    decoded = []
    for record in records:
        try:
            decoded.append(
                (
                    record,
                    _untyped(serde, record["checkpoint"]),
                    _untyped(serde, record["metadata"]),
                    [(t, c, _untyped(serde, v)) for t, c, v in record.get("writes", [])],
                )
            )
        except (KeyError, ValueError, TypeError) as exc:
            msg = (
                f"{path}: checkpoint {record.get('checkpoint_id')!r} of session "
                f"{record.get('thread_id')!r} cannot be read ({exc}); nothing was imported"
            )
            raise CheckpointError(msg) from None
    existing = {row.thread_id for row in list_threads(saver)}
    report = TransferReport()
    for record, checkpoint, metadata, writes in decoded:
        thread = str(record["thread_id"])
        if thread not in report.threads and thread not in report.skipped:
            if thread in existing and not replace:
                report.skipped.append(thread)
            else:
                if thread in existing:
                    saver.delete_thread(thread)
                    report.replaced.append(thread)
                report.threads.append(thread)
        if thread in report.skipped:
            continue
        _put(saver, record, checkpoint, metadata, writes)
        report.checkpoints += 1
    return report


def _put(
    saver: BaseCheckpointSaver,
    record: dict[str, Any],
    checkpoint: Any,
    metadata: Any,
    writes: list[tuple[str, str, Any]],
) -> None:
    configurable = {
        "thread_id": str(record["thread_id"]),
        "checkpoint_ns": str(record.get("checkpoint_ns") or ""),
    }
    if record.get("parent_checkpoint_id"):
        configurable["checkpoint_id"] = str(record["parent_checkpoint_id"])
    saved = saver.put(
        {"configurable": configurable}, checkpoint, metadata, checkpoint["channel_versions"]
    )
    by_task: dict[str, list[tuple[str, Any]]] = {}
    for task_id, channel, value in writes:
        by_task.setdefault(str(task_id), []).append((str(channel), value))
    for task_id, task_writes in by_task.items():
        saver.put_writes(saved, task_writes, task_id)
