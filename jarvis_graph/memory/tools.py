"""Memory tools with Jarvis' argument shapes: save_memory, retrieve_memory, clear_memory."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Literal

from langchain_core.tools import BaseTool, tool
from pydantic import BaseModel, Field

from jarvis_graph.memory.records import (
    MEMORY_TYPES,
    MemoryInputError,
    MemoryStoreError,
    check_type,
    new_record,
)
from jarvis_graph.memory.router import run_store
from jarvis_graph.tools import artifacts
from jarvis_graph.tools.artifacts import ARTIFACT_KIND, MemoryArtifact
from jarvis_graph.tools.base import ToolEnv, ToolFailure, ToolInputError, current_env

logger = logging.getLogger(__name__)

MemoryTypeArg = Literal["short_term", "project_long_term", "global_long_term"]
MAX_RETRIEVE = 50


class MemoryIn(BaseModel):
    """One memory to save."""

    memory_type: MemoryTypeArg = Field(
        description="short_term (this session only), project_long_term (this project) or "
        "global_long_term (all projects)"
    )
    tags: list[str] = Field(default_factory=list, description="Keywords to find it again.")
    content: str = Field(description="The fact, decision or lesson, self-contained.")


class SaveMemoryArgs(BaseModel):
    """Arguments of save_memory."""

    memories: list[MemoryIn] = Field(description="The memories to save.", min_length=1)


class RetrieveMemoryArgs(BaseModel):
    """Arguments of retrieve_memory."""

    memory_types: list[MemoryTypeArg] = Field(
        default_factory=list, description="Tiers to search; empty for all."
    )
    tags: list[str] = Field(
        default_factory=list, description="Only memories with any of these tags; empty for all."
    )
    query: str = Field(default="", description="What you are looking for, in words.")
    limit: int = Field(default=10, ge=1, le=MAX_RETRIEVE, description="Most results to return.")


class ClearMemoryArgs(BaseModel):
    """Arguments of clear_memory."""

    memory_types: list[MemoryTypeArg] = Field(
        default_factory=list, description="Tiers to clear from; empty for all."
    )
    tags: list[str] = Field(
        default_factory=list, description="Delete the memories having any of these tags."
    )
    ids: list[str] = Field(default_factory=list, description="Delete these memory ids.")


class SearchEpisodesArgs(BaseModel):
    """Arguments of search_episodic_memory."""

    query: str = Field(default="", description="What you look for; empty for the latest.")
    thread: str = Field(default="", description="Only this session (thread id); empty for all.")
    kind: Literal["", "user", "reasoning", "tool_call", "tool_result", "response"] = Field(
        default="", description="Only this kind of segment; empty for all."
    )
    limit: int = Field(default=5, ge=1, le=MAX_RETRIEVE, description="Most results to return.")
    expand: bool = Field(
        default=False, description="Also show the messages around the best result."
    )
    anchor: str = Field(
        default="",
        description="Show the messages around this anchor (from an earlier result) instead "
        "of searching.",
    )


def _tiers() -> Any:
    """The tiers of this call's workspace and thread, in the run's store (``runtime.store``)."""
    # deferred: the tiers load numpy and FAISS, which only a memory tool call needs
    from jarvis_graph.memory.tiers import MemoryTiers

    return MemoryTiers(current_env().workspace, current_thread(), store=run_store())


def current_thread() -> str:
    """The thread id of the graph run this call belongs to (``default`` outside a run)."""
    try:
        from langgraph.config import get_config

        return str(get_config().get("configurable", {}).get("thread_id") or "default")
    except RuntimeError:
        return "default"


_warned: set[str] = set()
"""Store failures the user was told about (once each, until a memory call succeeds)."""
_warned_lock = threading.Lock()


@contextmanager
def store_reached(tool_name: str) -> Iterator[None]:
    """A memory store that cannot be used fails the call, never the run.

    The model reads why and is told to go on without memory; the user gets one warning
    line per failure (a server that is down is not a bug: no traceback).

    Raises:
        ToolFailure: The store raised :class:`MemoryStoreError`.
    """
    try:
        yield
    except MemoryStoreError as exc:
        reason = str(exc)
        with _warned_lock:
            new = reason not in _warned
            _warned.add(reason)
        if new:
            logger.warning("%s: %s (the run goes on without long-term memory)", tool_name, reason)
        msg = f"long-term memory is unavailable: {reason}. Go on without it."
        raise ToolFailure(msg) from None
    with _warned_lock:
        _warned.clear()  # the store answers again: a later failure is news


def save_memory_impl(tiers: Any, memories: list[dict[str, Any]]) -> str:
    """Validate and save memories; a summary line per saved record (:func:`save_memory_result`)."""
    return save_memory_result(tiers, memories)[0]


def save_memory_result(tiers: Any, memories: list[dict[str, Any]]) -> tuple[str, MemoryArtifact]:
    """Validate and save memories; a summary line per saved record, and the records saved."""
    try:
        records = [
            new_record(m["memory_type"], m.get("tags"), m.get("content", "")) for m in memories
        ]
    except (MemoryInputError, KeyError) as exc:
        raise ToolInputError(str(exc)) from exc
    tiers.save(records)
    lines = [f"- {r['id']} [{r['type']}] tags: {', '.join(r['tags']) or '-'}" for r in records]
    text = f"saved {len(records)} memor{'y' if len(records) == 1 else 'ies'}:\n" + "\n".join(lines)
    return text, artifacts.memory(records)


def retrieve_memory_impl(
    tiers: Any, memory_types: list[str], tags: list[str], query: str, limit: int
) -> str:
    """The matching memories, best first, as text for the model."""
    for memory_type in memory_types:
        check_type(memory_type)
    hits = tiers.retrieve(memory_types or None, tags or None, query or None, limit)
    if not hits:
        where = ", ".join(memory_types) or "any tier"
        return f"no memories found in {where}" + (f" with tags {tags}" if tags else "")
    out = [f"{len(hits)} memor{'y' if len(hits) == 1 else 'ies'}:"]
    for hit in hits:
        rec = hit.record
        score = f" score {hit.score:.2f}" if hit.score is not None else ""
        out.append(
            f"- id {rec['id']} [{rec['type']}] tags: {', '.join(rec.get('tags', [])) or '-'}"
            f" updated {rec.get('updated_at', '?')}{score}\n  {rec['content']}"
        )
    return "\n".join(out)


def clear_memory_impl(tiers: Any, memory_types: list[str], tags: list[str], ids: list[str]) -> str:
    """Delete by ids or by tags; refuses a request that would delete everything."""
    if not tags and not ids:
        msg = "give tags or ids of the memories to delete (clearing everything is not allowed)"
        raise ToolInputError(msg)
    deleted = tiers.clear(memory_types or None, tags or None, ids or None)
    if not deleted:
        return "no memories matched; nothing deleted"
    return f"deleted {len(deleted)} memories: " + ", ".join(r["id"] for r in deleted)


@tool(args_schema=SaveMemoryArgs, response_format="content_and_artifact")
def save_memory(memories: list[MemoryIn]) -> tuple[str, MemoryArtifact]:
    """Save facts, decisions or lessons worth remembering, in one of three memory tiers."""
    items = [m.model_dump() if isinstance(m, BaseModel) else dict(m) for m in memories]
    with store_reached("save_memory"):
        return save_memory_result(_tiers(), items)


@tool(args_schema=RetrieveMemoryArgs)
def retrieve_memory(
    memory_types: list[str] | None = None,
    tags: list[str] | None = None,
    query: str = "",
    limit: int = 10,
) -> str:
    """Find saved memories by meaning (query), by tags, or both; newest first without a query."""
    types, tag_list = list(memory_types or []), list(tags or [])
    with store_reached("retrieve_memory"):
        return retrieve_memory_impl(_tiers(), types, tag_list, query, limit)


@tool(args_schema=ClearMemoryArgs)
def clear_memory(
    memory_types: list[str] | None = None,
    tags: list[str] | None = None,
    ids: list[str] | None = None,
) -> str:
    """Delete memories by ids, or those having any of the given tags."""
    types, tag_list, id_list = list(memory_types or []), list(tags or []), list(ids or [])
    with store_reached("clear_memory"):
        return clear_memory_impl(_tiers(), types, tag_list, id_list)


clear_memory.metadata = {"risky": True}
# A global memory is put in the prompt of every later session, in every project: the user
# confirms it like any other lasting side effect (``confirm: risky``; ``-n`` declines it).
save_memory.metadata = {
    "saves_memory": True,
    ARTIFACT_KIND: "memory",
    "risky_when": {"memories.*.memory_type": ["global_long_term"]},
}


def search_episodes_impl(env: ToolEnv, args: SearchEpisodesArgs) -> str:
    """Search the episodic archive, or expand an anchor, as text for the model."""
    # deferred: the checkpointer (langgraph's sqlite saver) loads only for an archive search
    from jarvis_graph.checkpointing import open_checkpointer
    from jarvis_graph.memory.episodic import (
        Anchor,
        EpisodicError,
        expand,
        format_episodes,
        format_expansion,
        search_project,
    )

    try:
        episodes = []
        anchor = Anchor.parse(args.anchor) if args.anchor else None
        message_id = None
        if anchor is None:
            episodes = search_project(
                env.workspace,
                args.query,
                thread=args.thread or None,
                kind=args.kind or None,
                limit=args.limit,
                store=run_store(),
            )
            if not episodes:
                return "no episodes found" + (f" for {args.query!r}" if args.query else "")
            if args.expand:
                anchor, message_id = episodes[0].anchor, episodes[0].value.get("message_id")
        text = format_episodes(episodes) if episodes else ""
        if anchor is not None:
            with open_checkpointer(env.workspace, env.settings.checkpoint_url) as saver:
                found = expand(saver, anchor, message_id=message_id)
            text = f"{text}\n\n{format_expansion(found, 600)}".strip()
    except EpisodicError as exc:
        raise ToolInputError(str(exc)) from exc
    return text


SEARCH_EPISODES_DESCRIPTION = (
    "Search what was said and done in earlier tasks: user messages, reasoning, tool calls, "
    "tool results and answers. Each result has an anchor; pass it back as `anchor` to see "
    "the messages around it."
)


@tool(args_schema=SearchEpisodesArgs, description=SEARCH_EPISODES_DESCRIPTION)
def search_episodic_memory(
    query: str = "",
    thread: str = "",
    kind: str = "",
    limit: int = 5,
    expand: bool = False,
    anchor: str = "",
) -> str:
    """Search the episodic archive of this project (see SEARCH_EPISODES_DESCRIPTION)."""
    args = SearchEpisodesArgs.model_validate(
        {"query": query, "thread": thread, "kind": kind, "limit": limit}
        | {"expand": expand, "anchor": anchor}
    )
    with store_reached("search_episodic_memory"):
        return search_episodes_impl(current_env(), args)


MEMORY_TOOLS: list[BaseTool] = [save_memory, retrieve_memory, clear_memory, search_episodic_memory]
__all__ = [
    "MEMORY_TOOLS",
    "MEMORY_TYPES",
    "clear_memory",
    "retrieve_memory",
    "save_memory",
    "search_episodic_memory",
]
