"""Organizer: find groups of overlapping long-term memories and merge each into one.

Plain functions over records; the model is any ``complete(prompt) -> text`` function
(the CLI passes the ``cheap`` model). A group joins memories of one type that share at
least ``min_overlap`` tags or whose contents are near duplicates (cosine >= threshold).
A merge writes the merged record first and deletes the originals after, so an
interrupted run leaves a duplicate, never a loss; a merged text that leaves out an
original's facts (:func:`left_out`) is not written, and the originals stay.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import yaml

from jarvis_graph.memory.records import MemoryInputError, clean_tags, new_record
from jarvis_graph.untrusted import load_yaml

DUPLICATE_THRESHOLD = 0.9

MERGE_PROMPT = """\
Merge these {count} memories into one memory that keeps every distinct fact, drops
repetition and resolves contradictions in favour of the most recently updated one.

{memories}

Answer with YAML inside <merged_memory> tags, nothing else:
<merged_memory>
content: |
  the merged text
tags: [tag1, tag2]
</merged_memory>
"""


@dataclass
class MergeResult:
    """The outcome of one group's merge."""

    group: list[dict[str, Any]]
    merged: dict[str, Any] | None = None
    error: str | None = None


@dataclass
class OrganizeReport:
    """Groups found, and (unless a dry run) what was merged."""

    groups: list[list[dict[str, Any]]] = field(default_factory=list)
    results: list[MergeResult] = field(default_factory=list)


def find_groups(
    records: Sequence[dict[str, Any]],
    vectors: np.ndarray | None = None,
    min_overlap: int = 2,
    threshold: float = DUPLICATE_THRESHOLD,
) -> list[list[dict[str, Any]]]:
    """Groups of two or more records of the same type linked by tags or by similarity.

    Args:
        records: Memory records.
        vectors: One unit-length vector per record (``None``: tags only).
        min_overlap: Shared tags that link two records.
        threshold: Cosine similarity from which two records are near duplicates.
    """
    if min_overlap < 1:
        msg = f"min_overlap must be at least 1, got {min_overlap}"
        raise MemoryInputError(msg)
    parent = list(range(len(records)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    sims = vectors @ vectors.T if vectors is not None and len(records) else None
    for i in range(len(records)):
        for j in range(i + 1, len(records)):
            if records[i]["type"] != records[j]["type"]:
                continue
            shared = len(set(records[i]["tags"]) & set(records[j]["tags"]))
            if shared >= min_overlap or (sims is not None and sims[i, j] >= threshold):
                parent[root(j)] = root(i)
    groups: dict[int, list[dict[str, Any]]] = {}
    for i, rec in enumerate(records):
        groups.setdefault(root(i), []).append(rec)
    return [g for g in groups.values() if len(g) > 1]


def merge_prompt(group: Sequence[dict[str, Any]]) -> str:
    """The prompt asking the model to merge ``group``."""
    items = "\n\n".join(
        f"Memory {n} (id {r['id']}, updated {r.get('updated_at', '?')}, tags: "
        f"{', '.join(r['tags']) or '-'}):\n{r['content']}"
        for n, r in enumerate(group, 1)
    )
    return MERGE_PROMPT.format(count=len(group), memories=items)


def parse_merged(text: str) -> tuple[str, list[str]]:
    """Content and tags from a ``<merged_memory>`` YAML answer.

    Raises:
        MemoryInputError: No block, invalid YAML, or no content.
    """
    match = re.search(r"<merged_memory>(.*?)</merged_memory>", text, re.DOTALL)
    if match is None:
        msg = "the answer has no <merged_memory>...</merged_memory> block"
        raise MemoryInputError(msg)
    try:
        data = load_yaml(match.group(1))  # a model's reply: its aliases are bounded too
    except yaml.YAMLError as exc:
        msg = f"the <merged_memory> block is not valid YAML: {exc}"
        raise MemoryInputError(msg) from exc
    if not isinstance(data, dict) or not str(data.get("content") or "").strip():
        msg = "the <merged_memory> block has no 'content'"
        raise MemoryInputError(msg)
    return str(data["content"]).strip(), clean_tags(data.get("tags") or [])


_TOKEN = re.compile(r"\w(?:[\w./:@-]*\w)?")
_SPECIFIC = re.compile(r"[\d_./:@]|\w[A-Z]")
"""A token that names something exactly: a number, a path, a version, an identifier."""
_COMMON = frozenset(
    "about after also been before being from have into just like more most must need only "
    "over same should some such than that their them then there these they this those "
    "under used uses using very were what when where which while will with would your".split()
)
WORD_COVERAGE = 0.5
"""Share of an original's ordinary words (by stem) a merge must keep, besides every
specific token: a paraphrase passes, a memory dropped from the merge does not."""


def left_out(original: str, merged: str) -> str:
    """What of ``original`` the ``merged`` text does not keep (``""``: it keeps it all).

    A memory's facts live in its exact tokens (``8080``, ``deploy.sh``, ``db2.internal``,
    ``FooClient``): each must appear in the merged text. Its other words may be
    paraphrased, but at least :data:`WORD_COVERAGE` of their 6-letter stems must remain;
    a merge that drops a memory keeps few of them.
    """
    kept = {t.lower() for t in _TOKEN.findall(merged)}
    specific = [t for t in dict.fromkeys(_TOKEN.findall(original)) if _SPECIFIC.search(t)]
    missing = [t for t in specific if t.lower() not in kept]
    if missing:
        return ", ".join(repr(t) for t in missing[:5])
    stems_kept = {t[:6] for t in kept}
    words = {
        w[:6]
        for w in (t.lower() for t in _TOKEN.findall(original) if not _SPECIFIC.search(t))
        if len(w) >= 4 and w not in _COMMON
    }
    if words and len(words & stems_kept) < WORD_COVERAGE * len(words):
        return f"most of its words ({', '.join(sorted(words - stems_kept)[:5])})"
    return ""


def merge_group(group: Sequence[dict[str, Any]], complete: Callable[[str], str]) -> MergeResult:
    """Ask the model to merge ``group``; the merged record keeps the ids it replaces."""
    try:
        content, tags = parse_merged(complete(merge_prompt(group)))
    except MemoryInputError as exc:
        return MergeResult(list(group), error=str(exc))
    for record in group:  # the originals are deleted after: none may lose a fact
        lost = left_out(record["content"], content)
        if lost:
            msg = (
                f"the merged text leaves out {lost} of {record['id']}; nothing was changed "
                "(merge again, or edit the memories by hand)"
            )
            return MergeResult(list(group), error=msg)
    if not tags:  # the model dropped them: keep the union
        tags = clean_tags([t for r in group for t in r["tags"]])
    merged = new_record(group[0]["type"], tags, content, merged_from=[r["id"] for r in group])
    return MergeResult(list(group), merged=merged)


def organize(
    records: Sequence[dict[str, Any]],
    vectors: np.ndarray | None,
    complete: Callable[[str], str] | None,
    save: Callable[[list[dict[str, Any]]], None],
    delete: Callable[[list[dict[str, Any]]], None],
    min_overlap: int = 2,
    threshold: float = DUPLICATE_THRESHOLD,
) -> OrganizeReport:
    """Find groups and, when ``complete`` is given, merge each (dry run when it is not)."""
    report = OrganizeReport(groups=find_groups(records, vectors, min_overlap, threshold))
    if complete is None:
        return report
    for group in report.groups:
        result = merge_group(group, complete)
        if result.merged is not None:
            save([result.merged])  # first the merged record, then the originals go
            delete(group)
        report.results.append(result)
    return report
