"""start_task: set up a run — system prompt, task message, counters."""

from __future__ import annotations

import uuid
from typing import Any

from langchain_core.messages import (
    AnyMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
)
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.runtime import Runtime

from jarvis_graph.context import JarvisContext
from jarvis_graph.events import Event
from jarvis_graph.features.answer_check import workspace_digest
from jarvis_graph.messages import text_of
from jarvis_graph.nodes.check_answer import check_enabled
from jarvis_graph.nodes.review_answer import reviewers
from jarvis_graph.runtime.services import RunServices, services_of
from jarvis_graph.state import CONTEXT_NAME, AgentState
from jarvis_graph.tools.attachments import AttachLimits, attachment_text

SYSTEM_ID = "jarvis-system"
CONTEXT_ID_PREFIX = "jarvis-context-"
TASK_ID_PREFIX = "jarvis-task-"
"""Ids of the task messages start_task adds (caller-sent messages have other ids)."""


def start_task(state: AgentState, runtime: Runtime[JarvisContext]) -> dict[str, Any]:
    """Start (or continue) a run: refresh the system prompt and add the task message."""
    services = services_of(runtime, starting=True)  # tools, models, events: built once
    messages = state.get("messages", [])
    task = state.get("task", "")
    new: list[Any] = []
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
        new.extend(_context_message(task, services))
    system = SystemMessage(content=services.system_prompt(task), id=SYSTEM_ID)
    max_iterations = services.settings.max_iterations
    services.bus.emit(Event.TASK_STARTED, {"task": task, "max_iterations": max_iterations})
    update: dict[str, Any] = {}
    if fresh and (check_enabled(services) or reviewers(services)):  # compared at the end
        update["workspace_digest"] = workspace_digest(services.workspace)
    elif fresh and state.get("workspace_digest") is not None:
        update["workspace_digest"] = None  # an earlier task's: not this one's
    return update | {
        "messages": [*_system_first(messages, system), *new],
        "task": task,
        "iteration": 0,
        "max_iterations": max_iterations,
        "status": "running",
        "final_answer": "",
    }


def _system_first(messages: list[AnyMessage], system: SystemMessage) -> list[BaseMessage]:
    """The update that puts ``system`` at the head of the conversation.

    Chat templates want the system prompt first. ``add_messages`` replaces an earlier prompt
    in place, but appends a new one: after the task message a caller sent to a new thread
    (a task with images), so the conversation is rewritten with the prompt first.
    """
    if not messages or messages[0].id == SYSTEM_ID:
        return [system]
    rest = [m for m in messages if m.id != SYSTEM_ID]
    return [RemoveMessage(id=REMOVE_ALL_MESSAGES), system, *rest]


def is_context_message(message: Any) -> bool:
    """Whether ``message`` is workspace context start_task attached to a task."""
    return isinstance(message, HumanMessage) and message.name == CONTEXT_NAME


def _context_message(task: str, services: RunServices) -> list[HumanMessage]:
    """The workspace context for a new task, as a message after it (none if empty)."""
    settings = services.settings
    limits = AttachLimits(
        named_files=settings.attach_named_files,
        max_lines=settings.attach_max_lines,
        listing=settings.attach_listing,
    )
    text = attachment_text(task, services.workspace, limits)
    if text is None:
        return []
    text = services.env.mask(text)  # stored in the checkpoint: no secret values
    return [HumanMessage(content=text, name=CONTEXT_NAME, id=f"{CONTEXT_ID_PREFIX}{uuid.uuid4()}")]
