"""MCP servers: their tools as ``<server>__<tool>``, over long-lived sessions."""

from __future__ import annotations

from langchain_core.tools import BaseTool

from jarvis_graph.features.base import Feature, RunSetup
from jarvis_graph.tools.registry import get_registry


class McpTools(Feature):
    """Adds the tools of the configured MCP servers that started."""

    name = "mcp"
    settings = ("mcp", "mcp_timeout", "mcp_start_timeout")

    def tools(self, setup: RunSetup) -> list[BaseTool]:
        """The MCP servers' tools."""
        return list(get_registry(setup.settings, setup.workspace).mcp_tools.values())

    def problems(self, setup: RunSetup) -> list[str]:
        """Servers that failed to start."""
        return list(get_registry(setup.settings, setup.workspace).mcp_problems)
