"""One suite, two stores: FaissStore must behave as LangGraph's InMemoryStore.

Every test runs against both (``make_store`` is parametrized); the last test drives both
with the same random operations and compares every result.
"""

from __future__ import annotations

import asyncio
import math
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.store.base import (
    GetOp,
    InvalidNamespaceError,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)
from langgraph.store.memory import InMemoryStore

from jarvis_graph.memory.embedder import HashingEmbedder
from jarvis_graph.memory.store import FaissStore
from tests.unit.memory.conftest import DIMS, StoreFactory, hashing_index


def keys(items: list[Any]) -> list[str]:
    return [i.key for i in items]


def cosine(a: str, b: str) -> float:
    emb = HashingEmbedder(DIMS)
    x, y = np.array(emb.embed_query(a)), np.array(emb.embed_query(b))
    return float(x @ y / (np.linalg.norm(x) * np.linalg.norm(y)))


# --- get / put / delete ----------------------------------------------------------------------


def test_put_then_get_returns_the_item(make_store: StoreFactory) -> None:
    store = make_store()
    store.put(("users", "u1"), "prefs", {"theme": "dark", "n": 3, "nested": {"a": [1, 2]}})

    item = store.get(("users", "u1"), "prefs")

    assert item is not None
    assert item.namespace == ("users", "u1") and item.key == "prefs"
    assert item.value == {"theme": "dark", "n": 3, "nested": {"a": [1, 2]}}
    assert isinstance(item.created_at, datetime) and item.created_at.tzinfo is not None
    assert item.updated_at >= item.created_at


def test_get_of_missing_key_or_namespace_is_none(make_store: StoreFactory) -> None:
    store = make_store()
    store.put(("a",), "k", {"x": 1})
    assert store.get(("a",), "other") is None
    assert store.get(("b",), "k") is None


def test_put_replaces_the_value_and_moves_updated_at(make_store: StoreFactory) -> None:
    store = make_store()
    store.put(("a",), "k", {"x": 1})
    first = store.get(("a",), "k")
    store.put(("a",), "k", {"y": 2})
    second = store.get(("a",), "k")
    assert first is not None and second is not None
    assert second.value == {"y": 2}
    assert second.updated_at >= first.updated_at


def test_delete_removes_and_ignores_missing(make_store: StoreFactory) -> None:
    store = make_store()
    store.put(("a",), "k", {"x": 1})
    store.delete(("a",), "k")
    store.delete(("a",), "never-there")
    assert store.get(("a",), "k") is None
    assert store.search(("a",)) == []


@pytest.mark.parametrize("namespace", [(), ("langgraph",), ("a.b",), ("",), ("a", "")], ids=repr)
def test_invalid_namespaces_are_rejected(make_store: StoreFactory, namespace: Any) -> None:
    store = make_store()
    with pytest.raises(InvalidNamespaceError):
        store.put(namespace, "k", {"x": 1})


# --- search without a query ------------------------------------------------------------------


def test_search_lists_in_insertion_order_grouped_by_namespace(make_store: StoreFactory) -> None:
    store = make_store()
    store.put(("docs", "b"), "1", {"n": 1})
    store.put(("docs", "a"), "2", {"n": 2})
    store.put(("docs", "b"), "3", {"n": 3})
    store.put(("docs", "a"), "4", {"n": 4})
    store.put(("docs", "b"), "1", {"n": 10})  # an update keeps its place

    assert keys(store.search(("docs",))) == ["1", "3", "2", "4"]
    assert [i.value["n"] for i in store.search(("docs", "b"))] == [10, 3]
    assert all(i.score is None for i in store.search(("docs",)))


def test_search_prefix_is_by_label_not_by_text(make_store: StoreFactory) -> None:
    store = make_store()
    store.put(("a",), "1", {})
    store.put(("a", "b"), "2", {})
    store.put(("ab",), "3", {})
    assert sorted(keys(store.search(("a",)))) == ["1", "2"]
    assert sorted(keys(store.search(()))) == ["1", "2", "3"]


def test_search_limit_and_offset(make_store: StoreFactory) -> None:
    store = make_store()
    for n in range(10):
        store.put(("p",), f"k{n}", {"n": n})
    assert keys(store.search(("p",), limit=3)) == ["k0", "k1", "k2"]
    assert keys(store.search(("p",), limit=3, offset=8)) == ["k8", "k9"]
    assert store.search(("p",), offset=20) == []


@pytest.mark.parametrize(
    ("flt", "expected"),
    [
        ({"color": "red"}, ["1", "3"]),
        ({"color": "red", "size": 2}, ["3"]),
        ({"size": {"$gt": 1}}, ["2", "3", "4"]),
        ({"size": {"$gte": 1, "$lt": 3}}, ["1", "2", "3"]),
        ({"size": {"$lte": 1}}, ["1"]),
        ({"color": {"$ne": "red"}}, ["2", "4"]),
        ({"color": {"$eq": "blue"}}, ["2"]),
        ({"meta": {"lang": "en"}}, ["1", "2"]),
        ({"tags": ["x", "y"]}, ["1"]),
        ({"tags": ["x"]}, ["2"]),
        ({"missing": None}, ["1", "2", "3", "4"]),
    ],
    ids=repr,
)
def test_search_filters(make_store: StoreFactory, flt: dict[str, Any], expected: list[str]) -> None:
    store = make_store()
    store.put(("f",), "1", {"color": "red", "size": 1, "meta": {"lang": "en"}, "tags": ["x", "y"]})
    store.put(
        ("f",), "2", {"color": "blue", "size": 2, "meta": {"lang": "en", "v": 1}, "tags": ["x"]}
    )
    store.put(("f",), "3", {"color": "red", "size": 2, "meta": {"lang": "fr"}})
    store.put(("f",), "4", {"size": 5})
    got = keys(store.search(("f",), filter=flt))
    assert got == expected


# --- semantic search -------------------------------------------------------------------------

DOCS = {
    "py": "python unit tests with pytest fixtures",
    "rs": "rust borrow checker lifetimes",
    "js": "javascript promises and async functions",
    "db": "sqlite database write ahead log",
    "vim": "my favourite editor is vim",
}


def fill_docs(store: Any, namespace: tuple[str, ...] = ("docs",)) -> None:
    for key, text in DOCS.items():
        store.put(namespace, key, {"text": text, "lang": key})


def test_query_ranks_by_cosine_similarity(make_store: StoreFactory) -> None:
    store = make_store(index=hashing_index())
    fill_docs(store)

    query = "pytest fixtures in python"
    results = store.search(("docs",), query=query, limit=5)

    assert keys(results)[0] == "py" and set(keys(results)) == set(DOCS)
    scores = [item.score for item in results]
    assert scores == sorted(scores, reverse=True)  # type: ignore[type-var]
    for item in results:
        assert item.score == pytest.approx(cosine(query, DOCS[item.key]), abs=1e-5)


def test_query_with_limit_offset_and_filter(make_store: StoreFactory) -> None:
    store = make_store(index=hashing_index())
    fill_docs(store)
    query = "vim editor"
    ranked = keys(store.search(("docs",), query=query, limit=5))

    assert keys(store.search(("docs",), query=query, limit=2, offset=1)) == ranked[1:3]
    assert keys(store.search(("docs",), query=query, filter={"lang": "vim"})) == ["vim"]
    assert keys(store.search(("docs",), query=query, filter={"lang": "nope"})) == []


def test_query_across_namespaces(make_store: StoreFactory) -> None:
    store = make_store(index=hashing_index())
    fill_docs(store, ("team", "a"))
    store.put(("team", "b"), "vim2", {"text": "vim is my editor of choice"})
    results = store.search(("team",), query="vim editor", limit=2)
    assert set(keys(results)) == {"vim", "vim2"}
    assert {i.namespace for i in results} == {("team", "a"), ("team", "b")}


def test_best_field_scores_an_item(make_store: StoreFactory) -> None:
    store = make_store(index=hashing_index(["title", "body"]))
    store.put(("m",), "both", {"title": "rust lifetimes", "body": "sqlite write ahead log"})
    store.put(("m",), "one", {"title": "javascript promises", "body": "async functions"})

    results = store.search(("m",), query="sqlite write ahead log", limit=2)

    assert keys(results) == ["both", "one"]
    assert results[0].score == pytest.approx(1.0, abs=1e-5)


def test_list_fields_embed_each_element(make_store: StoreFactory) -> None:
    store = make_store(index=hashing_index(["notes[*]"]))
    store.put(("m",), "a", {"notes": ["rust borrow checker", "sqlite database"]})
    store.put(("m",), "b", {"notes": ["javascript promises"]})
    results = store.search(("m",), query="sqlite database", limit=1)
    assert keys(results) == ["a"] and results[0].score == pytest.approx(1.0, abs=1e-5)


def test_unindexed_items_fill_up_after_scored_ones(make_store: StoreFactory) -> None:
    store = make_store(index=hashing_index())
    store.put(("m",), "plain", {"text": "vim editor"}, index=False)
    store.put(("m",), "scored", {"text": "vim editor"})
    store.put(("m",), "no-field", {"other": "vim editor"})

    results = store.search(("m",), query="vim editor", limit=5)

    assert keys(results) == ["scored", "plain", "no-field"]
    assert results[0].score == pytest.approx(1.0, abs=1e-5)
    assert [i.score for i in results[1:]] == [None, None]
    assert keys(store.search(("m",), query="vim editor", limit=1)) == ["scored"]


def test_put_index_override_selects_fields(make_store: StoreFactory) -> None:
    store = make_store(index=hashing_index(["text"]))
    store.put(("m",), "a", {"text": "rust", "summary": "sqlite database"}, index=["summary"])
    store.put(("m",), "b", {"text": "sqlite database", "summary": "rust"})
    results = store.search(("m",), query="sqlite database", limit=2)
    assert [round(r.score or 0, 4) for r in results] == [1.0, 1.0]


def test_updated_item_is_searched_by_its_new_text(make_store: StoreFactory) -> None:
    store = make_store(index=hashing_index())
    fill_docs(store)
    store.put(("docs",), "rs", {"text": "vim bindings in every editor", "lang": "rs"})
    store.delete(("docs",), "vim")
    results = store.search(("docs",), query="my favourite editor is vim", limit=5)
    assert "vim" not in keys(results)
    assert keys(results)[0] == "rs"


def test_query_without_index_config_lists_unscored(make_store: StoreFactory) -> None:
    store = make_store()
    fill_docs(store)
    results = store.search(("docs",), query="vim", limit=2)
    assert keys(results) == ["py", "rs"] and results[0].score is None


# --- namespaces ------------------------------------------------------------------------------

NAMESPACES = [
    ("a", "b", "c"),
    ("a", "b", "d", "e"),
    ("a", "b", "d", "i"),
    ("a", "b", "f"),
    ("a", "c", "f"),
    ("x",),
]


def test_list_namespaces(make_store: StoreFactory) -> None:
    store = make_store()
    for ns in NAMESPACES:
        store.put(ns, "k", {"v": 1})

    assert store.list_namespaces() == sorted(NAMESPACES)
    assert store.list_namespaces(prefix=("a", "b"), max_depth=3) == [
        ("a", "b", "c"),
        ("a", "b", "d"),
        ("a", "b", "f"),
    ]
    assert store.list_namespaces(suffix=("f",)) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(prefix=("a", "*", "f")) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(suffix=("d", "*")) == [("a", "b", "d", "e"), ("a", "b", "d", "i")]
    assert store.list_namespaces(max_depth=1) == [("a",), ("x",)]
    assert store.list_namespaces(limit=2, offset=1) == sorted(NAMESPACES)[1:3]
    assert store.list_namespaces(prefix=("a",), suffix=("f",), max_depth=2) == [
        ("a", "b"),
        ("a", "c"),
    ]


# --- batches ---------------------------------------------------------------------------------


def test_batch_reads_see_the_state_before_its_writes(make_store: StoreFactory) -> None:
    store = make_store()
    store.put(("b",), "k", {"v": "old"})
    results = store.batch(
        [
            PutOp(("b",), "k", {"v": "first"}),
            GetOp(("b",), "k"),
            PutOp(("b",), "k", {"v": "last"}),
            SearchOp(("b",)),
            PutOp(("b",), "new", {"v": 1}),
            ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("b",)),)),
        ]
    )
    assert results[0] is None and results[2] is None
    assert results[1].value == {"v": "old"}
    assert [i.value for i in results[3]] == [{"v": "old"}]
    assert results[5] == [("b",)]
    assert store.get(("b",), "k").value == {"v": "last"}
    assert keys(store.search(("b",))) == ["k", "new"]


async def test_abatch_and_async_helpers(make_store: StoreFactory) -> None:
    store = make_store(index=hashing_index())
    await store.aput(("a",), "vim", {"text": "my favourite editor is vim"})
    await store.aput(("a",), "db", {"text": "sqlite database"})
    got = await store.aget(("a",), "vim")
    found = await store.asearch(("a",), query="vim editor", limit=1)
    spaces = await store.alist_namespaces()
    await store.adelete(("a",), "db")
    assert got is not None and got.value["text"].endswith("vim")
    assert keys(found) == ["vim"]
    assert spaces == [("a",)]
    assert keys(await store.asearch(("a",))) == ["vim"]


def test_unknown_operation_is_rejected(make_store: StoreFactory) -> None:
    store = make_store()
    with pytest.raises(ValueError, match="Unknown operation"):
        store.batch([("not", "an", "op")])  # type: ignore[list-item]


# --- differential: same random operations, same answers ----------------------------------------

WORDS = ["vim", "editor", "python", "rust", "sqlite", "log", "tests", "async", "memory", "tags"]
LABELS = st.sampled_from(["a", "b", "c"])
NS = st.lists(LABELS, min_size=1, max_size=2).map(tuple)
KEY = st.sampled_from([f"k{n}" for n in range(6)])
TEXT = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4, unique=True).map(" ".join)
VALUE = st.fixed_dictionaries({"text": TEXT, "n": st.integers(0, 3)})
OP = st.one_of(
    st.builds(lambda ns, k, v: ("put", ns, k, v), NS, KEY, VALUE),
    st.builds(lambda ns, k: ("delete", ns, k), NS, KEY),
    st.builds(lambda ns, k: ("get", ns, k), NS, KEY),
    st.builds(
        lambda ns, f, lim, off: ("search", ns, f, lim, off),
        st.one_of(st.just(()), NS),
        st.one_of(st.none(), st.builds(lambda n: {"n": n}, st.integers(0, 3))),
        st.integers(1, 6),
        st.integers(0, 3),
    ),
    st.builds(
        lambda ns, q, lim: ("query", ns, q, lim),
        st.one_of(st.just(()), NS),
        TEXT,
        st.integers(1, 4),
    ),
    st.builds(
        lambda p, d: ("namespaces", p, d),
        st.one_of(st.none(), NS),
        st.one_of(st.none(), st.integers(1, 2)),
    ),
)


def run(store: Any, op: tuple[Any, ...]) -> Any:
    kind = op[0]
    if kind == "put":
        return store.put(op[1], op[2], op[3])
    if kind == "delete":
        return store.delete(op[1], op[2])
    if kind == "get":
        item = store.get(op[1], op[2])
        return None if item is None else (item.namespace, item.key, item.value)
    if kind == "search":
        found = store.search(op[1], filter=op[2], limit=op[3], offset=op[4])
        return [(i.namespace, i.key, i.value) for i in found]
    if kind == "query":
        found = store.search(op[1], query=op[2], limit=op[3])
        return [(i.namespace, i.key, i.score) for i in found]
    return store.list_namespaces(prefix=op[1], max_depth=op[2])


def same_ranking(want: list[Any], got: list[Any]) -> bool:
    """Same items with the same scores; items with equal scores may come in any order."""
    if len(want) != len(got):
        return False
    for a, b in zip(want, got, strict=True):
        if (a[2] is None) != (b[2] is None) or (a[2] is not None and abs(a[2] - b[2]) > 1e-4):
            return False
    groups: list[tuple[set[Any], set[Any]]] = []
    for n, (a, b) in enumerate(zip(want, got, strict=True)):
        previous = want[n - 1][2] if n else None
        if n == 0 or a[2] is None or previous is None or abs(a[2] - previous) > 1e-4:
            groups.append((set(), set()))
        groups[-1][0].add(a[:2])
        groups[-1][1].add(b[:2])
        previous = a[2]
    # a tie at the cut-off may select different items; every other group must agree
    return (
        all(s == t for s, t in groups[:-1])
        and (want[-1][2] is not None or groups[-1][0] == groups[-1][1])
        if groups
        else True
    )


ALL_NAMESPACES = [(x,) for x in "abc"] + [(x, y) for x in "abc" for y in "abc"]


def touch_namespaces(store: Any) -> None:
    """Fix the namespace order up front: InMemoryStore also creates a namespace on a get."""
    for ns in ALL_NAMESPACES:
        store.put(ns, "tmp", {"text": "x", "n": 0})
        store.delete(ns, "tmp")


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=st.lists(OP, min_size=1, max_size=30))
def test_same_answers_as_in_memory_store(
    tmp_path_factory: pytest.TempPathFactory, ops: list[Any]
) -> None:
    folder: Path = tmp_path_factory.mktemp("diff")
    reference = InMemoryStore(index=hashing_index())
    with FaissStore(folder, index=hashing_index()) as ours:
        touch_namespaces(reference)
        touch_namespaces(ours)
        for op in ops:
            want, got = run(reference, op), run(ours, op)
            if op[0] == "namespaces":
                # InMemoryStore also lists namespaces that hold nothing (read or emptied)
                alive = {i.namespace for i in reference.search((), limit=1000)}
                full = [ns for ns in reference.list_namespaces(prefix=op[1]) if ns in alive]
                want = sorted({ns[: op[2]] for ns in full} if op[2] else full)
            if op[0] == "query":
                assert same_ranking(want, got), (op, want, got)
            else:
                assert want == got, (op, want, got)


def test_scores_are_cosine_not_raw_inner_product(make_store: StoreFactory) -> None:
    def unnormalised(texts: list[str]) -> list[list[float]]:
        return [[3.0 * v for v in HashingEmbedder(DIMS).embed_query(t)] for t in texts]

    store = make_store(index={"dims": DIMS, "embed": unnormalised, "fields": ["text"]})
    store.put(("m",), "a", {"text": "vim editor"})
    (hit,) = store.search(("m",), query="vim editor", limit=1)
    assert hit.score is not None and math.isclose(hit.score, 1.0, abs_tol=1e-5)


def test_async_batch_matches_sync(make_store: StoreFactory) -> None:
    store = make_store(index=hashing_index())
    fill_docs(store)
    ops = [SearchOp(("docs",), query="rust lifetimes", limit=2), GetOp(("docs",), "db")]
    sync = store.batch(ops)
    async_ = asyncio.run(store.abatch(ops))
    assert keys(sync[0]) == keys(async_[0]) and sync[1].value == async_[1].value
