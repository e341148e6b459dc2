"""The planner: split a task into steps run by child agents, then answer with their results.

START -> decide_plan -> route_after_decide_plan
  no plan (or at plan_max_depth) -> agent
  plan                           -> run_step x N (Send, parallel) -> adjust_plan
adjust_plan -> route_after_adjust_plan: ready steps -> run_step x N | none -> write_back
write_back (<PLAN>, <SUB_TASK_RESULTS>, <RESULT_SUMMARY>) -> agent -> END

``agent`` is the compiled agent graph; ``run_step`` runs this graph again one level deeper.
"""

from __future__ import annotations

import functools
from typing import Any

from langchain_core.runnables import Runnable
from langgraph.graph import END, START, StateGraph

from jarvis_graph.context import JarvisContext
from jarvis_graph.graphs.agent import build_agent_graph
from jarvis_graph.nodes.planner import (
    adjust_plan,
    decide_plan,
    make_run_step,
    route_after_adjust_plan,
    route_after_decide_plan,
    write_back,
)
from jarvis_graph.state import AgentInput, PlannerOutput, PlannerState


def build_planner_graph() -> StateGraph[PlannerState, JarvisContext, AgentInput, PlannerOutput]:
    """The uncompiled planner graph (callers choose checkpointer and store)."""
    builder = StateGraph(
        PlannerState,
        context_schema=JarvisContext,
        input_schema=AgentInput,
        output_schema=PlannerOutput,
    )
    builder.add_node("decide_plan", decide_plan)
    builder.add_node("run_step", make_run_step(_child_graph))
    builder.add_node("adjust_plan", adjust_plan)
    builder.add_node("write_back", write_back)
    builder.add_node("agent", build_agent_graph().compile(name="agent"))
    builder.add_edge(START, "decide_plan")
    builder.add_conditional_edges("decide_plan", route_after_decide_plan, ["run_step", "agent"])
    builder.add_edge("run_step", "adjust_plan")
    builder.add_conditional_edges(
        "adjust_plan", route_after_adjust_plan, ["run_step", "write_back"]
    )
    builder.add_edge("write_back", "agent")
    builder.add_edge("agent", END)
    return builder


@functools.cache
def _child_graph() -> Runnable[Any, Any]:
    """The planner graph, compiled once; reached through a call so drawings do not recurse."""
    return build_planner_graph().compile(name="planner")


graph = build_planner_graph().compile(name="planner")
