"""Topology of the planner and multi-agent graphs: snapshots, routes, subgraphs in xray.

Accept an intended wiring change with ``UPDATE_SNAPSHOTS=1`` and review the snapshot diff.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from jarvis_graph.graphs import multi_agent, planner
from jarvis_graph.graphs.multi_agent import build_multi_agent_graph
from jarvis_graph.graphs.planner import build_planner_graph
from jarvis_graph.multi.config import load_agents
from tests.support.snapshots import check_snapshot

SNAPSHOTS = Path(__file__).parent / "snapshots"


def _check(name: str, drawn: str) -> None:
    check_snapshot(SNAPSHOTS / name, drawn)


def test_planner_mermaid_matches_the_snapshot() -> None:
    _check(
        "planner.mmd", build_planner_graph().compile().get_graph().draw_mermaid(with_styles=False)
    )


def test_multi_agent_mermaid_matches_the_snapshot() -> None:
    drawn = build_multi_agent_graph().compile().get_graph().draw_mermaid(with_styles=False)
    _check("multi_agent.mmd", drawn)


def test_planner_routes_are_drawn() -> None:
    edges = {(e.source, e.target) for e in build_planner_graph().compile().get_graph().edges}
    assert {
        ("decide_plan", "run_step"),
        ("decide_plan", "agent"),
        ("run_step", "adjust_plan"),
        ("adjust_plan", "run_step"),
        ("adjust_plan", "write_back"),
        ("write_back", "agent"),
        ("agent", "__end__"),
    } <= edges


@pytest.mark.parametrize("graph", [planner.graph, multi_agent.graph, multi_agent.router_graph])
def test_exported_graphs_have_no_checkpointer(graph: Any) -> None:
    assert graph.checkpointer is None


def test_xray_draws_the_agent_subgraph_inside_every_agent(tmp_path: Path) -> None:
    path = tmp_path / "agents.yaml"
    agents = [{"name": n, "description": n} for n in ("a", "b", "c")]
    path.write_text(yaml.safe_dump({"main_agent": "a", "agents": agents}), encoding="utf-8")
    compiled = build_multi_agent_graph(load_agents(path)).compile()
    flat = {(e.source, e.target) for e in compiled.get_graph().edges}
    every = {(x, y) for x in "abc" for y in "abc" if x != y}
    assert every | {("a", "__end__"), ("__start__", "a")} <= flat  # declared destinations
    mermaid = compiled.get_graph(xray=True).draw_mermaid(with_styles=False)
    for name in "abc":
        assert f"subgraph {name}" in mermaid
        assert f"{name}\\3acall_model" in mermaid
    planner_xray = build_planner_graph().compile().get_graph(xray=True).draw_mermaid()
    assert "subgraph agent" in planner_xray and "agent\\3arun_tools" in planner_xray
