"""Sub-agents: ``sub_agent`` and ``sub_code_agent`` hand a self-contained task to a fresh run.

The model delegates a task it can state whole; a fresh agent (no history, its own step
cap ``sub_agent_max_iterations``, the parent's workspace and settings) works on it and
its final answer comes back with a summary of what it did. The sub-run is a subgraph of
the parent's run: its checkpoints are in the parent's session (``jarvis sessions show
--tree``). Like the planner's steps, a sub-run cannot ask the user: risky tools in it run
only when the parent's confirm mode lets them run unasked (``--yes``, ``confirm: never``).
Sub-agents nest at most ``plan_max_depth`` levels.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.errors import GraphBubbleUp

from jarvis_graph.features.base import Feature, RunSetup, run_tool
from jarvis_graph.graph_registry import graph_named
from jarvis_graph.tools.base import ToolFailure, ToolInputError, current_env
from jarvis_graph.tools.sub_runs import note_sub_run, sub_runs_of

SUB_AGENT_TOOLS = ("sub_agent", "sub_code_agent")


class SubAgents(Feature):
    """Adds ``sub_agent`` and ``sub_code_agent`` to agent runs above the nesting limit."""

    name = "sub_agents"
    settings = ("sub_agents", "plan_max_depth", "sub_agent_max_iterations")

    def enabled(self, setup: RunSetup) -> bool:
        """For agent runs that may still nest a level deeper, as ``sub_agents`` says.

        ``on``: always; ``auto``: for models other than the local platform's; ``off``: never.
        """
        ctx, settings = setup.context, setup.settings
        if ctx.toolset != "agent" or ctx.depth >= settings.plan_max_depth:
            return False
        if settings.sub_agents != "auto":
            return settings.sub_agents == "on"
        # deferred: resolving the platform reads the model spec only, no provider import
        from jarvis_graph.platforms.registry import resolve_platform

        return resolve_platform(settings.model_for("normal")) != "local"

    def tools(self, setup: RunSetup) -> list[BaseTool]:
        """The two delegation tools, bound to this run."""

        def sub_agent(task: str, tools: list[str] | None = None) -> str:
            return delegate(setup, "agent", task, tools)

        def sub_code_agent(task: str) -> str:
            return delegate(setup, "code_agent", task, None)

        return [
            run_tool(
                sub_agent,
                description=(
                    "Hand a self-contained task to a fresh agent and get back its answer and "
                    "a summary of what it did. It starts with no history: put in the task "
                    "everything it needs (paths, what to return). It cannot ask the user."
                ),
            ),
            run_tool(
                sub_code_agent,
                description=(
                    "Hand a self-contained code change to a fresh code agent (exact "
                    "search/replace edits, each committed to git) and get back its report."
                ),
            ),
        ]


def delegate(setup: RunSetup, graph: str, task: str, tools: list[str] | None) -> str:
    """Run ``task`` in a fresh run of ``graph`` one level deeper; its answer and summary.

    Raises:
        ToolInputError: An empty task, or tools the run does not have.
        ToolFailure: The sub-run could not start or raised.
    """
    if not task.strip():
        msg = "the task is empty: say what the sub-agent should do"
        raise ToolInputError(msg)
    ctx = setup.context
    only = None
    if tools:
        have = set(setup.run_tools()) - set(SUB_AGENT_TOOLS)
        unknown = [name for name in tools if name not in have]
        if unknown:
            msg = f"no tool named {', '.join(unknown)}; the tools are: {', '.join(sorted(have))}"
            raise ToolInputError(msg)
        only = ",".join(tools)
    cap = setup.settings.sub_agent_max_iterations
    child = dataclasses.replace(
        ctx,
        depth=ctx.depth + 1,
        non_interactive=True,
        max_iterations=min(cap, ctx.max_iterations or cap),
        only_tools=only if only is not None else ctx.only_tools,
        role_prompt=None,  # a fresh agent: the task says what it is to do
        toolset="code" if graph == "code_agent" else ctx.toolset,
    )
    try:
        # deferred: the session store's helpers load with a run's savers
        from jarvis_graph.checkpoint_async import nested_config

        out = graph_named(graph).invoke({"task": task}, nested_config(), context=child)
    except GraphBubbleUp:
        raise
    except Exception as exc:
        msg = f"the sub-agent failed: {type(exc).__name__}: {exc}"
        raise ToolFailure(msg) from exc
    note_sub_run(
        {
            "kind": "sub-code-agent" if graph == "code_agent" else "sub-agent",
            "task": task[:300],
            "status": str(out.get("status") or "stopped"),
            "answer": current_env().mask(str(out.get("final_answer") or ""))[:300],
            "children": sub_runs_of(out.get("messages") or []),
        }
    )
    return report(out, child.depth)


def report(out: dict[str, Any], depth: int) -> str:
    """What the parent reads: how the sub-run ended, what it did, and its answer."""
    status = str(out.get("status") or "stopped")
    calls: Counter[str] = Counter()
    failed: Counter[str] = Counter()
    steps = 0
    for message in out.get("messages") or []:
        if isinstance(message, AIMessage):
            steps += 1
            calls.update(call["name"] for call in message.tool_calls)
        elif isinstance(message, ToolMessage) and message.status == "error":
            failed[message.name or "?"] += 1
    used = ", ".join(
        f"{name} x{count}" + (f" ({failed[name]} failed)" if failed[name] else "")
        for name, count in calls.most_common()
    )
    lines = [
        f"Sub-agent (level {depth}) {status} after {steps} model calls; "
        f"it called {used or 'no tools'}."
    ]
    problems = out.get("answer_problems") or []
    if problems:
        lines.append("Its answer did not pass the answer check: " + "; ".join(problems))
    answer = str(out.get("final_answer") or "").strip()
    lines += ["Its answer:", answer or "(none)"]
    return "\n".join(lines)
