"""BlobSerializer: large message texts go to content-addressed files and come back intact."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from jarvis_graph.checkpoint_blobs import REF_PREFIX, BlobSerializer, MissingBlobError


def checkpoint(*messages: object) -> dict[str, object]:
    return {"v": 4, "channel_values": {"messages": list(messages), "task": "t"}}


def test_large_texts_are_stored_once_and_restored(tmp_path: Path) -> None:
    serde = BlobSerializer(tmp_path / "blobs", min_chars=100)
    big = "line of output\n" * 1000
    first = checkpoint(HumanMessage("short", id="h"), ToolMessage(big, tool_call_id="c", id="t"))
    kind, data = serde.dumps_typed(first)
    second = serde.dumps_typed(checkpoint(*first["channel_values"]["messages"], AIMessage("ok")))

    assert big.encode() not in data and len(data) < 1000
    assert len(list((tmp_path / "blobs").rglob("*.z"))) == 1  # stored once
    assert first["channel_values"]["messages"][1].content == big  # the live state is untouched
    fresh = BlobSerializer(tmp_path / "blobs", min_chars=100)  # no cache: read from the files
    back = fresh.loads_typed((kind, data))
    assert back == first
    assert fresh.loads_typed(second)["channel_values"]["messages"][1].content == big


def test_pending_writes_are_shrunk_too(tmp_path: Path) -> None:
    serde = BlobSerializer(tmp_path, min_chars=10)
    write = [ToolMessage("x" * 50, tool_call_id="c")]
    kind, data = serde.dumps_typed(write)
    assert b"x" * 50 not in data
    assert serde.loads_typed((kind, data)) == write


def test_a_text_that_looks_like_a_reference_survives(tmp_path: Path) -> None:
    serde = BlobSerializer(tmp_path, min_chars=10_000)
    tricky = HumanMessage(f"{REF_PREFIX}0123")
    assert BlobSerializer(tmp_path).loads_typed(serde.dumps_typed([tricky])) == [tricky]


def test_a_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    serde = BlobSerializer(tmp_path, min_chars=10)
    data = serde.dumps_typed([HumanMessage("y" * 20)])
    for path in tmp_path.rglob("*.z"):
        path.unlink()
    with pytest.raises(MissingBlobError, match="no longer exists"):
        BlobSerializer(tmp_path).loads_typed(data)
