"""summarize_history: replace older messages by a summary when the history is over budget.

The system prompt and the latest messages stay; the messages in between leave the state
through ``RemoveMessage`` and a summary from the ``cheap`` model takes their place. The cut
never separates an AI message with tool calls from its tool messages.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.errors import GraphBubbleUp
from langgraph.runtime import Runtime

from jarvis_graph.context import JarvisContext
from jarvis_graph.events import Event
from jarvis_graph.helper_model import warn_helper_failure
from jarvis_graph.history import (
    CHARS_PER_TOKEN,
    KEEP_FRACTION,
    SUMMARY_NAME,
    choose_cut,
    model_turns,
    render_transcript,
    replacement,
)
from jarvis_graph.messages import text_of
from jarvis_graph.prompts import load_prompt
from jarvis_graph.runtime.services import RunServices, services_of
from jarvis_graph.state import SUMMARIZED_TURNS, AgentState

logger = logging.getLogger(__name__)

SUMMARY_ID_PREFIX = "jarvis-summary-"


def summarize_history(state: AgentState, runtime: Runtime[JarvisContext]) -> dict[str, Any]:
    """Summarize the older messages and remove them from the state.

    Emits BEFORE_SUMMARY / AFTER_SUMMARY around the model call and BEFORE_HISTORY_CLEAR
    (with the messages about to go, for memory subscribers) / AFTER_HISTORY_CLEAR.
    """
    services = services_of(runtime)
    bus = services.bus
    budget = services.settings.max_input_tokens or 32_000
    messages = state["messages"]
    cut = choose_cut(messages, budget // KEEP_FRACTION)
    if cut is None:  # nothing can go without splitting a tool call from its answer
        return {}
    count = len(messages)
    bus.emit(Event.BEFORE_SUMMARY, {"message_count": count, "removed": len(cut.removed)})
    transcript = render_transcript(cut.removed, budget * CHARS_PER_TOKEN // 2)
    summary = _summarize(services, transcript) or (
        f"(No summary could be written for {len(cut.removed)} earlier messages; "
        "ask the user or look again if you need something from them.)"
    )
    bus.emit(Event.AFTER_SUMMARY, {"message_count": count, "summary": summary})
    removed = {"message_count": count, "removed": len(cut.removed)}
    clearing = {"messages": list(cut.removed), "first_index": len(cut.head)}
    bus.emit(Event.BEFORE_HISTORY_CLEAR, {**removed, **clearing})
    task = state.get("task", "")
    note = HumanMessage(
        content=f"Summary of the earlier conversation (task: {task}):\n\n{summary}",
        name=SUMMARY_NAME,
        id=f"{SUMMARY_ID_PREFIX}{uuid.uuid4()}",
        response_metadata={SUMMARIZED_TURNS: model_turns(cut.removed)},
    )
    kept = len(cut.head) + 1 + len(cut.kept)
    bus.emit(Event.AFTER_HISTORY_CLEAR, {"message_count": kept, "removed": len(cut.removed)})
    return {"messages": replacement(cut, note)}


def _summarize(services: RunServices, transcript: str) -> str:
    """The ``cheap`` model's summary, or ``""`` when it fails (the run goes on)."""
    prompt = [
        SystemMessage(content="You write faithful, compact summaries."),
        HumanMessage(content=load_prompt("summary").format(transcript=transcript)),
    ]
    try:
        reply = services.chat_model("cheap").invoke(prompt)
    except GraphBubbleUp:
        raise
    except Exception as exc:
        warn_helper_failure(logger, "summarize the history", exc)
        return ""
    return text_of(reply).strip()
