"""Memory store benchmark: FaissStore's search on three kinds of data, reopening, InMemoryStore.

Run with ``.venv/bin/python bench/memory.py`` (``--quick`` for a small run, ``--prepare`` to
only fill the embedding cache). Every figure is printed and written to
``bench/results/memory.json``, with a PASS/FAIL line per goal; the script exits 0.

Data sets (384 dimensions, vectors L2-normalised; queries are never in the corpus):

- ``real``: distinct sentences the project did not write: docstrings of the Python standard
  library and of the installed packages (read with ``ast``, nothing imported), the
  ``pydoc`` topics and the system's package documentation (``/usr/share/doc``: copyright
  notices, change logs, read-me files), split into sentences and deduplicated, shuffled
  with a fixed seed, embedded with the project's MiniLM embedder (int8 ONNX). Embeddings
  are cached under ``bench/.cache/memory/`` (git-ignored) and a run embeds at most
  ``--embed-budget`` seconds of new ones, so the set grows over runs up to ``--real``; its
  size is printed. Queries: 300 further sentences of the same pool.
- ``unstructured``: random Gaussian vectors (seeded), queries too: no cluster structure at
  all, the hardest case for an approximate index.
- ``clustered``: the first 10,000 real vectors, and beyond them noisy copies of them (cosine
  about 0.85 to their source), as the bench used before; the real queries.

Per set and size: save throughput (``store.batch`` of 1,000 puts, vectors looked up so no
model runs), the first search after the bulk load, the time until the approximate index
(built on a background thread) serves searches, ``store.search(ns, query=q, limit=5)``
p50/p99, recall@5 against the exact top 5 (numpy over all vectors: InMemoryStore's
ranking), and reopen + first search. Then a store of ``--reopen-size`` (default 360,000)
unstructured records is reopened twice: with its index file current, and after another
store object wrote 20,000 more records without searching (the file is then stale).
InMemoryStore runs at the sizes of ``--in-memory-sizes`` (one search at 100k takes seconds).
"""

from __future__ import annotations

import argparse
import ast
import datetime as dt
import gc
import gzip
import json
import os
import platform
import re
import statistics
import sys
import sysconfig
import tempfile
import time
import warnings
import zlib
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "memory.json"
CACHE = ROOT / "bench" / ".cache" / "memory"
NAMESPACE = ("bench",)
DIMS = 384
K = 5
SAVE_BATCH = 1_000
QUERIES = 300
CHUNK = 1_024
"""Sentences embedded per cache file."""
BASE_REAL = 10_000
"""Real vectors the clustered set copies."""
NOISE_COS = 0.85
STALE_EXTRA = 20_000
TARGET_P50_MS = 5.0
TARGET_RECALL = 0.95
TARGET_FIRST_SEARCH_S = 1.0
TARGET_REOPEN_S = 3.0
TARGET_SPEEDUP = 10.0
POOL_VERSION = 2
"""Version of :func:`sentence_pool`; the cached vectors of another version are not used."""
DOCS = Path("/usr/share/doc")
"""The system's package documentation (copyright notices, change logs, read-me files)."""
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")

if str(ROOT) not in sys.path:  # run from a checkout without installing the package
    sys.path.insert(0, str(ROOT))


# -- the real sentences ----------------------------------------------------------------------


def _docstrings(root: Path) -> list[str]:
    """Docstrings of the modules, classes and functions under ``root`` (test folders skipped)."""
    out: list[str] = []
    for path in sorted(root.rglob("*.py")):
        parts = set(path.relative_to(root).parts[:-1])
        if parts & {"test", "tests"} or (root.name != "site-packages" and "site-packages" in parts):
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # invalid escapes in old sources
                tree = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError):
            continue
        kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
        out.extend(
            doc
            for node in ast.walk(tree)
            if isinstance(node, kinds) and (doc := ast.get_docstring(node))
        )
    return out


def _doc_texts(root: Path) -> list[str]:
    """The text files under ``root``, gzip-compressed ones too (binary files skipped)."""
    out: list[str] = []
    for path in sorted(root.rglob("*")):
        try:
            if not path.is_file():
                continue
            data = path.read_bytes()
            if path.suffix == ".gz":
                data = gzip.decompress(data)
        except (OSError, EOFError, gzip.BadGzipFile, zlib.error):
            continue
        if b"\0" not in data[:4096]:
            out.append(data.decode("utf-8", "replace"))
    return out


def sentence_pool() -> list[str]:
    """Distinct prose sentences from Python's docs, the installed packages and the system's
    package documentation, shuffled (seed 0)."""
    import pydoc_data.topics

    paths = sysconfig.get_paths()
    texts = _docstrings(Path(paths["stdlib"])) + list(pydoc_data.topics.topics.values())
    texts += _docstrings(Path(paths["purelib"]))
    texts += _doc_texts(DOCS)
    seen: set[str] = set()
    pool: list[str] = []
    for text in texts:
        for sentence in _SENTENCE_END.split(" ".join(text.split())):
            letters = sum(c.isalpha() for c in sentence)
            if 40 <= len(sentence) <= 300 and letters > 0.6 * len(sentence):
                if sentence not in seen:
                    seen.add(sentence)
                    pool.append(sentence)
    order = np.random.default_rng(0).permutation(len(pool))
    return [pool[i] for i in order]


def cached_pool() -> list[str]:
    """:func:`sentence_pool`, read from the cache when it was built before."""
    path = CACHE / "pool.json"
    if path.exists():
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("version") == POOL_VERSION:
            return list(data["sentences"])
    print("Collecting sentences from docstrings (once; cached)...")
    pool = sentence_pool()
    CACHE.mkdir(parents=True, exist_ok=True)
    body = json.dumps({"version": POOL_VERSION, "sentences": pool})
    tmp = path.with_suffix(".tmp")
    tmp.write_text(body, encoding="utf-8")
    tmp.replace(path)
    return pool


def real_vectors(
    pool: list[str], want: int, budget_s: float, threads: int
) -> tuple[np.ndarray, dict[str, Any]]:
    """MiniLM vectors of ``pool[:want]`` from the cache, embedding new ones for ``budget_s``."""
    from jarvis_graph.memory.embedder import MiniLMEmbedder

    chunks: list[np.ndarray] = []
    for n in range(0, want, CHUNK):
        path = CACHE / f"vectors-v{POOL_VERSION}-{n // CHUNK:05d}.npy"
        if not path.exists():
            break
        chunks.append(np.load(path))
    cached = sum(len(c) for c in chunks)
    embedder = MiniLMEmbedder(threads=threads)
    embedder.embed_query("warm up")  # the model load is not part of the rate
    start, made = time.perf_counter(), 0
    while cached + made < min(want, len(pool)) and time.perf_counter() - start < budget_s:
        first = cached + made
        texts = pool[first : first + CHUNK]
        vecs = np.asarray(embedder.embed_documents(texts), dtype=np.float32)
        tmp = CACHE / f".vectors-v{POOL_VERSION}-{first // CHUNK:05d}.tmp.npy"
        np.save(tmp, vecs)
        tmp.replace(CACHE / f"vectors-v{POOL_VERSION}-{first // CHUNK:05d}.npy")
        chunks.append(vecs)
        made += len(texts)
        print(f"  embedded {cached + made:,} sentences", end="\r")
    took = time.perf_counter() - start
    vectors = np.vstack(chunks) if chunks else np.zeros((0, DIMS), np.float32)
    figures = {
        "pool_sentences": len(pool),
        "from_cache": cached,
        "embedded_now": made,
        "embed_seconds": round(took, 1),
        "sentences_per_s": round(made / took, 1) if made else None,
        "threads": threads,
    }
    return vectors, figures


# -- the data sets ---------------------------------------------------------------------------


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def gaussian(count: int, seed: int) -> np.ndarray:
    return unit(np.random.default_rng(seed).standard_normal((count, DIMS), dtype=np.float32))


def noisy_copies(base: np.ndarray, count: int) -> np.ndarray:
    """``count`` vectors near random rows of ``base`` (cosine about NOISE_COS)."""
    rng = np.random.default_rng(3)
    sigma = np.sqrt(1 / NOISE_COS**2 - 1) / np.sqrt(DIMS)
    source = rng.integers(len(base), size=count)
    return unit(base[source] + rng.standard_normal((count, DIMS)).astype(np.float32) * sigma)


def data_sets(
    names: list[str], size: int, real: np.ndarray
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per set: (corpus vectors, query vectors)."""
    queries, corpus = real[:QUERIES], real[QUERIES:]
    sets: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for name in names:
        if name == "real":
            sets[name] = (unit(corpus[:size]), unit(queries))
        elif name == "unstructured":
            sets[name] = (gaussian(size, 1), gaussian(QUERIES, 2))
        elif name == "clustered":
            base = unit(corpus[:BASE_REAL])
            extra = noisy_copies(base, max(0, size - len(base)))
            sets[name] = (np.vstack([base, extra])[:size], unit(queries))
    return sets


# -- measuring -------------------------------------------------------------------------------


def lookup_index(corpus: np.ndarray, queries: np.ndarray) -> dict[str, Any]:
    """A store index config whose ``embed`` looks vectors up: ``c<n>`` and ``q<n>`` texts."""

    def embed(texts: Sequence[str]) -> list[list[float]]:
        return [(corpus if t[0] == "c" else queries)[int(t[1:])].tolist() for t in texts]

    return {"dims": DIMS, "embed": embed, "fields": ["text"]}


def fill(store: Any, start: int, stop: int) -> float:
    """Put records ``c<start>`` .. ``c<stop - 1>`` in batches; returns seconds."""
    from langgraph.store.base import PutOp

    began = time.perf_counter()
    for offset in range(start, stop, SAVE_BATCH):
        store.batch(
            [
                PutOp(NAMESPACE, f"m{n}", {"text": f"c{n}"})
                for n in range(offset, min(offset + SAVE_BATCH, stop))
            ]
        )
    return time.perf_counter() - began


def timed(action: Callable[[], Any]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def time_searches(store: Any, count: int) -> tuple[list[float], list[list[str]]]:
    """Per query ``q<n>``: milliseconds and the keys returned."""
    for n in range(3):  # warm-up
        store.search(NAMESPACE, query=f"q{n}", limit=K)
    times, keys = [], []
    for n in range(count):
        gc.disable()
        start = time.perf_counter()
        found = store.search(NAMESPACE, query=f"q{n}", limit=K)
        times.append((time.perf_counter() - start) * 1000)
        gc.enable()
        keys.append([item.key for item in found])
    return times, keys


def recall(corpus: np.ndarray, queries: np.ndarray, keys: list[list[str]]) -> float:
    """Mean share of the exact top-K (cosine, numpy over all vectors) in the keys found."""
    hits = []
    for start in range(0, len(keys), 100):
        scores = queries[start : start + 100] @ corpus.T
        top = np.argpartition(-scores, K, axis=1)[:, :K]
        for row, found in zip(top, keys[start : start + 100], strict=True):
            hits.append(len({f"m{n}" for n in row} & set(found)) / K)
    return float(statistics.mean(hits))


def pct(values: list[float], q: float) -> float:
    return round(float(np.percentile(np.asarray(values), q)), 3)


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def bench_faiss(
    corpus: np.ndarray, queries: np.ndarray, folder: Path, count: int
) -> dict[str, Any]:
    """FaissStore on one set and size."""
    from jarvis_graph.memory.store import FaissStore

    index = lookup_index(corpus, queries)
    store = FaissStore(folder, index=index)  # type: ignore[arg-type]
    save_s = fill(store, 0, len(corpus))
    first_s = timed(lambda: store.search(NAMESPACE, query="q0", limit=K))
    ready_s = first_s + timed(lambda: store.index_for(NAMESPACE))  # waits for a background build
    kind = store.index_for(NAMESPACE).kind
    ms, keys = time_searches(store, count)
    store.close()
    disk = folder_bytes(folder)
    reopened = FaissStore(folder, index=index)  # type: ignore[arg-type]
    reopen_s = timed(lambda: reopened.search(NAMESPACE, query="q1", limit=K))
    reopened.close()
    return {
        "index": kind,
        "save_per_s": round(len(corpus) / save_s, 1),
        "first_search_s": round(first_s, 3),
        "approximate_ready_s": round(ready_s, 3),
        "search_ms_p50": pct(ms, 50),
        "search_ms_p99": pct(ms, 99),
        "queries": len(ms),
        "recall_at_5": round(recall(corpus, queries, keys), 4),
        "disk_bytes": disk,
        "reopen_and_search_s": round(reopen_s, 3),
    }


def bench_in_memory(corpus: np.ndarray, queries: np.ndarray, count: int) -> dict[str, Any]:
    """LangGraph's InMemoryStore on the same records and vectors."""
    from langgraph.store.memory import InMemoryStore

    store = InMemoryStore(index=lookup_index(corpus, queries))  # type: ignore[arg-type]
    save_s = fill(store, 0, len(corpus))
    ms, keys = time_searches(store, count)
    out = {
        "save_per_s": round(len(corpus) / save_s, 1),
        "search_ms_p50": pct(ms, 50),
        "search_ms_p99": pct(ms, 99),
        "queries": len(ms),
        "recall_at_5": round(recall(corpus, queries[:count], keys), 4),
    }
    del store
    gc.collect()
    return out


def bench_reopen(size: int, folder: Path) -> dict[str, Any]:
    """Reopen + first search of a ``size``-record store: index file current, then stale."""
    from jarvis_graph.memory.store import FaissStore

    corpus, queries = gaussian(size + STALE_EXTRA, 11), gaussian(4, 12)
    index = lookup_index(corpus, queries)
    print(f"\n== reopening {size:,} records (unstructured) ==")
    with FaissStore(folder, index=index) as store:  # type: ignore[arg-type]
        fill(store, 0, size)
        store.search(NAMESPACE, query="q0", limit=K)
        store.index_for(NAMESPACE)  # the approximate index is built and saved
    opened = FaissStore(folder, index=index)  # type: ignore[arg-type]
    current_s = timed(lambda: opened.search(NAMESPACE, query="q1", limit=K))
    opened.close()
    with FaissStore(folder, index=index) as writer:  # type: ignore[arg-type]
        fill(writer, size, size + STALE_EXTRA)  # never searches: the index file is now stale
    opened = FaissStore(folder, index=index)  # type: ignore[arg-type]
    stale_s = timed(lambda: opened.search(NAMESPACE, query="q2", limit=K))
    opened.close()
    out = {
        "records": size,
        "reopen_and_search_s": round(current_s, 3),
        "stale_records": size + STALE_EXTRA,
        "stale_reopen_and_search_s": round(stale_s, 3),
        "disk_bytes": folder_bytes(folder),
    }
    print(
        f"reopen + first search: {current_s:.2f} s; after {STALE_EXTRA:,} records written "
        f"without a search (stale index file): {stale_s:.2f} s"
    )
    return out


# -- report ----------------------------------------------------------------------------------


def show(name: str, size: int, f: dict[str, Any], m: dict[str, Any] | None) -> None:
    print(
        f"{name:>12} {size:>7,}: {f['index']:>6}, save {f['save_per_s']:,.0f}/s, first search "
        f"{f['first_search_s']:.2f} s, approximate ready {f['approximate_ready_s']:.2f} s, "
        f"p50 {f['search_ms_p50']:.2f} ms / p99 {f['search_ms_p99']:.2f} ms, recall@5 "
        f"{f['recall_at_5']:.3f}, reopen+search {f['reopen_and_search_s']:.2f} s, disk "
        f"{f['disk_bytes'] / 1e6:.0f} MB"
    )
    if m:
        print(
            f"{'':>12} InMemoryStore: save {m['save_per_s']:,.0f}/s, p50 "
            f"{m['search_ms_p50']:.1f} ms / p99 {m['search_ms_p99']:.1f} ms ({m['queries']} "
            f"queries), recall@5 {m['recall_at_5']:.3f}"
        )


def targets(runs: list[dict[str, Any]], reopen: dict[str, Any] | None) -> list[dict[str, Any]]:
    """PASS/FAIL per goal at the largest size of each set."""
    checks: list[tuple[str, float, bool]] = []
    for name in dict.fromkeys(r["set"] for r in runs):
        top = max((r for r in runs if r["set"] == name), key=lambda r: r["records"])
        f, n = top["faiss"], f"{name} {top['records']:,}"
        checks.append(
            (
                f"recall@5 >= {TARGET_RECALL} ({n})",
                f["recall_at_5"],
                f["recall_at_5"] >= TARGET_RECALL,
            )
        )
        checks.append(
            (
                f"search p50 <= {TARGET_P50_MS} ms ({n})",
                f["search_ms_p50"],
                f["search_ms_p50"] <= TARGET_P50_MS,
            )
        )
        checks.append(
            (
                f"first search after bulk load <= {TARGET_FIRST_SEARCH_S} s ({n})",
                f["first_search_s"],
                f["first_search_s"] <= TARGET_FIRST_SEARCH_S,
            )
        )
    with_memory = [r for r in runs if r.get("in_memory")]
    if with_memory:
        top = max(with_memory, key=lambda r: r["records"])
        speedup = top["in_memory"]["search_ms_p50"] / max(top["faiss"]["search_ms_p50"], 1e-9)
        checks.append(
            (
                f"p50 >= {TARGET_SPEEDUP}x faster than InMemoryStore "
                f"({top['set']} {top['records']:,})",
                round(speedup, 1),
                speedup >= TARGET_SPEEDUP,
            )
        )
    if reopen:
        for key, label, note in (
            ("reopen_and_search_s", "records", ""),
            ("stale_reopen_and_search_s", "stale_records", ", stale index file"),
        ):
            value = reopen[key]
            goal = f"reopen + first search <= {TARGET_REOPEN_S} s ({reopen[label]:,} records{note})"
            checks.append((goal, value, value <= TARGET_REOPEN_S))
    print("\nGoals:")
    for label, value, ok in checks:
        print(f"  {'PASS' if ok else 'FAIL'} {label}: {value}")
    return [{"goal": label, "value": value, "pass": ok} for label, value, ok in checks]


def package_version(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def isolate_home(home: Path) -> None:
    """Point HOME/JARVIS_HOME at an empty folder so no user config is read."""
    for var in [v for v in os.environ if v.startswith("JARVIS_")]:
        del os.environ[var]
    os.environ.update(
        {"HOME": str(home), "JARVIS_HOME": str(home / ".jarvis"), "LANGSMITH_TRACING": "false"}
    )


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="record counts, comma-separated")
    parser.add_argument("--sets", default="clustered,unstructured,real", help="data sets")
    parser.add_argument("--real", type=int, default=100_000, help="real embeddings wanted")
    parser.add_argument(
        "--embed-budget", type=float, default=900, help="seconds of new embedding this run"
    )
    parser.add_argument("--embed-threads", type=int, default=1, help="ONNX Runtime threads")
    parser.add_argument("--queries", type=int, default=QUERIES, help="timed queries per run")
    parser.add_argument("--in-memory-sizes", default="10000", help="sizes run on InMemoryStore")
    parser.add_argument("--memory-queries", type=int, default=20, help="InMemoryStore queries")
    parser.add_argument("--reopen-size", type=int, default=360_000, help="0: skip that part")
    parser.add_argument("--quick", action="store_true", help="small sizes, no big reopen")
    parser.add_argument("--prepare", action="store_true", help="only fill the embedding cache")
    parser.add_argument("--output", type=Path, default=RESULTS, help="where to write the JSON")
    args = parser.parse_args()
    if args.quick:
        args.sizes, args.in_memory_sizes, args.reopen_size = "2000,25000", "2000", 0
    return args


def main() -> int:
    args = parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[attr-defined]
    sizes = sorted(int(s) for s in args.sizes.split(","))
    names = [s for s in args.sets.split(",") if s]
    with tempfile.TemporaryDirectory(prefix="jarvis-bench-memory-") as tmp_name:
        tmp = Path(tmp_name)
        isolate_home(tmp / "home")
        pool = cached_pool()
        want = min(len(pool), args.real + QUERIES)
        print(f"Real embeddings: {want:,} wanted of a pool of {len(pool):,} sentences...")
        real, embedder = real_vectors(pool, want, args.embed_budget, args.embed_threads)
        print(f"\nreal embeddings available: {len(real):,} ({embedder})")
        if args.prepare:
            return 0
        runs: list[dict[str, Any]] = []
        for size in sizes:
            for name, (corpus, queries) in data_sets(names, size, real).items():
                gc.collect()
                run: dict[str, Any] = {"set": name, "records": len(corpus)}
                run["faiss"] = bench_faiss(corpus, queries, tmp / f"{name}-{size}", args.queries)
                if str(size) in args.in_memory_sizes.split(","):
                    run["in_memory"] = bench_in_memory(corpus, queries, args.memory_queries)
                show(name, len(corpus), run["faiss"], run.get("in_memory"))
                runs.append(run)
        reopen = bench_reopen(args.reopen_size, tmp / "reopen") if args.reopen_size else None
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
            "real": f"{len(real) - QUERIES:,} distinct sentences from Python docstrings and "
            "pydoc topics, MiniLM int8 ONNX vectors; 300 more as queries",
            "unstructured": "random Gaussian unit vectors (seed 1), queries too (seed 2)",
            "clustered": f"{BASE_REAL:,} real vectors and noisy copies of them "
            f"(cosine ~{NOISE_COS}); the real queries",
            "search": f"store.search(namespace, query=..., limit={K}), query vector looked up",
            "recall": "FaissStore top-5 against exact cosine top-5 (numpy, all vectors)",
        },
        "embedder": embedder,
        "runs": runs,
        "reopen": reopen,
        "goals": targets(runs, reopen),
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print(f"\nWrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
