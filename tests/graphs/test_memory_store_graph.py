"""Memory tools go through the graph's ``store=``: scripted agent runs, real stores.

A run compiled with the memory store writes the FAISS files the CLI and later runs read;
a run compiled with another store (LangGraph's ``InMemoryStore``) writes there and
leaves the disk alone, which shows the tools use the run's store, not a global one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.messages import ToolMessage
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from jarvis_graph.graphs.agent import build_agent_graph
from jarvis_graph.memory.router import memory_store, namespace_label, workspace_namespace
from jarvis_graph.memory.store import FaissStore
from jarvis_graph.memory.tiers import close_stores, project_memory_dir
from tests.support.cli import write_script

MARKER = "!!!COMPLETE!!!"
SAVE_TURNS: list[dict[str, Any]] = [
    {
        "tool_calls": [
            {
                "name": "save_memory",
                "args": {
                    "memories": [
                        {
                            "memory_type": "project_long_term",
                            "tags": ["deploy"],
                            "content": "Releases go out with ./deploy.sh --prod",
                        },
                        {"memory_type": "short_term", "content": "The flaky test is test_dates"},
                    ]
                },
            }
        ]
    },
    {"text": f"Saved. {MARKER}"},
]


def run_saving(workspace: Path, tmp_path: Path, store: BaseStore) -> list[str]:
    """One scripted task that calls save_memory; returns the tool results."""
    script = write_script(tmp_path / "save.yaml", SAVE_TURNS)
    graph = build_agent_graph().compile(store=store)
    context = {"platform": "scripted", "script": str(script), "workspace": str(workspace)}
    config = {"configurable": {"thread_id": "t.1"}}
    final = graph.invoke({"task": "remember the deploy command"}, config, context=context)
    return [str(m.content) for m in final["messages"] if isinstance(m, ToolMessage)]


def test_save_memory_in_a_run_with_the_memory_store_lands_on_disk(
    workspace: Path, tmp_path: Path
) -> None:
    (result,) = run_saving(workspace, tmp_path, memory_store())
    assert result.startswith("saved 2 memories")
    close_stores()  # flush and let go of the files; read them as a new process would
    with FaissStore(project_memory_dir(workspace)) as on_disk:
        saved = [i.value["content"] for i in on_disk.search(("project_long_term",))]
    assert saved == ["Releases go out with ./deploy.sh --prod"]


def test_save_memory_writes_to_the_store_the_graph_was_compiled_with(
    workspace: Path, tmp_path: Path
) -> None:
    other = InMemoryStore()
    (result,) = run_saving(workspace, tmp_path, other)
    assert result.startswith("saved 2 memories")
    project = [i.value["content"] for i in other.search(workspace_namespace(workspace))]
    assert project == ["Releases go out with ./deploy.sh --prod"]
    short = [i.value["content"] for i in other.search(("short_term", namespace_label("t.1")))]
    assert short == ["The flaky test is test_dates"]
    assert not (project_memory_dir(workspace) / "store.sqlite").exists()
