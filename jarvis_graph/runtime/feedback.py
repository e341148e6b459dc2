"""Feedback on a finished task: the rating is kept, and becomes a lesson or a pattern.

``jarvis feedback THREAD --rating 1..5 [--comment TEXT]`` and ``/good``, ``/bad [comment]``
in ``jarvis chat`` call :func:`give_feedback`. The rating is stored with the session (the
project store, namespace ``("feedback",)``, key: the session id), with the id of the lesson
or pattern it wrote: rating the session again replaces both. A rating of 1 or 2 asks
the ``cheap`` model what went wrong and what to do instead, and saves that as a lesson; 4
or 5 saves the approach and the tool sequence that worked as a pattern (see
:mod:`jarvis_graph.memory.lessons`). Both are tagged with the kind of task the model names,
and are shown to later runs of similar tasks.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.store.base import BaseStore
from pydantic import BaseModel, Field

from jarvis_graph.memory.lessons import lesson_record
from jarvis_graph.memory.records import now_iso
from jarvis_graph.memory.router import project_store
from jarvis_graph.memory.tiers import MemoryTiers
from jarvis_graph.runtime.structured import ask_structured
from jarvis_graph.state import is_task_message

TRANSCRIPT_CHARS = 8000
LOW, HIGH = 2, 4
"""Ratings at or below LOW write a lesson; at or above HIGH a pattern."""


class TaskReview(BaseModel):
    """The cheap model's reading of a rated task."""

    kind: str = Field(description="The kind of task in one to three words, e.g. 'fix tests'.")
    lesson: str = Field(description="Two or three sentences, as the instructions ask.")


LOW_INSTRUCTIONS = (
    "A user rated this task of an AI agent as bad. Read what the agent did and the user's "
    "comment, then say the kind of task in one to three words, and in two or three sentences "
    "what went wrong and what the agent should do instead next time on a task like it. Be "
    "concrete (commands, files, checks), not general."
)
HIGH_INSTRUCTIONS = (
    "A user rated this task of an AI agent as good. Say the kind of task in one to three "
    "words, and in two or three sentences the approach that worked, so that the agent can do "
    "the same next time on a task like it."
)


@dataclass(frozen=True)
class FeedbackOutcome:
    """What a rating left: the stored rating and the lesson or pattern saved (if any)."""

    rating: int
    record: dict[str, Any] | None
    problem: str = ""
    """Why the model wrote no lesson, when that happened ("the cheap model gave no ...")."""
    from_comment: bool = False
    """The lesson is the user's comment (the model wrote none)."""


def give_feedback(
    values: dict[str, Any],
    thread_id: str,
    rating: int,
    comment: str,
    workspace: Path,
    model: Any,
    store: BaseStore | None = None,
) -> FeedbackOutcome:
    """Store ``rating`` for the session and learn from it.

    Args:
        values: The session's latest state values (task, messages).
        thread_id: The session's id (the rating is kept under it).
        rating: 1 (bad) to 5 (good).
        comment: What the user said about it ("" for nothing).
        workspace: The project.
        model: The chat model that writes the lesson (the ``cheap`` one).
        store: The memory store (default: the run's, else the process's).

    Raises:
        ValueError: A rating outside 1..5.
    """
    if not 1 <= rating <= 5:
        msg = f"the rating is {rating}; give 1 (bad) to 5 (good)"
        raise ValueError(msg)
    messages: list[BaseMessage] = list(values.get("messages") or [])
    task = _task(values, messages)
    outcome = _learn(messages, task, rating, comment, model)
    ratings = project_store(workspace, store)
    earlier = ratings.get(("feedback",), thread_id)
    tiers = MemoryTiers(workspace, store=store)
    replaced = str((earlier.value if earlier else {}).get("record_id") or "")
    if replaced:  # rated again: what the earlier rating taught goes
        tiers.clear(["project_long_term"], ids=[replaced])
    if outcome.record is not None:
        tiers.save([outcome.record])
    ratings.put(
        ("feedback",),
        thread_id,
        {"rating": rating, "comment": comment, "task": task, "at": now_iso()}
        | {"record_id": outcome.record["id"] if outcome.record else ""},
    )
    return outcome


def _learn(
    messages: list[BaseMessage], task: str, rating: int, comment: str, model: Any
) -> FeedbackOutcome:
    """The lesson or pattern a rating teaches (none for a middling one), not yet saved."""
    if LOW < rating < HIGH:
        return FeedbackOutcome(rating, None)
    low = rating <= LOW
    tools = [c["name"] for m in messages if isinstance(m, AIMessage) for c in m.tool_calls]
    request = _transcript(task, messages, comment, rating)
    review, error = ask_structured(
        model, TaskReview, LOW_INSTRUCTIONS if low else HIGH_INSTRUCTIONS, request
    )
    problem = f"the cheap model gave no task review ({error})" if review is None else ""
    if review is None:
        if not (low and comment.strip()):
            return FeedbackOutcome(rating, None, problem)
        review = TaskReview(kind="task", lesson=f"The user said: {comment.strip()}")
    text = review.lesson.strip()
    if not low and tools:
        text += f" Tools used, in order: {', '.join(tools)}."
    kind = " ".join(review.kind.lower().split())[:40] or "task"
    record = lesson_record(kind, task, text, lesson=low)
    return FeedbackOutcome(rating, record, problem, from_comment=bool(problem))


def _task(values: dict[str, Any], messages: list[BaseMessage]) -> str:
    first = next((m for m in messages if is_task_message(m)), None)
    return " ".join(str(first.text if first else values.get("task", "")).split())


def _transcript(task: str, messages: list[BaseMessage], comment: str, rating: int) -> str:
    lines = [f"Task: {task}", f"Rating: {rating} of 5", f"User's comment: {comment or '(none)'}"]
    lines.append("What the agent did:")
    for message in messages:
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                lines.append(f"- called {call['name']} {str(call.get('args'))[:200]}")
            if message.text:
                lines.append(f"- said: {str(message.text)[:400]}")
        elif isinstance(message, ToolMessage):
            lines.append(f"  -> {message.status}: {str(message.text)[:300]}")
        elif is_task_message(message):
            lines.append(f"- the user asked: {str(message.text)[:400]}")
    text = "\n".join(lines)
    return text if len(text) <= TRANSCRIPT_CHARS else text[:TRANSCRIPT_CHARS] + "\n[...]"
