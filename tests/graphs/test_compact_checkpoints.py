"""Compact checkpoints: sessions store large texts once, and give back exactly the run's messages.

The agent runs on the CLI's session store (``open_checkpointer``: SqliteSaver, or
PostgresSaver on a real server, with the ``BlobSerializer``), each step opening a fresh
connection as a new process would. The same tests run on both stores.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from langchain_core.messages import ToolMessage, messages_to_dict
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command

from jarvis_graph.checkpointing import default_sessions_path, fork_thread, open_checkpointer
from jarvis_graph.graphs.agent import build_agent_graph
from tests.support.trust import trust

FILES = 12  # past SPAN steps: span nodes and the plain nodes after them


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest) -> str | None:
    """The session store's URL: ``None`` for the project's SQLite file."""
    if request.param == "sqlite":
        return None
    return str(request.getfixturevalue("pg_url"))


@pytest.fixture
def ws(workspace: Path, store: str | None) -> Path:
    for i in range(FILES):
        lines = [f"file {i} line {n}: " + "abcdefgh" * 12 for n in range(80)]
        (workspace / f"f{i}.txt").write_text("\n".join(lines) + "\n")
    turns: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "read_code", "args": {"path": f"f{i}.txt"}}]} for i in range(FILES)
    ]
    turns.append({"text": "Read them all. !!!COMPLETE!!!"})
    (workspace / "script.yaml").write_text(yaml.safe_dump({"turns": turns}))
    config: dict[str, Any] = {
        "attach_listing": 0,
        "tool_output_limit": 100_000,
        "max_input_tokens": 0,
    }
    if store:
        config["checkpoint_url"] = store
    (workspace / ".jarvis").mkdir()
    (workspace / ".jarvis" / "config.yaml").write_text(json.dumps(config))
    return trust(workspace)  # checkpoint_url is the user's choice here


def store_of(ws: Path) -> str | None:
    """The URL the workspace's config names (as the CLI reads it)."""
    return yaml.safe_load((ws / ".jarvis" / "config.yaml").read_text()).get("checkpoint_url")


@contextmanager
def agent(ws: Path) -> Iterator[CompiledStateGraph]:
    with open_checkpointer(ws, store_of(ws)) as saver:
        yield build_agent_graph().compile(checkpointer=saver)


def context(ws: Path, **extra: Any) -> dict[str, Any]:
    return {"workspace": str(ws), "platform": "scripted", "script": "script.yaml", **extra}


def config(thread: str = "t1") -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}, "recursion_limit": 100}


def dicts(messages: list[Any]) -> list[dict[str, Any]]:
    return messages_to_dict(messages)


def outputs(messages: list[Any]) -> list[str]:
    return [str(m.content) for m in messages if isinstance(m, ToolMessage)]


def test_history_and_state_are_exactly_what_the_run_streamed(ws: Path) -> None:
    with agent(ws) as graph:
        seen = [
            dicts(values["messages"])
            for values in graph.stream(
                {"task": "read the files"},
                config(),
                context=context(ws, confirm="never"),
                stream_mode="values",
            )
        ]
    with agent(ws) as graph:  # a new connection and serializer: nothing cached
        state = graph.get_state(config())
        history = [dicts(s.values.get("messages", [])) for s in graph.get_state_history(config())]
    assert dicts(state.values["messages"]) == seen[-1]
    assert all(snapshot in seen for snapshot in history if snapshot)
    assert len([h for h in history if h]) >= len(seen) - 1
    texts = outputs(state.values["messages"])
    assert len(texts) == FILES and all(len(t) > 8000 for t in texts)
    assert all(f"file {i} line 79:" in t for i, t in enumerate(texts))
    # the database holds references, the texts live once in the parts tables
    if store_of(ws) is None:
        db = default_sessions_path(ws)
        wal = Path(f"{db}-wal")
        raw = db.read_bytes() + (wal.read_bytes() if wal.exists() else b"")
        assert b"file 0 line 40:" not in raw
        with sqlite3.connect(db.parent / "blobs" / "parts.sqlite") as conn:
            assert conn.execute("SELECT COUNT(*) FROM texts").fetchone() == (FILES,)
            spans = conn.execute("SELECT COUNT(*) FROM lists WHERE packed IS NOT NULL")
            assert spans.fetchone()[0] >= 2  # the first list and a span node
    else:
        import psycopg

        with psycopg.connect(str(store_of(ws))) as conn:
            for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
                dump = conn.execute(f"SELECT t::text FROM {table} AS t").fetchall()  # noqa: S608
                assert not any("file 0 line 40:" in row[0] for row in dump), table
            assert conn.execute("SELECT COUNT(*) FROM jarvis_texts").fetchone() == (FILES,)
            spans = conn.execute("SELECT COUNT(*) FROM jarvis_lists WHERE packed IS NOT NULL")
            assert spans.fetchone()[0] >= 2  # type: ignore[index]
        assert not (ws / ".jarvis" / "blobs").exists()  # nothing on local disk
        assert not default_sessions_path(ws).exists()


def test_resume_after_an_interrupt_in_a_new_process(ws: Path) -> None:
    with agent(ws) as graph:
        graph.invoke({"task": "read the files"}, config(), context=context(ws, confirm="always"))
    for _ in range(FILES):
        with agent(ws) as graph:  # each resume opens the store afresh
            state = graph.get_state(config())
            assert state.interrupts, state.next
            graph.invoke(Command(resume="approve"), config(), context=context(ws, confirm="always"))
    with agent(ws) as graph:
        values = graph.get_state(config()).values
    assert values["status"] == "completed"
    assert [f"file {i} line 79:" in t for i, t in enumerate(outputs(values["messages"]))] == [
        True
    ] * FILES


def test_a_store_written_before_span_nodes_is_upgraded_and_resumed(ws: Path) -> None:
    """A parts table without the ``packed`` column (an earlier version's) gains it when the
    store is opened, and a session stopped in it resumes to the same result."""
    with agent(ws) as graph:
        graph.invoke({"task": "read the files"}, config(), context=context(ws, confirm="always"))
    for step in range(FILES):
        if step == 2:  # the session has message lists by now
            drop_packed_column(ws)
        with agent(ws) as graph:
            graph.invoke(Command(resume="approve"), config(), context=context(ws, confirm="always"))
    with agent(ws) as graph:
        values = graph.get_state(config()).values
    assert values["status"] == "completed"
    assert all(f"file {i} line 79:" in t for i, t in enumerate(outputs(values["messages"])))
    assert len(outputs(values["messages"])) == FILES


def drop_packed_column(ws: Path) -> None:
    url = store_of(ws)
    if url is None:
        with sqlite3.connect(ws / ".jarvis" / "blobs" / "parts.sqlite") as conn:
            conn.execute("ALTER TABLE lists DROP COLUMN packed")
        return
    import psycopg

    with psycopg.connect(url) as conn:
        conn.execute("ALTER TABLE jarvis_lists DROP COLUMN packed")


def test_fork_from_a_middle_checkpoint_has_the_same_messages_and_runs_on(ws: Path) -> None:
    with agent(ws) as graph:
        graph.invoke({"task": "read the files"}, config(), context=context(ws, confirm="never"))
        middle = next(
            s
            for s in graph.get_state_history(config())
            if len(outputs(s.values.get("messages", []))) == 2 and s.next == ("call_model",)
        )
        at = middle.config["configurable"]["checkpoint_id"]
        fork_thread(graph.checkpointer, "t1", "fork", at)
    with agent(ws) as graph:
        forked = graph.get_state(config("fork"))
        assert dicts(forked.values["messages"]) == dicts(middle.values["messages"])
        out = graph.invoke(None, config("fork"), context=context(ws, confirm="never"))
    assert out["status"] == "completed"
    assert len(outputs(out["messages"])) == FILES
    assert all(f"file {i} line 79:" in t for i, t in enumerate(outputs(out["messages"])))


def test_a_missing_or_broken_parts_database_is_a_clear_error_in_the_cli(ws: Path) -> None:
    from tests.support.cli import run_process

    with agent(ws) as graph:
        graph.invoke({"task": "read the files"}, config("t9"), context=context(ws))
    url = store_of(ws)
    if url is None:
        parts = default_sessions_path(ws).parent / "blobs" / "parts.sqlite"
        kept = parts.read_bytes()
        for broken, expected in ((b"garbage", "file is not a database"), (None, "missing from")):
            parts.unlink()
            if broken is not None:
                parts.write_bytes(broken)
            shown = run_process(["sessions", "show", "t9"], cwd=ws)
            assert shown.returncode == 1
            assert "error: " in shown.stdout and expected in shown.stdout
            assert "Traceback" not in shown.stdout + shown.stderr
        parts.write_bytes(kept)  # restored: the session reads again
    else:
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            for table, expected in (("jarvis_lists", "missing from"), ("jarvis_texts", "not in")):
                conn.execute(f"ALTER TABLE {table} RENAME TO {table}_kept")
                conn.execute(f"CREATE TABLE {table} (LIKE {table}_kept INCLUDING ALL)")
                shown = run_process(["sessions", "show", "t9"], cwd=ws)
                assert shown.returncode == 1, shown.stdout
                assert "error: " in shown.stdout and expected in shown.stdout
                assert "postgresql://127.0.0.1:" in shown.stdout  # named, without the user
                assert "Traceback" not in shown.stdout + shown.stderr
                conn.execute(f"DROP TABLE {table}")
                conn.execute(f"ALTER TABLE {table}_kept RENAME TO {table}")
    shown = run_process(["sessions", "show", "t9"], cwd=ws)
    assert shown.returncode == 0 and "Read them all." in shown.stdout
