"""The project's document knowledge: passages of indexed documents in the memory store.

``jarvis docs add`` (and ``ask_document`` on a document not indexed yet or changed since)
extracts a document whole (:mod:`jarvis_graph.documents.extract`), cuts it into passages
with their anchors and stores them in the project store under ``("documents", <key>)``,
embedded with the project's embedder; ``("documents_index",)`` keeps, per document, its
path, content hash, kind and passage count. The same content is not indexed twice (the
hash is compared), a changed file is indexed again, and a failure before the passages are
written leaves the index as it was. A new version's passages are written beside the old
one's and the index entry is switched after (searches see only the passages of the version
their entry names), so a re-index killed half way leaves the earlier version searchable.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langgraph.store.base import BaseStore, PutOp

from jarvis_graph.documents.extract import (
    Limits,
    Passage,
    Progress,
    extract,
    kind_of,
    passages,
    read_document_bytes,
)
from jarvis_graph.memory.records import now_iso
from jarvis_graph.memory.router import project_store

INDEX = ("documents_index",)
SEARCH_LIMIT = 50
EMBED_BATCH = 32
"""Passages stored (and embedded) together: the embedder works on a batch at once."""


@dataclass(frozen=True)
class Found:
    """A retrieved passage: where it is and how close it is to the question."""

    path: str
    anchor: str
    heading: str
    text: str
    score: float


def _key(rel: str) -> str:
    return hashlib.sha256(rel.encode()).hexdigest()[:16]


def _passage(part: Passage, rel: str, sha: str) -> dict[str, Any]:
    """The stored value of a passage (``content`` is what is embedded)."""
    return {
        "content": f"{part.heading}\n{part.text}" if part.heading else part.text,
        "path": rel,
        "anchor": part.anchor,
        "heading": part.heading,
        "text": part.text,
        "sha": sha,
    }


class DocumentIndex:
    """The indexed documents of one workspace."""

    def __init__(self, workspace: Path, store: BaseStore | None = None) -> None:
        self.workspace = workspace.resolve()
        self.store = project_store(self.workspace, store)

    def relative(self, path: Path) -> str:
        """How a document is named in the index: relative to the workspace when inside."""
        full = path.resolve()
        return (
            str(full.relative_to(self.workspace))
            if full.is_relative_to(self.workspace)
            else str(full)
        )

    def entries(self) -> list[dict[str, Any]]:
        """The indexed documents, by path."""
        items = self.store.search(INDEX, limit=100_000)
        return sorted((dict(i.value) for i in items), key=lambda e: e["path"])

    def entry(self, path: Path) -> dict[str, Any] | None:
        """The index entry of ``path`` (``None``: not indexed)."""
        item = self.store.get(INDEX, _key(self.relative(path)))
        return dict(item.value) if item is not None else None

    def add(
        self,
        path: Path,
        limits: Limits | None = None,
        progress: Progress | None = None,
        embedding: Progress | None = None,
    ) -> tuple[dict[str, Any], bool]:
        """Index ``path`` (again, if its content changed); its entry and whether it was.

        ``progress`` hears of the pages (or rows) read, ``embedding`` of the passages stored.

        Raises:
            DocumentError: The document cannot be read (nothing is changed).
        """
        limits = limits or Limits()
        kind_of(path)  # an unknown type is refused before the file is read
        # a link (in a cloned repository, say) may not lead out of the workspace
        data = read_document_bytes(path, limits, within=self.workspace)
        rel = self.relative(path)
        sha = hashlib.sha256(data).hexdigest()
        entry = self.entry(path)
        if entry is not None and entry.get("sha") == sha:
            return entry, False
        document = extract(path, limits, progress, data)  # whole, before any write
        parts = passages(document)
        key = _key(rel)
        namespace = ("documents", key)
        puts = [
            PutOp(namespace, f"{sha[:16]}-p{number:05d}", _passage(part, rel, sha))
            for number, part in enumerate(parts)
        ]
        # beside the earlier version's passages, which stay until the entry below; in
        # batches, which the store embeds together, saying how far it is between them
        for start in range(0, len(puts), EMBED_BATCH):
            self.store.batch(puts[start : start + EMBED_BATCH])
            if embedding is not None:
                embedding(min(start + EMBED_BATCH, len(puts)), len(puts))
        entry = {
            "path": rel,
            "sha": sha,
            "kind": document.kind,
            "passages": len(parts),
            "note": document.note,
            "indexed_at": now_iso(),
        }
        self.store.put(INDEX, key, entry)  # the switch: searches now see this version only
        self._drop_stale(namespace, sha)
        return entry, True

    def _drop_stale(self, namespace: tuple[str, ...], sha: str) -> None:
        """Delete the passages of other versions than ``sha`` (left by an earlier index)."""
        for item in self.store.search(namespace, limit=100_000):
            if item.value.get("sha") != sha:
                self.store.delete(namespace, item.key)

    def remove(self, path: Path | str) -> bool:
        """Forget a document; whether it was indexed."""
        rel = path if isinstance(path, str) else self.relative(path)
        key = _key(rel)
        namespace = ("documents", key)
        for item in self.store.search(namespace, limit=100_000):
            self.store.delete(namespace, item.key)
        existed = self.store.get(INDEX, key) is not None
        self.store.delete(INDEX, key)
        return existed

    def search(self, question: str, paths: list[str] | None = None, limit: int = 5) -> list[Found]:
        """The passages closest to ``question`` (of ``paths`` only, when given), best first."""
        namespaces = [("documents", _key(p)) for p in paths] if paths else [("documents",)]
        # a passage counts when it is of the version its index entry names: a re-index cut
        # short leaves the new version's passages beside the old, unseen
        current = {e["path"]: e.get("sha") for e in self.entries()}
        found = []
        for namespace in namespaces:
            for item in self.store.search(namespace, query=question, limit=SEARCH_LIMIT):
                value = item.value
                if current.get(value["path"]) != value.get("sha"):
                    continue
                found.append(
                    Found(value["path"], value["anchor"], value.get("heading", ""),
                          value.get("text", ""), float(item.score or 0.0))
                )  # fmt: skip
        found.sort(key=lambda f: -f.score)
        return found[:limit]


def index_with_progress(
    index: DocumentIndex, path: Path, limits: Limits, show: Callable[[str], None]
) -> tuple[dict[str, Any], bool]:
    """:meth:`DocumentIndex.add` that reports reading, then embedding, every tenth of the way.

    ``path: 30/300`` for the pages (or rows) read, ``path: embedded 120/1200 passages`` for
    the passages embedded and stored: a long document spends most of its time there.
    """

    def every_tenth(what: str) -> Progress:
        shown = [-1]

        def progress(done: int, total: int) -> None:
            tenth = 10 * done // max(total, 1)
            if total >= 20 and tenth != shown[0]:
                shown[0] = tenth
                show(f"{path.name}: {what.format(done=done, total=total)}")

        return progress

    reading, embedding = (
        every_tenth("{done}/{total}"),
        every_tenth("embedded {done}/{total} passages"),
    )
    return index.add(path, limits, reading, embedding)
