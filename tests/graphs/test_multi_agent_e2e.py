"""Multi-agent runs end to end with rule-based fake models: hand-offs, summaries, routing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from jarvis_graph.context import JarvisContext
from jarvis_graph.graphs.multi_agent import build_multi_agent_graph
from jarvis_graph.multi.config import load_agents
from tests.support.fake_models import answer, call, human_text, last_human, system_text, use_fake

TASK = "Find the bug in parser.py"


def _agents(tmp_path: Path, **extra: Any) -> Path:
    data = {
        "main_agent": "alice",
        "common_system_prompt": "Team of two.",
        "agents": [
            {"name": "alice", "description": "Leads and answers the user."},
            {"name": "bob", "description": "Reads code and finds bugs.", "tools": ["read_code"]},
        ],
        **extra,
    }
    path = tmp_path / "agents.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def _run(agents: Path, workspace: Path, route: bool = False, task: str = TASK) -> dict[str, Any]:
    graph = build_multi_agent_graph(load_agents(agents), route=route).compile(
        checkpointer=InMemorySaver()
    )
    context = JarvisContext(workspace=str(workspace), platform="fake")
    config = {"configurable": {"thread_id": "m1"}, "recursion_limit": 200}
    return graph.invoke({"task": task}, config, context=context)


def _who(messages: list[BaseMessage]) -> str:
    text = system_text(messages)
    return next((n for n in ("alice", "bob", "sql", "docs") if f"agent '{n}'" in text), "")


def _summary(messages: list[BaseMessage]) -> AIMessage | None:
    text = human_text(messages)
    if "Write a hand-off summary" not in text:
        return None
    if "Message from alice" in text:
        return answer("Done: bob found an off-by-one on line 3. Next step: fix it.")
    return answer("Done: alice read the task. Next step: read parser.py.")


def test_a_hand_off_chain_a_b_a_carries_summaries(tmp_path: Path, workspace: Path) -> None:
    def brain(messages: list[BaseMessage]) -> AIMessage:
        if (summary := _summary(messages)) is not None:
            return summary
        last = last_human(messages)
        if _who(messages) == "alice":
            if "Message from bob" in last:
                return answer("The bug is the off-by-one on line 3. !!!COMPLETE!!!")
            return call("send_message", to="bob", content="Please find the bug in parser.py")
        assert _who(messages) == "bob"
        return call("send_message", to="alice", content="Line 3 reads one item too far.")

    seen = use_fake(brain)
    out = _run(_agents(tmp_path), workspace)
    assert out["status"] == "completed"
    assert out["final_answer"] == "The bug is the off-by-one on line 3."
    assert out["handoffs"] == 2
    bob_inputs = [m for m in seen if _who(m) == "bob"]
    received = last_human(bob_inputs[0])
    assert received.startswith("Message from alice:\nPlease find the bug in parser.py")
    assert "Hand-off summary from alice:\nDone: alice read the task." in received
    assert TASK not in human_text(bob_inputs[0])  # bob has his own history, not alice's
    alice_last = [m for m in seen if _who(m) == "alice"][-1]
    assert "Hand-off summary from bob:\nDone: bob found an off-by-one" in last_human(alice_last)
    assert TASK in human_text(alice_last)  # alice kept her own history across the hand-off
    # the sender's hand-off call was answered in its history
    delivered = [m for m in alice_last if isinstance(m, ToolMessage)]
    assert [m.content for m in delivered] == ["Message delivered to bob."]
    # bob's tools are his own list plus the hand-off tool
    assert "Tools available: read_code, send_message." in system_text(bob_inputs[0])


def test_an_unknown_target_recovers_and_a_plain_answer_goes_back(
    tmp_path: Path, workspace: Path
) -> None:
    def brain(messages: list[BaseMessage]) -> AIMessage:
        if (summary := _summary(messages)) is not None:
            return summary
        if _who(messages) == "bob":  # a non-main agent answers without a hand-off
            return answer("Line 3 reads one item too far.")
        if "Message from bob" in last_human(messages):
            return answer("Fixed plan: line 3. !!!COMPLETE!!!")
        if isinstance(messages[-1], ToolMessage) and "no agent named" in str(messages[-1].content):
            return call("send_message", to="bob", content="Please check parser.py")
        return call("send_message", to="carol", content="Please check parser.py")

    seen = use_fake(brain)
    out = _run(_agents(tmp_path), workspace)
    error = [
        m[-1] for m in seen if isinstance(m[-1], ToolMessage) and "carol" in str(m[-1].content)
    ]
    assert error and "Available agents: bob (Reads code and finds bugs.)" in error[0].content
    assert out["final_answer"] == "Fixed plan: line 3."
    assert out["handoffs"] == 2  # alice -> bob, and bob's answer back to alice
    assert "Message from bob:\nLine 3 reads one item too far." in last_human(
        [m for m in seen if _who(m) == "alice"][-1]
    )


def test_the_hand_off_guard_stops_a_ping_pong(tmp_path: Path, workspace: Path) -> None:
    def brain(messages: list[BaseMessage]) -> AIMessage:
        if (summary := _summary(messages)) is not None:
            return summary
        other = "bob" if _who(messages) == "alice" else "alice"
        return call("send_message", to=other, content="you do it")

    use_fake(brain)
    out = _run(_agents(tmp_path, max_handoffs=3), workspace)
    assert out["status"] == "stopped"
    assert "hand-off limit (max_handoffs=3)" in out["final_answer"]


def test_expert_routing_picks_the_agent_by_description(tmp_path: Path, workspace: Path) -> None:
    data = {
        "main_agent": "docs",
        "agents": [
            {"name": "docs", "description": "Answers questions about the documentation."},
            {"name": "sql", "description": "Writes and explains SQL queries."},
        ],
    }
    path = tmp_path / "experts.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")

    def brain(messages: list[BaseMessage]) -> AIMessage:
        if "Pick the agent best suited" in system_text(messages):
            assert "- sql: Writes and explains SQL queries." in system_text(messages)
            pick = "sql" if "SQL" in last_human(messages) else "docs"
            return call("ExpertChoice", agent=pick, reason="matches the description")
        return answer(f"{_who(messages)} answers !!!COMPLETE!!!")

    use_fake(brain)
    out = _run(path, workspace, route=True, task="Write an SQL query for top customers")
    assert out["active_agent"] == "sql" and out["final_answer"] == "sql answers"
    out = _run(path, workspace, route=True, task="Where is the install guide?")
    assert out["final_answer"] == "docs answers"


def test_one_hand_off_per_turn(tmp_path: Path, workspace: Path) -> None:
    def brain(messages: list[BaseMessage]) -> AIMessage:
        if (summary := _summary(messages)) is not None:
            return summary
        if _who(messages) == "bob":
            return answer("bob's part is done")
        if "Message from bob" in last_human(messages):
            return answer("All done. !!!COMPLETE!!!")
        two = [
            {"name": "send_message", "args": {"to": "bob", "content": "first"}, "id": "c1"},
            {"name": "send_message", "args": {"to": "bob", "content": "second"}, "id": "c2"},
        ]
        return AIMessage(content="", tool_calls=two)

    seen = use_fake(brain)
    out = _run(_agents(tmp_path), workspace)
    assert out["final_answer"] == "All done."
    bob_inputs = [m for m in seen if _who(m) == "bob"]
    assert len(bob_inputs) == 1 and last_human(bob_inputs[0]).startswith(
        "Message from alice:\nfirst"
    )
    alice_last = [m for m in seen if _who(m) == "alice"][-1]
    answers = {m.tool_call_id: m.content for m in alice_last if isinstance(m, ToolMessage)}
    assert answers == {
        "c1": "Message delivered to bob.",
        "c2": "Discarded: this turn ended with a hand-off; call again if still needed.",
    }


def test_clear_after_send_message_starts_the_sender_afresh(tmp_path: Path, workspace: Path) -> None:
    path = _agents(tmp_path)
    data = yaml.safe_load(path.read_text())
    data["agents"][0] |= {"clear_after_send_message": True, "summary_on_send": False}
    path.write_text(yaml.safe_dump(data), encoding="utf-8")

    def brain(messages: list[BaseMessage]) -> AIMessage:
        if "Write a hand-off summary" in human_text(messages):
            assert "Message from alice" in human_text(messages)  # only bob summarises
            return answer("Done: bob found line 3.")
        if _who(messages) == "bob":
            return call("send_message", to="alice", content="Line 3.")
        if "Message from bob" in last_human(messages):
            return answer("Line 3. !!!COMPLETE!!!")
        return call("send_message", to="bob", content="Find the bug")

    seen = use_fake(brain)
    out = _run(path, workspace)
    assert out["final_answer"] == "Line 3."
    bob_first = [m for m in seen if _who(m) == "bob"][0]
    assert "Hand-off summary" not in last_human(bob_first)  # alice sent none
    alice_last = [m for m in seen if _who(m) == "alice"][-1]
    assert TASK not in human_text(alice_last)  # her history was cleared after sending
    assert "Hand-off summary from bob:\nDone: bob found line 3." in last_human(alice_last)
