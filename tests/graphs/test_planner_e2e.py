"""The planner end to end with a rule-based fake model: plans, children, failures, depth."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langgraph.checkpoint.memory import InMemorySaver

from jarvis_graph.context import JarvisContext
from jarvis_graph.graphs.planner import build_planner_graph
from tests.support.fake_models import (
    answer,
    call,
    human_text,
    is_plan_adjustment,
    is_plan_decision,
    last_human,
    use_fake,
)

TASK = "Write a short report on the sales data"
STEPS = [
    {"id": "count", "task": "Count the rows of sales.csv", "depends_on": []},
    {"id": "total", "task": "Sum the amount column of sales.csv", "depends_on": []},
    {"id": "report", "task": "Write the report", "depends_on": ["count", "total"]},
]


def _run(workspace: Path, thread: str = "t1", **ctx: Any) -> dict[str, Any]:
    graph = build_planner_graph().compile(checkpointer=InMemorySaver())
    context = JarvisContext(workspace=str(workspace), platform="fake", **ctx)
    config = {"configurable": {"thread_id": thread}, "recursion_limit": 200}
    return graph.invoke({"task": TASK}, config, context=context)


def _report_brain():
    def brain(messages: list[BaseMessage]) -> AIMessage:
        if is_plan_decision(messages):
            if last_human(messages) == TASK:
                return call("PlanDecision", split=True, reason="three parts", steps=STEPS)
            return call("PlanDecision", split=False, reason="one thing")
        if is_plan_adjustment(messages):
            return call("PlanAdjustment", change=False)
        text = human_text(messages)
        if "<RESULT_SUMMARY>" in text:
            return answer(f"Final: {text.count('completed')} mentions !!!COMPLETE!!!")
        if "Count the rows" in text:
            return answer("There are 12 rows. !!!COMPLETE!!!")
        if "Sum the amount" in text:
            return answer("The total is 340. !!!COMPLETE!!!")
        if "Write the report" in text:
            assert "There are 12 rows." in text and "The total is 340." in text
            return answer("12 rows, total 340. !!!COMPLETE!!!")
        return answer(f"unexpected input: {text[:200]}")

    return brain


def test_three_step_plan_runs_and_writes_back_the_three_blocks(workspace: Path) -> None:
    seen = use_fake(_report_brain())
    out = _run(workspace)
    assert out["status"] == "completed"
    results = out["step_results"]
    assert {k: v["status"] for k, v in results.items()} == {
        "count": "completed",
        "total": "completed",
        "report": "completed",
    }
    assert results["report"]["answer"] == "12 rows, total 340."
    context = [m for m in out["messages"] if m.name == "jarvis_context"][-1].content
    for block in ("<PLAN>", "</PLAN>", "<SUB_TASK_RESULTS>", "<RESULT_SUMMARY>"):
        assert block in context
    assert "3 of 3 steps completed." in context
    assert out["final_answer"].startswith("Final:")
    # the two independent steps ran in the same round: the adjustment was asked once,
    # after that round, with one step left (the report)
    adjustments = [m for m in seen if is_plan_adjustment(m)]
    assert len(adjustments) == 1 and '"report"' in human_text(adjustments[0])
    # children at depth 1 were asked whether to split (plan_max_depth is 2)
    assert sum(1 for m in seen if is_plan_decision(m)) == 4


def test_a_child_at_the_maximum_depth_does_not_split(workspace: Path) -> None:
    def brain(messages: list[BaseMessage]) -> AIMessage:
        if is_plan_decision(messages):  # always wants to split
            steps = [{"id": "x", "task": "Count the rows"}, {"id": "y", "task": "Sum the amount"}]
            return call("PlanDecision", split=True, reason="always", steps=steps)
        if is_plan_adjustment(messages):
            return call("PlanAdjustment", change=False)
        if "<RESULT_SUMMARY>" in human_text(messages):
            return answer("done !!!COMPLETE!!!")
        return answer("child answer !!!COMPLETE!!!")

    seen = use_fake(brain)
    out = _run(workspace, plan_max_depth=1)
    assert out["status"] == "completed"
    assert [m for m in seen if is_plan_decision(m)] == [seen[0]]  # only the top level asked
    assert {r["depth"] for r in out["step_results"].values()} == {1}
    assert all(r["answer"] == "child answer" for r in out["step_results"].values())


def test_a_failing_step_is_reported_and_the_others_complete(workspace: Path) -> None:
    steps = [
        {"id": "count", "task": "Count the rows of sales.csv"},
        {"id": "broken", "task": "Read the missing ledger"},
        {"id": "total", "task": "Sum the amount column of sales.csv"},
        {"id": "after", "task": "Explain the ledger", "depends_on": ["broken"]},
    ]

    def brain(messages: list[BaseMessage]) -> AIMessage:
        if is_plan_decision(messages):
            if last_human(messages) == TASK:
                return call("PlanDecision", split=True, reason="parts", steps=steps)
            return call("PlanDecision", split=False)
        if is_plan_adjustment(messages):
            return call("PlanAdjustment", change=False)
        text = human_text(messages)
        if "<RESULT_SUMMARY>" in text:
            return answer("Partial report. !!!COMPLETE!!!")
        if "missing ledger" in text:
            raise RuntimeError("the ledger file is gone")
        if "Count the rows" in text:
            return answer("12 rows !!!COMPLETE!!!")
        return answer("total 340 !!!COMPLETE!!!")

    seen = use_fake(brain)
    out = _run(workspace)
    results = out["step_results"]
    assert results["count"]["status"] == results["total"]["status"] == "completed"
    assert results["broken"]["status"] == "failed"
    assert "the ledger file is gone" in results["broken"]["answer"]
    assert results["after"]["status"] == "skipped"
    assert "depends on step 'broken', which failed" in results["after"]["answer"]
    summary = [m for m in out["messages"] if m.name == "jarvis_context"][-1].content
    assert "2 of 4 steps completed." in summary and "- broken failed:" in summary
    assert out["status"] == "completed" and out["final_answer"] == "Partial report."
    assert not any(human_text(m).startswith("Explain the ledger") for m in seen)  # never run


def test_a_new_task_on_the_same_thread_starts_a_clean_plan(workspace: Path) -> None:
    use_fake(_report_brain())
    graph = build_planner_graph().compile(checkpointer=InMemorySaver())
    context = JarvisContext(workspace=str(workspace), platform="fake")
    config = {"configurable": {"thread_id": "again"}, "recursion_limit": 200}
    first = graph.invoke({"task": TASK}, config, context=context)
    assert set(first["step_results"]) == {"count", "total", "report"}
    second = graph.invoke({"task": "Say hello"}, config, context=context)
    assert second.get("step_results") == {} and second.get("plan") == []
    assert second["plan_note"].startswith("not split")


def test_the_remaining_steps_can_be_adjusted_after_a_round(workspace: Path) -> None:
    new_step = {"id": "chart", "task": "Draw a chart of the amounts", "depends_on": ["total"]}

    def brain(messages: list[BaseMessage]) -> AIMessage:
        if is_plan_decision(messages):
            if last_human(messages) == TASK:
                return call("PlanDecision", split=True, reason="three parts", steps=STEPS)
            return call("PlanDecision", split=False)
        if is_plan_adjustment(messages):
            return call("PlanAdjustment", change=True, reason="a chart says more", steps=[new_step])
        text = human_text(messages)
        if "<RESULT_SUMMARY>" in text:
            return answer("Chart drawn. !!!COMPLETE!!!")
        if "Draw a chart" in text:
            assert "The total is 340." in text  # its dependency's result came along
            return answer("chart.png !!!COMPLETE!!!")
        if "Count the rows" in text:
            return answer("There are 12 rows. !!!COMPLETE!!!")
        if "Sum the amount" in text:
            return answer("The total is 340. !!!COMPLETE!!!")
        return answer(f"unexpected: {text[:100]}")

    use_fake(brain)
    out = _run(workspace)
    assert [s["id"] for s in out["plan"]] == ["count", "total", "chart"]
    assert out["plan_note"] == "adjusted: a chart says more"
    assert set(out["step_results"]) == {"count", "total", "chart"}
    assert out["step_results"]["chart"]["answer"] == "chart.png"
