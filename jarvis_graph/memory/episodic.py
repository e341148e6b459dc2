"""Episodic archive: what was said and done in completed tasks, anchored to checkpoints.

When a task completes, its conversation is cut into segments (:mod:`segments`) and each
is stored in a LangGraph store under ``("episodic", <project>)`` with its anchor: thread
id, checkpoint id and message index. :meth:`EpisodicArchive.search` finds snippets by
meaning and filters (thread, kind); :func:`expand` reads the messages around an anchor
back from the checkpointer. Snippets are redacted and truncated; the whole messages
exist only where they already were, in the checkpoint.

Re-indexing a conversation (a resumed or continued thread) adds only new or changed
segments: keys are ``thread|message id|kind|part``, and a segment whose text did not
change keeps its first anchor.

Segments are stored without vectors when a task completes (``embedded: false``), so a run
never loads the embedder for its own archive; the first search by meaning embeds the
pending ones (:meth:`EpisodicArchive.embed_pending`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from langchain_core.messages import AnyMessage
from langgraph.store.base import BaseStore, GetOp, Item, PutOp

from jarvis_graph.memory.background import wait_for_background
from jarvis_graph.memory.records import now_iso
from jarvis_graph.memory.router import namespace_label, project_store
from jarvis_graph.memory.segments import KINDS, Segment, clip, redact, segment_messages

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

NAMESPACE = "episodic"
LATEST = "latest"
"""Checkpoint part of an anchor made without a checkpointer: the thread's latest state."""
SCAN_LIMIT = 10_000
EMBEDDED = "embedded"
"""``False`` on a segment stored without its vector (embedded at the first search)."""


class EpisodicError(ValueError):
    """An anchor or request cannot be served; the message says what to do instead."""


@dataclass(frozen=True)
class Anchor:
    """Where a message is: thread, checkpoint and index in that checkpoint's messages."""

    thread_id: str
    checkpoint_id: str
    index: int

    def __str__(self) -> str:
        return f"{self.thread_id}:{self.checkpoint_id}:{self.index}"

    @classmethod
    def parse(cls, text: str) -> Anchor:
        """Read ``THREAD:CHECKPOINT:INDEX`` (the thread may itself contain ``:``).

        Raises:
            EpisodicError: The text is not an anchor.
        """
        parts = text.strip().rsplit(":", 2)
        if len(parts) != 3 or not all(parts) or not parts[2].isdigit():
            msg = (
                f"{text!r} is not an episode anchor; anchors look like "
                "THREAD:CHECKPOINT:INDEX, as printed by `jarvis memory episodes search`"
            )
            raise EpisodicError(msg)
        return cls(parts[0], parts[1], int(parts[2]))


@dataclass(frozen=True)
class Episode:
    """A stored segment found by a search (``score`` is ``None`` without a query)."""

    value: dict[str, Any]
    score: float | None

    @property
    def anchor(self) -> Anchor:
        """Where the segment's message is."""
        v = self.value
        return Anchor(v["thread_id"], v.get("checkpoint_id") or LATEST, int(v["message_index"]))


class EpisodicArchive:
    """Index and search the segments of completed tasks in ``store``.

    Args:
        store: Any LangGraph store; semantic search needs an index over ``content``.
        project: Label of the namespace written to (searches cover every project label,
            so a renamed project folder keeps its episodes).
    """

    def __init__(self, store: BaseStore, project: str = "project") -> None:
        self.store = store
        # A folder name is user input: "my.project" must work (see namespace_label).
        self.namespace = (NAMESPACE, namespace_label(project or "project"))

    def index_task(
        self,
        thread_id: str,
        checkpoint_id: str | None,
        messages: list[AnyMessage],
        first_index: int = 0,
        secrets: Sequence[str] = (),
    ) -> int:
        """Index the conversation's segments; returns how many were new or changed.

        ``first_index`` is the position of ``messages[0]`` in the checkpoint's messages
        (a block about to be cleared from the history starts after the system prompt);
        ``secrets`` are the configured secret values, masked in every snippet.
        """
        segments = segment_messages(messages, first_index, secrets)
        keys = [_key(thread_id, s) for s in segments]
        found = cast(list[Item | None], self.store.batch([GetOp(self.namespace, k) for k in keys]))
        stamp, task = now_iso(), ""
        puts: list[PutOp] = []
        for key, seg, old in zip(keys, segments, found, strict=True):
            if seg.kind == "user":
                task = clip(seg.text, 200)
            if old is not None and old.value.get("digest") == seg.digest():
                continue
            value = _value(seg, thread_id, checkpoint_id, task, stamp)
            puts.append(PutOp(self.namespace, key, {**value, EMBEDDED: False}, index=False))
        if puts:
            self.store.batch(puts)
        return len(puts)

    def embed_pending(self) -> int:
        """Embed the segments stored without vectors; returns how many there were."""
        done = 0
        while True:
            items = self.store.search(self.namespace, filter={EMBEDDED: False}, limit=SCAN_LIMIT)
            if not items:
                return done
            self.store.batch(
                [PutOp(self.namespace, i.key, {**i.value, EMBEDDED: True}) for i in items]
            )
            done += len(items)

    def search(
        self,
        query: str | None = None,
        *,
        thread: str | None = None,
        kind: str | None = None,
        limit: int = 10,
    ) -> list[Episode]:
        """Segments best matching ``query`` (newest first without one), filtered.

        Tasks this process finished are archived (in the background) before the search.

        Raises:
            EpisodicError: ``kind`` is not a segment kind.
        """
        check_kind(kind)
        wait_for_background()
        flt = {k: v for k, v in (("thread_id", thread), ("kind", kind)) if v}
        if query and query.strip():
            self.embed_pending()
            items = self.store.search((NAMESPACE,), query=query, filter=flt or None, limit=limit)
            return [Episode(i.value, i.score) for i in items]
        items = self.store.search((NAMESPACE,), filter=flt or None, limit=SCAN_LIMIT)
        items.sort(key=lambda i: (i.value.get("indexed_at", ""), i.value["message_index"]))
        return [Episode(i.value, None) for i in reversed(items[-limit:])]


def check_kind(kind: str | None) -> None:
    """Accept an empty kind or one of :data:`KINDS`.

    Raises:
        EpisodicError: Any other kind.
    """
    if kind and kind not in KINDS:
        msg = f"unknown episode kind {kind!r}; use one of {', '.join(KINDS)}"
        raise EpisodicError(msg)


def forget_thread(store: BaseStore, thread_id: str) -> int:
    """Delete every segment of a thread (its session was deleted); returns how many."""
    items = store.search((NAMESPACE,), filter={"thread_id": thread_id}, limit=SCAN_LIMIT)
    if items:
        store.batch([PutOp(tuple(i.namespace), i.key, None) for i in items])
    return len(items)


def _key(thread_id: str, seg: Segment) -> str:
    return f"{thread_id}|{seg.message_id}|{seg.kind}|{seg.part}"


def _value(
    seg: Segment, thread_id: str, checkpoint_id: str | None, task: str, stamp: str
) -> dict[str, Any]:
    return {
        "content": seg.text,
        "kind": seg.kind,
        "name": seg.name,
        "thread_id": thread_id,
        "checkpoint_id": checkpoint_id,
        "message_index": seg.index,
        "part": seg.part,
        "message_id": seg.message_id,
        "task": task,
        "digest": seg.digest(),
        "indexed_at": stamp,
    }


@dataclass(frozen=True)
class Expansion:
    """Messages around an anchor, read from a checkpoint of its thread.

    Attributes:
        anchor: The anchor asked for.
        checkpoint_id: The checkpoint read (the anchor's, or the latest one).
        index: Position of the anchored message in that checkpoint.
        start: Position of the first message shown.
        messages: The messages, as the checkpoint holds them.
    """

    anchor: Anchor
    checkpoint_id: str
    index: int
    start: int
    messages: list[AnyMessage]


def expand(
    saver: BaseCheckpointSaver,
    anchor: Anchor,
    before: int = 2,
    after: int = 2,
    message_id: str | None = None,
) -> Expansion:
    """The messages ``before`` and ``after`` the anchored one, from its checkpoint.

    With ``message_id`` (stored with each segment), the message is found by id when it is
    not at the anchor's index, and in the thread's latest checkpoint when the anchor's
    checkpoint was not kept (a run with ``durability="exit"``).

    Raises:
        EpisodicError: The thread, checkpoint or message does not exist.
    """
    found = _checkpoint_messages(saver, anchor.thread_id, anchor.checkpoint_id)
    index = anchor.index
    if found is None and message_id:
        found = _checkpoint_messages(saver, anchor.thread_id, LATEST)
    if found is not None and message_id:
        messages = found[1]
        if not (0 <= index < len(messages) and messages[index].id == message_id):
            index = next((n for n, m in enumerate(messages) if m.id == message_id), -1)
    if found is None:
        msg = f"session {anchor.thread_id!r} has no checkpoint {anchor.checkpoint_id!r}"
        raise EpisodicError(msg + "; list sessions with `jarvis sessions list`")
    checkpoint_id, messages = found
    if not 0 <= index < len(messages):
        msg = f"message {anchor.index} of anchor {anchor} is not in checkpoint {checkpoint_id}"
        raise EpisodicError(f"{msg} (it holds {len(messages)} messages)")
    start = max(0, index - max(0, before))
    shown = list(messages[start : index + max(0, after) + 1])
    return Expansion(anchor, checkpoint_id, index, start, shown)


def _checkpoint_messages(
    saver: BaseCheckpointSaver, thread_id: str, checkpoint_id: str
) -> tuple[str, list[AnyMessage]] | None:
    """The id and messages of a checkpoint of the thread's root graph (``None``: none)."""
    configurable: dict[str, Any] = {"thread_id": thread_id, "checkpoint_ns": ""}
    if checkpoint_id != LATEST:
        configurable["checkpoint_id"] = checkpoint_id
    found = saver.get_tuple({"configurable": configurable})
    if found is None:
        return None
    return found.checkpoint["id"], list(found.checkpoint["channel_values"].get("messages", []))


def open_archive(workspace: Path, store: BaseStore | None = None) -> EpisodicArchive:
    """The archive of a project, in its long-term memory store.

    ``store`` is the memory store (or a graph's store) the project store is reached
    through; by default the run's store, else the memory store.
    """
    return EpisodicArchive(project_store(workspace, store), workspace.name)


def forget_project_thread(workspace: Path, thread_id: str, store: BaseStore | None = None) -> int:
    """:func:`forget_thread` in a project's archive (a missing store is not created).

    Tasks this process finished are archived first, so none of the thread's is left behind.
    """
    wait_for_background()
    return forget_thread(open_archive(workspace, store).store, thread_id)


def search_project(
    workspace: Path, query: str | None, store: BaseStore | None = None, **filters: Any
) -> list[Episode]:
    """:meth:`EpisodicArchive.search` in a project; no store is created to find nothing.

    Tasks this process finished are archived (in the background) before the search
    (:meth:`EpisodicArchive.search` waits for them).
    """
    check_kind(filters.get("kind"))
    return open_archive(workspace, store).search(query, **filters)


def format_episodes(episodes: list[Episode]) -> str:
    """Search results as text: one header line with the anchor, then the snippet."""
    lines: list[str] = []
    for ep in episodes:
        v = ep.value
        score = f" score {ep.score:.2f}" if ep.score is not None else ""
        name = f" {v['name']}" if v.get("name") else ""
        lines.append(f"{ep.anchor}  [{v['kind']}{name}]{score}  task: {v.get('task') or '-'}")
        lines.append("    " + v["content"].replace("\n", "\n    "))
    return "\n".join(lines)


def format_expansion(expansion: Expansion, limit: int = 2_000) -> str:
    """The expanded messages as text, the anchored one marked with ``>``."""
    out = [f"session {expansion.anchor.thread_id}, checkpoint {expansion.checkpoint_id}:"]
    for n, message in enumerate(expansion.messages, expansion.start):
        mark = ">" if n == expansion.index else " "
        role = message.type + (f" {message.name}" if getattr(message, "name", None) else "")
        calls = getattr(message, "tool_calls", None) or []
        text = message.text + "".join(f"\n-> {c['name']}({c['args']})" for c in calls)
        body = clip(redact(text), limit).replace("\n", "\n     ")
        out.append(f"{mark} {n:>3} {role}: {body}")
    return "\n".join(out)
