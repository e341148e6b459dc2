"""confirm_tools: ask the user, through one interrupt, before any side effect happens.

The interrupt value is ``{"type": "confirm_tools", "requests": [...]}``; each request has
``id``, ``name``, ``args`` and ``kind`` (``confirm`` or ``question``). Resume with a dict
mapping each ``id`` to a decision:

- ``{"action": "approve"}``
- ``{"action": "edit", "args": {...}}`` — run the call with these arguments
- ``{"action": "reject", "reason": "..."}`` — the model is told the user declined
- ``{"answer": "..."}`` — for ``question`` requests (the ``ask_user`` tool)

A bare ``"approve"`` or ``"reject"`` applies to every confirmation request.

A request whose call writes a protected path (Jarvis' own settings, tools and memories, see
:mod:`jarvis_graph.tools.protected`) lists them in ``protected``; it runs only when the
decision also allows every one of them, ``{"action": "approve", "allow_protected": [...]}``,
so a front end must ask about them separately. Such a call is asked about in every confirm
mode, and declined when nobody can be asked.
"""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.messages import ToolMessage
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from jarvis_graph.context import JarvisContext
from jarvis_graph.messages import last_ai, pending_tool_calls
from jarvis_graph.nodes.call_model import needs_human
from jarvis_graph.runtime.services import RunServices, services_of
from jarvis_graph.state import AgentState
from jarvis_graph.tools.protected import protected_targets, write_targets
from jarvis_graph.tools.registry import asks_user

DECLINED_NON_INTERACTIVE = (
    "this run is non-interactive and the tool needs confirmation; the user can allow it "
    "with --yes or `confirm: never`"
)
PROTECTED_WHAT = (
    "where Jarvis keeps its own settings, tools and memories (read by every later session)"
)


def declined_protected(paths: list[str], non_interactive: bool) -> str:
    """Why a call that writes the protected ``paths`` was not run, for the model."""
    named = ", ".join(repr(p) for p in paths)
    if non_interactive:
        return (
            f"this run is non-interactive and the call writes {named}, {PROTECTED_WHAT}; only "
            "the user can allow that, at a prompt naming the path (--yes does not cover it). "
            "Write somewhere else, or tell the user the change to make"
        )
    return f"the user did not allow writing {named}, {PROTECTED_WHAT}"


def confirm_tools(state: AgentState, runtime: Runtime[JarvisContext]) -> dict[str, Any]:
    """Interrupt for confirmations and questions, then apply the user's decisions."""
    services = services_of(runtime)
    pending = [c for c in pending_tool_calls(state["messages"]) if needs_human(c, services)]
    if not pending:
        return {}
    requests = [confirm_request(call, services) for call in pending]
    if services.context.non_interactive:  # nobody can confirm: decline, never run unconfirmed
        decisions = {r["id"]: {"action": "reject", "reason": nobody_asked(r)} for r in requests}
    else:
        reply = interrupt({"type": "confirm_tools", "requests": requests})
        decisions = normalise_decisions(reply, requests)
    ai = last_ai(state["messages"])
    assert ai is not None  # pending calls come from it
    questions = {r["id"] for r in requests if r["kind"] == "question"}
    asked = {r["id"] for r in requests}
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
            new_calls.append(call)
            continue
        if call["id"] in asked:
            decision = consented(call, decision, services)
        if decision.get("action") == "edit" and isinstance(decision.get("args"), dict):
            call = {**call, "args": decision["args"]}
        if decision.get("action") == "reject":
            reason = decision.get("reason") or "no reason given"
            text = (
                f"The user declined this call to {call['name']} ({reason}). It was not run. "
                "Do not repeat it; continue another way or explain what you need."
            )
            answers.append(_tool_message(call, text, status="error"))
        new_calls.append(call)
    update: list[Any] = []
    if new_calls != list(ai.tool_calls):
        update.append(ai.model_copy(update={"tool_calls": new_calls}))
    return {"messages": update + answers}


def consented(
    call: dict[str, Any], decision: dict[str, Any], services: RunServices
) -> dict[str, Any]:
    """``decision``, or a reject when the call it runs writes a protected path not allowed.

    Checked on the arguments that would run, so an edit cannot slip a protected path in.
    """
    if decision.get("action") == "reject" or "answer" in decision:
        return decision
    edited = decision.get("action") == "edit" and isinstance(decision.get("args"), dict)
    args = decision["args"] if edited else call.get("args")
    tool = services.tools.get(call["name"])
    guarded = protected_targets(tool, args, services.workspace, services.settings)
    if set(guarded) <= set(_allowed(decision)):
        return decision
    return {"action": "reject", "reason": declined_protected(guarded, False)}


def nobody_asked(request: dict[str, Any]) -> str:
    """Why a request was declined in a run that cannot ask anyone."""
    protected = request.get("protected")
    return declined_protected(protected, True) if protected else DECLINED_NON_INTERACTIVE


def _allowed(decision: dict[str, Any]) -> list[str]:
    allowed = decision.get("allow_protected")
    return [str(p) for p in allowed] if isinstance(allowed, list) else []


def route_after_confirm_tools(state: AgentState) -> Literal["run_tools", "call_model"]:
    """Run what is left to run; if every call was answered, go back to the model."""
    return "run_tools" if pending_tool_calls(state["messages"]) else "call_model"


def confirm_request(call: dict[str, Any], services: RunServices) -> dict[str, Any]:
    """The request of the ``confirm_tools`` interrupt that asks about ``call``.

    ``targets`` lists the files the call writes (a front end always shows them whole) and
    ``protected`` those of them that need the user's separate consent.
    """
    tool = services.tools.get(call["name"])
    question = tool is not None and asks_user(tool)
    args = call.get("args", {})
    request = {"id": call["id"], "name": call["name"], "args": args}
    request["kind"] = "question" if question else "confirm"
    if question:
        request["question"] = str(args.get("question", ""))
    targets = write_targets(tool, args)
    if targets:
        request["targets"] = targets
    protected = protected_targets(tool, args, services.workspace, services.settings)
    if protected:
        request["protected"] = protected
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
