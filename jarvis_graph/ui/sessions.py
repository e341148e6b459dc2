"""The console's sessions are the project's sessions: one session store for both.

``jarvis ui`` starts ``langgraph dev`` with this checkpointer (``checkpointer.path`` in the
``langgraph.json`` it writes), so a session made in the console is one of the project's
sessions: ``jarvis sessions list`` shows it and ``jarvis run --thread ID`` continues it.
The store is the one the CLI uses for the workspace (``.jarvis/sessions.sqlite``, or
``checkpoint_url``). The server's own list of threads stays in a private folder of the
Jarvis home (``launch.state_dir``), where a repository cannot put files.

The other way round, the console's Sessions page reads the store itself
(:func:`list_sessions`, :func:`session_values`): the API server knows only the threads made
through it, and a session of ``jarvis run`` (its id is not a UUID) cannot be one of them.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import AbstractContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

from jarvis_graph.checkpointing import CheckpointError, list_threads, open_checkpointer
from jarvis_graph.context import JarvisContext, resolve_settings

WORKSPACE_ENV = "JARVIS_UI_WORKSPACE"
"""The workspace whose session store the console's API server opens."""
CHECKPOINTER_PATH = "jarvis_graph.ui.sessions.checkpointer"
"""Import path of :func:`checkpointer` in the form ``langgraph-api`` loads (dots only)."""
LISTED = 100
"""Sessions the Sessions page lists, newest first."""
INTERRUPT_CHANNEL = "__interrupt__"
"""The channel of a pending write that is an interrupt (the run waits for the user)."""


def session_store(workspace: Path) -> AbstractContextManager[Any]:
    """The session store the CLI opens for ``workspace`` (its configuration names it).

    Raises:
        ConfigError: The workspace's configuration is broken.
    """
    url = resolve_settings(JarvisContext(workspace=str(workspace))).checkpoint_url
    return open_checkpointer(workspace, url)


@asynccontextmanager
async def checkpointer() -> AsyncIterator[Any]:
    """The session store of the workspace ``JARVIS_UI_WORKSPACE`` names.

    ``langgraph-api`` enters this once per server process; opening and closing run in a
    worker thread, off the server's event loop.

    Raises:
        RuntimeError: ``JARVIS_UI_WORKSPACE`` is not set (the server was not started by
            ``jarvis ui``).
    """
    workspace = os.environ.get(WORKSPACE_ENV, "")
    if not workspace:
        msg = f"the console's session store needs {WORKSPACE_ENV}: start it with jarvis ui"
        raise RuntimeError(msg)
    # deferred: LangGraph's savers load in the server process only
    from jarvis_graph.checkpoint_async import entered_in_thread

    async with entered_in_thread(session_store(Path(workspace))) as saver:
        yield saver


def list_sessions(workspace: Path, limit: int = LISTED) -> list[dict[str, Any]]:
    """The newest ``limit`` sessions of the project, as ``jarvis sessions list`` lists them.

    Each is ``{thread_id, status, task, updated}``.

    Raises:
        CheckpointError: The store cannot be opened.
        ConfigError: The workspace's configuration is broken.
    """
    with session_store(workspace) as saver:
        return [_summary(saver, row.thread_id) for row in list_threads(saver)[:limit]]


def _summary(saver: Any, thread_id: str) -> dict[str, Any]:
    row: dict[str, Any] = {"thread_id": thread_id, "status": "empty", "task": "", "updated": ""}
    try:
        saved = saver.get_tuple(_config(thread_id))
    except CheckpointError:  # `jarvis sessions show ID` says why; the others are listed
        return row | {"status": "unreadable", "task": f"jarvis sessions show {thread_id} says why"}
    if saved is None:
        return row
    values = saved.checkpoint.get("channel_values") or {}
    metadata = saved.metadata or {}
    waiting = any(write[1] == INTERRUPT_CHANNEL for write in saved.pending_writes or [])
    row["status"] = str(values.get("status") or "?") + (" (waiting)" if waiting else "")
    row["task"] = " ".join(str(values.get("task") or "").split())
    if metadata.get("jarvis_chain"):  # a chain run by hand (jarvis chains run)
        row["task"] = f"chain {metadata['jarvis_chain']}"
    row["updated"] = str(saved.checkpoint.get("ts") or "")
    return row


def session_values(workspace: Path, thread_id: str) -> dict[str, Any] | None:
    """The latest saved values of ``thread_id`` (``{values, metadata, created_at}``).

    ``None`` when the store has no such session.

    Raises:
        CheckpointError: The store cannot be opened or the session cannot be read.
        ConfigError: The workspace's configuration is broken.
    """
    with session_store(workspace) as saver:
        saved = saver.get_tuple(_config(thread_id))
    if saved is None:
        return None
    values = dict(saved.checkpoint.get("channel_values") or {})
    created = saved.checkpoint.get("ts")
    return {"values": values, "metadata": dict(saved.metadata or {}), "created_at": created}


def _config(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
