"""Memory hooks end to end: scripted runs, a real SqliteSaver, real stores and MiniLM.

- force_save_memory: completing a task asks the model (one extra call, outside the
  conversation) to save memories, once per task.
- Episodic archive: a completed task is searchable from a new process; an anchor expands
  to exactly the messages its checkpoint holds; indexing again adds nothing.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import pytest
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from jarvis_graph.checkpointing import default_sessions_path
from jarvis_graph.config import project_config_path
from jarvis_graph.context import JarvisContext
from jarvis_graph.events import Event
from jarvis_graph.graphs.agent import build_agent_graph
from jarvis_graph.memory.background import wait_for_background
from jarvis_graph.memory.episodic import Anchor, expand, open_archive
from jarvis_graph.memory.tiers import MemoryTiers, close_stores
from jarvis_graph.runtime.services import RunServices, services_of
from tests.support.cli import run_process, write_script

MARKER = "!!!COMPLETE!!!"
SECRET = "sk-live0123456789abcdefghijklmnop"
FILLER = "\n".join(f"# filler line {n} of the deploy settings" for n in range(200))

READ_TURNS: list[dict[str, Any]] = [
    {
        "text": "Let me read the deploy settings.",
        "tool_calls": [{"name": "read_code", "args": {"path": "deploy.ini"}}],
    },
    {"text": f"The deploy listens on port 8443. {MARKER}"},
]
SAVE_TURN = {
    "tool_calls": [
        {
            "name": "save_memory",
            "args": {
                "memories": [
                    {
                        "memory_type": "project_long_term",
                        "tags": ["deploy"],
                        "content": "The deploy listens on port 8443",
                    }
                ]
            },
        }
    ]
}


class Session:
    """A workspace whose runs keep their sessions where the CLI keeps them."""

    def __init__(self, workspace: Path, tmp_path: Path) -> None:
        self.workspace = workspace
        self.tmp_path = tmp_path
        (workspace / "deploy.ini").write_text(
            f"[deploy]\nport = 8443\napi_key = {SECRET}\n{FILLER}\n", encoding="utf-8"
        )

    def context(self, script: Path) -> dict[str, Any]:
        return {"platform": "scripted", "script": str(script), "workspace": str(self.workspace)}

    @contextmanager
    def graph(self) -> Iterator[CompiledStateGraph]:
        path = default_sessions_path(self.workspace)
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(path), check_same_thread=False)
        try:
            yield build_agent_graph().compile(checkpointer=SqliteSaver(conn))
        finally:
            conn.close()

    def run(self, thread: str, turns: list[dict[str, Any]], task: str, **kw: Any) -> Any:
        script = write_script(self.tmp_path / f"{thread}.yaml", turns)
        config = {"configurable": {"thread_id": thread}}
        with self.graph() as graph:
            return list(graph.stream({"task": task}, config, context=self.context(script), **kw))

    def state(self, thread: str, checkpoint_id: str | None = None) -> Any:
        configurable = {"thread_id": thread}
        if checkpoint_id:
            configurable["checkpoint_id"] = checkpoint_id
        with self.graph() as graph:
            return graph.get_state({"configurable": configurable})


@pytest.fixture
def session(workspace: Path, tmp_path: Path) -> Session:
    return Session(workspace, tmp_path)


def jarvis(session: Session, *args: str) -> str:
    proc = run_process(
        ["memory", "episodes", *args, "--workspace", str(session.workspace)], cwd=session.workspace
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


# --- force_save_memory ------------------------------------------------------------------


def test_completing_a_task_asks_the_model_once_to_save_memories(session: Session) -> None:
    project_config_path(session.workspace).parent.mkdir(parents=True, exist_ok=True)
    project_config_path(session.workspace).write_text("force_save_memory: true\n")
    chunks = session.run(
        "t1", [*READ_TURNS, SAVE_TURN], "Which port?", stream_mode=["custom", "messages"]
    )

    tiers = MemoryTiers(session.workspace)
    assert [r["content"] for r in tiers.records(["project_long_term"])] == [
        "The deploy listens on port 8443"
    ]
    values = session.state("t1").values
    assert values["final_answer"] == "The deploy listens on port 8443."
    assert len(values["messages"]) == 6  # the save is not part of the conversation
    streamed = [c for mode, c in chunks if mode == "messages"]
    assert not any(
        getattr(m, "tool_calls", None) and m.tool_calls[0]["name"] == "save_memory"
        for m, _ in streamed
    )
    (done,) = [
        c["payload"] for mode, c in chunks if mode == "custom" and c["event"] == "task_completed"
    ]
    assert set(done) == {"status", "final_answer", "iterations"}  # no messages in the stream

    # The same task completing again (a re-run of complete_task) is not asked again.
    ctx = JarvisContext(**session.context(session.tmp_path / "t1.yaml"))
    payload = {"thread_id": "t1", "messages": values["messages"], "status": "completed"}
    RunServices(ctx).bus.emit(Event.TASK_COMPLETED, payload)
    assert len(tiers.records(["project_long_term"])) == 1


def test_without_the_setting_no_extra_call_is_made(session: Session) -> None:
    session.run("t1", READ_TURNS, "Which port?")  # a third turn would be needed to save
    assert MemoryTiers(session.workspace).records(["project_long_term"]) == []
    assert session.state("t1").values["status"] == "completed"


# --- episodic archive --------------------------------------------------------------------


ANCHOR = re.compile(r"^(\S+:\S+:\d+)  \[tool_result read_code\]", re.M)


def test_a_completed_task_is_found_and_expanded_from_a_new_process(session: Session) -> None:
    session.run("t1", READ_TURNS, "Which port does the deploy use?")
    close_stores()  # what follows reads the archive afresh

    found = jarvis(session, "search", "deploy settings port", "--kind", "tool_result")
    anchor = Anchor.parse(ANCHOR.search(found).group(1))  # type: ignore[union-attr]
    assert anchor.thread_id == "t1" and "port = 8443" in found
    assert SECRET not in found and "api_key = ***" in found and "chars cut" in found

    snapshot = session.state("t1", anchor.checkpoint_id)
    expected = snapshot.values["messages"][anchor.index - 2 : anchor.index + 3]
    with session.graph() as graph:
        got = expand(graph.checkpointer, anchor, before=2, after=2)  # type: ignore[arg-type]
    assert got.messages == expected and isinstance(got.messages[2], ToolMessage)
    assert got.messages[2].content.startswith("deploy.ini")

    shown = jarvis(session, "show", str(anchor), "-B", "1", "-A", "1")
    assert f">   {anchor.index} tool read_code: deploy.ini" in shown
    assert "Let me read the deploy settings." in shown and "port 8443" in shown
    assert SECRET not in shown

    stored = b"".join(
        p.read_bytes() for p in (session.workspace / ".jarvis" / "memory").glob("store.sqlite*")
    )
    assert SECRET.encode() not in stored and b"port = 8443" in stored


def test_indexing_is_idempotent_and_a_continued_thread_adds_its_new_messages(
    session: Session,
) -> None:
    session.run("t1", READ_TURNS, "Which port does the deploy use?")
    archive = open_archive(session.workspace)
    first = {str(e.anchor) for e in archive.search(limit=100)}
    assert len(first) == 4  # user, reasoning + tool call (one message), tool result, response

    values = session.state("t1").values
    ctx = JarvisContext(**session.context(session.tmp_path / "t1.yaml"))
    RunServices(ctx).bus.emit(
        Event.TASK_COMPLETED,
        {"thread_id": "t1", "checkpoint_id": "x", "messages": values["messages"]},
    )
    wait_for_background()  # the archive is written off the answer's path
    assert len(archive.search(limit=100)) == 5  # nothing added: 5 segments, 4 messages

    session.run("t1", [*READ_TURNS, {"text": f"Still 8443. {MARKER}"}], "Is it still 8443?")
    after = archive.search(limit=100)
    assert len(after) == 7 and first <= {str(e.anchor) for e in after}


def test_the_model_searches_earlier_tasks_with_the_tool(session: Session) -> None:
    session.run("t1", READ_TURNS, "Which port does the deploy use?")
    search = {
        "tool_calls": [
            {
                "name": "search_episodic_memory",
                "args": {
                    "query": "deploy port",
                    "thread": "t1",
                    "kind": "response",
                    "expand": True,
                },
            },
            {"name": "search_episodic_memory", "args": {"anchor": "t1:nope:3"}},
        ]
    }
    session.run("t2", [search, {"text": f"It was 8443. {MARKER}"}], "What port did we find?")
    found, bad = [m for m in session.state("t2").values["messages"] if isinstance(m, ToolMessage)]
    assert found.status == "success", found.content
    assert "[response]" in found.content and "The deploy listens on port 8443." in found.content
    assert re.search(r"session t1, checkpoint \S+:\n", found.content)
    assert "> " in found.content and "read_code" in found.content
    assert bad.status == "error" and "has no checkpoint 'nope'" in bad.content


class _Clearing(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def _clear_history(state: _Clearing, runtime: Runtime[JarvisContext]) -> dict[str, Any]:
    """Stands in for the history-clearing node: announce the cut, then remove it."""
    removed = state["messages"][1:4]
    payload = {"messages": removed, "first_index": 1, "removed": len(removed)}
    services_of(runtime).bus.emit(Event.BEFORE_HISTORY_CLEAR, payload)
    return {"messages": [RemoveMessage(id=str(m.id)) for m in removed]}


def test_messages_about_to_be_cleared_are_archived_with_exact_anchors(
    session: Session,
) -> None:
    builder = StateGraph(_Clearing, context_schema=JarvisContext)
    builder.add_node("clear_history", _clear_history)
    builder.add_edge(START, "clear_history")
    conversation = [
        SystemMessage("You are Jarvis.", id="sys"),
        HumanMessage("What does deploy.ini say about the port?", id="h"),
        AIMessage(
            "",
            tool_calls=[{"name": "read_code", "args": {"path": "deploy.ini"}, "id": "c"}],
            id="a",
        ),
        ToolMessage("port = 8443", tool_call_id="c", name="read_code", id="t"),
        AIMessage("Port 8443.", id="r"),
    ]
    config: Any = {"configurable": {"thread_id": "cleared"}}
    ctx = JarvisContext(workspace=str(session.workspace))
    with session.graph() as agent:
        graph = builder.compile(checkpointer=agent.checkpointer)
        out = graph.invoke({"messages": conversation}, config, context=ctx)
        assert [m.id for m in out["messages"]] == ["sys", "r"]  # the block is gone

        wait_for_background()
        (episode,) = open_archive(session.workspace).search("port", kind="tool_result")
        anchor = episode.anchor
        assert anchor.index == 3 and episode.value["message_id"] == "t"
        before = graph.get_state(
            {"configurable": {"thread_id": "cleared", "checkpoint_id": anchor.checkpoint_id}}
        )
        got = expand(agent.checkpointer, anchor, before=2, after=1)  # type: ignore[arg-type]
    assert got.messages == before.values["messages"][1:5]
    assert [m.id for m in got.messages] == ["h", "a", "t", "r"]
