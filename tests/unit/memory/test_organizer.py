"""Organizer engine: grouping by tags and by vectors, merge parsing, merge order."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from jarvis_graph.memory.organizer import (
    find_groups,
    merge_prompt,
    organize,
    parse_merged,
)
from jarvis_graph.memory.records import MemoryInputError, new_record

MERGED = """Here you are:
<merged_memory>
content: |
  Deploy with ./deploy.sh --prod; run the tests first.
tags: [deploy, Testing]
</merged_memory>"""


def rec(tags: list[str], content: str = "x", kind: str = "project_long_term") -> dict[str, Any]:
    return new_record(kind, tags, content)


def ids(groups: list[list[dict[str, Any]]]) -> list[list[str]]:
    return [[r["id"] for r in g] for g in groups]


def test_groups_need_min_overlap_shared_tags_and_the_same_type() -> None:
    a, b = rec(["deploy", "ops"]), rec(["deploy", "ops", "ci"])
    c = rec(["ci"])
    d = rec(["deploy", "ops"], kind="global_long_term")
    e = rec(["deploy"])
    assert ids(find_groups([a, b, c, d, e])) == [[a["id"], b["id"]]]
    loose = find_groups([a, b, c, d, e], min_overlap=1)
    assert ids(loose) == [[a["id"], b["id"], c["id"], e["id"]]]  # linked through b and a


def test_near_duplicate_vectors_join_a_group() -> None:
    a, b, c = rec(["one"]), rec(["two"]), rec(["three"])
    v = np.array([[1.0, 0.0], [0.95, np.sqrt(1 - 0.95**2)], [0.0, 1.0]])
    assert ids(find_groups([a, b, c], v, threshold=0.9)) == [[a["id"], b["id"]]]
    assert find_groups([a, b, c], v, threshold=0.99) == []


def test_min_overlap_must_be_positive() -> None:
    with pytest.raises(MemoryInputError, match="at least 1"):
        find_groups([], min_overlap=0)


def test_parse_merged_block() -> None:
    content, tags = parse_merged(MERGED)
    assert content == "Deploy with ./deploy.sh --prod; run the tests first."
    assert tags == ["deploy", "testing"]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("no block here", "no <merged_memory>"),
        ("<merged_memory>content: [unclosed</merged_memory>", "not valid YAML"),
        ("<merged_memory>tags: [a]</merged_memory>", "no 'content'"),
    ],
)
def test_parse_merged_rejects_bad_answers(text: str, problem: str) -> None:
    with pytest.raises(MemoryInputError, match=problem):
        parse_merged(text)


def test_prompt_shows_every_memory() -> None:
    group = [rec(["a", "b"], "first fact"), rec(["a", "b"], "second fact")]
    prompt = merge_prompt(group)
    assert "first fact" in prompt and "second fact" in prompt and "<merged_memory>" in prompt


def test_dry_run_changes_nothing() -> None:
    calls: list[str] = []
    records = [rec(["a", "b"]), rec(["a", "b"])]
    report = organize(
        records, None, None, lambda r: calls.append("save"), lambda g: calls.append("delete")
    )
    assert len(report.groups) == 1 and report.results == [] and calls == []


def test_merge_writes_the_new_record_before_deleting_the_old_ones() -> None:
    calls: list[tuple[str, list[str]]] = []
    records = [rec(["deploy", "ops"], "one"), rec(["deploy", "ops"], "two"), rec(["other"])]
    report = organize(
        records,
        None,
        lambda prompt: MERGED,
        lambda recs: calls.append(("save", [r["id"] for r in recs])),
        lambda group: calls.append(("delete", [r["id"] for r in group])),
    )
    (result,) = report.results
    merged = result.merged
    assert merged is not None
    assert merged["merged_from"] == [records[0]["id"], records[1]["id"]]
    assert merged["type"] == "project_long_term" and merged["tags"] == ["deploy", "testing"]
    assert calls == [("save", [merged["id"]]), ("delete", merged["merged_from"])]


def test_a_bad_answer_merges_nothing() -> None:
    calls: list[str] = []
    records = [rec(["a", "b"]), rec(["a", "b"])]
    report = organize(
        records,
        None,
        lambda p: "sorry",
        lambda r: calls.append("save"),
        lambda g: calls.append("delete"),
    )
    assert report.results[0].merged is None and "no <merged_memory>" in (
        report.results[0].error or ""
    )
    assert calls == []
