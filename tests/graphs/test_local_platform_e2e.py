"""The agent graph over the local platform, llama.cpp replaced by a scripted stand-in.

What the graph does with the local model's replies: a prose answer ends the run, a call
decided at the first token runs, and a call written as lines of text is sent back with the
local model's own way of calling (a JSON object), then made properly.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langgraph.checkpoint.sqlite import SqliteSaver

from jarvis_graph.graphs.agent import build_agent_graph
from jarvis_graph.state import CORRECTION_NAME
from tests.support.fake_llama import FakeLlama, use_fake_llama


@pytest.fixture
def llama(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> FakeLlama:
    model = tmp_path / "stand-in.gguf"
    model.write_bytes(b"GGUF" + b"\0" * 60)  # passes the file check; never loaded
    monkeypatch.setenv("JARVIS_LOCAL_MODEL_PATH", str(model))
    return use_fake_llama(monkeypatch)


def run(workspace: Path, tmp_path: Path, task: str, **context: Any) -> dict[str, Any]:
    conn = sqlite3.connect(str(tmp_path / "sessions.sqlite"), check_same_thread=False)
    try:
        graph = build_agent_graph().compile(checkpointer=SqliteSaver(conn))
        return graph.invoke(
            {"task": task},
            {"configurable": {"thread_id": "t"}, "recursion_limit": 100},
            context={
                "platform": "local",
                "workspace": str(workspace),
                "non_interactive": True,
                **context,
            },
        )
    finally:
        conn.close()


def call(tool: str, **args: Any) -> str:
    return json.dumps({"thought": "", "tool": tool, "arguments": args})


def test_a_call_written_as_lines_is_sent_back_then_made(
    llama: FakeLlama, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "a.py").write_text("print('hi from a')\n")

    def script(prompt: str) -> list[str]:
        if "Result of read_code" in prompt:
            return ["a.py prints hi from a."]
        if "written as plain text" in prompt:
            return [call("read_code", path="a.py")]
        return ["tool: read_code\narguments:\n  path: a.py"]

    llama.script = script
    out = run(workspace, tmp_path, "What does a.py print?")

    notes = [m for m in out["messages"] if getattr(m, "name", None) == CORRECTION_NAME]
    assert len(notes) == 1
    assert "a call of 'read_code' written as lines" in str(notes[0].content)
    assert 'one JSON object starting with {"thought"' in str(notes[0].content)
    results = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert [m.name for m in results] == ["read_code"] and "hi from a" in str(results[0].content)
    assert out["status"] == "completed"
    assert out["final_answer"] == "a.py prints hi from a."


def test_a_call_written_as_text_twice_is_then_made_with_that_tool_only(
    llama: FakeLlama, workspace: Path, tmp_path: Path
) -> None:
    """After the second notice the reply must call, and may call only the tool it wrote."""
    (workspace / "a.py").write_text("print('hi from a')\n")
    written = call("read_code", path="a.py")

    def script(prompt: str) -> list[str]:
        if "Result of read_code" in prompt:
            return ["a.py prints hi from a."]
        if prompt.count("written as plain text") >= 2:
            return [written]  # the turn made to call
        return [f"I will read it:\n```json\n{written}\n```"]

    llama.script = script
    out = run(workspace, tmp_path, "What does a.py print?")

    notes = [m for m in out["messages"] if getattr(m, "name", None) == CORRECTION_NAME]
    assert len(notes) == 2
    [forced] = [c for c in llama.calls if c.get("grammar") is not None]
    assert '"read_code"' in forced["grammar"] and '"list_files"' not in forced["grammar"]
    results = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert [m.name for m in results] == ["read_code"] and "hi from a" in str(results[0].content)
    assert out["status"] == "completed"
    assert out["final_answer"] == "a.py prints hi from a."


def test_a_prose_answer_needs_no_tool(llama: FakeLlama, workspace: Path, tmp_path: Path) -> None:
    llama.script = lambda prompt: ["Hello! How can I help?"]
    out = run(workspace, tmp_path, "hello")
    assert out["status"] == "completed" and out["final_answer"] == "Hello! How can I help?"
    assert not [m for m in out["messages"] if isinstance(m, ToolMessage)]


def test_the_turn_after_a_notice_may_call_only_the_tools_it_names(
    llama: FakeLlama, workspace: Path, tmp_path: Path
) -> None:
    """A small model offered every tool calls the one it called before; the notice named one.

    The prompt keeps listing every tool (a changed list would make llama.cpp process the
    whole conversation again); the grammar of the call allows the named tool alone.
    """
    (workspace / "a.py").write_text("print('hi from a')\n")

    def script(prompt: str) -> list[str]:
        if "Result of execute_script" in prompt:
            return ["It prints hi from a."]
        if "no tool ran anything" in prompt:
            return [call("execute_script", script="python3 a.py")]
        return ["It prints hello."]  # answered without running anything

    llama.script = script
    out = run(
        workspace, tmp_path, "Run a.py with python3 and tell me what it prints.", confirm="never"
    )

    assert out["status"] == "completed" and "hi from a" in out["final_answer"]
    after = [c for c in llama.calls if "no tool ran anything" in c["prompt"]]
    after = [c for c in after if "Result of" not in c["prompt"]]
    before = [c for c in llama.calls if "no tool ran anything" not in c["prompt"]]
    assert after and before
    tools_after = after[0]["prompt"].split("# How to reply")[0]
    tools_before = before[0]["prompt"].split("# How to reply")[0]
    assert "- execute_script:" in tools_after and "- read_code:" in tools_after
    assert tools_after.split("<|im_end|>")[0] == tools_before.split("<|im_end|>")[0]
    grammars = [json.loads(c["grammar"]) for c in after if c.get("grammar") is not None]
    assert grammars, "the call after the notice was decoded under a grammar"
    named = json.dumps(grammars[0])
    assert '"execute_script"' in named and '"read_code"' not in named
