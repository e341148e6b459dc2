"""call_model: one model turn, plus the router that decides what follows it."""

from __future__ import annotations

import json
from typing import Any, Literal

from langchain_core.messages import AIMessage
from langgraph.errors import GraphBubbleUp
from langgraph.runtime import Runtime

from jarvis_graph.context import JarvisContext, resolve_settings
from jarvis_graph.events import Event
from jarvis_graph.nodes.messages import pending_tool_calls, text_of
from jarvis_graph.nodes.services import COMPLETE_MARKER, bus_for, context_of, model_for
from jarvis_graph.platforms.registry import PlatformError, ProviderError
from jarvis_graph.state import AgentState
from jarvis_graph.tools.registry import asks_user, is_risky


def call_model(state: AgentState, runtime: Runtime[JarvisContext]) -> dict[str, Any]:
    """Ask the model for the next turn.

    Raises:
        ProviderError: The provider failed after its retries; the thread can be resumed.
        PlatformError: The model cannot be set up (unknown platform, missing key, script).
    """
    ctx = context_of(runtime)
    bus = bus_for(ctx)
    messages = state["messages"]
    iteration = state.get("iteration", 0) + 1
    bus.emit(Event.BEFORE_MODEL_CALL, {"iteration": iteration, "message_count": len(messages)})
    model = model_for(ctx, "normal", state.get("selected_tools"))
    try:
        response = model.invoke(messages)
    except (GraphBubbleUp, PlatformError):
        raise
    except Exception as exc:
        raise ProviderError(_describe_provider_error(exc, ctx)) from exc
    response = _reject_truncated_calls(response)
    bus.emit(
        Event.AFTER_MODEL_CALL,
        {
            "iteration": iteration,
            "tool_calls": [c["name"] for c in response.tool_calls],
            "text_chars": len(text_of(response)),
        },
    )
    return {"messages": [response], "iteration": iteration}


def _describe_provider_error(exc: Exception, ctx: JarvisContext) -> str:
    spec = resolve_settings(ctx).model_for("normal")
    status = getattr(exc, "status_code", None)
    where = spec.base_url or "the provider's default endpoint"
    what = f"HTTP {status}" if status else type(exc).__name__
    retried = status is None or status in (408, 409, 429) or status >= 500
    how = f"failed after {spec.max_retries} retries" if retried else "was rejected"
    return (
        f"the model call {how} ({what} from {where}, model {spec.model!r}): {exc}. "
        "The session is saved; resume it once the problem is fixed."
    )


def _reject_truncated_calls(response: AIMessage) -> AIMessage:
    """Tool calls cut off by the output-token limit must not run with repaired arguments."""
    finish = (response.response_metadata or {}).get("finish_reason")
    if finish != "length" or not response.tool_calls:
        return response
    invalid = [
        {
            "type": "invalid_tool_call",
            "name": c["name"],
            "args": json.dumps(c["args"]),
            "id": c["id"],
            "error": "the reply was cut off at the output-token limit; arguments are incomplete",
        }
        for c in response.tool_calls
    ]
    return response.model_copy(
        update={"tool_calls": [], "invalid_tool_calls": [*response.invalid_tool_calls, *invalid]}
    )


def needs_human(call: dict[str, Any], ctx: JarvisContext) -> bool:
    """Whether a pending tool call must be confirmed, or answered, by the user.

    Confirmation follows the confirm mode even in non-interactive runs (``confirm_tools``
    then declines the call instead of asking); questions need someone to answer them.
    """
    if call.get("invalid"):
        return False
    from jarvis_graph.nodes.services import tools_for

    tool = tools_for(ctx).get(call["name"])
    if tool is None:
        return False
    if asks_user(tool):
        return not ctx.non_interactive
    mode = resolve_settings(ctx).confirm
    return mode == "always" or (mode == "risky" and is_risky(tool))


def route_after_model(
    state: AgentState, runtime: Runtime[JarvisContext]
) -> Literal["confirm_tools", "run_tools", "ask_user", "complete_task"]:
    """Tool calls -> confirm or run them; otherwise finish or ask for the next instruction."""
    ctx = context_of(runtime)
    messages = state["messages"]
    pending = pending_tool_calls(messages)
    if pending and state.get("iteration", 0) >= state.get("max_iterations", 1 << 30):
        return "complete_task"
    if pending:
        return "confirm_tools" if any(needs_human(c, ctx) for c in pending) else "run_tools"
    if ctx.non_interactive or COMPLETE_MARKER in text_of(messages[-1]):
        return "complete_task"
    return "ask_user"
