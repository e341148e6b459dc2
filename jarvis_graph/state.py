"""Graph states: TypedDicts with reducers, JSON-friendly values only."""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

RunStatus = Literal["running", "completed", "max_iterations", "stopped"]

CONTEXT_NAME = "jarvis_context"
"""``name`` of the human message with workspace context attached to a task (not a task)."""


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
    """

    messages: Annotated[list[AnyMessage], add_messages]
    task: NotRequired[str]
    iteration: NotRequired[int]
    max_iterations: NotRequired[int]
    status: NotRequired[RunStatus]
    final_answer: NotRequired[str]


class AgentOutput(TypedDict):
    """What a finished run returns."""

    messages: list[AnyMessage]
    status: NotRequired[RunStatus]
    final_answer: NotRequired[str]


def merge_verdicts(
    left: dict[str, dict[str, Any]] | None, right: dict[str, dict[str, Any]] | None
) -> dict[str, dict[str, Any]]:
    """Reducer: verdicts from parallel branches merged by candidate id."""
    return {**(left or {}), **(right or {})}


class SecurityScanState(TypedDict):
    """State of the security verification graph.

    Attributes:
        run_id: The verification run (names the progress file).
        root: The scanned tree (the verifier's tools are rooted there).
        progress_file: Where finished verdicts are appended, one JSON line each.
        candidates: Issues of the direct scan to verify (``Issue.to_dict()`` rows).
        verdicts: Candidate id -> verdict (from the progress file and this run).
        max_steps: Model calls each verifier may make.
        verdict_counts: Verdicts by kind, once all are in.
    """

    run_id: str
    root: str
    progress_file: str
    candidates: list[dict[str, Any]]
    verdicts: NotRequired[Annotated[dict[str, dict[str, Any]], merge_verdicts]]
    max_steps: NotRequired[int]
    verdict_counts: NotRequired[dict[str, int]]


class CandidateTask(TypedDict):
    """What one ``verify_candidate`` branch receives through ``Send``."""

    candidate: dict[str, Any]
    root: str
    progress_file: str
    max_steps: NotRequired[int]
