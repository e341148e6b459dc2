"""Memory store benchmark: FaissStore against LangGraph's InMemoryStore on the same vectors.

Run with ``.venv/bin/python bench/memory.py`` (``--sizes 2000,5000`` for a quick run).

1. Corpus: distinct generated sentences about a software project (templates over word
   lists, seeded), embedded with the MiniLM embedder (``--real``, default 10,000); that run
   gives the embedder's sentences/s. Records beyond those get derived vectors: a real
   vector plus Gaussian noise (cosine about 0.85 to it), renormalised, because embedding
   100k sentences takes too long on a shared 2-core machine. Queries are real embeddings
   of further generated sentences that are not in the corpus.
2. Per size (default 10k and 100k): both stores get the same records and the same
   vectors (their ``embed`` looks the precomputed vector up, so no model runs while
   timing). Measured: save throughput (batches of 1,000 puts), the first search (FaissStore
   builds its index then: exact below 20k vectors, IVF above), search latency p50/p99 of
   ``store.search(ns, query=..., limit=5)`` for both stores, FaissStore's recall@5 against
   exact cosine search (numpy over all vectors, the ranking InMemoryStore returns), and
   the store's size on disk.

Figures are printed and written to ``bench/results/memory.json``. The script exits 0:
PASS/FAIL lines report the targets (at 100k: p50 <= 5 ms, >= 10x faster than
InMemoryStore, recall@5 >= 0.95).
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "memory.json"
NAMESPACE = ("bench",)
K = 5
SAVE_BATCH = 1_000
TARGET_P50_MS = 5.0
TARGET_SPEEDUP = 10.0
TARGET_RECALL = 0.95
NOISE_COS = 0.85
"""Cosine between a derived vector and the real vector it comes from."""

if str(ROOT) not in sys.path:  # run from a checkout without installing the package
    sys.path.insert(0, str(ROOT))

SUBJECTS = """the parser, the build script, the release job, the sqlite store, the cache layer,
the api client, the test suite, the login page, the config loader, the scheduler,
the payment service, the search index, the logger, the cli, the docker image,
the migration, the websocket server, the report generator, the email worker,
the auth token, the rate limiter, the importer, the exporter, the plugin loader,
the dashboard, the queue consumer, the backup job, the metrics exporter, the linter,
the formatter, the installer, the updater, the thumbnail service, the pdf renderer,
the csv reader, the json schema, the retry policy, the feature flag, the cron task,
the health check""".replace("\n", " ").split(", ")
VERBS = """fails on, is slow with, must handle, was rewritten for, breaks with, crashes on,
needs a fix for, should log, times out on, leaks memory on, caches, rejects, retries,
validates, skips, ignores, warns about, depends on, was tuned for, reads""".replace(
    "\n", " "
).split(", ")
OBJECTS = """empty files, unicode names, large uploads, expired tokens, leap years,
windows paths, duplicate keys, missing columns, slow networks, null values, nested lists,
time zones, big integers, binary data, symlinks, long lines, concurrent writes,
stale locks, utf-16 input, zero byte reads, negative offsets, emoji, deep recursion,
old schema versions, partial writes""".replace("\n", " ").split(", ")
WHEN = """since version two, on the ci runner, in production, after the upgrade,
on arm machines, under load, at midnight, in the nightly build, on python 3.11,
with debug logging, behind the proxy, in the docker image, on first start,
after a restart, during backups, in dry run mode""".replace("\n", " ").split(", ")


def sentences(count: int, seed: int, exclude: set[str] | None = None) -> list[str]:
    """``count`` distinct generated sentences."""
    rng = np.random.default_rng(seed)
    seen: set[str] = set(exclude or ())
    out: list[str] = []
    while len(out) < count:
        s = (
            f"{SUBJECTS[rng.integers(len(SUBJECTS))]} {VERBS[rng.integers(len(VERBS))]} "
            f"{OBJECTS[rng.integers(len(OBJECTS))]} {WHEN[rng.integers(len(WHEN))]}"
        )
        if s not in seen:
            seen.add(s)
            out.append(s)
    return out


def isolate_home(home: Path) -> None:
    """Point HOME/JARVIS_HOME at an empty folder so no user config is read."""
    for var in [v for v in os.environ if v.startswith("JARVIS_")]:
        del os.environ[var]
    os.environ.update(
        {"HOME": str(home), "JARVIS_HOME": str(home / ".jarvis"), "LANGSMITH_TRACING": "false"}
    )


def embed_corpus(texts: list[str]) -> tuple[np.ndarray, dict[str, Any]]:
    """MiniLM vectors of ``texts`` and the embedder's figures."""
    from jarvis_graph.memory.embedder import MiniLMEmbedder

    embedder = MiniLMEmbedder()
    start = time.perf_counter()
    embedder.embed_query("warm up")
    load_s = time.perf_counter() - start
    start = time.perf_counter()
    vectors = np.asarray(embedder.embed_documents(texts), dtype=np.float32)
    took = time.perf_counter() - start
    single = []
    for text in texts[:50]:
        t0 = time.perf_counter()
        embedder.embed_query(text)
        single.append((time.perf_counter() - t0) * 1000)
    figures = {
        "sentences": len(texts),
        "load_s": round(load_s, 3),
        "seconds": round(took, 2),
        "sentences_per_s": round(len(texts) / took, 1),
        "single_query_ms_p50": round(statistics.median(single), 2),
    }
    return vectors, figures


def derive(base: np.ndarray, texts: list[str], count: int) -> tuple[np.ndarray, list[str]]:
    """``count`` vectors near random real ones (cosine about NOISE_COS), with texts."""
    rng = np.random.default_rng(3)
    dims = base.shape[1]
    sigma = np.sqrt(1 / NOISE_COS**2 - 1) / np.sqrt(dims)
    source = rng.integers(len(base), size=count)
    vecs = base[source] + rng.standard_normal((count, dims)).astype(np.float32) * sigma
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    return vecs.astype(np.float32), [f"{texts[j]} (variant {n})" for n, j in enumerate(source)]


def lookup_embedder(table: dict[str, np.ndarray]) -> Callable[[Sequence[str]], list[list[float]]]:
    """An ``embed`` function returning precomputed vectors (no model in the timed path)."""

    def embed(texts: Sequence[str]) -> list[list[float]]:
        return [table[t].tolist() for t in texts]

    return embed


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def time_searches(store: Any, queries: list[str]) -> tuple[list[float], list[list[str]]]:
    """Per query: milliseconds and the keys returned."""
    for q in queries[:3]:  # warm-up
        store.search(NAMESPACE, query=q, limit=K)
    times, keys = [], []
    for q in queries:
        gc.disable()
        start = time.perf_counter()
        found = store.search(NAMESPACE, query=q, limit=K)
        times.append((time.perf_counter() - start) * 1000)
        gc.enable()
        keys.append([item.key for item in found])
    return times, keys


def fill(store: Any, texts: list[str]) -> float:
    """Put every text (in batches); returns seconds."""
    from langgraph.store.base import PutOp

    start = time.perf_counter()
    for offset in range(0, len(texts), SAVE_BATCH):
        store.batch(
            [
                PutOp(NAMESPACE, f"m{n}", {"text": texts[n], "n": n})
                for n in range(offset, min(offset + SAVE_BATCH, len(texts)))
            ]
        )
    return time.perf_counter() - start


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def bench_size(
    size: int,
    texts: list[str],
    vectors: np.ndarray,
    queries: list[str],
    query_vectors: np.ndarray,
    memory_queries: int,
    tmp: Path,
) -> dict[str, Any]:
    from langgraph.store.memory import InMemoryStore

    from jarvis_graph.memory.store import FaissStore

    corpus, corpus_vecs = texts[:size], vectors[:size]
    table = dict(zip(corpus, corpus_vecs, strict=True)) | dict(
        zip(queries, query_vectors, strict=True)
    )
    index = {"dims": vectors.shape[1], "embed": lookup_embedder(table), "fields": ["text"]}
    folder = tmp / f"faiss-{size}"
    print(f"\n== {size:,} records ==")

    store = FaissStore(folder, index=index)  # type: ignore[arg-type]
    save_s = fill(store, corpus)
    start = time.perf_counter()
    store.search(NAMESPACE, query=queries[0], limit=K)
    build_s = time.perf_counter() - start
    ns_index = store.index_for(NAMESPACE)
    faiss_ms, faiss_keys = time_searches(store, queries)
    store.flush()
    disk = folder_bytes(folder)
    store.close()
    start = time.perf_counter()
    reopened = FaissStore(folder, index=index)  # type: ignore[arg-type]
    reopened.search(NAMESPACE, query=queries[1], limit=K)
    reopen_s = time.perf_counter() - start
    reopened.close()

    # exact top-5 by cosine over all vectors: InMemoryStore's ranking
    normed = corpus_vecs / np.linalg.norm(corpus_vecs, axis=1, keepdims=True)
    exact = np.argsort(-(query_vectors @ normed.T), axis=1)[:, :K]
    hits = [len({f"m{n}" for n in exact[i]} & set(faiss_keys[i])) / K for i in range(len(queries))]

    memory = InMemoryStore(index=index)  # type: ignore[arg-type]
    memory_save_s = fill(memory, corpus)
    mem_ms, mem_keys = time_searches(memory, queries[:memory_queries])
    agree = statistics.mean(
        len(set(mem_keys[i]) & {f"m{n}" for n in exact[i]}) / K for i in range(len(mem_keys))
    )
    del memory
    gc.collect()

    result = {
        "records": size,
        "faiss": {
            "index": "ivf" if ns_index.approximate else "exact",
            "ivf_lists": int(ns_index.index.nlist) if ns_index.approximate else None,
            "ivf_probes": int(ns_index.index.nprobe) if ns_index.approximate else None,
            "save_per_s": round(size / save_s, 1),
            "first_search_s": round(build_s, 3),
            "reopen_and_search_s": round(reopen_s, 3),
            "search_ms_p50": round(percentile(faiss_ms, 50), 3),
            "search_ms_p99": round(percentile(faiss_ms, 99), 3),
            "queries": len(faiss_ms),
            "recall_at_5": round(statistics.mean(hits), 4),
            "disk_bytes": disk,
        },
        "in_memory": {
            "save_per_s": round(size / memory_save_s, 1),
            "search_ms_p50": round(percentile(mem_ms, 50), 3),
            "search_ms_p99": round(percentile(mem_ms, 99), 3),
            "queries": len(mem_ms),
            "recall_at_5": round(agree, 4),
        },
    }
    result["speedup_p50"] = round(
        result["in_memory"]["search_ms_p50"] / max(result["faiss"]["search_ms_p50"], 1e-9), 1
    )
    f, m = result["faiss"], result["in_memory"]
    print(
        f"FaissStore ({f['index']}): save {f['save_per_s']:,.0f}/s, first search "
        f"{f['first_search_s']:.2f} s, search p50 {f['search_ms_p50']:.2f} ms / p99 "
        f"{f['search_ms_p99']:.2f} ms, recall@5 {f['recall_at_5']:.3f}, disk "
        f"{f['disk_bytes'] / 1e6:.1f} MB, reopen+search {f['reopen_and_search_s']:.2f} s"
    )
    print(
        f"InMemoryStore: save {m['save_per_s']:,.0f}/s, search p50 {m['search_ms_p50']:.2f} ms"
        f" / p99 {m['search_ms_p99']:.2f} ms ({m['queries']} queries), recall@5 "
        f"{m['recall_at_5']:.3f}; speed-up at p50: {result['speedup_p50']}x"
    )
    return result


def targets(results: list[dict[str, Any]]) -> dict[str, Any]:
    largest = max(results, key=lambda r: r["records"])
    f = largest["faiss"]
    checks = {
        "p50_ms": (f["search_ms_p50"], f["search_ms_p50"] <= TARGET_P50_MS),
        "speedup": (largest["speedup_p50"], largest["speedup_p50"] >= TARGET_SPEEDUP),
        "recall_at_5": (f["recall_at_5"], f["recall_at_5"] >= TARGET_RECALL),
    }
    print(f"\nTargets at {largest['records']:,} records:")
    for name, (value, ok) in checks.items():
        print(f"  {'PASS' if ok else 'FAIL'} {name} = {value}")
    return {name: {"value": v, "pass": ok} for name, (v, ok) in checks.items()} | {
        "records": largest["records"]
    }


def package_version(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="record counts, comma-separated")
    parser.add_argument("--real", type=int, default=10_000, help="sentences embedded for real")
    parser.add_argument("--queries", type=int, default=300, help="timed queries per size")
    parser.add_argument(
        "--memory-queries", type=int, default=20, help="timed queries for InMemoryStore"
    )
    parser.add_argument("--output", type=Path, default=RESULTS, help="where to write the JSON")
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[attr-defined]
    sizes = sorted(int(s) for s in args.sizes.split(","))
    real = min(args.real, max(sizes))
    with tempfile.TemporaryDirectory(prefix="jarvis-bench-memory-") as tmp_name:
        tmp = Path(tmp_name)
        isolate_home(tmp / "home")
        texts = sentences(real, seed=1)
        queries = sentences(args.queries, seed=2, exclude=set(texts))
        print(f"Embedding {len(texts) + len(queries):,} sentences with MiniLM (int8, ONNX)...")
        all_vectors, embedder = embed_corpus(texts + queries)
        vectors, query_vectors = all_vectors[: len(texts)], all_vectors[len(texts) :]
        if max(sizes) > real:
            extra, extra_texts = derive(vectors, texts, max(sizes) - real)
            vectors, texts = np.vstack([vectors, extra]), texts + extra_texts
        print(
            f"embedder: {embedder['sentences_per_s']:,.0f} sentences/s in batches, "
            f"{embedder['single_query_ms_p50']:.1f} ms per single query, load "
            f"{embedder['load_s']:.2f} s"
        )
        results = [
            bench_size(s, texts, vectors, queries, query_vectors, args.memory_queries, tmp)
            for s in sizes
        ]
    data = {
        "benchmark": "memory",
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": {
            "cpu_count": os.cpu_count(),
            "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(),
        },
        "versions": {
            name: package_version(name)
            for name in ("faiss-cpu", "onnxruntime", "langgraph", "numpy", "jarvis-graph")
        }
        | {"python": platform.python_version()},
        "setup": {
            "corpus": f"{real} distinct generated sentences (templates over word lists, seed 1)"
            f", embedded; records beyond them get derived vectors (a real vector plus noise, "
            f"cosine ~{NOISE_COS} to it)",
            "queries": "generated sentences not in the corpus (seed 2)",
            "vectors": "all-MiniLM-L6-v2 int8 ONNX, 384 dimensions",
            "search": f"store.search(namespace, query=..., limit={K}); the query vector is "
            "looked up, not embedded, in both stores",
            "save": f"store.batch of {SAVE_BATCH} PutOps, vectors looked up",
            "recall": "FaissStore top-5 against exact cosine top-5 (numpy, all vectors)",
        },
        "embedder": embedder,
        "sizes": results,
        "targets": targets(results),
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print(f"\nWrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
