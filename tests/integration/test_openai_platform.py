"""The ``openai`` platform over real HTTP: ChatOpenAI against a loopback fake provider.

The fake server (tests/support/fake_openai.py) plays scripted turns and, like a real
provider, rejects requests whose tool calls and tool messages do not pair up.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import openai
import pytest

from jarvis_graph.platforms import ProviderError
from tests.support.fake_openai import (
    FAKE_KEY,
    FAKE_KEY_VAR,
    FakeOpenAI,
    ToolCall,
    roles,
)
from tests.support.fake_openai import openai_context as context
from tests.support.fake_openai import thread_config as run_config
from tests.support.trust import trust

KEY_VAR = FAKE_KEY_VAR
KEY = FAKE_KEY
REPO = Path(__file__).resolve().parents[2]


def configure(ws: Path, **normal: Any) -> None:
    """Write ``<ws>/.jarvis/config.yaml`` with these settings for the normal model."""
    spec = {"platform": "openai", "model": "fake-model", **normal}
    config = {"confirm": "never", "model_groups": {"default": {"normal": spec}}}
    (ws / ".jarvis").mkdir(exist_ok=True)
    (ws / ".jarvis" / "config.yaml").write_text(json.dumps(config))  # JSON is YAML
    trust(ws)


def tool_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m["role"] == "tool"]


def test_tool_call_then_answer(agent: Any, server: FakeOpenAI, ws: Path) -> None:
    server.reply(tool_calls=[ToolCall("read_code", {"path": "hello.py"}, id="call_read")])
    server.reply(text="The file prints a greeting. !!!COMPLETE!!!")

    out = agent.invoke(
        {"task": "What does hello.py do?"}, run_config("t1"), context=context(ws, server)
    )

    assert out["status"] == "completed"
    assert out["final_answer"] == "The file prints a greeting."
    assert not server.rejected
    assert len(server.requests) == 2
    first, second = server.requests
    assert all(body["stream"] is True for body in server.requests)
    assert first["model"] == "fake-model"
    assert {t["function"]["name"] for t in first["tools"]} >= {"read_code", "list_files"}
    assert roles(first) == ["system", "user", "user"]
    context_message = first["messages"][2]  # workspace context: hello.py is named in the task
    assert context_message["name"] == "jarvis_context"
    assert "print('hello from the workspace')" in context_message["content"]
    assert roles(second) == ["system", "user", "user", "assistant", "tool"]
    assert second["messages"][3]["tool_calls"][0]["id"] == "call_read"
    assert first["stream_options"] == {"include_usage": True}
    assert out["messages"][3].usage_metadata["total_tokens"] == 15
    [answer] = tool_messages(second)
    assert answer["tool_call_id"] == "call_read"
    assert "hello from the workspace" in answer["content"]


def test_server_rejects_broken_pairing(server: FakeOpenAI) -> None:
    """The pairing check can fail, so the tests relying on it prove something."""
    client = openai.OpenAI(base_url=server.base_url, api_key=KEY, max_retries=0)
    call = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    orphan = [
        {"role": "user", "content": "hi"},
        {"role": "tool", "tool_call_id": "call_404", "content": "out of nowhere"},
    ]
    unanswered = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "user", "content": "never mind"},
    ]
    server.reply(text="must not be served")
    for messages in (orphan, unanswered):
        with pytest.raises(openai.BadRequestError) as caught:
            client.chat.completions.create(model="fake-model", messages=messages)
        assert caught.value.status_code == 400
    assert "call_404" in server.rejected[0][1]
    assert "call_1" in server.rejected[1][1]
    assert server.pending == 1  # rejected requests consume no turn
    paired = [*unanswered[:2], {"role": "tool", "tool_call_id": "call_1", "content": "ok"}]
    reply = client.chat.completions.create(model="fake-model", messages=paired)
    assert reply.choices[0].message.content == "must not be served"
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=server.base_url, api_key="wrong", max_retries=0).models.list()
    assert [m.id for m in client.models.list()] == ["fake-model"]


def test_malformed_tool_arguments_get_an_error_answer(
    agent: Any, server: FakeOpenAI, ws: Path
) -> None:
    # Unquoted value: langchain-core's streaming parser repairs truncated JSON but not this.
    bad = '{"path": hello.py}'
    server.reply(tool_calls=[ToolCall("read_code", bad, id="call_bad")])
    server.reply(tool_calls=[ToolCall("read_code", {"path": "hello.py"}, id="call_good")])
    server.reply(text="Read it on the second try. !!!COMPLETE!!!")

    out = agent.invoke({"task": "Read hello.py"}, run_config("t2"), context=context(ws, server))

    assert out["status"] == "completed"
    assert not server.rejected
    assert len(server.requests) == 3
    second = server.requests[1]
    assert second["messages"][3]["tool_calls"][0]["function"]["arguments"] == bad
    [error] = tool_messages(second)
    assert error["tool_call_id"] == "call_bad"
    assert "not valid JSON" in error["content"]
    assert [m["tool_call_id"] for m in tool_messages(server.requests[2])] == [
        "call_bad",
        "call_good",
    ]


def test_rate_limit_and_server_error_are_retried(agent: Any, server: FakeOpenAI, ws: Path) -> None:
    configure(ws, max_retries=2)
    server.fail(429, "Rate limit reached for fake-model")
    server.fail(500, "The server had an error while processing your request.")
    server.reply(text="Done despite the hiccups. !!!COMPLETE!!!")

    started = time.monotonic()
    out = agent.invoke({"task": "Say done"}, run_config("t3"), context=context(ws, server))

    assert out["status"] == "completed"
    assert out["final_answer"] == "Done despite the hiccups."
    assert len(server.requests) == 3
    assert server.requests[0] == server.requests[2]  # the same request, retried
    assert time.monotonic() - started >= 0.7  # exponential backoff: ~0.5 s, then ~1 s


def test_persistent_server_error_then_resume(agent: Any, server: FakeOpenAI, ws: Path) -> None:
    configure(ws, max_retries=1)
    marker = ws / "runs.log"
    script = f"echo ran >> {marker.name}"
    server.reply(tool_calls=[ToolCall("execute_script", {"script": script}, id="call_run")])
    server.fail(500, "The engine is overloaded", times=2, retry_after_ms=50)
    ctx, config = context(ws, server), run_config("t4")

    with pytest.raises(ProviderError) as caught:
        agent.invoke({"task": "Run the script"}, config, context=ctx)

    message = str(caught.value)
    assert "HTTP 500" in message
    assert server.base_url in message
    assert "The engine is overloaded" in message
    assert "resume" in message
    assert len(server.requests) == 3  # one call, then the failing one tried twice
    assert marker.read_text() == "ran\n"

    server.reply(text="The script ran once. !!!COMPLETE!!!")
    out = agent.invoke(None, config, context=ctx)

    assert out["status"] == "completed"
    assert out["final_answer"] == "The script ran once."
    assert marker.read_text() == "ran\n"  # the recorded tool call was not run again
    assert len(server.requests) == 4
    assert not server.rejected
    resumed = server.requests[-1]
    assert roles(resumed) == ["system", "user", "user", "assistant", "tool"]
    assert [m["tool_call_id"] for m in tool_messages(resumed)] == ["call_run"]
    assert [m.type for m in out["messages"]] == ["system", "human", "human", "ai", "tool", "ai"]


def test_timeout_becomes_provider_error(agent: Any, server: FakeOpenAI, ws: Path) -> None:
    configure(ws, timeout=0.5, max_retries=1)
    server.reply(text="too late", delay=3)
    server.reply(text="too late again", delay=3)

    started = time.monotonic()
    with pytest.raises(ProviderError) as caught:
        agent.invoke({"task": "Hurry"}, run_config("t5"), context=context(ws, server))

    assert time.monotonic() - started < 3
    assert "Timeout" in str(caught.value)
    assert "after 2 requests (the first and 1 retry)" in str(caught.value)
    assert len(server.requests) == 2


def test_cli_run_against_the_fake_server(server: FakeOpenAI, ws: Path) -> None:
    """``jarvis run`` in a subprocess (``python -m`` runs this checkout's CLI)."""
    server.reply(tool_calls=[ToolCall("read_code", {"path": "hello.py"})])
    server.reply(text="hello.py prints a greeting. !!!COMPLETE!!!")
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, "OPENAI_API_KEY": KEY, "PYTHONPATH": path}
    args = ["run", "-n", "--yes", "--platform", "openai", "--base-url", server.base_url]
    proc = subprocess.run(
        [sys.executable, "-m", "jarvis_graph.cli", *args, "--model", "fake-model", "What?"],
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "hello.py prints a greeting." in proc.stdout
    assert not server.rejected
    assert len(server.requests) == 2
    assert tool_messages(server.requests[1])[0]["content"].count("hello from the workspace") == 1
    assert (ws / ".jarvis" / "sessions.sqlite").is_file()


def test_single_tool_per_turn_asks_the_provider_for_one_call_a_reply(
    agent: Any, server: FakeOpenAI, ws: Path
) -> None:
    configure(ws, single_tool_per_turn=True)  # native tool calling (the default protocol)
    server.reply(tool_calls=[ToolCall("read_code", {"path": "hello.py"}, id="call_read")])
    server.reply(text="It prints a greeting. !!!COMPLETE!!!")

    out = agent.invoke({"task": "Read hello.py"}, run_config("t-one"), context=context(ws, server))

    assert out["status"] == "completed"
    assert len(server.requests) == 2
    for body in server.requests:  # every request that offers tools forbids parallel calls
        assert body["tools"]
        assert body["parallel_tool_calls"] is False


def test_parallel_tool_calls_are_left_to_the_provider_by_default(
    agent: Any, server: FakeOpenAI, ws: Path
) -> None:
    configure(ws)
    server.reply(text="Nothing to do. !!!COMPLETE!!!")

    agent.invoke({"task": "Say done"}, run_config("t-many"), context=context(ws, server))

    (body,) = server.requests
    assert body["tools"]
    assert "parallel_tool_calls" not in body
