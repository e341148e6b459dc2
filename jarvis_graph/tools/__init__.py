"""Tools the agent can call: built-ins, user tool files and MCP servers (see registry)."""

from jarvis_graph.tools.base import ToolEnv, ToolInputError
from jarvis_graph.tools.registry import get_tools, is_risky

__all__ = ["ToolEnv", "ToolInputError", "get_tools", "is_risky"]
