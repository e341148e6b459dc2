"""Parallel plan steps: four independent steps against the same plan run one at a time.

Run with ``.venv/bin/python bench/planner.py`` (``--reps N`` for more repetitions).

The planner graph (``build_planner_graph()``, SQLite checkpointer on a temporary file) gets a
task that the scripted model splits into four independent steps; each step's child agent
answers after the scripted turn's ``delay`` of 1 s. The same run is timed with
``plan_concurrency: 4`` (the four children run at once, through ``Send``) and with
``plan_concurrency: 1`` (one step per round: the sequential baseline), interleaved.
Target: parallel under 1.6 s while sequential is about 4 s.

Figures are printed and written to ``bench/results/planner.json``; the script always exits 0.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "planner.json"
STEP_DELAY_S = 1.0
PARALLEL_TARGET_S = 1.6
STEPS = [{"id": f"part_{n}", "task": f"Inspect part {n} of the system"} for n in range(1, 5)]

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def write_script(folder: Path) -> Path:
    turns: list[dict[str, Any]] = [
        {"when": "<RESULT_SUMMARY>", "text": "All four parts inspected. !!!COMPLETE!!!"},
        {
            "when": "Decide whether the task",
            "tool_calls": [{"name": "PlanDecision", "args": {"split": True, "steps": STEPS}}],
        },
        {
            "when": "Some steps of the plan below have run",
            "tool_calls": [{"name": "PlanAdjustment", "args": {"change": False}}],
        },
    ]
    turns += [
        {
            "when": f"Inspect part {n}",
            "text": f"part {n} is fine !!!COMPLETE!!!",
            "delay": STEP_DELAY_S,
        }
        for n in range(1, 5)
    ]
    path = folder / "plan_script.yaml"
    path.write_text(yaml.safe_dump({"turns": turns}), encoding="utf-8")
    return path


def run_once(workspace: Path, script: Path, concurrency: int) -> dict[str, Any]:
    from langgraph.checkpoint.sqlite import SqliteSaver

    from jarvis_graph.context import JarvisContext
    from jarvis_graph.graphs.planner import build_planner_graph

    os.environ["JARVIS_PLAN_CONCURRENCY"] = str(concurrency)
    context = JarvisContext(
        workspace=str(workspace),
        platform="scripted",
        script=str(script),
        non_interactive=True,
        plan_max_depth=1,
    )
    db = workspace / f"{uuid.uuid4().hex}.sqlite"
    conn = sqlite3.connect(str(db), check_same_thread=False)
    try:
        graph = build_planner_graph().compile(checkpointer=SqliteSaver(conn))
        config = {"configurable": {"thread_id": "bench"}, "recursion_limit": 200}
        start = time.perf_counter()
        out = graph.invoke({"task": "Inspect the four parts"}, config, context=context)
        seconds = time.perf_counter() - start
    finally:
        conn.close()
    done = sum(1 for r in out.get("step_results", {}).values() if r["status"] == "completed")
    return {"seconds": seconds, "completed_steps": done, "status": out.get("status")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        for var in [v for v in os.environ if v.startswith("JARVIS_")]:
            del os.environ[var]
        os.environ.update(HOME=str(home), JARVIS_HOME=str(home / ".jarvis"))
        os.environ["LANGSMITH_TRACING"] = "false"
        workspace = Path(tmp) / "ws"
        workspace.mkdir()
        script = write_script(Path(tmp))
        run_once(workspace, script, 4)  # warm-up: imports, tool registry
        runs: dict[str, list[dict[str, Any]]] = {"parallel": [], "sequential": []}
        for _ in range(args.reps):
            runs["parallel"].append(run_once(workspace, script, 4))
            runs["sequential"].append(run_once(workspace, script, 1))
    report(runs, args.reps)


def report(runs: dict[str, list[dict[str, Any]]], reps: int) -> None:
    parallel = statistics.median(r["seconds"] for r in runs["parallel"])
    sequential = statistics.median(r["seconds"] for r in runs["sequential"])
    all_done = all(r["completed_steps"] == 4 for rs in runs.values() for r in rs)
    result = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "reps": reps,
        "steps": len(STEPS),
        "step_delay_s": STEP_DELAY_S,
        "parallel_s_median": round(parallel, 3),
        "sequential_s_median": round(sequential, 3),
        "speedup": round(sequential / parallel, 2),
        "parallel_runs_s": [round(r["seconds"], 3) for r in runs["parallel"]],
        "sequential_runs_s": [round(r["seconds"], 3) for r in runs["sequential"]],
        "all_steps_completed": all_done,
        "target": f"parallel < {PARALLEL_TARGET_S} s",
        "pass": parallel < PARALLEL_TARGET_S and all_done,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"four independent steps, {STEP_DELAY_S:g} s model delay each, {reps} reps (medians)")
    print(f"  parallel   (plan_concurrency 4): {parallel:.2f} s")
    print(f"  sequential (plan_concurrency 1): {sequential:.2f} s")
    print(f"  speed-up: {sequential / parallel:.1f}x; every step completed: {all_done}")
    verdict = "PASS" if result["pass"] else "FAIL"
    figures = f"parallel {parallel:.2f} s < {PARALLEL_TARGET_S} s (sequential {sequential:.2f} s)"
    print(f"{verdict}: {figures}")
    print(f"written to {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
