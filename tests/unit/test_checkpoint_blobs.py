"""BlobSerializer: texts, messages and message lists are stored once and come back intact."""

from __future__ import annotations

import hashlib
import sqlite3
import zlib
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from jarvis_graph.checkpoint_blobs import LIST_PREFIX, REF_PREFIX, BlobSerializer, MissingBlobError


def checkpoint(*messages: object) -> dict[str, Any]:
    return {"v": 4, "channel_values": {"messages": list(messages), "task": "t"}}


def rows(folder: Path, table: str) -> int:
    with sqlite3.connect(folder / "parts.sqlite") as conn:
        return int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])  # noqa: S608


def varied() -> list[BaseMessage]:
    """Messages with every kind of field the run loop produces."""
    return [
        SystemMessage("rules", id="s"),
        HumanMessage([{"type": "text", "text": "look"}, {"type": "text", "text": "here"}], id="h"),
        AIMessage(
            "",
            id="a",
            tool_calls=[{"name": "read", "args": {"path": "x", "n": [1, 2]}, "id": "c1"}],
            invalid_tool_calls=[{"name": "bad", "args": "{oops", "id": "c2", "error": "json"}],
            usage_metadata={"input_tokens": 3, "output_tokens": 4, "total_tokens": 7},
            response_metadata={"model": "m", "finish_reason": "tool_calls"},
        ),
        ToolMessage("failed: no such file", tool_call_id="c1", status="error", name="read", id="t"),
        ToolMessage("ok", tool_call_id="c3", artifact={"a": (1, 2)}, id="u"),  # serde's way
        AIMessage("done", id="d", additional_kwargs={"raw": {"k": None}}),
    ]


def plain_copy(messages: list[BaseMessage]) -> Any:
    """What a checkpointer without this serializer gives back (tuples come back as lists)."""
    plain = JsonPlusSerializer()
    return plain.loads_typed(plain.dumps_typed(messages))


def test_large_texts_are_stored_once_and_restored(tmp_path: Path) -> None:
    serde = BlobSerializer(tmp_path / "blobs", min_chars=100)
    big = "line of output\n" * 1000
    first = checkpoint(HumanMessage("short", id="h"), ToolMessage(big, tool_call_id="c", id="t"))
    kind, data = serde.dumps_typed(first)
    second = serde.dumps_typed(checkpoint(*first["channel_values"]["messages"], AIMessage("ok")))

    assert big.encode() not in data and len(data) < 1000
    assert rows(tmp_path / "blobs", "texts") == 1  # stored once
    assert first["channel_values"]["messages"][1].content == big  # the live state is untouched
    fresh = BlobSerializer(tmp_path / "blobs", min_chars=100)  # no cache: read from the database
    back = fresh.loads_typed((kind, data))
    assert back == first
    assert fresh.loads_typed(second)["channel_values"]["messages"][1].content == big


def test_every_kind_of_message_comes_back_equal(tmp_path: Path) -> None:
    messages = varied()
    data = BlobSerializer(tmp_path).dumps_typed(checkpoint(*messages))
    back = BlobSerializer(tmp_path).loads_typed(data)["channel_values"]["messages"]
    assert back == plain_copy(messages)
    assert [type(m) for m in back] == [type(m) for m in messages]


def test_a_growing_list_adds_only_its_new_messages(tmp_path: Path) -> None:
    serde = BlobSerializer(tmp_path)
    messages: list[BaseMessage] = [HumanMessage("go", id="h")]
    sizes = []
    for i in range(200):
        messages = [*messages, AIMessage(f"step {i}", id=f"a{i}")]  # a new list, as LangGraph does
        sizes.append(len(serde.dumps_typed(checkpoint(*messages))[1]))
    # The checkpoint holds one reference whatever the list's length; each message is one row.
    assert max(sizes[2:]) == min(sizes[2:]) < 100
    assert rows(tmp_path, "messages") == 201
    assert rows(tmp_path, "lists") == 200 - 2  # lists of fewer than 4 messages stay inline
    fresh = BlobSerializer(tmp_path)
    assert fresh.loads_typed(serde.dumps_typed(checkpoint(*messages))) == checkpoint(*messages)


def test_after_a_restart_the_loaded_list_is_extended_not_copied(tmp_path: Path) -> None:
    data = BlobSerializer(tmp_path).dumps_typed(checkpoint(*varied()))
    before = rows(tmp_path, "messages"), rows(tmp_path, "lists")
    resumed = BlobSerializer(tmp_path)  # a new process resuming the session
    state = resumed.loads_typed(data)
    messages = [*state["channel_values"]["messages"], AIMessage("next", id="n")]
    again = resumed.dumps_typed(checkpoint(*messages))
    assert (rows(tmp_path, "messages"), rows(tmp_path, "lists")) == (before[0] + 1, before[1] + 1)
    assert BlobSerializer(tmp_path).loads_typed(again) == checkpoint(*messages)


def test_a_shorter_or_changed_list_is_stored_as_it_is(tmp_path: Path) -> None:
    serde = BlobSerializer(tmp_path)
    messages = varied()
    serde.dumps_typed(checkpoint(*messages))
    summarised = [SystemMessage("summary", id="sum"), *messages[4:]]
    messages[5].content = "done, changed in place"  # a node replacing a message's content
    for expected in (summarised, messages, [*messages, RemoveMessage(id="s")]):
        data = serde.dumps_typed(checkpoint(*expected))
        back = BlobSerializer(tmp_path).loads_typed(data)["channel_values"]["messages"]
        assert back == plain_copy(expected)


def test_pending_writes_are_shrunk_too(tmp_path: Path) -> None:
    serde = BlobSerializer(tmp_path, min_chars=10)
    write = [ToolMessage("x" * 50, tool_call_id="c")]
    kind, data = serde.dumps_typed(write)
    assert b"x" * 50 not in data
    assert serde.loads_typed((kind, data)) == write


def test_texts_that_look_like_references_survive(tmp_path: Path) -> None:
    serde = BlobSerializer(tmp_path, min_chars=10_000)
    tricky = HumanMessage(f"{REF_PREFIX}0123")
    assert BlobSerializer(tmp_path).loads_typed(serde.dumps_typed([tricky])) == [tricky]
    value = {"task": f"{LIST_PREFIX}00ff", "plan": [f"{LIST_PREFIX}=x"]}
    assert BlobSerializer(tmp_path).loads_typed(serde.dumps_typed(value)) == value


def test_texts_of_earlier_versions_are_still_read(tmp_path: Path) -> None:
    text = "old output " * 500
    digest = hashlib.sha256(text.encode()).hexdigest()
    (tmp_path / digest[:2]).mkdir()
    (tmp_path / digest[:2] / f"{digest}.z").write_bytes(zlib.compress(text.encode()))
    old = BlobSerializer(tmp_path).inner.dumps_typed(
        [ToolMessage(REF_PREFIX + digest, tool_call_id="c")]
    )
    assert BlobSerializer(tmp_path).loads_typed(old)[0].content == text


def test_missing_parts_are_a_clear_error(tmp_path: Path) -> None:
    serde = BlobSerializer(tmp_path, min_chars=10)
    text = serde.dumps_typed([HumanMessage("y" * 20)])
    listed = serde.dumps_typed(checkpoint(*varied()))
    serde.close()
    (tmp_path / "parts.sqlite").unlink()
    with pytest.raises(MissingBlobError, match="no longer exists"):
        BlobSerializer(tmp_path).loads_typed(text)
    with pytest.raises(MissingBlobError, match="message list missing"):
        BlobSerializer(tmp_path).loads_typed(listed)


def test_tool_calls_replaced_in_a_kept_message_are_stored(tmp_path: Path) -> None:
    serde = BlobSerializer(tmp_path)
    messages = varied()
    serde.dumps_typed(checkpoint(*messages))
    messages[2].tool_calls = [{"name": "read", "args": {"path": "edited"}, "id": "c1"}]
    data = serde.dumps_typed(checkpoint(*messages))  # the same objects, one field replaced
    back = BlobSerializer(tmp_path).loads_typed(data)["channel_values"]["messages"]
    assert back[2].tool_calls[0]["args"] == {"path": "edited"}


def test_a_parts_database_of_an_earlier_version_gains_row_times(tmp_path: Path) -> None:
    """Rows written before parts kept their time read as time 0 (collectable), new ones now."""
    import time

    with sqlite3.connect(tmp_path / "parts.sqlite") as conn:
        conn.executescript(
            "CREATE TABLE texts (digest TEXT PRIMARY KEY, body TEXT NOT NULL);"
            "CREATE TABLE messages (digest BLOB PRIMARY KEY, kind TEXT NOT NULL, data BLOB);"
            "CREATE TABLE lists (digest BLOB PRIMARY KEY, parent BLOB, items BLOB NOT NULL);"
            "INSERT INTO texts VALUES ('old', 'an old text');"
        )
    serde = BlobSerializer(tmp_path, min_chars=10)
    start = time.time()
    serde.dumps_typed(
        checkpoint(*[ToolMessage("x" * 50 + str(i), tool_call_id="c") for i in range(4)])
    )
    ages = dict(serde.parts.ages("texts"))
    assert ages.pop("old") == 0 and len(ages) == 4
    assert all(start <= added <= time.time() for added in ages.values())
    assert serde.parts.texts(["old"]) == {"old": "an old text"}
    serde.close()


def test_storing_a_known_text_again_refreshes_its_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A text the serializer remembers is written again (its time renewed) when a new
    message holds it and its row was written long ago: a prune must not take it as old."""
    import jarvis_graph.checkpoint_blobs as blobs

    serde = BlobSerializer(tmp_path, min_chars=10)
    text = "the same long output " * 3
    serde.dumps_typed(checkpoint(ToolMessage(text, tool_call_id="a")))
    with sqlite3.connect(tmp_path / "parts.sqlite") as conn:
        conn.execute("UPDATE texts SET added = 1")
    serde.dumps_typed(checkpoint(ToolMessage(text, tool_call_id="b")))
    assert [added for _d, added in serde.parts.ages("texts")] == [1]  # written a moment ago
    monkeypatch.setattr(blobs, "REFRESH", -1.0)  # as if REFRESH seconds had passed
    serde.dumps_typed(checkpoint(ToolMessage(text, tool_call_id="c")))
    assert [added > 1 for _d, added in serde.parts.ages("texts")] == [True]
    serde.close()


def grow(serde: BlobSerializer, messages: list[BaseMessage], steps: int) -> tuple[Any, Any]:
    """``steps`` checkpoints, each with one more message; the last one's data and list."""
    data = None
    for i in range(steps):
        extra: BaseMessage = varied()[i % 6].model_copy(update={"id": f"m{len(messages)}"})
        messages = [*messages, extra]
        data = serde.dumps_typed(checkpoint(*messages))
    return data, messages


def head_of(serde: BlobSerializer, data: Any) -> bytes:
    kind, raw = data
    ref = serde.inner.loads_typed((kind, raw))["channel_values"]["messages"]
    return bytes.fromhex(ref.removeprefix(LIST_PREFIX))


def test_a_long_list_is_restored_from_few_nodes_and_few_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A restore walks span nodes (each carrying its messages), not one node per step."""
    from jarvis_graph.checkpoint_blobs import SPAN

    data, messages = grow(BlobSerializer(tmp_path), varied(), 200)
    fresh = BlobSerializer(tmp_path)
    nodes = fresh.parts.chain(head_of(fresh, data))
    assert len(nodes) <= SPAN + 200 // SPAN  # was 198: one per step
    asked: list[int] = []
    real = fresh.parts.messages
    monkeypatch.setattr(fresh.parts, "messages", lambda keys: asked.append(len(keys)) or real(keys))
    assert fresh.loads_typed(data) == checkpoint(*plain_copy(messages))
    assert sum(asked) < SPAN  # the plain nodes after the last span node only


def test_a_restored_list_keeps_growing_in_spans(tmp_path: Path) -> None:
    from jarvis_graph.checkpoint_blobs import SPAN

    data, messages = grow(BlobSerializer(tmp_path), varied(), 40)
    resumed = BlobSerializer(tmp_path)  # a new process
    state = resumed.loads_typed(data)
    data, messages = grow(resumed, state["channel_values"]["messages"], 60)
    fresh = BlobSerializer(tmp_path)
    assert len(fresh.parts.chain(head_of(fresh, data))) <= SPAN + 106 // SPAN
    assert fresh.loads_typed(data) == checkpoint(*plain_copy(messages))


def test_a_node_whose_rows_are_damaged_is_read_row_by_row(tmp_path: Path) -> None:
    data, messages = grow(BlobSerializer(tmp_path), varied(), 40)
    with sqlite3.connect(tmp_path / "parts.sqlite") as conn:
        damaged = conn.execute("UPDATE lists SET packed = x'9301' WHERE packed IS NOT NULL")
        assert damaged.rowcount >= 2
    assert BlobSerializer(tmp_path).loads_typed(data) == checkpoint(*plain_copy(messages))


def test_lists_of_an_earlier_version_are_read_and_then_extended_in_spans(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chain of one node per step without rows (a table without the column) is read row
    by row; the next checkpoint after a resume spans the whole old chain at once."""
    import jarvis_graph.checkpoint_blobs as blobs

    with monkeypatch.context() as patch:
        patch.setattr(blobs, "SPAN", 10**9)  # as an earlier version wrote: no span nodes
        data, messages = grow(BlobSerializer(tmp_path), varied(), 50)
    assert len(BlobSerializer(tmp_path).parts.chain(head_of(BlobSerializer(tmp_path), data))) == 50
    with sqlite3.connect(tmp_path / "parts.sqlite") as conn:
        conn.execute("ALTER TABLE lists DROP COLUMN packed")
    resumed = BlobSerializer(tmp_path)
    state = resumed.loads_typed(data)
    assert state == checkpoint(*plain_copy(messages))
    data, messages = grow(resumed, state["channel_values"]["messages"], 1)
    fresh = BlobSerializer(tmp_path)
    assert len(fresh.parts.chain(head_of(fresh, data))) == 2  # the first list, one span
    assert fresh.loads_typed(data) == checkpoint(*plain_copy(messages))


def test_a_message_of_an_unknown_kind_is_a_clear_error(tmp_path: Path) -> None:
    data, _ = grow(BlobSerializer(tmp_path), varied(), 20)
    with sqlite3.connect(tmp_path / "parts.sqlite") as conn:
        conn.execute("UPDATE lists SET packed = NULL")
        conn.execute("UPDATE messages SET kind = 'lc:convert_to_messages'")
    with pytest.raises(MissingBlobError, match="unknown kind 'lc:convert_to_messages'"):
        BlobSerializer(tmp_path).loads_typed(data)


def test_the_strict_serializer_reads_back_every_type_jarvis_writes() -> None:
    """What a run stores (found by recording the graph suites' writes) comes back equal."""
    import datetime
    import uuid

    from langgraph.types import Command, Interrupt, Send

    from jarvis_graph.checkpoint_serde import checkpoint_serializer

    serde = checkpoint_serializer()
    messages = [
        SystemMessage("rules", id="s"),
        HumanMessage("task", id="h"),
        AIMessage("", id="a", tool_calls=[{"name": "f", "args": {"x": 1}, "id": "c"}]),
        ToolMessage("ok", tool_call_id="c", id="t", artifact={"lines": [1, 2]}),
    ]
    values: list[Any] = [
        messages,
        [RemoveMessage(id="x")],
        Send("step", {"task": "t"}),
        Interrupt(value={"type": "ask_user", "question": "?"}, id="i"),
        Command(resume="yes"),
        datetime.datetime(2026, 11, 28, 10, 0, tzinfo=datetime.UTC),
        uuid.UUID(int=7),
        {"status": "completed", "step_results": {"a": {"id": "a", "depth": 1}}},
    ]
    for value in values:
        back = serde.loads_typed(serde.dumps_typed(value))
        assert type(back) is type(value)
        if isinstance(value, Command):  # its tuples come back as lists, as msgpack has no tuple
            assert back.resume == value.resume
        else:
            assert back == value


def test_the_strict_serializer_refuses_other_types_and_kinds(tmp_path: Path) -> None:
    import pickle

    import ormsgpack

    from jarvis_graph.checkpoint_serde import ForbiddenValueError, checkpoint_serializer

    marker = tmp_path / "marker"
    planted = ormsgpack.Ext(0, ormsgpack.packb(["os", "system", f"touch {marker}"]))
    serde = checkpoint_serializer()
    with pytest.raises(ForbiddenValueError, match=r"names os\.system"):
        serde.loads_typed(("msgpack", ormsgpack.packb({"task": planted})))
    with pytest.raises(ForbiddenValueError, match="'pickle'"):
        serde.loads_typed(("pickle", pickle.dumps("text")))
    # the compact serializer around it says what to do about the store
    blobs = BlobSerializer(tmp_path / "blobs")
    with pytest.raises(ForbiddenValueError, match="jarvis sessions delete"):
        blobs.loads_typed(("msgpack", ormsgpack.packb({"task": planted})))
    blobs.close()
    assert not marker.exists()
