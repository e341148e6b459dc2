"""complete_task: close the run — final answer, status, dangling tool calls answered.

Its router sends a completed task on to ``analyze_task`` when ``use_analysis`` is on.
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.runtime import Runtime

from jarvis_graph.checkpointing import run_position
from jarvis_graph.context import JarvisContext
from jarvis_graph.events import Event
from jarvis_graph.marker import has_complete_marker, strip_complete_marker
from jarvis_graph.messages import last_ai, not_run_answers, pending_tool_calls, text_of
from jarvis_graph.nodes.call_text import call_in_text, corrections_in_a_row
from jarvis_graph.platforms.finish import cut_off
from jarvis_graph.runtime.services import current_settings, services_of
from jarvis_graph.state import AgentState


def strip_marker(text: str) -> str:
    """The text without the auto-complete marker or a mistyped one (``!!COMPLETE!!``)."""
    return strip_complete_marker(text)


def complete_task(state: AgentState, runtime: Runtime[JarvisContext]) -> dict[str, Any]:
    """Set the final answer and status; answer tool calls that will never run.

    Unanswered tool calls (iteration cap) get a tool message each, so the thread can be
    continued later without a provider rejecting the history.
    """
    services = services_of(runtime)
    messages = state["messages"]
    pending = pending_tool_calls(messages)
    iteration = state.get("iteration", 0)
    update: list[Any] = not_run_answers(pending, "the run stopped at its iteration cap")
    ai = last_ai(messages)
    answer = strip_marker(text_of(ai))
    if pending:
        status = "max_iterations"
        cap = state.get("max_iterations", iteration)
        answer = (
            f"Stopped after {iteration} model calls (max_iterations={cap}) before the task "
            f"was finished.{' Last model text: ' + answer if answer else ''}"
        )
    elif (how := cut_off(ai)) is not None:
        status = "truncated"  # not "completed": what the model meant to say did not all arrive
        arrived = f" What arrived:\n{answer}" if answer else ""
        answer = f"Stopped: the model's reply was cut off {how}, so it is no answer.{arrived}"
    elif found := call_in_text(answer, services.tools):
        status = "stopped"  # not "completed": what the model meant to do never ran
        tries = corrections_in_a_row(messages)
        answer = (
            f"Stopped: the model's reply holds {found} written as text instead of a tool "
            f"call, so nothing was run (it was told so {tries} time{'s' if tries != 1 else ''}"
            f"). Its last reply:\n{answer}"
        )
    else:
        # Problems the answer check found in this very answer (a later answer clears them).
        status = "unverified" if state.get("answer_problems") else "completed"
        if ai is not None and has_complete_marker(text_of(ai)):
            update.append(ai.model_copy(update={"content": answer}))  # same id: replaced
    problems = state.get("answer_problems") or [] if status == "unverified" else []
    payload = {"status": status, "final_answer": answer, "iterations": iteration}
    # For subscribers (memory hooks, episodic archive); not written to the stream.
    payload |= {**run_position(), "messages": list(messages)}
    services.bus.emit(Event.TASK_COMPLETED, payload)
    return {
        "messages": update,
        "status": status,
        "final_answer": answer,
        "answer_problems": problems,
    }


def route_after_complete_task(state: AgentState) -> Literal["analyze_task", "__end__"]:
    """Analyze completed tasks when ``use_analysis`` is on.

    The context is looked up, not injected (see ``route_after_tools``).
    """
    settings = current_settings()
    if settings.use_analysis and state.get("status") == "completed":
        return "analyze_task"
    return "__end__"
