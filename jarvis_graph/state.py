"""Graph states: TypedDicts with reducers, JSON-friendly values only."""

from __future__ import annotations

from typing import Annotated, Literal, NotRequired

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

RunStatus = Literal["running", "completed", "max_iterations", "stopped"]

CONTEXT_NAME = "jarvis_context"
"""``name`` of the human message with workspace context attached to a task (not a task)."""

SUMMARIZED_TURNS = "summarized_ai_turns"
"""``response_metadata`` key of a summary message: how many model turns it replaced."""


class AgentInput(TypedDict):
    """What a caller passes to start or continue a run."""

    task: NotRequired[str]
    messages: NotRequired[Annotated[list[AnyMessage], add_messages]]


class AgentState(TypedDict):
    """State of the Jarvis run loop.

    Attributes:
        messages: The conversation (system prompt first); ``add_messages`` merges by id.
        task: The task text of the current run.
        iteration: Model calls made in this run; the cap is ``max_iterations``.
        max_iterations: Cap on model calls for this run.
        status: Why the run stopped, or ``running``.
        final_answer: The answer, with the auto-complete marker stripped.
        selected_tools: Tools offered to the model (``None``: all), set by ``filter_tools``.
    """

    messages: Annotated[list[AnyMessage], add_messages]
    task: NotRequired[str]
    iteration: NotRequired[int]
    max_iterations: NotRequired[int]
    status: NotRequired[RunStatus]
    final_answer: NotRequired[str]
    selected_tools: NotRequired[list[str] | None]


class AgentOutput(TypedDict):
    """What a finished run returns."""

    messages: list[AnyMessage]
    status: NotRequired[RunStatus]
    final_answer: NotRequired[str]
