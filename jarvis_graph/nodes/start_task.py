"""start_task: set up a run — system prompt, task message, counters."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.runtime import Runtime

from jarvis_graph.context import JarvisContext, resolve_settings
from jarvis_graph.events import Event
from jarvis_graph.nodes.messages import text_of
from jarvis_graph.nodes.services import bus_for, context_of, system_prompt
from jarvis_graph.state import AgentState

SYSTEM_ID = "jarvis-system"


def start_task(state: AgentState, runtime: Runtime[JarvisContext]) -> dict[str, Any]:
    """Start (or continue) a run: refresh the system prompt and add the task message."""
    ctx = context_of(runtime)
    settings = resolve_settings(ctx)
    messages = state.get("messages", [])
    task = state.get("task", "")
    new: list[Any] = [SystemMessage(content=system_prompt(ctx), id=SYSTEM_ID)]
    if messages and isinstance(messages[-1], HumanMessage):
        task = text_of(messages[-1])  # the caller sent the task as a message
    elif task:
        new.append(HumanMessage(content=task))
    if not task:
        msg = "no task given: pass {'task': '...'} or a human message"
        raise ValueError(msg)
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
