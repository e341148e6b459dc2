"""Graph states: TypedDicts with reducers, JSON-friendly values only."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal, NotRequired

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

RunStatus = Literal["running", "completed", "unverified", "max_iterations", "stopped", "truncated"]

CONTEXT_NAME = "jarvis_context"
"""``name`` of the human message with workspace context attached to a task (not a task)."""

SUMMARIZED_TURNS = "summarized_ai_turns"
"""``response_metadata`` key of a summary message: how many model turns it replaced."""
SUMMARY_NAME = "jarvis_summary"
"""``name`` of the human message holding a history summary (not a task)."""
CORRECTION_NAME = "jarvis_correction"
"""``name`` of the human message telling the model its reply was a call written as text."""
CHECK_NAME = "jarvis_answer_check"
"""``name`` of the human message telling the model what the answer check found."""
NOT_TASK_NAMES = frozenset({CONTEXT_NAME, SUMMARY_NAME, CORRECTION_NAME, CHECK_NAME})


def is_task_message(message: object) -> bool:
    """Whether ``message`` is a task the user gave.

    That is a human message that is neither attached context nor a history summary.
    """
    return getattr(message, "type", None) == "human" and (
        getattr(message, "name", None) not in NOT_TASK_NAMES
    )


def task_start(messages: Sequence[object]) -> int:
    """The index of the latest task message in ``messages`` (-1: there is none)."""
    return max((i for i, m in enumerate(messages) if is_task_message(m)), default=-1)


class AgentInput(TypedDict):
    """What a caller passes to start or continue a run."""

    task: NotRequired[str]
    messages: NotRequired[Annotated[list[AnyMessage], add_messages]]


class AgentState(TypedDict):
    """State of the Jarvis run loop.

    Attributes:
        messages: The conversation (system prompt first); ``add_messages`` merges by id.
        task: The task text of the current run.
        iteration: Model turns taken in this run (a task's declaration is not one); the
            cap is ``max_iterations``.
        max_iterations: Cap on model calls for this run.
        status: Why the run stopped, or ``running``.
        final_answer: The answer, with the auto-complete marker stripped.
        selected_tools: Tools offered to the model (``None``: all), set by ``filter_tools``.
        answer_problems: What the answer check found in the latest answer (empty: passed).
        review_problems: The same, as the fields of each ``Problem`` (routing reads these).
        workspace_digest: Fingerprint of the workspace's files when the task started (set
            when the answer check is on; ``None``: too many files to tell).
    """

    messages: Annotated[list[AnyMessage], add_messages]
    task: NotRequired[str]
    iteration: NotRequired[int]
    max_iterations: NotRequired[int]
    status: NotRequired[RunStatus]
    final_answer: NotRequired[str]
    selected_tools: NotRequired[list[str] | None]
    answer_problems: NotRequired[list[str]]
    review_problems: NotRequired[list[dict[str, Any]]]
    workspace_digest: NotRequired[str | None]


class AgentOutput(TypedDict):
    """What a finished run returns."""

    messages: list[AnyMessage]
    status: NotRequired[RunStatus]
    final_answer: NotRequired[str]
    answer_problems: NotRequired[list[str]]


def merge_dicts(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Reducer: keys of ``right`` replace those of ``left`` (parallel branches each add theirs).

    Writing ``None`` empties the dict (a new plan on a continued thread starts clean).
    """
    if right is None:
        return {}
    return {**(left or {}), **right}


StepStatus = Literal["completed", "failed", "skipped"]


class PlanStep(TypedDict):
    """One step of a plan: ``depends_on`` names ids of earlier steps."""

    id: str
    task: str
    depends_on: list[str]


class StepResult(TypedDict):
    """What a child run of one plan step produced."""

    id: str
    status: StepStatus
    answer: str
    depth: int


class PlannerState(AgentState):
    """State of the planner: the agent's fields plus the plan and its results.

    Attributes:
        plan: The steps (empty when the task was not split).
        plan_note: Why the task was (not) split, or how the plan changed.
        step_results: Results by step id; parallel steps each add their own.
    """

    plan: NotRequired[list[PlanStep]]
    plan_note: NotRequired[str]
    step_results: NotRequired[Annotated[dict[str, StepResult], merge_dicts]]


class PlannerOutput(AgentOutput):
    """What a finished planner run returns: the answer, and the plan with its results."""

    plan: NotRequired[list[PlanStep]]
    plan_note: NotRequired[str]
    step_results: NotRequired[dict[str, StepResult]]


class StepInput(TypedDict):
    """What ``run_step`` gets through ``Send``: one step and what it needs to know."""

    task: str
    step: PlanStep
    plan: list[PlanStep]
    inputs: dict[str, StepResult]


class Handoff(TypedDict):
    """A message from one agent to another, with the sender's hand-off summary."""

    sender: str
    to: str
    content: str
    summary: str


class MultiAgentState(TypedDict):
    """State of a multi-agent run.

    Attributes:
        messages: What the user sees: the task, each hand-off, the final answer.
        histories: Each agent's own conversation, by agent name.
        inbox: The hand-off the next agent receives.
        handoffs: Hand-offs so far (guarded by ``max_handoffs``).
    """

    messages: Annotated[list[AnyMessage], add_messages]
    task: NotRequired[str]
    histories: NotRequired[Annotated[dict[str, list[AnyMessage]], merge_dicts]]
    inbox: NotRequired[Handoff | None]
    handoffs: NotRequired[int]
    active_agent: NotRequired[str]
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


class ChainStepResult(TypedDict):
    """What became of one step of a tool chain.

    ``status`` is ``succeeded``, ``failed``, ``skipped`` (its condition was false, or it
    reads a step that did not succeed) or ``declined`` (the user said no).
    """

    status: str
    result: str
    attempts: int


class ChainState(TypedDict):
    """State of a tool chain's run: one node per step, each adds its result.

    Attributes:
        chain: The chain's name.
        input: Its input, defaults filled in.
        steps: Results by step id.
        status: ``running``, then ``completed`` or ``failed`` (a step failed and stopped it).
        output: What the caller gets back (set by ``finish``).
    """

    chain: str
    input: dict[str, Any]
    steps: NotRequired[Annotated[dict[str, ChainStepResult], merge_dicts]]
    status: NotRequired[str]
    output: NotRequired[str]
