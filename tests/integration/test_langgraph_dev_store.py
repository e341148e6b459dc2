"""``langgraph dev`` serves the memory store named in ``langgraph.json``.

One server on a free loopback port (the way Studio talks to it): an item put through the
server's store API lands in the FAISS store under the test's JARVIS_HOME, and a
``save_memory`` call in a run on the server lands in the workspace's store, where the
CLI's ``MemoryTiers`` finds it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from langgraph_sdk import get_sync_client

from jarvis_graph.config import jarvis_home
from jarvis_graph.memory.store import FaissStore
from jarvis_graph.memory.tiers import MemoryTiers, close_stores, project_memory_dir
from tests.integration.test_langgraph_dev import REPO, dev_server

pytestmark = pytest.mark.slow


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """``langgraph dev`` with the repository's config; yields its URL and its log file."""
    with dev_server(tmp_path) as running:
        yield running


def test_langgraph_json_names_the_memory_store() -> None:
    config = json.loads((REPO / "langgraph.json").read_text())
    assert config["store"] == {"path": "jarvis_graph.memory.router.memory_store"}


def test_the_server_store_and_server_runs_use_the_memory_store(
    server: tuple[str, Path], workspace: Path, tmp_path: Path
) -> None:
    url, log_file = server
    script = tmp_path / "save.yaml"
    save = {"memory_type": "project_long_term", "tags": ["studio"], "content": "Served fact"}
    turns = [
        {"tool_calls": [{"name": "save_memory", "args": {"memories": [save]}}]},
        {"text": "Saved. !!!COMPLETE!!!"},
    ]
    script.write_text(json.dumps({"turns": turns}))  # JSON is valid YAML
    with get_sync_client(url=url, api_key=None, timeout=60.0) as client:
        value = {"type": "global_long_term", "tags": ["studio"], "content": "Studio fact"}
        client.store.put_item(["global_long_term"], "studio-1", value)
        found = client.store.search_items(["global_long_term"], query="a fact from studio")
        assert [i["key"] for i in found["items"]] == ["studio-1"]
        (agent,) = client.assistants.search(graph_id="agent")
        context = {"workspace": str(workspace), "platform": "scripted", "script": str(script)}
        output = client.runs.wait(
            client.threads.create()["thread_id"],
            agent["assistant_id"],
            input={"task": "remember this"},
            context={**context, "non_interactive": True},
        )
    assert isinstance(output, dict) and output["status"] == "completed", output
    assert "Using custom store: <jarvis_graph.memory.router.MemoryStore" in log_file.read_text()

    with FaissStore(jarvis_home() / "memory" / "global_long_term") as global_store:
        item = global_store.get(("global_long_term",), "studio-1")
    assert item is not None and item.value == value
    close_stores()
    assert (project_memory_dir(workspace) / "store.sqlite").is_file()
    saved = MemoryTiers(workspace).records(["project_long_term"])
    assert [r["content"] for r in saved] == ["Served fact"]
