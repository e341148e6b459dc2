"""run_tools: execute the pending tool calls, plus the router that decides what follows.

Every failure (unknown tool, bad arguments, an exception inside a tool, arguments that
were not valid JSON) becomes a readable error message for the model; the run goes on.
"""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import get_executor_for_config
from langchain_core.tools import BaseTool
from langgraph.config import get_config
from langgraph.runtime import Runtime

from jarvis_graph.context import JarvisContext
from jarvis_graph.events import Event, EventBus
from jarvis_graph.history import over_budget
from jarvis_graph.messages import pending_tool_calls
from jarvis_graph.runtime.services import current_settings, services_of
from jarvis_graph.state import AgentState
from jarvis_graph.tools.base import ToolEnv, limit_output
from jarvis_graph.tools.invoke import invoke_tool


def run_tools(state: AgentState, runtime: Runtime[JarvisContext]) -> dict[str, Any]:
    """Run every unanswered tool call of the last AI message (in parallel when several)."""
    config = get_config()  # tools run under this node's config (callbacks, runtime)
    services = services_of(runtime)
    calls = pending_tool_calls(state["messages"])
    tools, env, bus = services.tools, services.env, services.bus
    if len(calls) == 1:
        results = [_run_one(calls[0], tools, env, bus, config)]
    else:
        with get_executor_for_config(config) as pool:
            results = list(pool.map(lambda c: _run_one(c, tools, env, bus, config), calls))
    return {"messages": results}


def _run_one(
    call: dict[str, Any],
    tools: dict[str, BaseTool],
    env: ToolEnv,
    bus: EventBus,
    config: RunnableConfig,
) -> ToolMessage:
    name, args, call_id = call.get("name") or "", call.get("args"), call["id"]
    bus.emit(Event.BEFORE_TOOL_CALL, {"name": name, "args": args or {}, "tool_call_id": call_id})
    status = "error"
    if call.get("invalid"):
        # ``error`` says what was wrong (a JSON or YAML parse error, a protocol rule).
        text = (
            f"Your call to {name or 'a tool'!r} could not be run: "
            f"{call.get('error') or 'its arguments are not valid JSON'}. "
            f"What was received: {call.get('args')!r}. Send the call again, correctly formed."
        )
    elif name not in tools:
        known = ", ".join(sorted(tools))
        text = f"There is no tool named {name!r}. Available tools: {known}."
    else:
        text, status = invoke_tool(tools[name], args or {}, config, call_id)
    text, saved = limit_output(text, env, name or "tool")  # secrets masked: it is stored
    bus.emit(
        Event.AFTER_TOOL_CALL,
        {
            "name": name,
            "args": args if isinstance(args, dict) else {},
            "tool_call_id": call_id,
            "status": status,
            "output": text,
            "output_path": saved,
        },
    )
    return ToolMessage(content=text, tool_call_id=call_id, name=name or "unknown", status=status)


def route_after_tools(state: AgentState) -> Literal["summarize_history", "call_model"]:
    """Summarize first when the next request would exceed the budget.

    The run context is looked up rather than injected: ``update_state(...,
    as_node="run_tools")`` (how the CLI records interrupted calls) routes without one.
    """
    settings = current_settings()
    budget, rounds = settings.max_input_tokens, settings.auto_summary_rounds
    return "summarize_history" if over_budget(state["messages"], budget, rounds) else "call_model"
