"""Cited answers end to end (``answer_check: cited``): the agent graph with a scripted model.

A task is declared with ``state_task``, its steps run real tools on real files, and it ends
with an answer in words whose cites the ``review_answer`` node locates in the results.
The graph runs in process on a real SqliteSaver (what the model was bound with is
recorded), and the CLI as a real process (what a user reads, the exit code a script sees).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
import yaml
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver

from jarvis_graph.citations import CITES_KEY
from jarvis_graph.graphs.agent import build_agent_graph
from jarvis_graph.platforms.scripted import ScriptedChatModel
from jarvis_graph.state import CHECK_NAME
from tests.support.answers import declare
from tests.support.cli import run_process, write_script

TASK = "What port does settings.py set?"
DECLARE = declare(call_id="declare")
READ = {"name": "read_code", "id": "r1", "args": {"path": "settings.py"}}
RIGHT_CITES = [{"source": "r1", "quote": "PORT = 8123", "where": ""}]


def answer(text: str) -> dict[str, Any]:
    """A turn that ends the task: an answer in words."""
    return {"text": text}


@pytest.fixture
def ws(workspace: Path) -> Path:
    """A workspace whose project settings turn cited answers on, with one file to read."""
    (workspace / ".jarvis").mkdir()
    config = {"answer_check": "cited", "answer_check_retries": 1}
    (workspace / ".jarvis" / "config.yaml").write_text(yaml.safe_dump(config))
    (workspace / "settings.py").write_text('LOG_LEVEL = "info"\nPORT = 8123\n')
    return workspace


@pytest.fixture
def bound(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """What the scripted model is bound with, each time: tool names and options."""
    seen: list[dict[str, Any]] = []
    original = ScriptedChatModel.bind_tools

    def bind_tools(self: ScriptedChatModel, tools: Any, **kwargs: Any) -> ScriptedChatModel:
        seen.append({"tools": [t.name for t in tools], **kwargs})
        return original(self, tools, **kwargs)

    monkeypatch.setattr(ScriptedChatModel, "bind_tools", bind_tools)
    return seen


def run(
    ws: Path,
    tmp_path: Path,
    turns: list[dict[str, Any]],
    task: str = TASK,
    max_iterations: int | None = None,
) -> dict[str, Any]:
    """Run the agent graph on ``task`` with the scripted ``turns``; the thread's state."""
    script = write_script(tmp_path / "script.yaml", turns)
    conn = sqlite3.connect(tmp_path / "sessions.sqlite", check_same_thread=False)
    try:
        graph = build_agent_graph().compile(checkpointer=SqliteSaver(conn))
        context = {
            "platform": "scripted",
            "script": str(script),
            "workspace": str(ws),
            "non_interactive": True,
            "confirm": "never",
        }
        if max_iterations is not None:
            context["max_iterations"] = max_iterations
        config = {"configurable": {"thread_id": "t"}, "recursion_limit": 100}
        graph.invoke({"task": task}, config, context=context)
        return graph.get_state(config).values  # review_problems too: not in the output
    finally:
        conn.close()


def cli(ws: Path, tmp_path: Path, turns: list[dict[str, Any]], task: str = TASK) -> tuple[int, str]:
    """``jarvis run`` in a new process with the scripted ``turns``: exit code and output."""
    script = write_script(tmp_path / "script.yaml", turns)
    args = ["run", "-w", str(ws), "--platform", "scripted", "--script", str(script), "-n"]
    done = run_process([*args, "--confirm", "never", task], cwd=ws)
    return done.returncode, done.stdout + done.stderr


# --- in process ---------------------------------------------------------------------------


def test_a_right_cited_answer_completes_with_its_cites(
    ws: Path, tmp_path: Path, bound: list[dict[str, Any]]
) -> None:
    turns = [
        {"tool_calls": [DECLARE]},
        {"tool_calls": [READ]},
        answer("settings.py sets PORT to 8123."),
    ]
    state = run(ws, tmp_path, turns)
    assert state["status"] == "completed", state.get("answer_problems")
    assert state["final_answer"] == "settings.py sets PORT to 8123."
    assert not state.get("answer_problems")
    last = [m for m in state["messages"] if isinstance(m, AIMessage)][-1]
    assert last.additional_kwargs[CITES_KEY] == RIGHT_CITES
    assert last.tool_calls == []
    assert not any(getattr(m, "name", None) == CHECK_NAME for m in state["messages"])


def test_the_first_turn_declares_the_next_one_steps_then_words_may_answer(
    ws: Path, tmp_path: Path, bound: list[dict[str, Any]]
) -> None:
    turns = [
        {"tool_calls": [DECLARE]},
        {"tool_calls": [READ]},
        answer("settings.py sets PORT to 8123."),
    ]
    state = run(ws, tmp_path, turns)
    assert state["status"] == "completed", state.get("answer_problems")
    first, step, after = bound
    assert first["tools"] == ["state_task"]
    assert first["tool_choice"] == "required" and first["parallel_tool_calls"] is False
    # once declared, the declaration is offered no more; the first step must be a call (a
    # reply in words before any step is a plan); after it, a call or an answer in words
    for binding in (step, after):
        assert "read_code" in binding["tools"] and "state_task" not in binding["tools"]
    assert step["tool_choice"] == "required"
    assert "tool_choice" not in after  # auto
    # the declaration used up none of max_iterations
    assert state["iteration"] == 2


def test_a_question_of_general_knowledge_may_be_answered_at_once(
    ws: Path, tmp_path: Path, bound: list[dict[str, Any]]
) -> None:
    declare = {**DECLARE, "args": {**DECLARE["args"], "answer": "general_knowledge"}}
    turns = [{"tool_calls": [declare]}, answer("A leap year has 366 days.")]
    state = run(ws, tmp_path, turns, "How many days does a leap year have?")
    assert state["status"] == "completed", state.get("answer_problems")
    assert "tool_choice" not in bound[1]  # auto: nothing to look up


def test_an_answer_no_cite_holds_is_sent_back_then_ends_unverified(
    ws: Path, tmp_path: Path, bound: list[dict[str, Any]]
) -> None:
    wrong = answer("settings.py sets PORT to 8080.")
    state = run(ws, tmp_path, [{"tool_calls": [DECLARE]}, {"tool_calls": [READ]}, wrong, wrong])
    notices = [m for m in state["messages"] if getattr(m, "name", None) == CHECK_NAME]
    assert len(notices) == 1  # answer_check_retries: 1
    assert "8080 appears in no result of this task" in str(notices[0].text)
    assert state["status"] == "unverified"
    assert any("8080" in p for p in state["answer_problems"])
    assert [p["check"] for p in state["review_problems"]] == ["grounded"]
    # the notice is the last human message before the second answer
    humans = [m for m in state["messages"] if isinstance(m, HumanMessage)]
    assert humans[-1].name == CHECK_NAME


# --- the CLI ---------------------------------------------------------------------------------


def test_cli_a_right_cited_answer_exits_0(ws: Path, tmp_path: Path) -> None:
    turns = [
        {"tool_calls": [DECLARE]},
        {"tool_calls": [READ]},
        answer("settings.py sets PORT to 8123."),
    ]
    code, out = cli(ws, tmp_path, turns)
    assert code == 0, out
    assert "settings.py sets PORT to 8123." in out
    assert "■ completed ·" in out and "unverified" not in out


def test_cli_an_answer_no_cite_holds_exits_4_naming_the_value(ws: Path, tmp_path: Path) -> None:
    wrong = answer("settings.py sets PORT to 8080.")
    code, out = cli(ws, tmp_path, [{"tool_calls": [DECLARE]}, {"tool_calls": [READ]}, wrong, wrong])
    assert code == 4, out
    assert "■ completed (unverified)" in out
    assert "unverified: 8080 appears in no result of this task" in out


def test_an_answer_on_the_last_allowed_call_is_checked_too(ws: Path, tmp_path: Path) -> None:
    """At the iteration cap no notice can be sent, but an unsupported answer is not
    ``completed``: the review still runs and the run ends ``unverified``."""
    turns = [
        {"tool_calls": [DECLARE]},
        {"tool_calls": [READ]},
        answer("settings.py sets PORT to 8080."),  # the last allowed call
    ]
    state = run(ws, tmp_path, turns, max_iterations=2)  # the declaration is not counted
    assert state["status"] == "unverified", state.get("final_answer")
    assert any("8080" in p for p in state["answer_problems"])
    assert not any(getattr(m, "name", None) == CHECK_NAME for m in state["messages"])


def test_a_model_that_never_declares_still_uses_up_its_iterations(ws: Path, tmp_path: Path) -> None:
    """Only the first try of a declaration is free: a model that calls other tools when it
    must declare (a provider may ignore tool_choice) ends at the cap, not in a loop of free
    turns."""
    turns = [
        {"tool_calls": [{"name": "read_code", "id": f"r{n}", "args": {"path": "settings.py"}}]}
        for n in range(6)
    ]
    state = run(ws, tmp_path, turns, max_iterations=2)
    replies = [m for m in state["messages"] if isinstance(m, AIMessage)]
    assert len(replies) == 3, [m.tool_calls for m in replies]  # the free first try, then 2
    assert state["status"] == "max_iterations"
