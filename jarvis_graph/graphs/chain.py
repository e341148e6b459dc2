"""A tool chain's graph: one node per step, in the chain's order, then ``finish``.

START -> <step 1> -> <step 2> -> ... -> finish -> END; after each step, a step that
stopped the chain (it failed or was declined, and its policy is ``stop``) routes to
``finish`` at once. Built per chain: a chain is data, its graph follows it.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph

from jarvis_graph.chains.spec import Chain
from jarvis_graph.context import JarvisContext
from jarvis_graph.nodes.chain_step import chain_finish, chain_step, route_after_step
from jarvis_graph.state import ChainState


def build_chain_graph(
    chain: Chain,
) -> StateGraph[ChainState, JarvisContext, ChainState, ChainState]:
    """The graph of ``chain`` (callers compile it; a run inside another graph shares its saver)."""
    builder = StateGraph(ChainState, context_schema=JarvisContext)
    ids = [step.id for step in chain.steps]
    for step in chain.steps:
        builder.add_node(step.id, chain_step(chain, step))
    builder.add_node("finish", chain_finish(chain))
    builder.add_edge(START, ids[0])
    for step_id, after in zip(ids, [*ids[1:], "finish"], strict=True):
        paths = {"next": after, "finish": "finish"}
        builder.add_conditional_edges(step_id, route_after_step, paths)  # type: ignore[arg-type]
    builder.add_edge("finish", END)
    return builder


def compile_chain(chain: Chain, checkpointer: Any = None) -> Any:
    """``chain``'s graph, compiled (``checkpointer``: ``None`` inherits a parent graph's)."""
    return build_chain_graph(chain).compile(checkpointer=checkpointer, name=f"chain_{chain.name}")
