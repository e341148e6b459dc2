"""check_answer: compare a final answer with the task's evidence before the task completes.

On when the ``answer_check`` feature is (see :mod:`jarvis_graph.features.answer_check`).
A failed check goes back to the model with what was found, ``answer_check_retries`` times;
then ``complete_task`` ends the run ``unverified``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Literal

from langchain_core.messages import AnyMessage, HumanMessage
from langgraph.runtime import Runtime

from jarvis_graph.context import JarvisContext
from jarvis_graph.features.answer_check import (
    action_problems,
    evidence_of,
    grounded,
    missing_file_problems,
    problems,
    workspace_digest,
)
from jarvis_graph.features.focused_answer import FROM_REPEATS
from jarvis_graph.marker import strip_complete_marker
from jarvis_graph.messages import last_ai, text_of
from jarvis_graph.runtime.services import RunServices, services_of
from jarvis_graph.state import CHECK_NAME, AgentState, is_task_message


def check_enabled(services: RunServices) -> bool:
    """Whether the run checks its answers (the ``answer_check`` feature is on)."""
    return any(f.name == "answer_check" for f in services.features)


def checks_since_task(messages: list[AnyMessage]) -> int:
    """Answer-check notices sent since the user's last task message."""
    count = 0
    for message in reversed(messages):
        if is_task_message(message):
            break
        count += getattr(message, "name", None) == CHECK_NAME
    return count


def _task(messages: list[AnyMessage]) -> str:
    return next((str(m.text) for m in reversed(messages) if is_task_message(m)), "")


def check_answer(state: AgentState, runtime: Runtime[JarvisContext]) -> dict[str, Any]:
    """Check the latest answer; a failed check is told to the model while retries are left.

    A focused answer (see :mod:`~jarvis_graph.nodes.focus_answer`) that fails where the
    model's own answer passes, and says something the evidence shows (:func:`grounded`),
    gives way to it: written again from the facts, the 1.5B turned "logs/nginx_access.log
    does not exist" into an invented IP address, and "the tests do not pass" into "Yes".
    """
    services = services_of(runtime)
    messages = state["messages"]
    ai = last_ai(messages)
    answer = strip_complete_marker(text_of(ai))
    metadata = {name: dict(tool.metadata or {}) for name, tool in services.tools.items()}
    evidence = evidence_of(messages, metadata)
    before = state.get("workspace_digest")
    changed = None if before is None else workspace_digest(services.workspace) != before
    selected = state.get("selected_tools")
    offered = {n: m for n, m in metadata.items() if selected is None or n in selected}
    task = _task(messages)
    found = problems(answer, task, evidence, services.workspace, changed, offered)
    own = ai.response_metadata.get("focused_from") if ai is not None else None
    if found and ai is not None and isinstance(own, str) and own != FROM_REPEATS:
        first = strip_complete_marker(own)
        if grounded(first, task, evidence) and not problems(
            first, task, evidence, services.workspace, changed, offered
        ):
            meta = {k: v for k, v in ai.response_metadata.items() if k != "focused_from"}
            meta["focused_answer_failed"] = text_of(ai)
            restored = ai.model_copy(update={"content": own, "response_metadata": meta})
            return {"answer_problems": [], "messages": [restored]}
    update: dict[str, Any] = {"answer_problems": found}
    left = services.settings.answer_check_retries - checks_since_task(messages)
    if found and left > 0 and state.get("iteration", 0) < state.get("max_iterations", 1 << 30):
        listed = "\n".join(f"- {p}" for p in told_first(found))
        note = (
            f"Your answer is not supported by what the tools returned:\n{listed}\n"
            "Use the tools to do or check what is missing, then answer again. If a tool "
            "failed or a file does not exist, say so plainly: that is an answer too."
        )
        update["messages"] = [HumanMessage(content=note, name=CHECK_NAME)]
    return update


def told_first(found: list[str]) -> list[str]:
    """What a notice tells the model: an action asked for and not done, alone, if any.

    The action's result is what the rest is checked against next time; told both, a small
    model fixes the numbers with the wrong tool and never does the action. Without one, a
    file the task names that is not there, alone: saying so is the answer.
    """
    return action_problems(found) or missing_file_problems(found) or found


def answer_only(found: list[str]) -> bool:
    """Whether what the notice tells needs no tool: only files that are not there.

    The turn after the notice then answers; made to call a tool, the 1.5B listed the files
    again and answered with a value of another file.
    """
    told = told_first(found)
    return bool(told) and told == missing_file_problems(told)


def tools_asked_for(problems: list[str], tools: Iterable[str]) -> list[str] | None:
    """The tools the check's notice tells the model to use, when each problem names some.

    The turn after a notice must call a tool; offered every tool, a small model calls the
    one it called before (refused as a repeat) instead of the one the notice names. So
    that turn is offered the named tools only. ``None`` (no narrowing) when a problem
    names no tool: what it asks for may take any of them.
    """
    names = list(tools)
    asked: set[str] = set()
    for problem in told_first(problems):
        named = {n for n in names if re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", problem)}
        if not named:
            return None
        asked |= named
    return [n for n in names if n in asked] or None


def route_after_check(state: AgentState) -> Literal["call_model", "complete_task"]:
    """Back to the model when the check just sent a notice; otherwise complete the task."""
    last = state["messages"][-1]
    if getattr(last, "name", None) == CHECK_NAME:
        return "call_model"
    return "complete_task"
