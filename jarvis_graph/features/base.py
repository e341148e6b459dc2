"""What a feature is: one module that declares what it adds to a run.

A feature adds tools, a section of the system prompt, event subscribers, state keys and
the settings it reads. The run's services (:mod:`jarvis_graph.runtime.services`) compose
the features a run enables, once per run; no feature knows another.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from jarvis_graph.config import Settings
from jarvis_graph.context import JarvisContext
from jarvis_graph.events import Event, Subscriber

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.tools import BaseTool
    from langgraph.store.base import BaseStore


@dataclass(frozen=True)
class RunSetup:
    """What a feature is given to build its part of one run."""

    context: JarvisContext
    settings: Settings
    workspace: Path
    chat_model: Callable[[str], BaseChatModel]
    """The run's chat model for a role (``normal``, ``cheap``), not bound to tools."""
    run_tools: Callable[[], dict[str, BaseTool]]
    """The run's composed tools, by name (call it while the run runs, not while composing)."""
    store: BaseStore | None = None
    """The run's LangGraph store (``runtime.store``; the memory store in Jarvis' graphs)."""


class Feature:
    """Base of every feature: each hook adds nothing unless overridden.

    Hooks are called once per run, in the order the features are listed, when the run's
    services are built (``prompt_section`` when the system prompt is).
    """

    name: ClassVar[str] = ""
    state_keys: ClassVar[tuple[str, ...]] = ()
    """Keys of the graph state this feature writes (kept true by a test)."""
    settings: ClassVar[tuple[str, ...]] = ()
    """Fields of :class:`~jarvis_graph.config.Settings` it reads (kept true by a test)."""

    def enabled(self, setup: RunSetup) -> bool:
        """Whether the run uses this feature at all."""
        return True

    def tools(self, setup: RunSetup) -> list[BaseTool]:
        """Tools it adds; a name already taken is left out with a warning."""
        return []

    def unavailable(self, setup: RunSetup) -> dict[str, str]:
        """Tools it could add but does not in this run, each with how to turn it on."""
        return {}

    def problems(self, setup: RunSetup) -> list[str]:
        """What it had to leave out and why (shown to the user before the run)."""
        return []

    def select_tools(self, tools: dict[str, BaseTool], setup: RunSetup) -> dict[str, BaseTool]:
        """The last word on the run's tools, after the tool group is applied."""
        return tools

    def prompt_section(self, setup: RunSetup, task: str) -> str:
        """Text appended to the system prompt ("" for none); ``task`` may be empty."""
        return ""

    def subscribers(self, setup: RunSetup) -> list[tuple[Event, Subscriber]]:
        """Event subscribers for this run's events."""
        return []
