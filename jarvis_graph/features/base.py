"""What a feature is: one module that declares what it adds to a run.

A feature adds tools, a section of the system prompt, event subscribers, state keys and
the settings it reads. The run's services (:mod:`jarvis_graph.runtime.services`) compose
the features a run enables, once per run; no feature knows another.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

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


@dataclass(frozen=True)
class Problem:
    """What an answer review found: routing reads the fields, never the wording.

    Attributes:
        check: The name of the check that found it.
        message: What to tell the model (and, when no retry is left, the user).
        tools_allowed: The tools the next turn may call (``None``: any offered).
        answer_only: The next turn must answer, without a tool (what is missing needs none).
    """

    check: str
    message: str
    tools_allowed: tuple[str, ...] | None = None
    answer_only: bool = False


@dataclass(frozen=True)
class AnswerReview:
    """What a feature's answer review is given: the answer, the thread and the workspace."""

    answer: str
    cites: list[Any]
    """The answer's :class:`~jarvis_graph.citations.Cite` list (empty for a prose answer)."""
    messages: list[Any]
    workspace: Path
    workspace_changed: bool | None
    """Whether the workspace's files changed since the task started (``None``: unknown)."""
    tools: dict[str, dict[str, Any]]
    """The metadata of the tools offered to the model, by name."""
    declared: dict[str, Any] | None = None
    """What the model stated the task needs, when it did (the task's declaration call)."""


class Feature:
    """Base of every feature: each hook adds nothing unless overridden.

    Hooks are called once per run, in the order the features are listed, when the run's
    services are built (``prompt_section`` and ``context_section`` when the system prompt is).
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
        """Text appended to the system prompt ("" for none); ``task`` may be empty.

        The same for every task of a configuration: what depends on the task, the
        workspace or what is saved goes to :meth:`context_section`.
        """
        return ""

    def context_section(self, setup: RunSetup, task: str) -> str:
        """Text for the system prompt's context, its last part ("" for none).

        For what changes from task to task (memories, lessons for ``task``): the part of
        the prompt above the context stays the same, so a model processes it once.
        """
        return ""

    def subscribers(self, setup: RunSetup) -> list[tuple[Event, Subscriber]]:
        """Event subscribers for this run's events."""
        return []

    def reviews_answers(self, setup: RunSetup) -> bool:
        """Whether :meth:`review_answer` reviews this run's answers.

        The graph's ``review_answer`` node runs the hooks of the features that do.
        """
        return False

    def review_answer(self, setup: RunSetup, review: AnswerReview) -> list[Problem]:
        """What is wrong with a final answer before the task completes (empty: nothing).

        A problem sends the run back to the model while retries are left; a run whose
        answer still has problems ends ``unverified``.
        """
        return []


_PROTOTYPES: dict[tuple[Any, ...], BaseTool] = {}
"""A tool of each per-run function :func:`run_tool` has made, by its code and options."""
_PROTOTYPES_MAX = 256


def run_tool(func: Callable[..., Any], **options: Any) -> BaseTool:
    """``StructuredTool.from_function(func, **options)`` for a function defined per run.

    A feature defines its tools inside :meth:`Feature.tools`, closing over the run. Making
    a tool's argument schema from a signature and docstring builds pydantic models, about a
    millisecond a tool and most of a short task's fixed cost; yet the function has the same
    code, defaults and docstring in every run. So the first run's tool is kept, and each
    later run gets a copy of it that calls its own function: the same schema, and the same
    call schema the model is shown (LangChain keeps it across ``model_copy``).
    """
    # deferred: features.base stays free of langchain at import (the run loads it anyway)
    from langchain_core.tools import StructuredTool

    try:
        key = (
            func.__code__,
            func.__defaults__,
            tuple(sorted((func.__kwdefaults__ or {}).items())),
            tuple(sorted(options.items())),
        )
        hash(key)
    except (AttributeError, TypeError):  # not a plain function, or options not hashable
        return StructuredTool.from_function(func, **options)
    prototype = _PROTOTYPES.get(key)
    if prototype is not None:
        return prototype.model_copy(update={"func": func})
    tool = StructuredTool.from_function(func, **options)
    _ = tool.tool_call_schema  # built once: the copies carry it
    if len(_PROTOTYPES) >= _PROTOTYPES_MAX:
        _PROTOTYPES.clear()
    # kept without this run's function, so that the run can be freed when it ends
    _PROTOTYPES[key] = tool.model_copy(update={"func": _ended_run})
    return tool


def _ended_run(*args: Any, **kwargs: Any) -> str:
    """The function of a kept prototype: never called (each run's copy has its own)."""
    msg = "a tool of an ended run was called"
    raise RuntimeError(msg)
