"""The three tiers, retrieval and the memory tools' plain functions (real MiniLM)."""

from __future__ import annotations

from pathlib import Path

import pytest

from jarvis_graph.config import jarvis_home
from jarvis_graph.memory.records import MemoryInputError, coerce_record, new_record
from jarvis_graph.memory.tiers import MemoryTiers, memory_prompt, project_memory_dir
from jarvis_graph.memory.tools import (
    clear_memory_impl,
    retrieve_memory_impl,
    save_memory_impl,
)
from jarvis_graph.tools.base import ToolInputError


@pytest.fixture
def tiers(workspace: Path) -> MemoryTiers:
    return MemoryTiers(workspace, thread_id="t1")


def save_examples(tiers: MemoryTiers) -> None:
    save_memory_impl(
        tiers,
        [
            {
                "memory_type": "project_long_term",
                "tags": ["deploy", "ops"],
                "content": "Deploy with ./deploy.sh --prod after the tests pass",
            },
            {
                "memory_type": "project_long_term",
                "tags": ["style"],
                "content": "The project formats code with ruff, line length 100",
            },
            {
                "memory_type": "global_long_term",
                "tags": ["editor"],
                "content": "My favourite editor is vim",
            },
            {
                "memory_type": "short_term",
                "tags": ["task"],
                "content": "The failing test is test_parse_dates",
            },
        ],
    )


def test_each_tier_is_stored_where_it_belongs(tiers: MemoryTiers, workspace: Path) -> None:
    save_examples(tiers)
    assert (project_memory_dir(workspace) / "store.sqlite").is_file()
    assert (jarvis_home() / "memory" / "global_long_term" / "store.sqlite").is_file()
    assert [r["content"] for r in tiers.records(["short_term"])] == [
        "The failing test is test_parse_dates"
    ]
    assert MemoryTiers(workspace, thread_id="t2").records(["short_term"]) == []
    assert len(tiers.records()) == 4


def test_records_keep_jarvis_fields(tiers: MemoryTiers) -> None:
    save_examples(tiers)
    rec = tiers.records(["global_long_term"])[0]
    assert set(rec) == {"id", "type", "tags", "content", "created_at", "updated_at", "merged_from"}
    assert (
        rec["type"] == "global_long_term" and rec["tags"] == ["editor"] and rec["merged_from"] == []
    )


def test_query_ranks_by_meaning_and_filters_by_type_and_tags(tiers: MemoryTiers) -> None:
    save_examples(tiers)
    hits = tiers.retrieve(query="preferred text editor", limit=2)
    assert hits[0].record["content"] == "My favourite editor is vim"
    assert hits[0].score is not None and hits[0].score > hits[1].score  # type: ignore[operator]

    project = tiers.retrieve(["project_long_term"], query="preferred text editor", limit=5)
    assert {h.record["type"] for h in project} == {"project_long_term"}

    tagged = tiers.retrieve(tags=["ops"], query="code formatting rules", limit=5)
    assert [h.record["tags"] for h in tagged] == [["deploy", "ops"]]

    newest = tiers.retrieve(["project_long_term"], limit=5)
    assert [h.score for h in newest] == [None, None]


def test_retrieve_tool_text(tiers: MemoryTiers) -> None:
    save_examples(tiers)
    text = retrieve_memory_impl(tiers, ["project_long_term"], [], "how do we ship to production", 1)
    assert text.startswith("1 memory:") and "deploy.sh --prod" in text
    assert "no memories found in short_term with tags ['x']" == retrieve_memory_impl(
        tiers, ["short_term"], ["x"], "", 5
    )


def test_clear_by_tags_and_by_ids(tiers: MemoryTiers) -> None:
    save_examples(tiers)
    out = clear_memory_impl(tiers, [], ["editor"], [])
    assert out.startswith("deleted 1 memories")
    assert tiers.records(["global_long_term"]) == []
    victim = tiers.records(["project_long_term"])[0]["id"]
    assert clear_memory_impl(tiers, ["project_long_term"], [], [victim]).endswith(victim)
    assert len(tiers.records(["project_long_term"])) == 1
    assert clear_memory_impl(tiers, [], ["nothing"], []) == "no memories matched; nothing deleted"
    with pytest.raises(ToolInputError, match="give tags or ids"):
        clear_memory_impl(tiers, ["project_long_term"], [], [])


def test_bad_memories_are_refused_with_a_reason(tiers: MemoryTiers) -> None:
    with pytest.raises(ToolInputError, match="unknown memory type 'forever'"):
        save_memory_impl(tiers, [{"memory_type": "forever", "tags": [], "content": "x"}])
    with pytest.raises(ToolInputError, match="content is empty"):
        save_memory_impl(tiers, [{"memory_type": "short_term", "tags": [], "content": "  "}])
    with pytest.raises(MemoryInputError, match="tags must be a list"):
        new_record("short_term", "just-a-string", "x")
    with pytest.raises(MemoryInputError, match="has no type"):
        coerce_record({"content": "x"})
    assert tiers.records() == []


def test_tags_are_normalised(tiers: MemoryTiers) -> None:
    rec = new_record("short_term", [" Deploy ", "deploy", "Two  Words"], "x")
    assert rec["tags"] == ["deploy", "two words"]


def test_memory_prompt_lists_known_tags(tiers: MemoryTiers, workspace: Path) -> None:
    assert "No memories are saved yet." in memory_prompt(workspace)
    assert not project_memory_dir(workspace).exists()  # reading created nothing
    save_examples(tiers)
    text = memory_prompt(workspace)
    assert "Known memory tags: " in text
    for tag in ("deploy", "ops", "style", "editor"):
        assert tag in text
    assert "task" not in text.split("Known memory tags:")[1]  # short-term tags stay out
