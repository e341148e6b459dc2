"""The built-in tools: files, scripts, search, ask_user and the others of ``tools.builtin``."""

from __future__ import annotations

from langchain_core.tools import BaseTool

from jarvis_graph.features.base import Feature, RunSetup
from jarvis_graph.tools.builtin import BUILTIN_TOOLS


class BuiltinTools(Feature):
    """Adds the built-in tools."""

    name = "builtin"
    settings = ("allow_outside_workspace", "execute_timeout", "script_env_passthrough")

    def tools(self, setup: RunSetup) -> list[BaseTool]:
        """The built-in tools."""
        return list(BUILTIN_TOOLS)
