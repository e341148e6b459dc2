"""The task graph: ``run_task_graph`` runs a tool-level plan, independent calls in parallel."""

from __future__ import annotations

from langchain_core.tools import BaseTool

from jarvis_graph.features.base import Feature, RunSetup
from jarvis_graph.planning.task_graph_tool import task_graph_tools
from jarvis_graph.tools.base import ToolEnv


class TaskGraph(Feature):
    """Adds ``run_task_graph`` when ``task_graph_tool`` is on; its tasks call the run's tools."""

    name = "task_graph"
    settings = ("task_graph_tool", "plan_concurrency")

    def enabled(self, setup: RunSetup) -> bool:
        """On when configured."""
        return setup.settings.task_graph_tool

    def tools(self, setup: RunSetup) -> list[BaseTool]:
        """``run_task_graph``, calling the tools this run has."""

        def run_tools(_env: ToolEnv) -> list[BaseTool]:
            return list(setup.run_tools().values())

        return task_graph_tools(run_tools)
