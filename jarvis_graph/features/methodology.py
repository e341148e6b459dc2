"""Methodologies: their tools, and the ones the ``cheap`` model picks for a task in the prompt."""

from __future__ import annotations

import logging

from langchain_core.tools import BaseTool
from langgraph.errors import GraphBubbleUp

from jarvis_graph.features.base import Feature, RunSetup
from jarvis_graph.helper_model import warn_helper_failure
from jarvis_graph.methodology import select as chooser
from jarvis_graph.methodology.git_sync import sync
from jarvis_graph.methodology.store import MethodologyError, load_all, methodology_dirs
from jarvis_graph.methodology.tools import METHODOLOGY_TOOLS

logger = logging.getLogger(__name__)


class Methodology(Feature):
    """Adds the methodology tools and the methodologies chosen for the task."""

    name = "methodology"
    settings = ("use_methodology", "use_analysis", "central_methodology_repo", "methodology_dirs")

    def tools(self, setup: RunSetup) -> list[BaseTool]:
        """The methodology tools."""
        return list(METHODOLOGY_TOOLS)

    def context_section(self, setup: RunSetup, task: str) -> str:
        """The methodologies the ``cheap`` model picks for ``task`` ("" if none)."""
        settings = setup.settings
        if not settings.use_methodology or not task:
            return ""
        if settings.central_methodology_repo:
            _sync_quietly(settings.central_methodology_repo)
        records = load_all(methodology_dirs(settings))
        if not records:
            return ""
        try:
            model = setup.chat_model("cheap")
            return chooser.prompt_section(chooser.select(task, records, model.invoke))
        except GraphBubbleUp:
            raise
        except Exception as exc:
            warn_helper_failure(logger, "select methodologies", exc)
            return ""


def _sync_quietly(url: str) -> None:
    try:
        sync(url)
    except MethodologyError as exc:  # the run goes on with the clone it has
        logger.warning("central methodology repository: %s", exc)
