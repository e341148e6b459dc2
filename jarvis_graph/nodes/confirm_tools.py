"""confirm_tools: ask the user, through one interrupt, before any side effect happens.

The interrupt value is ``{"type": "confirm_tools", "requests": [...]}``; each request has
``id``, ``name``, ``args`` and ``kind`` (``confirm`` or ``question``). Resume with a dict
mapping each ``id`` to a decision:

- ``{"action": "approve"}``
- ``{"action": "edit", "args": {...}}`` — run the call with these arguments
- ``{"action": "reject", "reason": "..."}`` — the model is told the user declined
- ``{"answer": "..."}`` — for ``question`` requests (the ``ask_user`` tool)

A bare ``"approve"`` or ``"reject"`` applies to every confirmation request.
"""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.messages import ToolMessage
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from jarvis_graph.context import JarvisContext
from jarvis_graph.messages import last_ai, pending_tool_calls
from jarvis_graph.nodes.call_model import needs_human
from jarvis_graph.runtime.services import services_of
from jarvis_graph.state import AgentState
from jarvis_graph.tools.registry import asks_user

DECLINED_NON_INTERACTIVE = (
    "this run is non-interactive and the tool needs confirmation; the user can allow it "
    "with --yes or `confirm: never`"
)


def confirm_tools(state: AgentState, runtime: Runtime[JarvisContext]) -> dict[str, Any]:
    """Interrupt for confirmations and questions, then apply the user's decisions."""
    services = services_of(runtime)
    tools = services.tools
    pending = [c for c in pending_tool_calls(state["messages"]) if needs_human(c, services)]
    if not pending:
        return {}
    requests = [confirm_request(call, tools) for call in pending]
    if services.context.non_interactive:  # nobody can confirm: decline, never run unconfirmed
        reason = DECLINED_NON_INTERACTIVE
        decisions = {r["id"]: {"action": "reject", "reason": reason} for r in requests}
    else:
        reply = interrupt({"type": "confirm_tools", "requests": requests})
        decisions = normalise_decisions(reply, requests)
    ai = last_ai(state["messages"])
    assert ai is not None  # pending calls come from it
    questions = {r["id"] for r in requests if r["kind"] == "question"}
    new_calls: list[dict[str, Any]] = []
    answers: list[ToolMessage] = []
    for original in ai.tool_calls:
        call: dict[str, Any] = dict(original)
        question = call["id"] in questions
        decision = decisions.get(call["id"]) or (
            {"answer": ""} if question else {"action": "approve"}
        )
        if question or "answer" in decision:
            answers.append(_tool_message(call, str(decision.get("answer") or "(no answer)")))
        elif decision.get("action") == "reject":
            reason = decision.get("reason") or "no reason given"
            text = (
                f"The user declined this call to {call['name']} ({reason}). It was not run. "
                "Do not repeat it; continue another way or explain what you need."
            )
            answers.append(_tool_message(call, text, status="error"))
        elif decision.get("action") == "edit" and isinstance(decision.get("args"), dict):
            call = {**call, "args": decision["args"]}
        new_calls.append(call)
    update: list[Any] = []
    if new_calls != list(ai.tool_calls):
        update.append(ai.model_copy(update={"tool_calls": new_calls}))
    return {"messages": update + answers}


def route_after_confirm_tools(state: AgentState) -> Literal["run_tools", "call_model"]:
    """Run what is left to run; if every call was answered, go back to the model."""
    return "run_tools" if pending_tool_calls(state["messages"]) else "call_model"


def confirm_request(call: dict[str, Any], tools: dict[str, Any]) -> dict[str, Any]:
    """The request of the ``confirm_tools`` interrupt that asks about ``call``."""
    tool = tools.get(call["name"])
    question = tool is not None and asks_user(tool)
    request = {"id": call["id"], "name": call["name"], "args": call.get("args", {})}
    request["kind"] = "question" if question else "confirm"
    if question:
        request["question"] = str(call.get("args", {}).get("question", ""))
    return request


def normalise_decisions(reply: Any, requests: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The resume value of a ``confirm_tools`` interrupt as one decision per request id."""
    if isinstance(reply, str) and reply in ("approve", "reject"):
        return {r["id"]: {"action": reply} for r in requests if r["kind"] == "confirm"}
    if not isinstance(reply, dict):
        return {}
    out: dict[str, dict[str, Any]] = {}
    for key, value in reply.items():
        if isinstance(value, str):
            value = {"action": value} if value in ("approve", "reject") else {"answer": value}
        if isinstance(value, dict):
            out[str(key)] = value
    return out


def _tool_message(call: dict[str, Any], text: str, status: str = "success") -> ToolMessage:
    return ToolMessage(content=text, tool_call_id=call["id"], name=call["name"], status=status)
