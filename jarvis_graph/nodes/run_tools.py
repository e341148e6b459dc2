"""run_tools: execute the pending tool calls and answer each with a tool message.

Every failure (unknown tool, bad arguments, an exception inside a tool, arguments that
were not valid JSON) becomes a readable error message for the model; the run goes on.
"""

from __future__ import annotations

import logging
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import get_executor_for_config, merge_configs
from langchain_core.tools import BaseTool
from langgraph.config import get_config
from langgraph.errors import GraphBubbleUp, ParentCommand
from langgraph.runtime import Runtime
from langgraph.types import Command
from pydantic import ValidationError

from jarvis_graph.context import JarvisContext
from jarvis_graph.events import Event, EventBus
from jarvis_graph.nodes.messages import pending_tool_calls
from jarvis_graph.nodes.services import bus_for, context_of, tools_for
from jarvis_graph.state import AgentState
from jarvis_graph.tools.base import ToolEnv, ToolFailure, limit_output

logger = logging.getLogger(__name__)


def run_tools(state: AgentState, runtime: Runtime[JarvisContext]) -> dict[str, Any]:
    """Run every unanswered tool call of the last AI message (in parallel when several)."""
    config = get_config()  # tools run under this node's config (callbacks, runtime)
    ctx = context_of(runtime)
    calls = pending_tool_calls(state["messages"])
    tools = tools_for(ctx)
    env = ToolEnv.from_context(ctx)
    bus = bus_for(ctx)
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
        text, status = _invoke(tools[name], args or {}, config, call_id)
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


def _invoke(
    tool: BaseTool, args: dict[str, Any], config: RunnableConfig, call_id: str = ""
) -> tuple[str, str]:
    if call_id:  # execute_script records its process group under the call's id
        config = merge_configs(config, {"metadata": {"jarvis_tool_call_id": call_id}})
    try:
        result = tool.invoke(args, config)
    except GraphBubbleUp:
        raise
    except ToolFailure as exc:
        return f"Error: {exc}", "error"
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors()
        )
        expected = list(tool.args)
        text = f"Invalid arguments for {tool.name}: {problems}. Expected parameters: {expected}"
        return text, "error"
    except Exception as exc:
        logger.exception("tool %s raised", tool.name)
        return f"Error: tool {tool.name} failed: {type(exc).__name__}: {exc}", "error"
    if isinstance(result, Command) and result.graph == Command.PARENT:
        raise ParentCommand(result)  # a hand-off: the graph above routes it
    return (result if isinstance(result, str) else str(result)), "success"
