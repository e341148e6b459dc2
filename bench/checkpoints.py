"""Checkpoint size and speed: 10 to 1000 tool calls returning 40 KB each.

Run with ``.venv/bin/python bench/checkpoints.py`` (``--calls N`` / ``--kb K`` to vary).

1. **baseline**: a minimal LangGraph loop, ``MessagesState`` (the plain ``add_messages``
   channel) with a plain ``SqliteSaver``: a model node that calls a tool until it has called
   it N times, and a tool node answering with the contents of a 40 KB file.
2. **agent**: ``build_agent_graph()`` with the CLI's session store (``open_checkpointer``:
   ``SqliteSaver`` with the compact ``BlobSerializer``), the scripted platform calling
   ``read_code`` N times on the same 40 KB files, summaries off (``max_input_tokens: 0``) so
   that every output stays in the state, as in the baseline.
3. **agent+summaries** (informational): the same with the default 32000-token budget, the
   ``cheap`` model (scripted) writing the summaries.

For each: run time, database size, size of the stored texts (``blobs/``), and the time of
``get_state``: cold (the first call on a fresh connection, in the process that ran the
loop), in a new process (the first call of a process that only opens the store, as
``jarvis sessions show`` or a resume does; imports not counted), and warm (further calls on
one connection). As a floor, the time a new process takes merely to turn the N outputs'
bytes into Python strings is printed beside. At the end, new processes open the plain
saver's database at 100 calls and the agent's store at 300 in turns: the medians of that
comparison judge the new-process target. The agent runs also check that ``get_state``
returns every tool output in full. Last, the agent runs with the episodic archive off and on
in turns (11 each, the order swapped every turn): the medians judge the archive's cost on
the answer's path, which is smaller than the drift between two single runs.
Figures are printed and written to ``bench/results/checkpoints.json``; PASS/FAIL lines
report the targets (agent <= 25 MB in all, and no slower than the baseline). Exits 0.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "checkpoints.json"
ARCHIVE_RATIO_TARGET = 1.1
"""The episodic archive must stay off the answer's path (settled time is reported)."""
SIZE_TARGET_MB = 25.0
WARM_REPS = 5
COLD_REPS = 5
COMPARE_REPS = 11
"""New processes of each side in the final cold comparison, taken in turns."""

if str(ROOT) not in sys.path:  # run from a checkout without installing the package
    sys.path.insert(0, str(ROOT))


def isolate_home(home: Path) -> None:
    """No user config or plugin is loaded."""
    for var in [v for v in os.environ if v.startswith("JARVIS_")]:
        del os.environ[var]
    os.environ.update(
        {"HOME": str(home), "JARVIS_HOME": str(home / ".jarvis"), "LANGSMITH_TRACING": "false"}
    )


def make_files(ws: Path, calls: int, kb: int) -> None:
    """``calls`` distinct text files of ``kb`` KB: 100-ish lines of words."""
    rng = random.Random(7)
    words = [f"w{n:04d}" for n in range(5000)]
    line_chars = 400
    for i in range(calls):
        lines: list[str] = []
        while sum(len(x) + 1 for x in lines) < kb * 1024:
            line = " ".join(rng.choice(words) for _ in range(line_chars // 6))
            lines.append(line[:line_chars])
        (ws / f"f{i:03d}.txt").write_text("\n".join(lines) + "\n")


def dir_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) if folder.exists() else 0


def time_get_state(
    open_graph: Callable[[], Any], config: dict[str, Any], child: list[str]
) -> dict[str, Any]:
    """Cold: the first get_state on a fresh connection (median of COLD_REPS openings, the
    same for both loops: one opening is at the mercy of the collector and the scheduler).
    New process: the same in ``child`` (arguments of this script's ``--child`` mode).
    Warm: further calls on one connection."""
    cold = []
    for _ in range(COLD_REPS):
        with open_graph() as graph:
            start = time.perf_counter()
            graph.get_state(config)
            cold.append(time.perf_counter() - start)
    warm = []
    with open_graph() as graph:
        graph.get_state(config)
        for _ in range(WARM_REPS):
            start = time.perf_counter()
            graph.get_state(config)
            warm.append(time.perf_counter() - start)
    fresh = [in_new_process(child) for _ in range(COLD_REPS)]
    return {
        "get_state_cold_ms": statistics.median(cold) * 1000,
        "get_state_cold_runs_ms": [round(c * 1000, 2) for c in cold],
        "get_state_new_process_ms": statistics.median(fresh),
        "get_state_new_process_runs_ms": [round(c, 2) for c in fresh],
        "get_state_warm_ms": statistics.median(warm) * 1000,
    }


def in_new_process(args: list[str]) -> float:
    """Milliseconds this script's ``--child`` mode prints for ``args``."""
    import subprocess

    done = subprocess.run(  # noqa: S603 - this script, with arguments it built
        [sys.executable, __file__, "--child", *args],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        raise RuntimeError(f"--child {' '.join(args)} failed:\n{done.stderr[-2000:]}")
    return float(done.stdout.split()[-1])


def child(kind: str, where: Path, calls: int) -> float:
    """One timing in this (new) process, imports and opening not counted (milliseconds).

    ``baseline``: get_state on the plain saver's database ``where``; ``agent``: on the
    session store of the workspace ``where`` (both checked to hold ``calls`` tool outputs,
    unless it is -1); ``strings``: decoding the bytes of the ``calls`` files the runs read
    in ``where`` into Python strings.
    """
    config: Any = {"configurable": {"thread_id": "t"}}
    graph: Any
    if kind == "strings":
        raw = [(where / f"f{i:03d}.txt").read_bytes() for i in range(calls)]
        start = time.perf_counter()
        texts = [b.decode() for b in raw]
        elapsed = time.perf_counter() - start
        assert len(texts) == calls
        return elapsed * 1000
    if kind == "baseline":
        from langgraph.checkpoint.sqlite import SqliteSaver
        from langgraph.graph import END, START, MessagesState, StateGraph

        builder = StateGraph(MessagesState)
        builder.add_node("model", lambda state: {})
        builder.add_edge(START, "model")
        builder.add_edge("model", END)
        conn = sqlite3.connect(str(where), check_same_thread=False)
        graph = builder.compile(checkpointer=SqliteSaver(conn))
        start = time.perf_counter()
        values = graph.get_state(config).values
        elapsed = time.perf_counter() - start
        conn.close()
    else:
        from jarvis_graph.checkpointing import open_checkpointer
        from jarvis_graph.graphs.agent import build_agent_graph

        agent = build_agent_graph()
        with open_checkpointer(where) as saver:
            graph = agent.compile(checkpointer=saver)
            start = time.perf_counter()
            values = graph.get_state(config).values
            elapsed = time.perf_counter() - start
    assert calls < 0 or sum(m.type == "tool" for m in values["messages"]) == calls
    return elapsed * 1000


def run_baseline(
    ws: Path, work: Path, calls: int, open_saver: Callable[[], Any] | None = None
) -> dict[str, Any]:
    """The minimal loop on a plain SqliteSaver (``open_saver``: a context manager factory
    of another plain saver; its size is then the caller's to measure)."""
    from contextlib import contextmanager

    from langchain_core.messages import AIMessage, ToolMessage
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END, START, MessagesState, StateGraph

    def model(state: Any) -> dict[str, Any]:
        done = sum(isinstance(m, ToolMessage) for m in state["messages"])
        if done >= calls:
            return {"messages": [AIMessage(content="done")]}
        call = {"name": "read", "args": {"path": f"f{done:03d}.txt"}, "id": f"c{done}"}
        return {"messages": [AIMessage(content="", tool_calls=[call])]}

    def tools(state: Any) -> dict[str, Any]:
        call = state["messages"][-1].tool_calls[0]  # type: ignore[union-attr]
        text = (ws / call["args"]["path"]).read_text()
        return {"messages": [ToolMessage(content=text, tool_call_id=call["id"])]}

    def route(state: Any) -> str:
        return "tools" if state["messages"][-1].tool_calls else END  # type: ignore[union-attr]

    builder = StateGraph(MessagesState)
    builder.add_node("model", model)
    builder.add_node("tools", tools)
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", route, ["tools", END])
    builder.add_edge("tools", "model")
    db = work / f"baseline-{calls}.sqlite"
    db.unlink(missing_ok=True)

    @contextmanager
    def open_graph() -> Any:
        if open_saver is not None:
            with open_saver() as saver:
                yield builder.compile(checkpointer=saver)
            return
        conn = sqlite3.connect(str(db), check_same_thread=False)
        try:
            yield builder.compile(checkpointer=SqliteSaver(conn))
        finally:
            conn.close()

    config = {"configurable": {"thread_id": "t"}, "recursion_limit": 4 * calls + 20}
    with open_graph() as graph:
        start = time.perf_counter()
        out = graph.invoke({"messages": [("user", "read them all")]}, config)
        elapsed = time.perf_counter() - start
    assert sum(isinstance(m, ToolMessage) for m in out["messages"]) == calls
    return {
        "run_s": elapsed,
        "db_bytes": db.stat().st_size if open_saver is None else 0,
        "blob_bytes": 0,
        **time_get_state(open_graph, config, ["baseline", str(db), str(calls)]),
        "strings_new_process_ms": strings_floor(ws, calls),
    }


def strings_floor(ws: Path, calls: int) -> float:
    """Milliseconds a new process takes to make strings of the outputs of ``calls`` calls."""
    return statistics.median(
        in_new_process(["strings", str(ws), str(calls)]) for _ in range(COLD_REPS)
    )


def run_agent(
    ws: Path,
    work: Path,
    calls: int,
    budget: int,
    archive: bool = False,
    url: str | None = None,
    store_bytes: Callable[[], tuple[int, int]] | None = None,
    state_timings: bool = True,
) -> dict[str, Any]:
    """The agent on the CLI's session store (``url``: another store, whose sizes
    ``store_bytes`` gives as (checkpoint tables, parts)); ``state_timings``: time get_state
    and the strings floor too."""
    import yaml
    from langchain_core.messages import ToolMessage

    from jarvis_graph.checkpointing import default_sessions_path, open_checkpointer
    from jarvis_graph.graphs.agent import build_agent_graph

    for old in (ws / ".jarvis").glob("sessions.sqlite*"):
        old.unlink()
    shutil.rmtree(ws / ".jarvis" / "blobs", ignore_errors=True)
    normal, cheap = work / "normal.yaml", work / "cheap.yaml"
    turns: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "read_code", "args": {"path": f"f{i:03d}.txt"}}]}
        for i in range(calls)
    ]
    normal.write_text(yaml.safe_dump({"turns": [*turns, {"text": "done !!!COMPLETE!!!"}]}))
    cheap.write_text(yaml.safe_dump({"turns": [{"text": "Read files; they hold words."}]}))
    config_file = {
        "confirm": "never",
        "max_iterations": calls + 5,
        "tool_output_limit": 1_000_000,  # every output stays inline, as in the baseline
        "max_input_tokens": budget,
        "attach_listing": 0,
        # The episodic archive embeds every message when the task completes: work the
        # baseline loop does not do. The comparison runs without it; a row shows its cost.
        "episodic_archive": archive,
        "model_groups": {
            "default": {
                "normal": {"platform": "scripted", "script": str(normal)},
                "cheap": {"platform": "scripted", "script": str(cheap)},
            }
        },
    }
    (ws / ".jarvis").mkdir(exist_ok=True)
    (ws / ".jarvis" / "config.yaml").write_text(json.dumps(config_file))
    builder = build_agent_graph()

    def open_graph() -> Any:
        from contextlib import contextmanager

        @contextmanager
        def opened() -> Any:
            with open_checkpointer(ws, url) as saver:
                yield builder.compile(checkpointer=saver)

        return opened()

    config = {"configurable": {"thread_id": "t"}, "recursion_limit": 4 * calls + 50}
    context = {"workspace": str(ws), "non_interactive": True}
    from jarvis_graph.memory.background import wait_for_background

    with open_graph() as graph:
        start = time.perf_counter()
        out = graph.invoke({"task": "Read every file."}, config, context=context)
        elapsed = time.perf_counter() - start  # the answer is back
        wait_for_background()  # the episodic archive is written off the answer's path
        settled = time.perf_counter() - start
    assert out["status"] == "completed", out
    kept_outputs = -1 if budget else calls  # summaries replace outputs: nothing to count
    timings = (
        time_get_state(open_graph, config, ["agent", str(ws), str(kept_outputs)])
        if state_timings
        else {}
    )
    with open_graph() as graph:
        kept = [m for m in graph.get_state(config).values["messages"] if isinstance(m, ToolMessage)]
    full = None
    if not budget:  # every output must come back in full: it ends with its file's last line
        last_lines = [(ws / f"f{i:03d}.txt").read_text().splitlines()[-1] for i in range(calls)]
        full = len(kept) == calls and all(
            isinstance(m.content, str) and m.content.endswith(line)
            for m, line in zip(kept, last_lines, strict=True)
        )
    db = default_sessions_path(ws)
    db_bytes, blob_bytes = (
        store_bytes() if store_bytes else (db.stat().st_size, dir_bytes(db.parent / "blobs"))
    )
    search: dict[str, Any] = {}
    if archive:  # segments are stored without vectors: the first search embeds them
        from jarvis_graph.memory.episodic import open_archive

        start = time.perf_counter()
        embedded = open_archive(ws).embed_pending()
        search = {"first_search_embeds": embedded, "first_search_s": time.perf_counter() - start}
    return {
        **search,
        "run_s": elapsed,
        "settled_s": settled,
        "db_bytes": db_bytes,
        "blob_bytes": blob_bytes,
        "tool_messages_in_state": len(kept),
        "outputs_in_full": full,
        **timings,
        "strings_new_process_ms": strings_floor(ws, calls) if state_timings else None,
    }


def compare_archive(ws: Path, root: Path, calls: int) -> dict[str, Any]:
    """The agent with the episodic archive off and on, in turns (``COMPARE_REPS`` each,
    the order swapped every turn): one run of each is at the mercy of the machine's drift,
    and the two differ by less than that."""
    runs: dict[str, list[float]] = {"off": [], "on": []}
    settled: list[float] = []
    for turn in range(COMPARE_REPS):
        for on in (False, True) if turn % 2 == 0 else (True, False):
            out = run_agent(ws, root, calls, budget=0, archive=on, state_timings=False)
            runs["on" if on else "off"].append(out["run_s"])
            if on:
                settled.append(out["settled_s"] - out["run_s"])
    return {
        "reps": COMPARE_REPS,
        "calls": calls,
        **{f"{side}_s": statistics.median(values) for side, values in runs.items()},
        **{f"{side}_runs_s": [round(v, 3) for v in values] for side, values in runs.items()},
        "written_after_s": statistics.median(settled),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10,100,300,1000", help="tool calls per run")
    parser.add_argument("--baseline-sizes", default="10,100", help="plain SqliteSaver runs")
    parser.add_argument("--calls", type=int, default=100, help="calls of the side rows")
    parser.add_argument("--kb", type=int, default=40)
    parser.add_argument("--child", nargs=3, metavar=("KIND", "WHERE", "CALLS"), help="internal")
    args = parser.parse_args()
    if args.child:
        kind, where, calls = args.child
        print(f"{child(kind, Path(where), int(calls)):.3f}")
        return
    sizes = sorted({int(n) for n in args.sizes.split(",")})
    base_sizes = sorted({int(n) for n in args.baseline_sizes.split(",")})
    with tempfile.TemporaryDirectory(prefix="jarvis-bench-ckpt-") as tmp:
        root = Path(tmp)
        isolate_home(root / "home")
        ws = root / "ws"
        ws.mkdir()
        make_files(ws, max([*sizes, *base_sizes, args.calls]), args.kb)
        # Warm-up (imports, tool registry, model set-up) so the timed runs compare the loops.
        run_baseline(ws, root, 3)
        run_agent(ws, root, 3, budget=0)
        growth = {
            "baseline": {n: run_baseline(ws, root, n) for n in base_sizes},
            "agent": {},
        }
        for n in sizes:
            growth["agent"][n] = run_agent(ws, root, n, budget=0)
            print(
                f"  agent at {n} calls: {growth['agent'][n]['db_bytes'] / 1e6:.2f} MB", flush=True
            )
            if n == 300:  # kept for the cold comparison (the next run replaces the store)
                shutil.copytree(ws / ".jarvis", root / "agent-300" / ".jarvis")
        compared = None
        if 300 in sizes and 100 in base_sizes:
            compared = compare_cold(root / "baseline-100.sqlite", root / "agent-300")
        side = {
            "agent": growth["agent"].get(args.calls) or run_agent(ws, root, args.calls, budget=0),
            "agent+summaries": run_agent(ws, root, args.calls, budget=32_000),
            "agent+archive": run_agent(ws, root, args.calls, budget=0, archive=True),
        }
        archive = compare_archive(ws, root, args.calls)
    report(growth, side, compared, archive, args)


def compare_cold(baseline_db: Path, agent_ws: Path) -> dict[str, Any]:
    """get_state in new processes, the plain saver at 100 calls and the agent at 300 taken in
    turns (``COMPARE_REPS`` each), so that both sides see the same moments of a machine
    whose speed drifts."""
    runs: dict[str, list[float]] = {"baseline_100": [], "agent_300": []}
    for _ in range(COMPARE_REPS):
        runs["baseline_100"].append(in_new_process(["baseline", str(baseline_db), "100"]))
        runs["agent_300"].append(in_new_process(["agent", str(agent_ws), "300"]))
    return {
        "reps": COMPARE_REPS,
        **{f"{side}_ms": statistics.median(values) for side, values in runs.items()},
        **{f"{side}_runs_ms": [round(v, 2) for v in values] for side, values in runs.items()},
    }


def exponent(points: dict[int, dict[str, Any]], key: str) -> float:
    """Least-squares slope of log(value) over log(calls): 1.0 is linear growth."""
    xs = [math.log(n) for n in points]
    ys = [math.log(max(r[key], 1)) for r in points.values()]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs
    )


def print_rows(title: str, rows: dict[Any, dict[str, Any]]) -> None:
    print(title)
    print(
        f"{'run':<17}{'run s':>8}{'settled s':>10}{'db MB':>9}{'blobs MB':>10}{'total MB':>10}"
        f"{'get_state ms: cold / new process / warm':>42}"
    )
    for name, r in rows.items():
        r["total_bytes"] = r["db_bytes"] + r["blob_bytes"]
        r["total_mb"] = r["total_bytes"] / 1e6
        cold, fresh, warm = (
            r["get_state_cold_ms"],
            r["get_state_new_process_ms"],
            r["get_state_warm_ms"],
        )
        print(
            f"{name!s:<17}{r['run_s']:>8.2f}{r.get('settled_s', r['run_s']):>10.2f}"
            f"{r['db_bytes'] / 1e6:>9.2f}{r['blob_bytes'] / 1e6:>10.2f}"
            f"{r['total_mb']:>10.2f}{f'{cold:.1f} / {fresh:.1f} / {warm:.1f}':>42}"
        )


def verdict(ok: bool, text: str) -> bool:
    print(f"{'PASS' if ok else 'FAIL'} {text}")
    return ok


def report(
    growth: dict[str, dict[int, dict[str, Any]]],
    side: dict[str, dict[str, Any]],
    compared: dict[str, Any] | None,
    archive: dict[str, Any],
    args: argparse.Namespace,
) -> None:
    print(f"tool calls x {args.kb} KB outputs")
    print_rows("plain SqliteSaver (baseline), by calls:", growth["baseline"])
    print_rows("agent (CLI session store), by calls:", growth["agent"])
    print_rows(f"at {args.calls} calls:", side)
    agent, base = growth["agent"], growth["baseline"]
    checks: dict[str, bool] = {}
    db = {n: r["db_bytes"] / 1e6 for n, r in agent.items()}
    total = {n: r["total_mb"] for n, r in agent.items()}
    checks["db_exponent"] = verdict(
        exponent(agent, "db_bytes") <= 1.15,
        f"agent DB grows as N^{exponent(agent, 'db_bytes'):.2f} (total with blobs "
        f"N^{exponent(agent, 'total_bytes'):.2f}; baseline N^{exponent(base, 'db_bytes'):.2f})"
        " <= N^1.15",
    )
    for n, limit in ((300, 3.3), (1000, 11.0)):
        if n in db and 100 in db:
            checks[f"db_{n}_over_100"] = verdict(
                db[n] / db[100] <= limit,
                f"DB size({n}) / size(100) = {db[n] / db[100]:.2f} <= {limit}",
            )
    if 300 in db:
        checks["db_300_mb"] = verdict(
            db[300] <= 4.0,
            f"DB at 300 calls {db[300]:.2f} MB <= 4 MB (plus blobs {total[300] - db[300]:.2f} MB)",
        )
    if 300 in agent and 100 in base:
        cold, plain = agent[300]["get_state_cold_ms"], base[100]["get_state_cold_ms"]
        checks["cold_get_state"] = verdict(
            cold <= plain,
            f"cold get_state at 300 calls {cold:.1f} ms <= plain SqliteSaver's at 100 "
            f"{plain:.1f} ms",
        )
    if compared is not None:
        fresh, plain = compared["agent_300_ms"], compared["baseline_100_ms"]
        checks["new_process_get_state"] = verdict(
            fresh <= plain,
            f"get_state in a new process at 300 calls {fresh:.1f} ms <= plain SqliteSaver's "
            f"at 100 {plain:.1f} ms (medians of {compared['reps']} each, taken in turns)",
        )
        print(
            "[info] a new process merely turning the outputs' bytes into strings takes "
            f"{agent[300]['strings_new_process_ms']:.1f} ms at 300 calls, "
            f"{base[100]['strings_new_process_ms']:.1f} ms at 100: a floor for any store"
        )
    checks["outputs_in_full"] = verdict(
        all(r["outputs_in_full"] for r in agent.values()),
        "get_state returns every output in full, at every size",
    )
    n = args.calls
    if n in base:
        checks["size"] = verdict(
            total[n] <= SIZE_TARGET_MB, f"agent total at {n} calls {total[n]:.2f} MB <= 25 MB"
        )
        checks["speed"] = verdict(
            agent[n]["run_s"] <= base[n]["run_s"],
            f"agent run {agent[n]['run_s']:.2f} s <= baseline {base[n]['run_s']:.2f} s "
            f"at {n} calls",
        )
    archived = side["agent+archive"]
    ratio = archive["on_s"] / max(archive["off_s"], 1e-9)
    archive["ratio"] = ratio
    checks["archive_off_answer_path"] = verdict(
        ratio <= ARCHIVE_RATIO_TARGET,
        f"with the episodic archive the answer is back in {ratio:.2f}x the time without it "
        f"(<= {ARCHIVE_RATIO_TARGET}; medians of {archive['reps']} runs each at "
        f"{archive['calls']} calls, {archive['on_s']:.2f} s / {archive['off_s']:.2f} s, taken "
        f"in turns); the archive is written {archive['written_after_s']:.2f} s later",
    )
    print(
        f"[info] the first search of the archive embeds its {archived['first_search_embeds']} "
        f"segments in {archived['first_search_s']:.2f} s (they are stored without vectors)"
    )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "kb": args.kb,
        "calls": args.calls,
        "growth": {k: {str(n): r for n, r in v.items()} for k, v in growth.items()},
        "exponent": {
            "agent_db": exponent(agent, "db_bytes"),
            "agent_total": exponent(agent, "total_bytes"),
            "baseline_db": exponent(base, "db_bytes"),
        },
        "results": side,
        "cold_comparison": compared,
        "archive_comparison": archive,
        "checks": checks,
    }
    RESULTS.write_text(json.dumps(payload, indent=2) + "\n")
    print(f"written to {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
