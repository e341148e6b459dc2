"""The Mem0 adapter against a loopback server with Mem0's REST endpoints, failures included."""

from __future__ import annotations

from pathlib import Path

import pytest

from jarvis_graph.memory.mem0_store import Mem0Store
from jarvis_graph.memory.records import MemoryStoreError
from tests.support.cli import run_process, write_script
from tests.support.mem0_server import Mem0Server

NS = ("jarvis", "project", "ws1", "project_long_term")


def test_items_round_trip_and_the_requests_have_mem0s_shape() -> None:
    with Mem0Server(key="k1") as server:
        store = Mem0Store(f"mem0+{server.url}", key="k1")
        store.put(NS, "m1", {"content": "deploy with ./deploy.sh", "tags": ["ops"]})
        store.put(NS, "m1", {"content": "deploy with make deploy", "tags": ["ops"]})  # upsert
        store.put((*NS[:3], "episodic", "t1"), "e1", {"content": "an episode"})
        item = store.get(NS, "m1")
        assert item is not None and item.value == {
            "content": "deploy with make deploy",
            "tags": ["ops"],
        }
        assert len(server.memories) == 2  # the upsert replaced, never added
        method, path, body = next(r for r in server.requests if r[:2] == ("POST", "/memories"))
        assert body["infer"] is False and body["user_id"] == "jarvis/project/ws1"
        assert (
            body["agent_id"] == "jarvis"
            and body["messages"][0]["content"] == "deploy with ./deploy.sh"
        )
        hits = store.search(NS[:3], query="how to deploy")
        assert [h.key for h in hits] == ["m1"] and hits[0].score is not None
        assert [h.key for h in store.search(NS[:3], filter={"tags": ["ops"]})] == ["m1"]
        assert store.list_namespaces(prefix=NS[:3]) == [(*NS[:3], "episodic", "t1"), NS]
        store.delete(NS, "m1")
        assert store.get(NS, "m1") is None and len(server.memories) == 1
        store.close()


def test_a_put_whose_answer_was_lost_leaves_one_memory_when_tried_again() -> None:
    with Mem0Server() as server:
        store = Mem0Store(f"mem0+{server.url}", key="")
        server.fail_next_post = True
        with pytest.raises(MemoryStoreError, match="answered HTTP 500"):
            store.put(NS, "m1", {"content": "a fact"})
        store.put(NS, "m1", {"content": "a fact"})
        assert [m["memory"] for m in server.memories.values()] == ["a fact"]
        store.close()


def _get(url: str, key: str, timeout: float = 15.0) -> None:
    store = Mem0Store(f"mem0+{url}", key=key, timeout=timeout)
    try:
        store.get(NS, "m1")
    finally:
        store.close()


def test_failures_are_clear_memory_store_errors() -> None:
    refused = r"refused the request \(HTTP 401\): check the key in \$JARVIS_STORE_KEY"
    with Mem0Server(key="right") as server:
        with pytest.raises(MemoryStoreError, match=refused):
            _get(server.url, "wrong")
        server.delay = 1.0
        with pytest.raises(MemoryStoreError, match="did not answer within 0.2 s"):
            _get(server.url, "right", timeout=0.2)
        url = server.url
    with pytest.raises(MemoryStoreError, match="cannot be reached .*memory is unavailable"):
        _get(url, "right")


@pytest.mark.parametrize("case", ["down", "bad key", "slow"])
def test_a_run_with_a_failing_memory_server_reports_it_and_goes_on(
    case: str, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fact = {"memory_type": "project_long_term", "tags": ["ops"], "content": "deploy: make"}
    save = {"name": "save_memory", "args": {"memories": [fact]}}
    script = write_script(
        tmp_path / "s.yaml",
        [{"tool_calls": [save]}, {"text": "I could not save it. !!!COMPLETE!!!"}],
    )
    expected = {
        "down": "cannot be reached",
        "bad key": "refused the request (HTTP 401): check the key in $JARVIS_STORE_KEY",
        "slow": "did not answer within 0.5 s",
    }[case]
    with Mem0Server(key="m0-key-right-123") as server:
        server.delay = 2.0 if case == "slow" else 0.0
        monkeypatch.setenv("JARVIS_STORE_URL", f"mem0+{server.url}")
        key = "m0-key-wrong-456" if case == "bad key" else "m0-key-right-123"
        monkeypatch.setenv("JARVIS_STORE_KEY", key)
        monkeypatch.setenv("JARVIS_STORE_TIMEOUT", "0.5")
        if case == "down":
            server.__exit__(None, None, None)
        args = ["run", "remember how we deploy", "-n", "--yes", "--platform", "scripted"]
        done = run_process([*args, "--script", str(script)], cwd=workspace)
        assert done.returncode == 0, done.stdout + done.stderr
        assert (
            "save_memory Error: long-term memory is unavailable: the memory server at"
            in done.stdout
        )
        assert expected in done.stdout and "I could not save it." in done.stdout
        assert server.memories == {}  # nothing was written
        assert key not in done.stdout + done.stderr


def _tool_messages(workspace: Path) -> list[str]:
    """What the tools answered in the workspace's newest session, read from its checkpoint."""
    from langchain_core.messages import ToolMessage

    from jarvis_graph.checkpointing import open_checkpointer
    from jarvis_graph.graphs.agent import build_agent_graph

    with open_checkpointer(workspace) as saver:
        row = saver.conn.execute(  # type: ignore[attr-defined]
            "SELECT thread_id FROM checkpoints ORDER BY checkpoint_id DESC LIMIT 1"
        ).fetchone()
        graph = build_agent_graph().compile(checkpointer=saver)
        values = graph.get_state({"configurable": {"thread_id": row[0]}}).values
    return [str(m.content) for m in values["messages"] if isinstance(m, ToolMessage)]


def _save_then_retrieve(tmp_path: Path) -> Path:
    fact = {"memory_type": "project_long_term", "tags": ["ops"], "content": "deploy: make"}
    return write_script(
        tmp_path / "s.yaml",
        [
            {"tool_calls": [{"name": "save_memory", "args": {"memories": [fact]}}]},
            {"tool_calls": [{"name": "retrieve_memory", "args": {"query": "deploy"}}]},
            {"text": "Saved; memory went away after. !!!COMPLETE!!!"},
        ],
    )


def test_a_server_that_goes_down_mid_run_is_one_warning_and_a_tool_message(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = _save_then_retrieve(tmp_path)
    with Mem0Server() as server:
        monkeypatch.setenv("JARVIS_STORE_URL", f"mem0+{server.url}")
        server.stop_after_write = True  # the save is stored, then the port refuses
        args = ["run", "remember how we deploy", "-n", "--yes", "--platform", "scripted"]
        done = run_process([*args, "--script", str(script)], cwd=workspace)
        assert done.returncode == 0, done.stdout + done.stderr
        assert [m["memory"] for m in server.memories.values()] == ["deploy: make"]
    shown = done.stdout + done.stderr
    assert "Traceback" not in shown and " raised" not in shown
    warning = done.stderr.strip()
    assert len(warning.splitlines()) == 1, done.stderr
    assert "retrieve_memory: the memory server at http://127.0.0.1:" in warning
    assert "cannot be reached" in warning and "the run goes on without long-term memory" in warning
    saved, failed = _tool_messages(workspace)
    assert saved.startswith("saved 1 memory")
    assert failed.startswith("Error: long-term memory is unavailable: the memory server at")
    assert "cannot be reached" in failed and "Go on without it" in failed
    assert "Saved; memory went away after." in done.stdout


def test_the_episodic_archive_stays_local_beside_a_mem0_server(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = _save_then_retrieve(tmp_path)
    with Mem0Server() as server:
        monkeypatch.setenv("JARVIS_STORE_URL", f"mem0+{server.url}")
        args = ["run", "remember how we deploy", "-n", "--yes", "--platform", "scripted"]
        done = run_process([*args, "--script", str(script)], cwd=workspace)
        assert done.returncode == 0, done.stdout + done.stderr
        assert done.stderr == ""
        # the Mem0 user holds the memory the model saved, and nothing of Jarvis' own
        assert [m["memory"] for m in server.memories.values()] == ["deploy: make"]
        found = run_process(["memory", "episodes", "search", "how we deploy"], cwd=workspace)
        assert found.returncode == 0, found.stdout + found.stderr
        assert "[user]" in found.stdout and "remember how we deploy" in found.stdout
        assert len(server.memories) == 1
    assert (workspace / ".jarvis" / "memory" / "store.sqlite").is_file()


def test_the_router_sends_memories_to_mem0_and_keeps_the_rest_local(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jarvis_graph.memory.router import MemoryStore, project_store, workspace_namespace

    with Mem0Server() as server:
        monkeypatch.setenv("JARVIS_STORE_URL", f"mem0+{server.url}")
        store = MemoryStore()
        tier = workspace_namespace(workspace)
        store.put(tier, "p1", {"content": "deploy: make", "type": "project_long_term"})
        project_store(workspace, store).put(("episodic", "ws"), "e1", {"content": "a snippet"})
        assert [m["memory"] for m in server.memories.values()] == ["deploy: make"]
        records = (*project_store(workspace, store).prefix, "episodic", "ws")
        assert store.list_namespaces() == [tier, records]
        assert [(i.namespace, i.key) for i in store.search(())] == [(tier, "p1"), (records, "e1")]
        assert [i.key for i in store.search(("project_store",))] == ["e1"]
        assert [i.key for i in store.search(("project_long_term",))] == ["p1"]
    assert (workspace / ".jarvis" / "memory" / "store.sqlite").is_file()
