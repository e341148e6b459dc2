"""Checks a run passes before its session is created.

A run that fails at its first step has already written a thread ("running", with a
resume hint that cannot help). Everything that can be known before the graph starts is
checked here instead: the task, the session id, the model.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

EXIT_USAGE = 2
_MULTI_KINDS = ("multi_agent", "expert_router")


class RunSetupError(Exception):
    """A run cannot start; ``str(exc)`` says why and what to do, ``code`` is the exit code."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def check_task(task: Any) -> None:
    """An empty or blank task is a usage error.

    Raises:
        RunSetupError: With exit code 2.
    """
    if isinstance(task, str) and not task.strip():
        msg = f"the task is empty ({task!r}); say in words what the agent should do"
        raise RunSetupError(msg, EXIT_USAGE)


def session_ids(ctx: dict[str, Any]) -> list[str]:
    """The ids of the project's sessions, newest first."""
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.checkpointing import list_threads, open_checkpointer
    from jarvis_graph.context import JarvisContext, resolve_settings

    url = resolve_settings(JarvisContext(**ctx)).checkpoint_url
    with open_checkpointer(Path(ctx["workspace"]), url) as saver:
        return [row.thread_id for row in list_threads(saver)]


def unknown_session(thread_id: str, known: list[str]) -> str:
    """The message for a session id that is not in ``known``, with the closest ids."""
    close = difflib.get_close_matches(thread_id, known, n=5, cutoff=0.5)
    if close:
        hint = "closest: " + ", ".join(close)
    elif known:
        hint = "newest: " + ", ".join(known[:5])
    else:
        hint = "this project has no sessions yet"
    return (
        f"no session {thread_id!r} in this project ({hint}); `jarvis sessions list` shows "
        "them all, --new-thread ID starts a new session with a chosen id"
    )


def check_thread(ctx: dict[str, Any], thread_id: str | None, new_thread: str | None) -> None:
    """``--thread`` must name an existing session, ``--new-thread`` a new one.

    Raises:
        RunSetupError: The id is unknown, taken, malformed, or both options were given.
    """
    if thread_id is None and new_thread is None:
        return
    if thread_id is not None and new_thread is not None:
        msg = "give either --thread (continue a session) or --new-thread (start one), not both"
        raise RunSetupError(msg, EXIT_USAGE)
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.session_transfer import session_id_problem

    problem = None if new_thread is None else session_id_problem(new_thread, "--new-thread")
    if problem is not None:  # the rule imported sessions follow too
        raise RunSetupError(problem, EXIT_USAGE)
    known = session_ids(ctx)
    if thread_id is not None and thread_id not in known:
        raise RunSetupError(unknown_session(thread_id, known))
    if new_thread is not None and new_thread in known:
        msg = (
            f"session {new_thread!r} already exists; continue it with --thread {new_thread} "
            "or choose another id"
        )
        raise RunSetupError(msg)


def check_model(ctx: dict[str, Any], kind: str = "agent") -> None:
    """The run's model can be set up (platform known, key present, script file valid).

    A multi-agent run's agents may each use another model group, so its default model
    is not required.

    Raises:
        RunSetupError: The model cannot be created; the message is the platform's.
    """
    if kind in _MULTI_KINDS:
        return
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.config import ConfigError
    from jarvis_graph.context import JarvisContext, resolve_settings
    from jarvis_graph.platforms.registry import PlatformError, create_chat_model

    try:
        create_chat_model(resolve_settings(JarvisContext(**ctx)).model_for("normal"))
    except (PlatformError, ConfigError) as exc:
        raise RunSetupError(str(exc)) from None
