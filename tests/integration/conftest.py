"""Fixtures shared by the tests that drive the agent over real HTTP (loopback only)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver

from jarvis_graph.graphs.agent import build_agent_graph
from tests.support.fake_openai import FAKE_KEY, FAKE_KEY_VAR, FakeOpenAI


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    """A chat-completions server on a free loopback port, expecting the fake key."""
    with FakeOpenAI(api_key=FAKE_KEY) as fake:
        yield fake


@pytest.fixture
def ws(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace with one source file, and the API key in the environment."""
    monkeypatch.setenv(FAKE_KEY_VAR, FAKE_KEY)
    (workspace / "hello.py").write_text("print('hello from the workspace')\n")
    return workspace


@pytest.fixture
def agent(tmp_path: Path) -> Iterator[Any]:
    """The agent graph on a fresh SQLite session store."""
    with SqliteSaver.from_conn_string(str(tmp_path / "sessions.sqlite")) as saver:
        yield build_agent_graph().compile(checkpointer=saver)
