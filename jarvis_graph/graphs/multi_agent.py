"""Multi-agent graphs: agents from a YAML file hand work to each other.

Hand-offs:      START -> <main_agent> -> (send_message) -> <agent> -> ... -> END
Expert routing: START -> pick_expert -> <agent> -> END

Each agent node runs the compiled agent graph on that agent's own history. Every agent
node declares its destinations (the other agents and END), so the drawing shows each
possible hand-off.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from jarvis_graph.context import JarvisContext
from jarvis_graph.graphs.agent import build_agent_graph
from jarvis_graph.multi.config import AgentsConfig, default_agents
from jarvis_graph.nodes.multi_agent import make_agent_node, make_pick_expert
from jarvis_graph.state import MultiAgentState, RunStatus


class MultiAgentInput(TypedDict):
    """What a caller passes: the task."""

    task: str


class MultiAgentOutput(TypedDict, total=False):
    """What a finished multi-agent run returns."""

    messages: list
    status: RunStatus
    final_answer: str
    active_agent: str
    handoffs: int


def build_multi_agent_graph(
    config: AgentsConfig | None = None, route: bool = False
) -> StateGraph[MultiAgentState, JarvisContext, MultiAgentInput, MultiAgentOutput]:
    """The uncompiled multi-agent graph.

    Args:
        config: The agents (default: the agents shipped with the package).
        route: Expert routing: a coordinator picks one agent for the query instead of
            starting with ``main_agent``; that agent's answer ends the run.
    """
    config = config or default_agents()
    agent = build_agent_graph().compile(name="agent")
    builder = StateGraph(
        MultiAgentState,
        context_schema=JarvisContext,
        input_schema=MultiAgentInput,
        output_schema=MultiAgentOutput,
    )
    names = config.names()
    for name in names:
        node: Any = make_agent_node(config, name, agent, single_query=route)
        others = tuple(n for n in names if n != name)
        builder.add_node(name, node, destinations=(*others, END))
    if route:
        builder.add_node("pick_expert", make_pick_expert(config), destinations=tuple(names))
        builder.add_edge(START, "pick_expert")
    else:
        builder.add_edge(START, config.main_agent)
    return builder


graph = build_multi_agent_graph().compile(name="multi_agent")
router_graph = build_multi_agent_graph(route=True).compile(name="expert_router")
