"""The code agent: the Jarvis run loop with the code tools and a git workflow.

START -> prepare_repo -> start_task -> call_model -> ... (as in the agent graph)

``prepare_repo`` makes sure there is a repository and a commit subscriber; the tools
``edit_file``, ``rewrite_file`` and ``search_code`` come from the ``code`` tool set,
which :class:`CodeContext` selects by default.
"""

from __future__ import annotations

from dataclasses import dataclass

from langgraph.graph import START, StateGraph

from jarvis_graph.context import JarvisContext
from jarvis_graph.graphs.agent import build_agent_graph
from jarvis_graph.nodes.prepare_repo import prepare_repo
from jarvis_graph.state import AgentInput, AgentOutput, AgentState


@dataclass(frozen=True)
class CodeContext(JarvisContext):
    """Run settings of the code agent: the code tool set and its own event bus."""

    toolset: str = "code"
    event_bus: str = "code"


def build_code_agent_graph() -> StateGraph[AgentState, JarvisContext, AgentInput, AgentOutput]:
    """The agent graph with ``prepare_repo`` before ``start_task`` (callers choose the saver).

    Built on :func:`build_agent_graph`, so the code agent keeps every node the run loop has.

    Raises:
        RuntimeError: The agent graph no longer starts at ``start_task``.
    """
    builder = build_agent_graph()
    if (START, "start_task") not in builder.edges:
        msg = "the agent graph no longer starts at start_task; update build_code_agent_graph"
        raise RuntimeError(msg)
    builder.edges.discard((START, "start_task"))
    builder.context_schema = CodeContext
    builder.add_node("prepare_repo", prepare_repo)
    builder.add_edge(START, "prepare_repo")
    builder.add_edge("prepare_repo", "start_task")
    return builder


graph = build_code_agent_graph().compile(name="code_agent")
