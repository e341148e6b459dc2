"""The code tool set: exact edits, rewrites and code search, and the code agent's prompt."""

from __future__ import annotations

from langchain_core.tools import BaseTool

from jarvis_graph.features.base import Feature, RunSetup
from jarvis_graph.prompts import load_prompt
from jarvis_graph.tools.code_tools import CODE_TOOLS


class CodeTools(Feature):
    """Adds ``edit_file``, ``rewrite_file`` and ``search_code`` to runs of the code tool set."""

    name = "code"

    def enabled(self, setup: RunSetup) -> bool:
        """On for runs with ``toolset="code"`` (``jarvis code``, the code agent graph)."""
        return setup.context.toolset == "code"

    def tools(self, setup: RunSetup) -> list[BaseTool]:
        """The editing tools."""
        return list(CODE_TOOLS)

    def prompt_section(self, setup: RunSetup, task: str) -> str:
        """How to read, edit and check code."""
        return load_prompt("code")
