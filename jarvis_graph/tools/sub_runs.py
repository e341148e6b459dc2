"""What a tool that starts a run of its own (a tool chain, a sub-agent) says about that run.

The tool notes a short summary of the sub-run under its tool call's id; ``run_tools``
takes it and keeps it as the tool message's ``artifact`` (``{"sub_run": {...}}``), so
the thread's own state shows its tree of sub-runs to any client of the LangGraph API (the
web console), not only to a reader of the checkpoint store. Summaries hold statuses,
names and short answers: nothing a tool result would not hold.

A tool that saves its whole output itself (``execute_script`` streams it to a file while
the script runs) notes that file the same way, so ``run_tools`` reports it as the call's
``output_path``, as it does for the outputs it saves.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

_NOTES: dict[str, dict[str, Any]] = {}
_FILES: dict[str, str] = {}
_LOCK = threading.Lock()


def _call_id() -> str | None:
    """The id of the tool call in progress, or ``None`` outside one."""
    # deferred: langgraph is loaded by any run this is called in
    from langgraph.config import get_config

    try:
        call_id = (get_config().get("metadata") or {}).get("jarvis_tool_call_id")
    except RuntimeError:  # not inside a graph run
        return None
    return str(call_id) if call_id else None


def note_sub_run(summary: dict[str, Any]) -> None:
    """Keep ``summary`` for the tool call in progress (nothing outside a tool call)."""
    if call_id := _call_id():
        with _LOCK:
            _NOTES[call_id] = summary


def take_sub_run(call_id: str) -> dict[str, Any] | None:
    """The summary noted for ``call_id``, once."""
    with _LOCK:
        return _NOTES.pop(call_id, None)


def note_output_file(path: Path) -> None:
    """Keep the file the tool call in progress saved its whole output to."""
    if call_id := _call_id():
        with _LOCK:
            _FILES[call_id] = str(path)


def take_output_file(call_id: str) -> str | None:
    """The output file noted for ``call_id``, once."""
    with _LOCK:
        return _FILES.pop(call_id, None)


def sub_runs_of(messages: list[Any]) -> list[dict[str, Any]]:
    """The sub-run summaries kept on the tool messages of ``messages``, in order."""
    found = []
    for message in messages:
        artifact = getattr(message, "artifact", None)
        if isinstance(artifact, dict) and isinstance(artifact.get("sub_run"), dict):
            found.append(artifact["sub_run"])
    return found
