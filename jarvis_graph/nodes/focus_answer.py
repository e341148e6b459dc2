"""focus_answer: a small model writes its final answer again from the facts and the question.

On when the ``focused_answer`` feature is (see :mod:`jarvis_graph.features.focused_answer`).
"""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.runtime import Runtime

from jarvis_graph.context import JarvisContext
from jarvis_graph.features.focused_answer import FROM_REPEATS, answer_messages, facts_of
from jarvis_graph.messages import last_ai, text_of
from jarvis_graph.nodes.check_answer import check_enabled
from jarvis_graph.runtime.services import RunServices, services_of
from jarvis_graph.state import AgentState, is_task_message


def focus_enabled(services: RunServices) -> bool:
    """Whether the run writes focused answers (the ``focused_answer`` feature is on)."""
    return any(f.name == "focused_answer" for f in services.features)


def focus_answer(state: AgentState, runtime: Runtime[JarvisContext]) -> dict[str, Any]:
    """Replace the model's answer with one written from the task's facts, when it has any.

    After a turn whose calls were all refused as repeats (see ``route_after_tools``) there
    is no answer to replace: the focused answer is added as the model's next message.
    """
    services = services_of(runtime)
    messages = state["messages"]
    ai = last_ai(messages)
    facts = facts_of(messages)
    task = next((str(m.text) for m in reversed(messages) if is_task_message(m)), "")
    stuck = isinstance(messages[-1], ToolMessage)  # came straight from run_tools
    if ai is None or (ai.tool_calls and not stuck) or not facts or not task:
        return {}
    reply = services.chat_model("normal").invoke(answer_messages(task, facts))
    text = text_of(reply).strip()
    if not text:
        return {}
    if stuck:
        meta = {**reply.response_metadata, "focused_from": FROM_REPEATS}
        usage = getattr(reply, "usage_metadata", None)
        return {"messages": [AIMessage(text, response_metadata=meta, usage_metadata=usage)]}
    meta = {**ai.response_metadata, "focused_from": text_of(ai)}
    return {"messages": [ai.model_copy(update={"content": text, "response_metadata": meta})]}


def route_after_focus(
    state: AgentState, runtime: Runtime[JarvisContext]
) -> Literal["check_answer", "complete_task"]:
    """The answer check next when the run checks its answers."""
    return "check_answer" if check_enabled(services_of(runtime)) else "complete_task"
