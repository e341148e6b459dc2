"""The ``compute`` tool for small models: counts, sums and extremes as checked expressions."""

from __future__ import annotations

from langchain_core.tools import BaseTool

from jarvis_graph.features.base import Feature, RunSetup
from jarvis_graph.tools.compute import compute


class Compute(Feature):
    """Adds ``compute`` when the run's model is a local one with ``computed_answers`` on.

    A small model that counts in its head is wrong more often than not; an expression
    over the files gives the value, and the value is evidence for the answer check.
    """

    name = "compute"

    def enabled(self, setup: RunSetup) -> bool:
        """On for the local platform's models (``computed_answers`` in the model config)."""
        # deferred: resolving the platform reads the model spec only, no provider import
        from jarvis_graph.platforms.registry import resolve_platform

        spec = setup.settings.model_for("normal")
        return spec.computed_answers and resolve_platform(spec) == "local"

    def tools(self, setup: RunSetup) -> list[BaseTool]:
        """The ``compute`` tool."""
        return [compute]
