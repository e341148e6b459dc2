"""The memory store: one LangGraph store whose namespaces name the FAISS files on disk.

Every check reads what the backends hold (the store files opened directly, the
short-term store) or what exists on disk, not the router's own view.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
from langgraph.store.base import GetOp, ListNamespacesOp, PutOp, SearchOp
from langgraph.store.memory import InMemoryStore

from jarvis_graph.config import jarvis_home
from jarvis_graph.memory.episodic import forget_project_thread, search_project
from jarvis_graph.memory.router import (
    MemoryStore,
    label_name,
    memory_store,
    namespace_label,
    project_store,
    workspace_namespace,
)
from jarvis_graph.memory.store import FaissStore
from jarvis_graph.memory.tiers import (
    MemoryTiers,
    close_stores,
    memory_prompt,
    project_memory_dir,
    short_term_store,
)


def stored(folder: Path, prefix: tuple[str, ...]) -> dict[str, dict[str, object]]:
    """What the FAISS store file in ``folder`` holds under ``prefix`` (read directly)."""
    close_stores()  # the router's handles are flushed and closed first
    with FaissStore(folder) as store:
        return {f"{'.'.join(i.namespace)}/{i.key}": i.value for i in store.search(prefix)}


def record(memory_type: str, key: str, content: str) -> dict[str, object]:
    return {"id": key, "type": memory_type, "tags": ["t"], "content": content}


def test_each_root_lands_in_its_backend(workspace: Path) -> None:
    store = MemoryStore()
    ws = workspace_namespace(workspace)
    store.put(ws, "p1", record("project_long_term", "p1", "project fact"))
    store.put(("global_long_term",), "g1", record("global_long_term", "g1", "global fact"))
    store.put(("short_term", "t1"), "s1", record("short_term", "s1", "short fact"))
    store.put((*project_store_ns(workspace), "force_save_memory"), "t1", {"asked": True})

    assert short_term_store().get(("short_term", "t1"), "s1").value["content"] == "short fact"
    in_project = stored(project_memory_dir(workspace), ())
    assert in_project == {
        "project_long_term/p1": record("project_long_term", "p1", "project fact"),
        "force_save_memory/t1": {"asked": True},
    }
    in_global = stored(jarvis_home() / "memory" / "global_long_term", ())
    assert in_global == {"global_long_term/g1": record("global_long_term", "g1", "global fact")}


def project_store_ns(workspace: Path) -> tuple[str, str]:
    return ("project_store", namespace_label(str(workspace.resolve())))


def test_a_store_written_before_the_router_reads_unchanged(workspace: Path) -> None:
    with FaissStore(project_memory_dir(workspace)) as old:  # the layout on disk until now
        old.put(("project_long_term",), "m1", record("project_long_term", "m1", "old fact"))
        old.put(("force_save_memory",), "t9", {"asked": True})
    tiers = MemoryTiers(workspace, store=memory_store())
    assert [r["content"] for r in tiers.records(["project_long_term"])] == ["old fact"]
    marker = project_store(workspace, memory_store()).get(("force_save_memory",), "t9")
    assert marker is not None and marker.value == {"asked": True}
    item = memory_store().get(workspace_namespace(workspace), "m1")
    assert item is not None and item.namespace == workspace_namespace(workspace)


def test_reads_and_deletes_create_no_store(workspace: Path) -> None:
    tiers = MemoryTiers(workspace, store=memory_store())
    assert tiers.records() == []
    assert tiers.retrieve(query="anything", tags=["x"]) == []
    assert tiers.clear(ids=["nope"]) == []
    assert "No memories are saved yet." in memory_prompt(workspace, memory_store())
    assert memory_store().get(workspace_namespace(workspace), "k") is None
    memory_store().delete(workspace_namespace(workspace), "k")
    assert memory_store().search(()) == []
    assert memory_store().list_namespaces(prefix=workspace_namespace(workspace)) == []
    assert search_project(workspace, "deploy", memory_store()) == []
    assert forget_project_thread(workspace, "t1", memory_store()) == 0
    assert not (workspace / ".jarvis").exists()
    assert not (jarvis_home() / "memory").exists()


@pytest.mark.parametrize("name", ["my.project", "100%.done", "a%2Eb", "%"])
def test_namespaces_round_trip_for_odd_workspace_names(tmp_path: Path, name: str) -> None:
    workspace = (tmp_path / name / "ws.v2").resolve()
    workspace.mkdir(parents=True)
    label = namespace_label(str(workspace))
    assert "." not in label and label_name(label) == str(workspace)
    tiers = MemoryTiers(workspace, thread_id=f"thread.{name}", store=memory_store())
    tiers.save([record("project_long_term", "p", "odd name"), record("short_term", "s", "x")])

    assert (project_memory_dir(workspace) / "store.sqlite").is_file()
    found = memory_store().search(("project_long_term",))
    assert [(i.namespace, i.key) for i in found] == [(workspace_namespace(workspace), "p")]
    assert label_name(found[0].namespace[1]) == str(workspace)
    listed = memory_store().list_namespaces(prefix=("project_long_term",))
    assert listed == [workspace_namespace(workspace)]
    assert [r["id"] for r in tiers.records(["short_term"])] == ["s"]
    assert stored(project_memory_dir(workspace), ("project_long_term",)) == {
        "project_long_term/p": record("project_long_term", "p", "odd name")
    }


def test_a_batch_over_backends_answers_in_op_order(workspace: Path) -> None:
    ws = workspace_namespace(workspace)
    store = memory_store()
    store.put(ws, "a", {"content": "alpha"})
    store.put(("short_term", "t"), "b", {"content": "beta"})
    results = store.batch(
        [
            GetOp(("short_term", "t"), "b"),
            PutOp(("global_long_term",), "c", {"content": "gamma"}),
            GetOp(ws, "a"),
            SearchOp(("short_term",)),
            GetOp(("global_long_term",), "missing"),
            ListNamespacesOp(),
        ]
    )
    assert results[0].value == {"content": "beta"}
    assert results[1] is None
    assert results[2].value == {"content": "alpha"} and results[2].namespace == ws
    assert [i.key for i in results[3]] == ["b"]
    assert results[4] is None
    # reads in a batch see the state before its puts, as in InMemoryStore and FaissStore
    assert results[5] == sorted([ws, ("short_term", "t")])
    assert memory_store().list_namespaces(prefix=("global_long_term",)) == [("global_long_term",)]
    again = asyncio.run(store.abatch([GetOp(("global_long_term",), "c")]))
    assert again[0].value == {"content": "gamma"}


def test_a_query_search_ranks_by_meaning_across_stores(workspace: Path) -> None:
    store = memory_store()
    store.put(workspace_namespace(workspace), "deploy", {"content": "deploy with deploy.sh"})
    store.put(("global_long_term",), "editor", {"content": "my favourite editor is vim"})
    hits = store.search((), query="which text editor do I like", limit=1)
    assert [(h.namespace, h.key) for h in hits] == [(("global_long_term",), "editor")]


def test_an_unknown_namespace_is_refused_with_the_accepted_forms() -> None:
    with pytest.raises(ValueError, match="start it with \\('short_term', <thread>\\)"):
        memory_store().put(("notes",), "k", {"content": "x"})
    with pytest.raises(ValueError, match="has no store"):
        memory_store().put(("project_long_term",), "k", {"content": "x"})


def test_a_graph_store_other_than_the_router_holds_the_tiers(workspace: Path) -> None:
    other = InMemoryStore()
    tiers = MemoryTiers(workspace, thread_id="t1", store=other)
    tiers.save([record("project_long_term", "p", "in memory only")])
    assert other.get(workspace_namespace(workspace), "p") is not None
    assert not project_memory_dir(workspace).exists()


def test_building_the_router_loads_neither_numpy_nor_faiss() -> None:
    code = (
        "import sys\n"
        "from jarvis_graph.memory.router import MemoryStore, memory_store\n"
        "MemoryStore(); memory_store()\n"
        "print(sorted(m for m in ('numpy', 'faiss', 'onnxruntime') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
