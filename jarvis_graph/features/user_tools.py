"""User tools: Python files in ``~/.jarvis/tools``, the configured folders and the central repo."""

from __future__ import annotations

from langchain_core.tools import BaseTool

from jarvis_graph.features.base import Feature, RunSetup
from jarvis_graph.tools.registry import get_registry


class UserTools(Feature):
    """Adds the tools of the user tool folders (a name already taken is left out)."""

    name = "user_tools"
    settings = ("tool_load_dirs", "central_tool_repo")

    def tools(self, setup: RunSetup) -> list[BaseTool]:
        """The loaded user tools."""
        return list(get_registry(setup.settings, setup.workspace).user_tools.values())

    def problems(self, setup: RunSetup) -> list[str]:
        """Files that did not load, and a central repository that did not sync."""
        return list(get_registry(setup.settings, setup.workspace).user_problems)
