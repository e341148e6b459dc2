"""The code agent: the Jarvis run loop with the code tools and a git workflow.

START -> prepare_repo -> start_task -> call_model -> ... (as in the agent graph)

``prepare_repo`` makes sure there is a repository and a commit subscriber; the tools
``edit_file``, ``rewrite_file`` and ``search_code`` come from the ``code`` tool set,
which :class:`CodeContext` selects by default.
"""

from __future__ import annotations

from dataclasses import dataclass

from langgraph.graph import END, START, StateGraph

from jarvis_graph.context import JarvisContext
from jarvis_graph.nodes.ask_user import ask_user
from jarvis_graph.nodes.call_model import call_model, route_after_model
from jarvis_graph.nodes.complete_task import complete_task
from jarvis_graph.nodes.confirm_tools import confirm_tools, route_after_confirm_tools
from jarvis_graph.nodes.prepare_repo import prepare_repo
from jarvis_graph.nodes.run_tools import run_tools
from jarvis_graph.nodes.start_task import start_task
from jarvis_graph.state import AgentInput, AgentOutput, AgentState


@dataclass(frozen=True)
class CodeContext(JarvisContext):
    """Run settings of the code agent: the code tool set and its own event bus."""

    toolset: str = "code"
    event_bus: str = "code"


def build_code_agent_graph() -> StateGraph[AgentState, JarvisContext, AgentInput, AgentOutput]:
    """The uncompiled code-agent graph (callers choose the checkpointer)."""
    # Typed with the base context: the nodes are shared with the agent graph.
    builder: StateGraph[AgentState, JarvisContext, AgentInput, AgentOutput] = StateGraph(
        AgentState,
        context_schema=CodeContext,
        input_schema=AgentInput,
        output_schema=AgentOutput,
    )
    builder.add_node("prepare_repo", prepare_repo)
    builder.add_node("start_task", start_task)
    builder.add_node("call_model", call_model)
    builder.add_node("confirm_tools", confirm_tools)
    builder.add_node("run_tools", run_tools)
    builder.add_node("ask_user", ask_user, destinations=("call_model", "complete_task"))
    builder.add_node("complete_task", complete_task)
    builder.add_edge(START, "prepare_repo")
    builder.add_edge("prepare_repo", "start_task")
    builder.add_edge("start_task", "call_model")
    builder.add_conditional_edges("call_model", route_after_model)
    builder.add_conditional_edges("confirm_tools", route_after_confirm_tools)
    builder.add_edge("run_tools", "call_model")
    builder.add_edge("complete_task", END)
    return builder


graph = build_code_agent_graph().compile(name="code_agent")
