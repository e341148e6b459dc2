"""NamespaceIndex: compressed codes with exact ranking, their files, and background builds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from langgraph.store.base import PutOp

from jarvis_graph.memory.store import FaissStore
from jarvis_graph.memory.vector_index import NamespaceIndex, normalise, train_codes

DIMS = 64


def gaussian(count: int, seed: int) -> np.ndarray:
    return normalise(np.random.default_rng(seed).standard_normal((count, DIMS)))


def with_codes(vectors: np.ndarray) -> NamespaceIndex:
    ids = np.arange(len(vectors), dtype=np.int64) * 3 + 1  # ids are not positions
    index = NamespaceIndex.build(DIMS, ids, vectors, stamp=1)
    index.attach(train_codes(vectors, ids), len(ids))
    return index


def exact_top(vectors: np.ndarray, query: np.ndarray, k: int) -> list[int]:
    return [int(i) * 3 + 1 for i in np.argsort(-(vectors @ query))[:k]]


def test_codes_keep_recall_on_vectors_without_structure() -> None:
    vectors, queries = gaussian(4_000, 1), gaussian(50, 2)
    index = with_codes(vectors)
    assert index.approximate
    found = 0
    for q in queries:
        hits = index.search(q, 5)
        found += len({i for _, i in hits} & set(exact_top(vectors, q, 5)))
        scores = [s for s, _ in hits]
        assert scores == sorted(scores, reverse=True)
        # exact scores, not code estimates
        assert scores[0] == pytest.approx(float((vectors @ q).max()), abs=1e-6)
    assert found / (5 * len(queries)) >= 0.95


def test_changes_made_while_codes_were_trained_are_applied_on_attach() -> None:
    vectors = gaussian(1_000, 3)
    ids = np.arange(1_000, dtype=np.int64)
    index = NamespaceIndex.build(DIMS, ids, vectors, stamp=1)
    codes = train_codes(vectors, ids)  # on a snapshot; then the namespace changes
    index.remove(np.array([5, 6], dtype=np.int64))
    extra = gaussian(1, 4)
    index.add(np.array([5_000], dtype=np.int64), extra)
    index.attach(codes, 1_000)
    assert index.codes.ntotal == index.size == 999
    assert index.search(extra[0], 1)[0][1] == 5_000
    assert {i for _, i in index.search(vectors[5], 300)}.isdisjoint({5, 6})


def test_files_round_trip_and_damaged_or_old_files_are_refused(tmp_path: Path) -> None:
    vectors = gaussian(600, 5)
    index = with_codes(vectors)
    path = tmp_path / "ns.faiss"
    index.save(path)
    again = NamespaceIndex.load(path, DIMS)
    assert again is not None and again.approximate and again.stamp == 1
    assert again.search(vectors[10], 3) == index.search(vectors[10], 3)
    assert NamespaceIndex.load(path, DIMS + 1) is None
    whole = path.read_bytes()
    path.write_bytes(whole[: len(whole) // 2])
    assert NamespaceIndex.load(path, DIMS) is None
    path.write_bytes(b"JGFAISS1" + whole[8:])  # the IVF format of earlier versions
    assert NamespaceIndex.load(path, DIMS) is None


def test_large_namespace_answers_before_its_codes_exist_and_reopens_with_them(
    tmp_path: Path,
) -> None:
    vectors = gaussian(3_000, 6)

    def embed(texts: list[str]) -> list[list[float]]:
        return [vectors[int(t)].tolist() for t in texts]

    config = {"dims": DIMS, "embed": embed, "fields": ["text"]}
    with FaissStore(tmp_path, index=config, approx_threshold=1_000) as store:  # type: ignore[arg-type]
        store.batch([PutOp(("ns",), f"k{n}", {"text": str(n)}) for n in range(3_000)])
        first = store.search(("ns",), query="42", limit=1)  # exact until the codes are built
        assert first[0].key == "k42"
        index = store.index_for(("ns",))  # waits for the background build
        assert index.approximate and index.size == 3_000
    assert len(list((tmp_path / "indexes").glob("*.faiss"))) == 1
    with FaissStore(tmp_path, index=config, approx_threshold=1_000) as store:  # type: ignore[arg-type]
        assert store.search(("ns",), query="7", limit=1)[0].key == "k7"
        assert store.index_for(("ns",)).approximate  # loaded from the file, not retrained
