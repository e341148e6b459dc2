"""The ``run_task_graph`` tool: the model hands over a tool-level plan and gets every result."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.tools import BaseTool, tool
from pydantic import BaseModel, Field

from jarvis_graph.planning.task_graph import TaskGraphError, parse_tasks, report, run_tasks
from jarvis_graph.tools.base import ToolEnv, current_env
from jarvis_graph.tools.invoke import invoke_tool

NOT_IN_GRAPHS = ("run_task_graph", "send_message", "ask_user")
"""Tools a task may not call: no nesting, and nothing that ends or pauses the turn."""


class TaskItem(BaseModel):
    """One task of the plan."""

    id: str = Field(description="Unique id, e.g. task_1.")
    tool: str = Field(description="Name of the tool to call.")
    args: dict[str, Any] = Field(default_factory=dict, description="The tool's arguments.")
    depends_on: list[str] = Field(default_factory=list, description="Ids of earlier tasks.")


ToolLookup = Callable[[ToolEnv], list[BaseTool]]
"""The tools of the run a tool call belongs to (given by whoever puts the run's tools together)."""


def make_run_task_graph(lookup: ToolLookup) -> BaseTool:
    """The ``run_task_graph`` tool; its tasks call the tools ``lookup`` gives for the run."""

    @tool
    def run_task_graph(tasks: list[TaskItem]) -> str:
        """Run several tool calls as one plan: independent tasks run in parallel.

        An argument may use an earlier task's result as ${task_1.result}. A task whose
        dependency fails is not run. Returns each task's status and result.

        Args:
            tasks: The tasks, each with id, tool, args and depends_on.
        """
        env = current_env()
        tools = {t.name: t for t in lookup(env)}
        usable = {name for name in tools if name not in NOT_IN_GRAPHS}
        raw = [t.model_dump() if isinstance(t, BaseModel) else dict(t) for t in tasks]
        try:
            plan = parse_tasks(raw, usable)
        except TaskGraphError as exc:
            return (
                f"Error: the task graph was not run: {exc}. Fix it and call run_task_graph again."
            )

        def call(name: str, args: dict[str, Any]) -> tuple[bool, str]:
            text, status, _ = invoke_tool(tools[name], args, {})
            return status == "success" and not text.startswith("Error"), text

        return report(plan, run_tasks(plan, call, env.settings.plan_concurrency))

    run_task_graph.metadata = {"risky": True}  # its tasks may run risky tools: confirm the plan
    return run_task_graph


def task_graph_tools(lookup: ToolLookup) -> list[BaseTool]:
    """The tools this module adds to a run (when ``task_graph_tool`` is on)."""
    return [make_run_task_graph(lookup)]
