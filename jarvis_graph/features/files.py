"""Writing files in ``jarvis run``: ``write_file`` and ``edit_file`` (both risky, confirmed)."""

from __future__ import annotations

from langchain_core.tools import BaseTool

from jarvis_graph.features.base import Feature, RunSetup
from jarvis_graph.tools.code_tools import FILE_TOOLS


class FileTools(Feature):
    """Adds ``write_file`` and ``edit_file`` to runs of the agent tool set.

    They are confined to the workspace like every file tool, and ``confirm: risky`` asks
    before each call. The code tool set has its own editing tools (:mod:`.code`).
    """

    name = "files"

    def enabled(self, setup: RunSetup) -> bool:
        """On for runs with ``toolset="agent"`` (``jarvis run``, ``jarvis chat``)."""
        return setup.context.toolset == "agent"

    def tools(self, setup: RunSetup) -> list[BaseTool]:
        """The file-writing tools."""
        return list(FILE_TOOLS)
