"""review_answer: the enabled features' answer reviews, before a task completes.

One node for every feature that reviews answers (``Feature.reviews_answers``; today
cited answers, :mod:`jarvis_graph.features.answer_check`). The answer's cites are located
first (:func:`jarvis_graph.citations.locate`) and kept on its message, where the terminal,
``--json`` and the console read them. A problem goes back to the model as a notice,
``answer_check_retries`` times; the next turn's tools follow the problem's fields
(``tools_allowed``, ``answer_only``), never its wording. A run whose answer still has
problems ends ``unverified``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from typing import Any, Literal

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from jarvis_graph.citations import CITES_KEY, DECLARES_TASK, locate
from jarvis_graph.context import JarvisContext
from jarvis_graph.features.answer_check import workspace_digest
from jarvis_graph.features.base import AnswerReview, Problem
from jarvis_graph.messages import last_ai, task_sources, text_of
from jarvis_graph.nodes.check_answer import checks_since_task
from jarvis_graph.runtime.services import RunServices, services_of
from jarvis_graph.state import CHECK_NAME, AgentState, task_start


def reviewers(services: RunServices) -> list[Any]:
    """The run's features that review answers."""
    return [f for f in services.features if f.reviews_answers(services.setup)]


def review_answer(state: AgentState, runtime: Runtime[JarvisContext]) -> dict[str, Any]:
    """Review the latest answer; a problem is told to the model while retries are left."""
    services = services_of(runtime)
    messages = state["messages"]
    ai = last_ai(messages)
    metadata = {n: dict(t.metadata or {}) for n, t in services.tools.items()}
    selected = state.get("selected_tools")
    before = state.get("workspace_digest")
    declaring = services.tools_marked(DECLARES_TASK)
    cites = locate(text_of(ai), task_sources(messages), declaring)
    review = AnswerReview(
        answer=text_of(ai),
        cites=cites,
        messages=list(messages),
        workspace=services.workspace,
        workspace_changed=None
        if before is None
        else workspace_digest(services.workspace) != before,
        tools={n: m for n, m in metadata.items() if selected is None or n in selected},
        declared=declared_of(messages, declaring),
    )
    found: list[Problem] = []
    for feature in reviewers(services):
        found += feature.review_answer(services.setup, review)
    update: dict[str, Any] = {
        "answer_problems": [p.message for p in found],
        "review_problems": [dataclasses.asdict(p) for p in found],
    }
    shown: list[Any] = []
    if ai is not None and cites:  # the same id: the answer's message, now with its cites
        extra = {**(ai.additional_kwargs or {}), CITES_KEY: [dataclasses.asdict(c) for c in cites]}
        shown = [ai.model_copy(update={"additional_kwargs": extra})]
    left = services.settings.answer_check_retries - checks_since_task(messages)
    capped = state.get("iteration", 0) >= state.get("max_iterations", 1 << 30)
    if found and left > 0 and not capped:
        note = found[0].message  # one thing at a time: a small model fixes one, not three
        shown.append(HumanMessage(content=note, name=CHECK_NAME))
    if shown:
        update["messages"] = shown
    return update


def declared_of(messages: list[Any], names: Collection[str]) -> dict[str, Any] | None:
    """What the latest task's declaration call (a call of one of ``names``) stated."""
    start = task_start(messages)
    for message in messages[start + 1 :]:
        for call in getattr(message, "tool_calls", None) or []:
            if call.get("name") in names and isinstance(call.get("args"), dict):
                return dict(call["args"])
    return None


def next_turn(state: AgentState) -> Problem | None:
    """The problem the last notice told, when the last message is one (it decides the turn)."""
    messages = state["messages"]
    if not messages or getattr(messages[-1], "name", None) != CHECK_NAME:
        return None
    problems = state.get("review_problems") or []
    if not problems:
        return None
    first = dict(problems[0])
    allowed = first.get("tools_allowed")
    first["tools_allowed"] = None if allowed is None else tuple(allowed)
    return Problem(**first)


def route_after_review(state: AgentState) -> Literal["call_model", "complete_task"]:
    """Back to the model when the review just sent a notice; otherwise complete the task."""
    last = state["messages"][-1]
    return "call_model" if getattr(last, "name", None) == CHECK_NAME else "complete_task"
