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

An export file is data from elsewhere: it is decoded with the session stores' strict
serializer (``checkpoint_serde.StrictSerializer``: a value naming a type Jarvis does not
store, or a ``pickle``, is refused and nothing runs), its session ids must be ones
``--new-thread`` accepts, and the whole file is checked before anything is written. Each
session is then written in one transaction of the target store: a failure or a kill in
the middle leaves that session out, and importing the file again adds it.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from jarvis_graph.checkpoint_parts import CheckpointError
from jarvis_graph.checkpointing import list_threads
from jarvis_graph.thread_lock import hold_thread

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


SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
"""What a session id chosen by hand may be (``--new-thread``, an imported session)."""


def session_id_problem(thread_id: object, given_as: str) -> str | None:
    """Why ``thread_id`` is not a usable session id (``None`` if it is one).

    ``given_as`` names where it came from, as the message starts: ``"--new-thread"``.
    """
    if isinstance(thread_id, str) and SESSION_ID.fullmatch(thread_id):
        return None
    return (
        f"{given_as} {thread_id!r} is not a usable session id: use up to 100 letters, "
        "digits, '.', '_' or '-', starting with a letter or digit"
    )


def _serde() -> Any:
    # deferred: the serializer loads langgraph's checkpoint package
    from jarvis_graph.checkpoint_serde import checkpoint_serializer

    return checkpoint_serializer()


def _typed(serde: Any, value: Any) -> list[str]:
    kind, data = serde.dumps_typed(value)
    return [kind, base64.b64encode(data).decode("ascii")]


def _untyped(serde: Any, typed: Any) -> Any:
    """The value of a ``[kind, base64]`` pair of an export file (data from elsewhere).

    Raises:
        ValueError: ``typed`` is not such a pair, or its data does not decode.
    """
    if not (isinstance(typed, list) and len(typed) == 2 and all(isinstance(p, str) for p in typed)):
        msg = "a stored value is not a [kind, base64] pair"
        raise ValueError(msg)
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

    The whole file is read and checked before anything is written; then each session is
    written in one transaction (``saver.transaction()`` where the saver has one), holding
    the session's lock as a run does. A session the store already has is skipped (listed
    in the report), or deleted and imported when ``replace``, in the same transaction.

    Raises:
        CheckpointError: The file cannot be read or is not a complete, valid export, or
            writing a session failed or a run holds it (the sessions written before it are
            kept).
    """
    serde = _serde()
    sessions: dict[str, list[_Decoded]] = {}
    for record in read_export(path):
        decoded = _decode(serde, path, record)
        sessions.setdefault(decoded.thread, []).append(decoded)
    existing = {row.thread_id for row in list_threads(saver)}
    report = TransferReport()
    for thread, checkpoints in sessions.items():
        if thread in existing and not replace:
            report.skipped.append(thread)
            continue
        try:  # held as a run holds it: not replaced under a run, nor run half-written
            with hold_thread(saver, thread), _transaction(saver):
                if thread in existing:
                    saver.delete_thread(thread)
                for item in checkpoints:
                    _put(saver, item)
        except Exception as exc:  # a store error: this session is not in the store
            done = f"; imported before it: {', '.join(report.threads)}" if report.threads else ""
            msg = (
                f"{path}: session {thread!r} could not be written ({exc}); it was not "
                f"imported{done}"
            )
            raise CheckpointError(msg) from exc
        if thread in existing:
            report.replaced.append(thread)
        report.threads.append(thread)
        report.checkpoints += len(checkpoints)
    return report


@dataclass
class _Decoded:
    """One checkpoint record of an export, decoded and checked."""

    thread: str
    namespace: str
    parent: str | None
    checkpoint: dict[str, Any]
    metadata: dict[str, Any]
    writes: list[tuple[str, str, Any]]


def _decode(serde: Any, path: Path, record: dict[str, Any]) -> _Decoded:
    """``record`` decoded (data only) and checked to be a checkpoint a saver can write.

    Raises:
        CheckpointError: It is not; the message names the record and nothing is imported.
    """
    thread = record.get("thread_id")
    where = f"{path}: checkpoint {record.get('checkpoint_id')!r} of session {thread!r}"
    problem = session_id_problem(thread, "session id")
    if problem is not None:
        msg = f"{where}: {problem}; nothing was imported"
        raise CheckpointError(msg)
    try:
        checkpoint = _untyped(serde, record["checkpoint"])
        metadata = _untyped(serde, record.get("metadata") or ["null", ""])
        writes = [
            (str(task), str(channel), _untyped(serde, value))
            for task, channel, value in record.get("writes") or []
        ]
        _check_checkpoint(checkpoint, metadata)
    except (CheckpointError, KeyError, ValueError, TypeError, binascii.Error) as exc:
        msg = f"{where} cannot be read ({exc}); nothing was imported"
        raise CheckpointError(msg) from None
    parent = record.get("parent_checkpoint_id")
    return _Decoded(
        str(thread),
        str(record.get("checkpoint_ns") or ""),
        str(parent) if parent else None,
        checkpoint,
        metadata or {},
        writes,
    )


def _check_checkpoint(checkpoint: Any, metadata: Any) -> None:
    """Raise ``ValueError`` unless ``checkpoint`` has what a saver's ``put`` reads."""
    if not isinstance(checkpoint, dict):
        msg = f"the checkpoint is a {type(checkpoint).__name__}, not a mapping"
        raise ValueError(msg)
    for key, kind in (("id", str), ("channel_values", dict), ("channel_versions", dict)):
        if not isinstance(checkpoint.get(key), kind):
            msg = f"the checkpoint has no {key!r} {kind.__name__}"
            raise ValueError(msg)
    if metadata is not None and not isinstance(metadata, dict):
        msg = f"the metadata is a {type(metadata).__name__}, not a mapping"
        raise ValueError(msg)


def _transaction(saver: BaseCheckpointSaver) -> AbstractContextManager[Any]:
    """The saver's one-transaction block; none for a saver without (in memory: one process)."""
    transaction = getattr(saver, "transaction", None)
    return transaction() if transaction is not None else nullcontext()


def _put(saver: BaseCheckpointSaver, item: _Decoded) -> None:
    configurable = {"thread_id": item.thread, "checkpoint_ns": item.namespace}
    if item.parent:
        configurable["checkpoint_id"] = item.parent
    checkpoint: Any = item.checkpoint
    saved = saver.put(
        {"configurable": configurable},  # type: ignore[typeddict-item]
        checkpoint,
        item.metadata,  # type: ignore[arg-type]
        checkpoint["channel_versions"],
    )
    by_task: dict[str, list[tuple[str, Any]]] = {}
    for task_id, channel, value in item.writes:
        by_task.setdefault(task_id, []).append((channel, value))
    for task_id, task_writes in by_task.items():
        saver.put_writes(saved, task_writes, task_id)
