"""Topology of the agent graph: a stored Mermaid snapshot, and drawings that work.

To accept an intended change of the wiring, run the tests with ``UPDATE_SNAPSHOTS=1`` and
review the diff of ``tests/graphs/snapshots/agent.mmd``.
"""

from __future__ import annotations

import os
from pathlib import Path

from jarvis_graph.graphs.agent import build_agent_graph, graph

SNAPSHOT = Path(__file__).parent / "snapshots" / "agent.mmd"


def test_mermaid_matches_the_snapshot() -> None:
    drawn = build_agent_graph().compile().get_graph().draw_mermaid(with_styles=False)
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        SNAPSHOT.write_text(drawn, encoding="utf-8")
    assert drawn == SNAPSHOT.read_text(encoding="utf-8")


def test_every_route_is_drawn() -> None:
    edges = {
        (e.source, e.target, e.conditional) for e in build_agent_graph().compile().get_graph().edges
    }
    assert ("call_model", "ask_user", True) in edges
    assert ("call_model", "confirm_tools", True) in edges
    assert ("call_model", "run_tools", True) in edges
    assert ("run_tools", "focus_answer", True) in edges  # stuck on repeats: answer now
    assert ("call_model", "complete_task", True) in edges
    assert ("call_model", "correct_call_text", True) in edges
    assert ("correct_call_text", "call_model", False) in edges
    assert ("confirm_tools", "run_tools", True) in edges
    assert ("confirm_tools", "call_model", True) in edges
    assert ("ask_user", "call_model", True) in edges
    assert ("ask_user", "complete_task", True) in edges
    assert ("start_task", "filter_tools", False) in edges
    assert ("filter_tools", "call_model", False) in edges
    assert ("run_tools", "call_model", True) in edges
    assert ("run_tools", "summarize_history", True) in edges
    assert ("summarize_history", "call_model", False) in edges
    assert ("complete_task", "analyze_task", True) in edges
    assert ("complete_task", "__end__", True) in edges
    assert ("analyze_task", "__end__", False) in edges


def test_xray_drawing_works() -> None:
    drawing = build_agent_graph().compile().get_graph(xray=True)
    mermaid = drawing.draw_mermaid(with_styles=False)
    assert mermaid.startswith("graph TD;")
    for node in ("start_task", "call_model", "confirm_tools", "run_tools", "ask_user"):
        assert node in mermaid
    ascii_art = drawing.draw_ascii()
    assert "complete_task" in ascii_art


def test_exported_graph_has_a_name_and_no_checkpointer() -> None:
    assert graph.name == "agent"
    assert graph.checkpointer is None
    assert set(graph.get_graph().nodes) == {
        "__start__",
        "start_task",
        "filter_tools",
        "call_model",
        "correct_call_text",
        "confirm_tools",
        "run_tools",
        "summarize_history",
        "ask_user",
        "focus_answer",
        "check_answer",
        "review_answer",
        "complete_task",
        "analyze_task",
        "__end__",
    }
