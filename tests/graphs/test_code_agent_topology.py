"""Topology of the code-agent graph (``UPDATE_SNAPSHOTS=1`` rewrites the snapshot)."""

from __future__ import annotations

import os
from pathlib import Path

from jarvis_graph.graphs.code_agent import CodeContext, build_code_agent_graph, graph

SNAPSHOT = Path(__file__).parent / "snapshots" / "code_agent.mmd"


def test_mermaid_matches_the_snapshot() -> None:
    drawn = build_code_agent_graph().compile().get_graph().draw_mermaid(with_styles=False)
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        SNAPSHOT.write_text(drawn, encoding="utf-8")
    assert drawn == SNAPSHOT.read_text(encoding="utf-8")


def test_the_repository_is_prepared_before_the_task_starts() -> None:
    edges = {(e.source, e.target) for e in graph.get_graph().edges}
    assert ("__start__", "prepare_repo") in edges and ("prepare_repo", "start_task") in edges
    assert graph.name == "code_agent"


def test_the_context_selects_the_code_tools_by_default() -> None:
    assert CodeContext().toolset == "code" and CodeContext().event_bus == "code"


def test_jarvis_graph_draw_knows_the_code_agent() -> None:
    from tests.support.cli import invoke

    result = invoke(["graph", "draw", "code_agent"])
    assert result.exit_code == 0 and "__start__ --> prepare_repo;" in result.output
