"""The text tool-call protocol over real HTTP: the agent graph against a loopback provider.

The fake provider's replies are plain text holding ``<TOOL_CALL>`` blocks, as a model
without native function calling writes them; the requests must carry no ``tools`` field
and no ``tool`` messages.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_openai import FAKE_KEY, FAKE_KEY_VAR, FakeOpenAI, roles
from tests.support.fake_openai import openai_context as context
from tests.support.fake_openai import thread_config as run_config
from tests.support.trust import trust

KEY_VAR = FAKE_KEY_VAR
KEY = FAKE_KEY
READ = "<TOOL_CALL>\nname: read_code\narguments:\n  path: hello.py\n</TOOL_CALL>"
BROKEN = "<TOOL_CALL>\nname: read_code\narguments:\n  path: [hello.py\n</TOOL_CALL>"
LIST = "<TOOL_CALL>\nname: list_files\narguments:\n  path: .\n</TOOL_CALL>"


def configure(ws: Path, server: FakeOpenAI, **normal: Any) -> None:
    """``<ws>/.jarvis/config.yaml`` with a text-protocol model on the fake server."""
    spec = {
        "platform": "openai",
        "model": "fake-model",
        "base_url": server.base_url,
        "api_key_env": KEY_VAR,
        "tool_protocol": "text",
        **normal,
    }
    config = {"confirm": "never", "model_groups": {"default": {"normal": spec}}}
    (ws / ".jarvis").mkdir(exist_ok=True)
    (ws / ".jarvis" / "config.yaml").write_text(json.dumps(config))  # JSON is YAML
    trust(ws)


def assert_text_only(server: FakeOpenAI) -> None:
    """What a provider without native tools accepts: no tools, no tool role, no tool_calls."""
    assert not server.rejected
    for body in server.requests:
        assert "tools" not in body and "tool_choice" not in body
        assert "tool" not in roles(body)
        assert not any(m.get("tool_calls") for m in body["messages"])


def test_text_tool_call_error_answer_and_final_answer(
    agent: Any, server: FakeOpenAI, ws: Path
) -> None:
    configure(ws, server)
    server.reply(text=f"I will read the file.\n{READ}")
    server.reply(text=f"Let me check the listing too.\n{BROKEN}")
    server.reply(text="hello.py prints a greeting. !!!COMPLETE!!!")

    out = agent.invoke(
        {"task": "What does hello.py do?"}, run_config("t1"), context=context(ws, server)
    )

    assert out["status"] == "completed"
    assert out["final_answer"] == "hello.py prints a greeting."
    assert [m.type for m in out["messages"]] == [
        "system",
        "human",
        "human",  # workspace context
        "ai",
        "tool",
        "ai",
        "tool",
        "ai",
    ]
    assert len(server.requests) == 3
    assert_text_only(server)
    first, second, third = server.requests
    assert roles(first) == ["system", "user", "user"]
    system = first["messages"][0]["content"]
    assert "<TOOL_CALL>" in system and "## read_code" in system
    assert roles(second) == ["system", "user", "user", "assistant", "user"]
    assert second["messages"][3]["content"] == f"I will read the file.\n\n{READ}"
    result = second["messages"][4]["content"]
    assert result.startswith('<TOOL_RESULT name="read_code">\n')
    assert "hello from the workspace" in result
    assert result.endswith("</TOOL_RESULT>")
    assert roles(third) == ["system", "user", "user", "assistant", "user", "assistant", "user"]
    assert third["messages"][5]["content"] == f"Let me check the listing too.\n\n{BROKEN}"
    error = third["messages"][6]["content"]
    assert "could not be run" in error
    assert "does not parse" in error and "expected ',' or ']'" in error
    assert "which starts at line 3" in error
    tool_message = out["messages"][6]
    assert tool_message.status == "error"


def test_single_tool_per_turn(agent: Any, server: FakeOpenAI, ws: Path) -> None:
    configure(ws, server, single_tool_per_turn=True)
    server.reply(text=f"{READ}\n{LIST}")
    server.reply(text=LIST)
    server.reply(text="Done. !!!COMPLETE!!!")

    out = agent.invoke({"task": "Look around"}, run_config("t2"), context=context(ws, server))

    assert out["status"] == "completed"
    assert_text_only(server)
    assert "Call at most one tool per reply" in server.requests[0]["messages"][0]["content"]
    results = server.requests[1]["messages"][-1]["content"]
    read, refused = results.split("</TOOL_RESULT>\n\n")
    assert "hello from the workspace" in read
    assert refused.startswith('<TOOL_RESULT name="list_files">')
    assert "only one tool call per turn is allowed" in refused
    assert "hello.py" in server.requests[2]["messages"][-1]["content"]  # the listing ran


def test_env_variable_selects_the_text_protocol(
    agent: Any, server: FakeOpenAI, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JARVIS_TOOL_PROTOCOL", "text")
    server.reply(text=READ)
    server.reply(text="It prints a greeting. !!!COMPLETE!!!")

    out = agent.invoke({"task": "Read hello.py"}, run_config("t3"), context=context(ws, server))

    assert out["final_answer"] == "It prints a greeting."
    assert_text_only(server)
    assert "hello from the workspace" in server.requests[1]["messages"][-1]["content"]


def test_streamed_run_shows_prose_only_and_keeps_errors(
    agent: Any, server: FakeOpenAI, ws: Path
) -> None:
    """``stream_mode="messages"`` (the CLI) must not show block contents or lose errors."""
    configure(ws, server)
    server.reply(text=f"Reading it now.\n```yaml\n{BROKEN}\n```\n")
    server.reply(text=f"Again.\n{READ}")
    server.reply(text="It prints a greeting. !!!COMPLETE!!!")

    streamed = []
    for mode, chunk in agent.stream(
        {"task": "Read hello.py"},
        run_config("t4"),
        context=context(ws, server),
        stream_mode=["messages", "updates"],
    ):
        if mode == "messages" and chunk[1].get("langgraph_node") == "call_model":
            streamed.append(chunk[0].content)
    state = agent.get_state(run_config("t4")).values

    text = "".join(streamed)
    assert "Reading it now." in text and "Again." in text and "It prints a greeting." in text
    assert "name:" not in text and "TOOL_CALL" not in text and "```" not in text
    assert text.count("Reading it now.") == 1  # the final message is not sent twice
    assert state["status"] == "completed"
    first_answer = state["messages"][4]
    assert first_answer.type == "tool" and "does not parse" in first_answer.content
    assert_text_only(server)
