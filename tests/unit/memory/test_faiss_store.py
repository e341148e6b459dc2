"""FaissStore beyond the shared semantics: persistence, index files, IVF, processes."""

from __future__ import annotations

import multiprocessing
import shutil
from pathlib import Path

import numpy as np
import pytest
from langgraph.store.base import PutOp
from langgraph.store.memory import InMemoryStore

from jarvis_graph.memory.store import FaissStore
from tests.unit.memory.conftest import DIMS, hashing_index

WORDS = "vim editor python rust sqlite log tests async memory tags lock index file disk".split()


def sentence(n: int) -> str:
    rng = np.random.default_rng(n)
    return " ".join(rng.choice(WORDS, size=5, replace=False)) + f" item{n}"


def fill(store: FaissStore, count: int, start: int = 0) -> None:
    store.batch(
        [
            PutOp(("docs",), f"k{n}", {"text": sentence(n), "n": n})
            for n in range(start, start + count)
        ]
    )


def test_data_and_order_survive_reopening(tmp_path: Path) -> None:
    with FaissStore(tmp_path, index=hashing_index()) as store:
        fill(store, 30)
        store.delete(("docs",), "k3")
        before = [(i.key, i.value) for i in store.search(("docs",), limit=100)]
        ranked = [(i.key, i.score) for i in store.search(("docs",), query=sentence(7), limit=5)]

    with FaissStore(tmp_path, index=hashing_index()) as again:
        assert [(i.key, i.value) for i in again.search(("docs",), limit=100)] == before
        assert [
            (i.key, i.score) for i in again.search(("docs",), query=sentence(7), limit=5)
        ] == ranked
        assert again.get(("docs",), "k3") is None


def index_files(folder: Path) -> list[Path]:
    return sorted((folder / "indexes").glob("*.faiss"))


def test_stale_missing_or_damaged_index_files_are_repaired(tmp_path: Path) -> None:
    with FaissStore(tmp_path, index=hashing_index()) as store:
        fill(store, 40)
        store.search(("docs",), query="vim", limit=1)  # builds the index
    (saved,) = index_files(tmp_path)
    stale = saved.read_bytes()

    with FaissStore(tmp_path, index=hashing_index()) as store:  # more writes after the file
        fill(store, 20, start=40)
        store.delete(("docs",), "k0")
    saved.write_bytes(stale)  # as if the process died before writing the index again
    with FaissStore(tmp_path, index=hashing_index()) as store:
        hits = store.search(("docs",), query=sentence(55), limit=1)
        assert [h.key for h in hits] == ["k55"]
        assert "k0" not in [h.key for h in store.search(("docs",), query=sentence(0), limit=60)]

    saved.write_bytes(b"JGFAISS1 not an index at all")
    with FaissStore(tmp_path, index=hashing_index()) as store:
        assert [h.key for h in store.search(("docs",), query=sentence(12), limit=1)] == ["k12"]

    saved.unlink()
    with FaissStore(tmp_path, index=hashing_index()) as store:
        assert [h.key for h in store.search(("docs",), query=sentence(33), limit=1)] == ["k33"]


def test_approximate_index_above_the_threshold(tmp_path: Path) -> None:
    with FaissStore(tmp_path, index=hashing_index(), approx_threshold=300) as store:
        fill(store, 200)
        store.search(("docs",), query="vim", limit=1)
        assert not store.index_for(("docs",)).approximate
        fill(store, 400, start=200)
        for n in (0, 250, 599):
            assert store.search(("docs",), query=sentence(n), limit=1)[0].key == f"k{n}"
        index = store.index_for(("docs",))
        assert index.approximate and index.size == 600
        store.delete(("docs",), "k250")
        store.put(("docs",), "k251", {"text": "completely new words here"})
        assert index.size == 599
        keys = [h.key for h in store.search(("docs",), query=sentence(250), limit=20)]
        assert "k250" not in keys
        assert store.search(("docs",), query="completely new words here", limit=1)[0].key == "k251"
    with FaissStore(tmp_path, index=hashing_index(), approx_threshold=300) as store:
        assert store.search(("docs",), query=sentence(400), limit=1)[0].key == "k400"
        assert store.index_for(("docs",)).approximate


def test_approximate_scores_agree_with_exact_search(tmp_path: Path) -> None:
    reference = InMemoryStore(index=hashing_index())
    with FaissStore(tmp_path, index=hashing_index(), approx_threshold=100) as store:
        ops = [PutOp(("docs",), f"k{n}", {"text": sentence(n)}) for n in range(500)]
        store.batch(ops)
        reference.batch(ops)
        for n in range(0, 500, 50):
            ours = store.search(("docs",), query=sentence(n), limit=3)
            exact = reference.search(("docs",), query=sentence(n), limit=3)
            assert ours[0].key == exact[0].key == f"k{n}"
            assert ours[0].score == pytest.approx(exact[0].score, abs=1e-5)


def test_a_query_asking_for_thousands_of_results(tmp_path: Path) -> None:
    with FaissStore(tmp_path, index=hashing_index()) as store:
        fill(store, 2500)
        hits = store.search(("docs",), query=sentence(3), limit=5000)
        assert len(hits) == 2500 and hits[0].key == "k3"
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_two_store_objects_see_each_others_writes(tmp_path: Path) -> None:
    with (
        FaissStore(tmp_path, index=hashing_index()) as a,
        FaissStore(tmp_path, index=hashing_index()) as b,
    ):
        fill(a, 10)
        assert b.search(("docs",), query=sentence(4), limit=1)[0].key == "k4"
        a.delete(("docs",), "k4")
        a.put(("docs",), "new", {"text": sentence(4)})
        hits = b.search(("docs",), query=sentence(4), limit=2)
        assert hits[0].key == "new" and "k4" not in [h.key for h in hits]


def test_reopening_with_other_dims_fails_clearly(tmp_path: Path) -> None:
    FaissStore(tmp_path, index=hashing_index()).close()
    with pytest.raises(ValueError, match=f"holds {DIMS}-dimensional vectors"):
        FaissStore(tmp_path, index={"dims": 32, "embed": lambda t: [[0.0] * 32 for _ in t]})


def test_embedder_with_wrong_dims_fails_clearly(tmp_path: Path) -> None:
    with FaissStore(
        tmp_path, index={"dims": 8, "embed": lambda t: [[1.0] * 4 for _ in t]}
    ) as store:
        with pytest.raises(ValueError, match="4-dimensional vector; the store expects 8"):
            store.put(("a",), "k", {"text": "x"})
        assert store.get(("a",), "k") is None  # nothing half-written


def test_value_that_is_not_json_fails_clearly(tmp_path: Path) -> None:
    with FaissStore(tmp_path) as store:
        with pytest.raises(ValueError, match="cannot be stored as JSON"):
            store.put(("a",), "k", {"when": object()})


def test_closed_store_refuses_work(tmp_path: Path) -> None:
    store = FaissStore(tmp_path)
    store.close()
    with pytest.raises(RuntimeError, match="is closed"):
        store.get(("a",), "k")


def _writer(folder: str, worker: int, count: int) -> None:
    with FaissStore(folder, index=hashing_index(), save_every=7) as store:
        for n in range(count):
            store.put(("shared",), f"w{worker}-{n}", {"text": f"worker {worker} note {n}"})


def test_processes_write_to_one_store(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), w, 40)) for w in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    assert (tmp_path / "store.lock").exists()
    with FaissStore(tmp_path, index=hashing_index()) as store:
        keys = {i.key for i in store.search(("shared",), limit=1000)}
        assert keys == {f"w{w}-{n}" for w in range(3) for n in range(40)}
        hit = store.search(("shared",), query="worker 2 note 17", limit=1)[0]
        assert hit.key == "w2-17"


def test_closing_a_store_whose_folder_was_deleted_creates_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "ws" / ".jarvis" / "memory"
    store = FaissStore(folder, index=hashing_index())
    fill(store, 5)
    store.search(("docs",), query=sentence(1), limit=2)  # an index is built, not yet written
    shutil.rmtree(tmp_path / "ws")
    store.close()
    assert not (tmp_path / "ws").exists()
