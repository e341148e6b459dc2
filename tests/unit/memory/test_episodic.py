"""The episodic archive on a FaissStore (hashing embedder) and a real SqliteSaver."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import pytest
from langchain_core.embeddings import Embeddings
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from jarvis_graph.memory.episodic import Anchor, EpisodicArchive, EpisodicError, expand
from jarvis_graph.memory.store import FaissStore
from tests.unit.memory.conftest import hashing_index


def conversation(topic: str, n: str) -> list[AnyMessage]:
    return [
        HumanMessage(f"tell me about the {topic}", id=f"h{n}"),
        AIMessage(
            f"reading the {topic} notes",
            tool_calls=[{"name": "read_code", "args": {"path": f"{topic}.md"}, "id": f"c{n}"}],
            id=f"a{n}",
        ),
        ToolMessage(f"the {topic} runs on port 80{n}", tool_call_id=f"c{n}", id=f"t{n}"),
        AIMessage(f"the {topic} uses port 80{n}", id=f"r{n}"),
    ]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[FaissStore]:
    with FaissStore(tmp_path / "mem", index=hashing_index(["content"])) as s:
        yield s


def all_items(store: FaissStore) -> list[Any]:
    return store.search(("episodic",), limit=1000)


def test_segments_are_stored_with_their_anchor(store: FaissStore) -> None:
    archive = EpisodicArchive(store, "proj")
    assert archive.index_task("t1", "cp-1", conversation("database", "1")) == 5
    values = sorted((i.value["message_index"], i.value["kind"]) for i in all_items(store))
    assert values == [
        (0, "user"),
        (1, "reasoning"),
        (1, "tool_call"),
        (2, "tool_result"),
        (3, "response"),
    ]
    (hit,) = archive.search("database port", kind="tool_result")
    assert str(hit.anchor) == "t1:cp-1:2" and hit.value["task"] == "tell me about the database"
    assert all(i.namespace == ("episodic", "proj") for i in all_items(store))


def test_indexing_again_adds_only_new_or_changed_segments(store: FaissStore) -> None:
    archive = EpisodicArchive(store)
    first = conversation("database", "1")
    archive.index_task("t1", "cp-1", first)
    assert archive.index_task("t1", "cp-2", first) == 0  # the same task completed again
    longer = first + conversation("cache", "2")
    assert archive.index_task("t1", "cp-3", longer) == 5
    assert len(all_items(store)) == 10
    anchors = {str(e.anchor) for e in archive.search(limit=100)}
    assert "t1:cp-1:0" in anchors and "t1:cp-3:4" in anchors  # old segments keep their anchor
    assert not any(":cp-2:" in a for a in anchors)


def test_search_filters_by_thread_and_kind(store: FaissStore) -> None:
    archive = EpisodicArchive(store)
    archive.index_task("t1", "cp-1", conversation("database", "1"))
    archive.index_task("t2", "cp-9", conversation("cache", "2"))
    only_t2 = archive.search("port", thread="t2", limit=50)
    assert only_t2 and {e.value["thread_id"] for e in only_t2} == {"t2"}
    users = archive.search(kind="user", limit=50)
    assert [e.value["content"] for e in users] == [
        "tell me about the cache",
        "tell me about the database",
    ]  # without a query: newest first
    best = archive.search("cache port", limit=1)
    assert best[0].value["thread_id"] == "t2" and best[0].score is not None
    with pytest.raises(EpisodicError, match="unknown episode kind 'answer'"):
        archive.search("x", kind="answer")


def test_a_renamed_project_keeps_its_episodes(store: FaissStore) -> None:
    EpisodicArchive(store, "old-name").index_task("t1", "cp", conversation("database", "1"))
    assert len(EpisodicArchive(store, "new-name").search("database", limit=50)) == 5


def test_anchor_text_round_trip_and_errors() -> None:
    anchor = Anchor.parse("2026:thread:with:colons:1f0-abc:12")
    assert anchor == Anchor("2026:thread:with:colons", "1f0-abc", 12)
    assert Anchor.parse(str(anchor)) == anchor
    for bad in ("nothing", "t:c:x", ":c:1", "t::1"):
        with pytest.raises(EpisodicError, match="is not an episode anchor"):
            Anchor.parse(bad)


class _State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def _talk(state: _State) -> dict[str, Any]:
    n = len(state["messages"])
    return {"messages": [AIMessage(f"reply {n}", id=f"ai-{n}")]}


@pytest.fixture
def saver(tmp_path: Path) -> Iterator[SqliteSaver]:
    conn = sqlite3.connect(str(tmp_path / "sessions.sqlite"), check_same_thread=False)
    yield SqliteSaver(conn)
    conn.close()


def test_expand_reads_the_messages_around_an_anchor_from_its_checkpoint(
    saver: SqliteSaver,
) -> None:
    builder = StateGraph(_State)
    builder.add_node("talk", _talk)
    builder.add_edge(START, "talk")
    graph = builder.compile(checkpointer=saver)
    config: Any = {"configurable": {"thread_id": "t"}}
    for n in range(4):
        graph.invoke({"messages": [HumanMessage(f"question {n}", id=f"h-{n}")]}, config)
    middle = [s for s in graph.get_state_history(config) if len(s.values["messages"]) == 4][0]
    checkpoint = middle.config["configurable"]["checkpoint_id"]

    got = expand(saver, Anchor("t", checkpoint, 2), before=1, after=5)
    assert got.checkpoint_id == checkpoint and got.start == 1 and got.index == 2
    assert got.messages == middle.values["messages"][1:4]  # clipped at the checkpoint's end
    latest = expand(saver, Anchor("t", "latest", 7), before=1, after=0)
    assert [m.id for m in latest.messages] == ["h-3", "ai-7"]

    gone = Anchor("t", "no-such-checkpoint", 2)
    with pytest.raises(EpisodicError, match="has no checkpoint 'no-such-checkpoint'"):
        expand(saver, gone)
    by_id = expand(saver, gone, before=0, after=0, message_id="ai-5")  # checkpoint not kept
    assert [m.id for m in by_id.messages] == ["ai-5"] and by_id.index == 5
    with pytest.raises(EpisodicError, match="is not in checkpoint"):
        expand(saver, Anchor("t", checkpoint, 9))
    with pytest.raises(EpisodicError, match="session 'other'"):
        expand(saver, Anchor("other", "latest", 0))


def test_the_tool_says_when_a_project_has_no_episodes(workspace: Path) -> None:
    from jarvis_graph.memory.tools import SearchEpisodesArgs, search_episodes_impl
    from jarvis_graph.tools.base import ToolEnv

    got = search_episodes_impl(ToolEnv(workspace), SearchEpisodesArgs(query="deploy"))
    assert got == "no episodes found for 'deploy'"
    assert not (workspace / ".jarvis").exists()


def test_forgetting_a_thread_deletes_its_segments_only(store: FaissStore) -> None:
    from jarvis_graph.memory.episodic import forget_thread

    archive = EpisodicArchive(store)
    archive.index_task("t1", "cp-1", conversation("database", "1"))
    archive.index_task("t2", "cp-2", conversation("cache", "2"))
    assert forget_thread(store, "t1") == 5
    assert {e.value["thread_id"] for e in archive.search("port", limit=50)} == {"t2"}
    assert forget_thread(store, "t1") == 0


class CountingEmbedder(Embeddings):
    """The hashing embedder, counting the texts it embeds."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.texts = inner, 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.texts += len(texts)
        return self.inner.embed_documents(texts)  # type: ignore[no-any-return]

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)  # type: ignore[no-any-return]


def test_segments_are_embedded_at_the_first_search_by_meaning_not_when_indexed(
    tmp_path: Path,
) -> None:
    index = hashing_index(["content"])
    counting = CountingEmbedder(index["embed"])
    with FaissStore(tmp_path / "mem", index={**index, "embed": counting}) as store:
        archive = EpisodicArchive(store, "proj")
        archive.index_task("t1", "cp-1", conversation("database", "1"))
        assert counting.texts == 0  # completing a task loads no embedder
        assert len(archive.search(limit=10)) == 5  # the newest, without a query: no vectors
        assert counting.texts == 0
        (hit,) = archive.search("database port", kind="tool_result")
        assert str(hit.anchor) == "t1:cp-1:2" and counting.texts == 5
        assert archive.embed_pending() == 0  # embedded once
        assert all(i.value["embedded"] for i in all_items(store))
