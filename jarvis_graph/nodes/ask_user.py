"""ask_user: in interactive runs, wait for the user's next instruction after an answer."""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.messages import HumanMessage
from langgraph.types import Command, interrupt

from jarvis_graph.messages import text_of
from jarvis_graph.state import AgentState


def ask_user(state: AgentState) -> Command[Literal["call_model", "complete_task"]]:
    """Interrupt with the model's last text; resume with the next instruction.

    Resuming with an empty string, ``None`` or ``{"action": "complete"}`` ends the run.
    """
    reply: Any = interrupt({"type": "ask_user", "question": text_of(state["messages"][-1])})
    if isinstance(reply, dict):
        reply = reply.get("answer") if reply.get("action") != "complete" else None
    text = str(reply or "").strip()
    if not text:
        return Command(goto="complete_task")
    # A new instruction starts a new budget of model calls.
    update = {"messages": [HumanMessage(content=text)], "iteration": 0}
    return Command(goto="call_model", update=update)
