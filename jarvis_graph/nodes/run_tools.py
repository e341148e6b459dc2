"""run_tools: execute the pending tool calls, plus the router that decides what follows.

Every failure (unknown tool, bad arguments, an exception inside a tool, arguments that
were not valid JSON) becomes a readable error message for the model; the run goes on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

from langchain_core.messages import AnyMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import get_executor_for_config
from langchain_core.tools import BaseTool
from langgraph.config import get_config
from langgraph.runtime import Runtime

from jarvis_graph.context import JarvisContext
from jarvis_graph.events import Event, EventBus
from jarvis_graph.history import over_budget
from jarvis_graph.messages import pending_tool_calls, refused_call, shorten, task_runs
from jarvis_graph.nodes.focus_answer import focus_enabled
from jarvis_graph.platforms.registry import resolve_platform
from jarvis_graph.runtime.services import current_services, current_settings, services_of
from jarvis_graph.state import AgentState
from jarvis_graph.tools.artifacts import Artifact, masked
from jarvis_graph.tools.base import ToolEnv, limit_output
from jarvis_graph.tools.invoke import invoke_tool
from jarvis_graph.tools.registry import is_risky
from jarvis_graph.tools.sub_runs import take_output_file, take_sub_run

NOT_AGAIN = "Not run again:"
LOCAL_WINDOW_SHARE = 0.6
"""Share of a local model's context window the history may fill before it is summarized."""


def run_tools(state: AgentState, runtime: Runtime[JarvisContext]) -> dict[str, Any]:
    """Run every unanswered tool call of the last AI message (in parallel when several).

    A call made again with the same arguments and nothing changed since (no call of a
    risky tool in between) past ``max_repeats`` is not run: its result is already above.
    """
    config = get_config()  # tools run under this node's config (callbacks, runtime)
    services = services_of(runtime)
    messages = state["messages"]
    calls = pending_tool_calls(messages)
    tools, env, bus = services.tools, services.env, services.bus
    off = services.unavailable
    limit = services.settings.model_for("normal").max_repeats
    repeats = [
        c for c in calls if not c.get("invalid") and _runs_so_far(messages, c, tools) >= limit
    ]
    if repeats:
        calls = [c for c in calls if c not in repeats]
    answers = [_not_again(c, messages) for c in repeats]
    if not calls:
        return {"messages": answers}
    if len(calls) == 1:
        results = [_run_one(calls[0], tools, env, bus, config, off)]
    else:
        with get_executor_for_config(config) as pool:
            results = list(pool.map(lambda c: _run_one(c, tools, env, bus, config, off), calls))
    return {"messages": [*answers, *results]}


def _runs_so_far(
    messages: list[AnyMessage], call: dict[str, Any], tools: dict[str, BaseTool]
) -> int:
    """How often ``call`` ran in this task since anything changed (a risky tool's call)."""
    key, count = _key(call), 0
    for made, result in task_runs(messages):
        if refused_call(str(result.text)):
            continue
        if _key(made) == key:
            count += 1
        elif made["name"] in tools and is_risky(tools[made["name"]]):
            count = 0  # something may have changed: the same call may answer anew
    return count


def _key(call: Any) -> tuple[Any, str]:
    """What makes two calls the same call: the tool and its arguments."""
    return call.get("name"), json.dumps(call.get("args"), sort_keys=True)


def _last_result(messages: list[AnyMessage], call: dict[str, Any]) -> ToolMessage | None:
    """The result of the last run of the same call (name and arguments) in this task."""
    key = _key(call)
    found = [
        result
        for made, result in task_runs(messages)
        if _key(made) == key and not refused_call(str(result.text))
    ]
    return found[-1] if found else None


def _latest_tool_turn(messages: list[AnyMessage]) -> list[ToolMessage]:
    """The tool messages at the end of the history (the last turn's results)."""
    turn: list[ToolMessage] = []
    for message in reversed(messages):
        if not isinstance(message, ToolMessage):
            break
        turn.append(message)
    return turn


def _repeat_refused(message: ToolMessage) -> bool:
    return str(message.text).startswith(NOT_AGAIN)


def refused_repeats(messages: list[AnyMessage]) -> set[str]:
    """Tools whose call in the latest tool turn was refused as a repeat (see ``_not_again``)."""
    return {m.name or "" for m in _latest_tool_turn(messages) if _repeat_refused(m)}


def only_repeats(messages: list[AnyMessage]) -> bool:
    """Whether the latest tool turn holds only calls refused as repeats."""
    turn = _latest_tool_turn(messages)
    return bool(turn) and all(_repeat_refused(m) for m in turn)


def _not_again(call: dict[str, Any], messages: list[AnyMessage]) -> ToolMessage:
    """The refusal of a repeated call; when the call failed before, its error said again.

    A small model that repeats a failed call has not read the error (or the fix it
    suggests) above; the refusal puts it next to the call again.
    """
    text = (
        f"{NOT_AGAIN} you already called {call.get('name')} with these arguments in this "
        "task, and nothing changed since. Its result is above: use it, or do something else."
    )
    failed = _last_result(messages, call)
    if failed is not None and failed.status == "error":
        text = (
            f"{NOT_AGAIN} you already called {call.get('name')} with these arguments in this "
            f"task and it failed: {shorten(str(failed.text))}\nThe same call fails the same "
            "way: change its arguments as the error says, or do something else."
        )
    name = call.get("name") or "unknown"
    return ToolMessage(content=text, tool_call_id=call["id"], name=name, status="error")


def _run_one(
    call: dict[str, Any],
    tools: dict[str, BaseTool],
    env: ToolEnv,
    bus: EventBus,
    config: RunnableConfig,
    off: Mapping[str, str],
) -> ToolMessage:
    name, args, call_id = call.get("name") or "", call.get("args"), call["id"]
    bus.emit(Event.BEFORE_TOOL_CALL, {"name": name, "args": args or {}, "tool_call_id": call_id})
    status = "error"
    artifact: Artifact | None = None
    if call.get("invalid"):
        # ``error`` says what was wrong (a JSON or YAML parse error, a protocol rule).
        text = (
            f"Your call to {name or 'a tool'!r} could not be run: "
            f"{call.get('error') or 'its arguments are not valid JSON'}. "
            f"What was received: {shorten(str(call.get('args')))!r}. Send the call again, "
            "correctly formed."
        )
    elif name not in tools:
        known = ", ".join(sorted(tools))
        text = f"There is no tool named {name!r}. Available tools: {known}."
        if name in off:
            text = f"{name} is not available in this run: {off[name]}. Available tools: {known}."
    else:
        text, status, artifact = invoke_tool(tools[name], args or {}, config, call_id)
    text, saved = limit_output(text, env, name or "tool")  # secrets masked: it is stored
    if artifact is not None:
        artifact = masked(artifact, env.mask)
    noted = take_output_file(call_id)  # a tool that saved its whole output itself
    saved = saved or noted
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
    sub_run = take_sub_run(call_id)  # a chain or sub-agent the call ran: the thread's tree
    return ToolMessage(
        content=text,
        tool_call_id=call_id,
        name=name or "unknown",
        status=status,
        artifact={"sub_run": sub_run} if sub_run else artifact,
    )


def route_after_tools(
    state: AgentState,
) -> Literal["summarize_history", "call_model", "focus_answer"]:
    """Summarize first when the next request would exceed the budget.

    When every call of the turn was refused as a repeat in a run that writes focused
    answers and asks nobody, the results the model needs are above and it is stuck: the
    answer is written from them now, without another turn of the model.

    The run context is looked up rather than injected: ``update_state(...,
    as_node="run_tools")`` (how the CLI records interrupted calls) routes without one.
    """
    services = current_services()
    if (
        services is not None
        and services.context.non_interactive
        and focus_enabled(services)
        and only_repeats(state["messages"])
    ):
        return "focus_answer"
    settings = current_settings()
    budget, rounds = settings.max_input_tokens, settings.auto_summary_rounds
    spec = settings.model_for("normal")
    if resolve_platform(spec) == "local":
        # The local model's window is small: summarize well before a request overflows
        # it (the tool list and the reply need room too).
        budget = min(budget or spec.n_ctx, int(spec.n_ctx * LOCAL_WINDOW_SHARE))
    return "summarize_history" if over_budget(state["messages"], budget, rounds) else "call_model"
