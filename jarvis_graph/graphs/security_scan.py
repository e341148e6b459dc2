"""Verification of a security scan's candidates, one branch per candidate.

START -> plan_verification -> route_after_plan
  candidates without a verdict -> Send("verify_candidate", task) each  -> merge_verdicts
  none left                    -> merge_verdicts
merge_verdicts -> END

Concurrency is LangGraph's ``max_concurrency`` in the run config (``--concurrency``).
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from jarvis_graph.context import JarvisContext
from jarvis_graph.nodes.security_verify import (
    merge_verdicts,
    plan_verification,
    route_after_plan,
    verify_candidate,
)
from jarvis_graph.state import CandidateTask, SecurityScanState


def build_security_scan_graph() -> StateGraph[SecurityScanState, JarvisContext]:
    """The uncompiled verification graph."""
    builder = StateGraph(SecurityScanState, context_schema=JarvisContext)
    builder.add_node("plan_verification", plan_verification)
    # The branch input (a CandidateTask sent by Send) differs from the graph state, which
    # langgraph's add_node overloads do not express.
    builder.add_node(  # type: ignore[call-overload]
        "verify_candidate", verify_candidate, input_schema=CandidateTask
    )
    builder.add_node("merge_verdicts", merge_verdicts)
    builder.add_edge(START, "plan_verification")
    builder.add_conditional_edges(
        "plan_verification", route_after_plan, ["verify_candidate", "merge_verdicts"]
    )
    builder.add_edge("verify_candidate", "merge_verdicts")
    builder.add_edge("merge_verdicts", END)
    return builder


graph = build_security_scan_graph().compile(name="security_scan")
