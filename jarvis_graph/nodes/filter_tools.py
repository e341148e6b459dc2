"""filter_tools: offer the model only the tools a task needs when there are many.

Above ``tool_filter_threshold`` tools, the tools are ranked by MiniLM similarity to the
task, the ``cheap`` model picks among the best-ranked by number (a malformed answer is
retried once), and the best-ranked are kept when it gives no usable answer. Tools matching
``tool_filter_always_include`` are always offered. The names go to ``selected_tools`` in
state and ``call_model`` binds only those.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from langgraph.errors import GraphBubbleUp
from langgraph.runtime import Runtime

from jarvis_graph.citations import ALWAYS_OFFERED
from jarvis_graph.context import JarvisContext
from jarvis_graph.events import Event
from jarvis_graph.helper_model import warn_helper_failure
from jarvis_graph.platforms.registry import resolve_platform
from jarvis_graph.runtime.services import RunServices, services_of
from jarvis_graph.state import AgentState
from jarvis_graph.tools.tool_filter import (
    ToolCard,
    VectorCache,
    always_included,
    card_of,
    pick_with_model,
    rank,
)

logger = logging.getLogger(__name__)

_vectors = VectorCache()


def filter_tools(state: AgentState, runtime: Runtime[JarvisContext]) -> dict[str, Any]:
    """Select the tools for this task (or offer all of them when they are few)."""
    services = services_of(runtime)
    settings = services.settings
    task = state.get("task", "")
    always = services.tools_marked(ALWAYS_OFFERED)  # how a task is declared
    hidden = unmentioned_tools(services, task) - set(always)
    tools = {name: tool for name, tool in services.tools.items() if name not in hidden}
    threshold = settings.tool_filter_threshold
    if not threshold or len(tools) <= threshold:
        if hidden:
            return {"selected_tools": list(tools)}
        return {"selected_tools": None} if state.get("selected_tools") else {}
    bus = services.bus
    bus.emit(Event.BEFORE_TOOL_FILTER, {"available": len(tools)})
    ranked = _ranked(task, [card_of(t) for t in tools.values()])
    candidates = ranked[: settings.tool_filter_candidates]
    picks = _ask_cheap_model(services, task, candidates)
    chosen = picks or [c.name for c in ranked[: settings.tool_filter_fallback]]
    extra = always_included(tools, settings.tool_filter_always_include)
    extra += always
    selected = list(dict.fromkeys([*chosen, *extra]))
    bus.emit(Event.TOOL_FILTERED, {"available": len(tools), "selected": selected})
    return {"selected_tools": selected}


_ON_MENTION = {
    "memory": re.compile(r"\b(remember|memor|recall|forget|note that)", re.IGNORECASE),
    "methodolog": re.compile(r"\b(methodolog|playbook|procedure)", re.IGNORECASE),
    "document": re.compile(
        r"\.(pdf|docx|xlsx|xlsm|html?|md|markdown)\b|\b(document|spreadsheet|sheet|manual)",
        re.IGNORECASE,
    ),
}
"""Tools offered to a local model only when the task speaks of them: name part -> words."""


def unmentioned_tools(services: RunServices, task: str) -> set[str]:
    """Tools a local model is not offered for ``task``.

    Memory, methodology and document tools unless the task speaks of them (for documents:
    a ``.pdf``/``.docx``/``.xlsx``/``.html``/``.md`` file, "document", "spreadsheet"):
    offered on every task, a small model calls them to look for what is in the files
    (``memory_tools_on_mention`` in the model config). ``ask_user`` in a non-interactive
    run: nobody can answer, and a small model asks it anything. Other platforms get every
    tool.
    """
    spec = services.settings.model_for("normal")
    if resolve_platform(spec) != "local":
        return set()
    hidden = {"ask_user"} & set(services.tools) if services.context.non_interactive else set()
    if not spec.memory_tools_on_mention:
        return hidden
    parts = [part for part, words in _ON_MENTION.items() if not words.search(task)]
    return hidden | {name for name in services.tools if any(part in name for part in parts)}


def _ranked(task: str, cards: list[ToolCard]) -> list[ToolCard]:
    # deferred: numpy and the MiniLM embedder load only when there are tools to rank
    from jarvis_graph.memory.embedder import default_embedder

    embedder = default_embedder()
    vectors = _vectors.vectors([c.text() for c in cards], embedder.embed_documents)
    return [cards[i] for i in rank(embedder.embed_query(task), vectors)]


def _ask_cheap_model(services: RunServices, task: str, candidates: list[ToolCard]) -> list[str]:
    """The ``cheap`` model's picks; empty when it fails or answers badly twice."""
    try:
        model = services.chat_model("cheap")
        return pick_with_model(task, candidates, model.invoke) or []
    except GraphBubbleUp:
        raise
    except Exception as exc:
        warn_helper_failure(logger, "filter the tools", exc)
        return []
