"""Routing a new chat message to the open thread it belongs to.

Open threads are the project's sessions with a checkpoint in the last
``thread_routing_hours`` (``jarvis chat --threads`` lists them). A message is embedded
with the project's embedder (MiniLM) and scored against each thread's task and recent
turns: the mean of its cosines with them (its dot product with the thread's mean vector),
so one generic turn ("group the fixes") does not pull in every message that shares a word
with it; the closest thread wins. When the best two are within :data:`MARGIN` of each
other, a tie-breaker (the ``cheap`` model, asked for the number of the conversation the
message continues) decides; below the threshold (``thread_routing_threshold``) the
message starts a new thread.

Python API::

    router = ThreadRouter(default_embedder(), tie_break=model_tie_break(cheap_model))
    route = router.route("round the total too", open_threads(saver, hours=12))
    route.thread_id  # None: start a new thread
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from jarvis_graph.config import Settings
from jarvis_graph.state import is_task_message

THRESHOLD: float = Settings.model_fields["thread_routing_threshold"].default
"""Below this score a message starts a new thread (the ``thread_routing_threshold`` default)."""
MARGIN = 0.1
"""Scores of the best two threads this close are a tie for the tie-breaker."""
RECENT_TURNS = 4
"""User messages and answers of a thread, newest, that speak for it beside its task."""
TURN_CHARS = 300


@dataclass(frozen=True)
class ThreadProfile:
    """What a thread is about: its task and its latest turns."""

    thread_id: str
    task: str
    turns: tuple[str, ...] = ()
    updated: str = ""

    @property
    def texts(self) -> list[str]:
        """The texts a message is compared with."""
        return [t for t in (self.task, *self.turns) if t.strip()]


@dataclass(frozen=True)
class Route:
    """Where a message goes: a thread (``None``: a new one), its score and how it was chosen."""

    thread_id: str | None
    score: float
    how: str
    """``closest``, ``model`` (the tie-breaker chose), ``new`` (below the threshold)."""
    scores: dict[str, float] = field(default_factory=dict)


TieBreak = Callable[[str, Sequence[ThreadProfile]], int | None]
"""Given the message and the tied threads, the index of the one it continues (or ``None``)."""


class ThreadRouter:
    """Scores messages against threads with an embedder (texts embedded once each)."""

    def __init__(
        self,
        embedder: Embeddings,
        threshold: float = THRESHOLD,
        margin: float = MARGIN,
        tie_break: TieBreak | None = None,
    ) -> None:
        self.embedder = embedder
        self.threshold = threshold
        self.margin = margin
        self.tie_break = tie_break
        self._vectors: dict[str, np.ndarray] = {}

    def _embed(self, texts: list[str]) -> np.ndarray:
        new = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if new:
            for text, vector in zip(new, self.embedder.embed_documents(new), strict=True):
                v = np.asarray(vector, dtype=np.float32)
                self._vectors[text] = v / (np.linalg.norm(v) or 1.0)
        return np.stack([self._vectors[t] for t in texts])

    def scores(self, message: str, threads: Sequence[ThreadProfile]) -> dict[str, float]:
        """Each thread's score: the mean cosine of the message with its texts."""
        query = np.asarray(self.embedder.embed_query(message), dtype=np.float32)
        query /= np.linalg.norm(query) or 1.0
        return {
            t.thread_id: float((self._embed(t.texts) @ query).mean()) if t.texts else 0.0
            for t in threads
        }

    def route(self, message: str, threads: Sequence[ThreadProfile]) -> Route:
        """The thread ``message`` belongs to, or a new one."""
        if not threads:
            return Route(None, 0.0, "new")
        scores = self.scores(message, threads)
        ranked = sorted(threads, key=lambda t: -scores[t.thread_id])
        best = ranked[0]
        top = scores[best.thread_id]
        if top < self.threshold:
            return Route(None, top, "new", scores)
        tied = [t for t in ranked if top - scores[t.thread_id] <= self.margin]
        if len(tied) > 1 and self.tie_break is not None:
            chosen = self.tie_break(message, tied)
            if chosen is not None and 0 <= chosen < len(tied):
                pick = tied[chosen]
                return Route(pick.thread_id, scores[pick.thread_id], "model", scores)
        return Route(best.thread_id, top, "closest", scores)


def model_tie_break(model: Any) -> TieBreak:
    """A tie-breaker that asks ``model`` (a chat model) for the conversation's number.

    Only an answer that is exactly one of the numbers counts; anything else keeps the
    closest thread.
    """

    def choose(message: str, threads: Sequence[ThreadProfile]) -> int | None:
        listing = "\n".join(
            f"{n}. {t.task[:TURN_CHARS]}" + (f" (latest: {t.turns[0][:150]})" if t.turns else "")
            for n, t in enumerate(threads, 1)
        )
        prompt = (
            "Which conversation does this new message continue? Answer with the number "
            f"only.\n\nConversations:\n{listing}\n\nNew message: {message}\n\nNumber:"
        )
        try:
            reply = model.invoke([HumanMessage(prompt)])
        except Exception:  # a tie-breaker that fails leaves the closest thread
            return None
        found = re.fullmatch(r"\s*(\d+)\s*\.?\s*", str(getattr(reply, "text", "") or ""))
        return int(found.group(1)) - 1 if found else None

    return choose


def profile_of(thread_id: str, values: dict[str, Any], updated: str = "") -> ThreadProfile:
    """A thread's profile from its latest saved values (task, messages)."""
    messages: list[BaseMessage] = list(values.get("messages") or [])
    turns: list[str] = []
    for message in reversed(messages):
        if len(turns) >= RECENT_TURNS:
            break
        if is_task_message(message) or (isinstance(message, AIMessage) and not message.tool_calls):
            text = " ".join(str(message.text).split())[:TURN_CHARS]
            if text:
                turns.append(text)
    task = " ".join(str(values.get("task") or "").split())[:TURN_CHARS]
    first = next((m for m in messages if is_task_message(m)), None)
    if first is not None:  # the thread's first task says most about it
        task = " ".join(str(first.text).split())[:TURN_CHARS] or task
    return ThreadProfile(thread_id, task, tuple(turns), updated)


def open_threads(saver: Any, hours: float, limit: int = 20) -> list[ThreadProfile]:
    """The project's threads with a checkpoint in the last ``hours``, newest first."""
    # deferred: the checkpoint helpers load the session store's modules
    from jarvis_graph.checkpointing import list_threads

    since = dt.datetime.now(dt.UTC) - dt.timedelta(hours=hours)
    found = []
    for row in list_threads(saver)[:limit]:
        saved = saver.get_tuple({"configurable": {"thread_id": row.thread_id}})
        if saved is None:
            continue
        stamp = str(saved.checkpoint.get("ts") or "")
        try:
            when = dt.datetime.fromisoformat(stamp)
        except ValueError:
            continue
        if when.tzinfo is None:
            when = when.replace(tzinfo=dt.UTC)
        if when < since:
            break  # newest first: the rest are older
        values = dict(saved.checkpoint.get("channel_values") or {})
        found.append(profile_of(row.thread_id, values, stamp))
    return found
