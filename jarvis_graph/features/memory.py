"""Memory: the memory tools, the prompt's memory lines, forced saves and the episode archive."""

from __future__ import annotations

from typing import Any

from langchain_core.tools import BaseTool

from jarvis_graph.events import Event, Subscriber
from jarvis_graph.features.base import Feature, RunSetup
from jarvis_graph.memory.hooks import EpisodeIndexer, ForceSaveMemory
from jarvis_graph.memory.tools import MEMORY_TOOLS


class Memory(Feature):
    """Adds save/retrieve/clear memory and episode search, and keeps memories up to date."""

    name = "memory"
    settings = ("force_save_memory", "episodic_archive")

    def tools(self, setup: RunSetup) -> list[BaseTool]:
        """The memory tools."""
        return list(MEMORY_TOOLS)

    def context_section(self, setup: RunSetup, task: str) -> str:
        """The tiers and the tags saved so far."""
        # deferred: the memory tiers load the vector store (numpy) only when a prompt is built
        from jarvis_graph.memory.records import MemoryStoreError
        from jarvis_graph.memory.tiers import memory_prompt

        try:
            return memory_prompt(setup.workspace, setup.store)
        except MemoryStoreError as exc:  # a memory server that is down: the run goes on
            return f"Memory: long-term memory is unavailable now ({exc})."

    def subscribers(self, setup: RunSetup) -> list[tuple[Event, Subscriber]]:
        """Forced saves (when configured) and the episodic archive."""

        def normal_model(_ctx: Any) -> Any:
            return setup.chat_model("normal")

        force = ForceSaveMemory(normal_model, setup.context)
        archive = EpisodeIndexer(setup.context)
        archived = [(Event.BEFORE_HISTORY_CLEAR, archive), (Event.TASK_COMPLETED, archive)]
        return [*force.subscriptions(), *archived]
