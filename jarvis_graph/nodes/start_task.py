"""start_task: set up a run — system prompt, task message, counters."""

from __future__ import annotations

import uuid
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.runtime import Runtime

from jarvis_graph.context import JarvisContext, resolve_settings
from jarvis_graph.events import Event
from jarvis_graph.messages import text_of
from jarvis_graph.nodes.methodology_steps import methodology_section
from jarvis_graph.runtime.services import bus_for, context_of, system_prompt
from jarvis_graph.state import CONTEXT_NAME, AgentState
from jarvis_graph.tools.attachments import AttachLimits, attachment_text
from jarvis_graph.tools.base import ToolEnv

SYSTEM_ID = "jarvis-system"
CONTEXT_ID_PREFIX = "jarvis-context-"
TASK_ID_PREFIX = "jarvis-task-"
"""Ids of the task messages start_task adds (caller-sent messages have other ids)."""


def start_task(state: AgentState, runtime: Runtime[JarvisContext]) -> dict[str, Any]:
    """Start (or continue) a run: refresh the system prompt and add the task message."""
    ctx = context_of(runtime)
    settings = resolve_settings(ctx)
    messages = state.get("messages", [])
    task = state.get("task", "")
    new: list[Any] = [SystemMessage(content=system_prompt(ctx), id=SYSTEM_ID)]
    # The system prompt and the attached context may follow the task message: skip them.
    last = next(
        (m for m in reversed(messages) if not (is_context_message(m) or m.id == SYSTEM_ID)),
        None,
    )
    fresh = True
    if isinstance(last, HumanMessage) and not str(last.id or "").startswith(TASK_ID_PREFIX):
        task = text_of(last)  # the caller sent the task as a message
    elif task and not (isinstance(last, HumanMessage) and text_of(last) == task):
        # A task message of an earlier run that failed before the model answered is not
        # this run's task; the same task again is a retry and is not repeated.
        new.append(HumanMessage(content=task, id=f"{TASK_ID_PREFIX}{uuid.uuid4()}"))
    else:
        fresh = False
    if not task:
        msg = "no task given: pass {'task': '...'} or a human message"
        raise ValueError(msg)
    if fresh and not (messages and is_context_message(messages[-1])):  # not on a retry
        new.extend(_context_message(task, ctx))
    section = methodology_section(task, ctx)  # the ones the cheap model picks for this task
    if section:
        new[0] = SystemMessage(content=f"{new[0].content}{section}", id=SYSTEM_ID)
    max_iterations = settings.max_iterations
    bus_for(ctx).emit(Event.TASK_STARTED, {"task": task, "max_iterations": max_iterations})
    return {
        "messages": new,
        "task": task,
        "iteration": 0,
        "max_iterations": max_iterations,
        "status": "running",
        "final_answer": "",
    }


def is_context_message(message: Any) -> bool:
    """Whether ``message`` is workspace context start_task attached to a task."""
    return isinstance(message, HumanMessage) and message.name == CONTEXT_NAME


def _context_message(task: str, ctx: JarvisContext) -> list[HumanMessage]:
    """The workspace context for a new task, as a message after it (none if empty)."""
    settings = resolve_settings(ctx)
    limits = AttachLimits(
        named_files=settings.attach_named_files,
        max_lines=settings.attach_max_lines,
        listing=settings.attach_listing,
    )
    text = attachment_text(task, ctx.workspace_path(), limits)
    if text is None:
        return []
    text = ToolEnv.from_context(ctx).mask(text)  # stored in the checkpoint: no secret values
    return [HumanMessage(content=text, name=CONTEXT_NAME, id=f"{CONTEXT_ID_PREFIX}{uuid.uuid4()}")]
