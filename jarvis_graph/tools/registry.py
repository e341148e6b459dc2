"""Tool registry: the tools a run can use, by name."""

from __future__ import annotations

from langchain_core.tools import BaseTool

from jarvis_graph.config import Settings


def get_tools(settings: Settings | None = None) -> list[BaseTool]:
    """All tools available to a run with ``settings``: the built-ins and the memory tools."""
    from jarvis_graph.memory.tools import MEMORY_TOOLS
    from jarvis_graph.tools.builtin import BUILTIN_TOOLS

    return [*BUILTIN_TOOLS, *MEMORY_TOOLS]


def is_risky(tool: BaseTool) -> bool:
    """Whether a tool has side effects that the ``risky`` confirm mode asks about."""
    return bool((tool.metadata or {}).get("risky"))


def asks_user(tool: BaseTool) -> bool:
    """Whether a tool asks the user a question (answered through an interrupt)."""
    return bool((tool.metadata or {}).get("asks_user"))
