"""Methodologies found after a completed task (``features.methodology`` picks them for a task).

With ``use_analysis``, ``analyze_task`` runs after ``complete_task``: interactive runs
first ask the user whether the result was satisfactory, then the ``cheap`` model says
whether a reusable methodology emerged, and it is saved.
"""

from __future__ import annotations

import logging
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.errors import GraphBubbleUp
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from jarvis_graph.context import JarvisContext
from jarvis_graph.helper_model import warn_helper_failure
from jarvis_graph.history import render_transcript
from jarvis_graph.methodology import select as chooser
from jarvis_graph.methodology.store import (
    find,
    home_dir,
    save,
)
from jarvis_graph.runtime.services import services_of
from jarvis_graph.state import AgentState

logger = logging.getLogger(__name__)

TRANSCRIPT_CHARS = 12_000


def analyze_task(state: AgentState, runtime: Runtime[JarvisContext]) -> dict[str, Any]:
    """Ask for feedback (interactive runs), then save a methodology if one emerged."""
    services = services_of(runtime)
    feedback = ""
    if not services.context.non_interactive:
        question = "Was the result satisfactory? (yes / no, and what to do differently)"
        reply = interrupt({"type": "feedback", "question": question})
        feedback = str(reply.get("answer", "") if isinstance(reply, dict) else reply or "")
    note = f"\nThe user's feedback on the result: {feedback.strip()}\n" if feedback.strip() else ""
    prompt = chooser.ANALYSIS_PROMPT.format(
        feedback=note, transcript=render_transcript(state["messages"], TRANSCRIPT_CHARS)
    )
    try:
        model = services.chat_model("cheap")
        reply_text = model.invoke(
            [SystemMessage("You review finished tasks."), HumanMessage(prompt)]
        ).text
    except GraphBubbleUp:
        raise
    except Exception as exc:
        warn_helper_failure(logger, "analyze the finished task", exc)
        return {}
    found = chooser.parse_analysis(str(reply_text))
    if found is not None:
        existing = find(home_dir(), found.problem_type)
        path = save(home_dir(), found)
        logger.info("%s methodology %r in %s", "updated" if existing else "saved", found, path)
    return {}
