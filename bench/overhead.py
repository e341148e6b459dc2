"""Framework overhead of the Jarvis agent graph, and start-up time of the CLI.

Run with ``.venv/bin/python bench/overhead.py`` (``--reps N`` for more repetitions).

1. Per-step overhead: the agent graph (``build_agent_graph()``) against a minimal hand-written
   LangGraph loop (``MessagesState``, one model node, ``ToolNode`` + ``tools_condition``), both
   driven by the same ``ScriptedChatModel`` through the same script: 100 turns with one cheap
   tool call each (``list_files`` on a tiny workspace), then a final answer. Measured without a
   checkpointer and with a ``SqliteSaver`` on a temporary file; median of several repetitions,
   the loops interleaved so drift hits them alike. A third loop, informational only, is the
   bare loop with the tool called inline: ``ToolNode`` starts a thread pool on every step.
2. Wall time of ``jarvis --help`` and of ``python -c "import jarvis_graph"``.

Figures are printed and written to ``bench/results/overhead.json``. The script always exits 0:
PASS/FAIL lines report the acceptance targets, they do not fail the run.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import json
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "overhead.json"
TOOL_TURNS = 100
MODEL_STEPS = TOOL_TURNS + 1  # the tool-call turns plus the final answer
RECURSION_LIMIT = 1000
RATIO_TARGET = 1.3
HELP_TARGET_S = 0.5
TASK = "List the files of the workspace again and again."

Runner = Callable[[Any], Callable[[], Any]]

if str(ROOT) not in sys.path:  # run from a checkout without installing the package
    sys.path.insert(0, str(ROOT))


def isolate_home(home: Path) -> dict[str, str]:
    """Point HOME/JARVIS_HOME at an empty folder so no user config or plugin is loaded."""
    env = {"HOME": str(home), "JARVIS_HOME": str(home / ".jarvis"), "LANGSMITH_TRACING": "false"}
    for var in [v for v in os.environ if v.startswith("JARVIS_")]:
        del os.environ[var]
    os.environ.update(env)
    return {**os.environ}


def write_fixtures(root: Path) -> tuple[Path, Path]:
    """A tiny workspace and the 100-tool-call script."""
    workspace = root / "ws"
    (workspace / "src").mkdir(parents=True)
    (workspace / "README.md").write_text("# demo\n", encoding="utf-8")
    (workspace / "src" / "main.py").write_text("print('hi')\n", encoding="utf-8")
    turns: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "list_files", "args": {"path": "."}}]} for _ in range(TOOL_TURNS)
    ]
    turns.append({"text": "The workspace holds two files. !!!COMPLETE!!!"})
    script = root / "script.json"
    script.write_text(json.dumps({"turns": turns}), encoding="utf-8")
    return workspace, script


def build_runners(workspace: Path, script: Path) -> dict[str, Runner]:
    """Per loop: ``compile(checkpointer) -> run()``; ``run()`` returns the final state."""
    from langchain_core.messages import HumanMessage, SystemMessage
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    from jarvis_graph.context import JarvisContext
    from jarvis_graph.graphs.agent import build_agent_graph
    from jarvis_graph.platforms.scripted import ScriptedChatModel
    from jarvis_graph.runtime.services import system_prompt
    from jarvis_graph.tools.builtin import BUILTIN_TOOLS

    context = {
        "workspace": str(workspace),
        "platform": "scripted",
        "script": str(script),
        "non_interactive": True,
        "max_iterations": MODEL_STEPS + 10,  # the default cap (40) would stop the run early
    }
    ours = build_agent_graph()

    model = ScriptedChatModel.from_file(script).bind_tools(BUILTIN_TOOLS)

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    bare = StateGraph(MessagesState, context_schema=JarvisContext)  # the tools read the workspace
    bare.add_node("agent", agent)
    bare.add_node("tools", ToolNode(BUILTIN_TOOLS))
    bare.add_edge(START, "agent")
    bare.add_conditional_edges("agent", tools_condition)
    bare.add_edge("tools", "agent")

    # Informational only: ToolNode runs even a single call in a fresh thread pool (a thread
    # start per step), so this variant runs the tool inline to show the irreducible cost.
    by_name = {t.name: t for t in BUILTIN_TOOLS}

    def tools(state: MessagesState) -> dict[str, Any]:
        calls = state["messages"][-1].tool_calls
        return {"messages": [by_name[c["name"]].invoke({**c, "type": "tool_call"}) for c in calls]}

    inline = StateGraph(MessagesState, context_schema=JarvisContext)
    inline.add_node("agent", agent)
    inline.add_node("tools", tools)
    inline.add_edge(START, "agent")
    inline.add_conditional_edges("agent", tools_condition)
    inline.add_edge("tools", "agent")
    # Same system prompt as ours, so both loops carry (and checkpoint) the same messages.
    prompt = system_prompt(JarvisContext(**context))

    def start(builder: Any, name: str, inputs: Callable[[], dict[str, Any]]) -> Runner:
        def run(checkpointer: Any) -> Callable[[], Any]:
            app = builder.compile(checkpointer=checkpointer, name=name)
            config = {"recursion_limit": RECURSION_LIMIT, "configurable": {"thread_id": "t"}}
            return lambda: app.invoke(inputs(), config, context=context)

        return run

    def bare_inputs() -> dict[str, Any]:
        return {"messages": [SystemMessage(content=prompt), HumanMessage(content=TASK)]}

    return {
        "ours": start(ours, "agent", lambda: {"task": TASK}),
        "bare": start(bare, "bare", bare_inputs),
        "bare_inline": start(inline, "bare_inline", bare_inputs),
    }


def check_run(name: str, state: dict[str, Any]) -> None:
    """Both loops must have made every tool call and seen the tiny workspace."""
    tool_messages = [m for m in state["messages"] if m.type == "tool"]
    ai_messages = [m for m in state["messages"] if m.type == "ai"]
    if len(tool_messages) != TOOL_TURNS or len(ai_messages) != MODEL_STEPS:
        msg = (
            f"{name}: expected {TOOL_TURNS} tool and {MODEL_STEPS} AI messages, got "
            f"{len(tool_messages)} and {len(ai_messages)} (status {state.get('status')!r})"
        )
        raise RuntimeError(msg)
    if "main.py" not in str(tool_messages[0].content):
        msg = f"{name}: list_files did not run on the tiny workspace: {tool_messages[0].content!r}"
        raise RuntimeError(msg)
    if name == "ours" and state.get("status") != "completed":
        msg = f"ours: run ended with status {state.get('status')!r}"
        raise RuntimeError(msg)


def time_run(compile_loop: Runner, name: str, saver: str, tmp: Path) -> dict[str, float]:
    """One timed run on a fresh graph; with ``saver == "sqlite"`` on a fresh database file.

    Compiling is timed apart: it happens once per process, not once per step.
    """
    conn = None
    checkpointer = None
    db = tmp / f"{name}-{uuid.uuid4().hex}.sqlite"
    if saver == "sqlite":
        from langgraph.checkpoint.sqlite import SqliteSaver

        conn = sqlite3.connect(db, check_same_thread=False)
        checkpointer = SqliteSaver(conn)
        checkpointer.setup()  # table creation is not part of the loop's cost
    start = time.perf_counter()
    run = compile_loop(checkpointer)
    compiled = time.perf_counter()
    gc.collect()
    start_run = time.perf_counter()
    state = run()
    elapsed = time.perf_counter() - start_run
    check_run(name, state)
    out = {"seconds": elapsed, "compile_s": compiled - start}
    if conn is not None:
        conn.close()
        out["db_bytes"] = db.stat().st_size
        db.unlink()
    return out


def bench_loops(reps: int, tmp: Path) -> dict[str, Any]:
    """Median per-step time of both loops, with and without a checkpointer."""
    workspace, script = write_fixtures(tmp)
    runners = build_runners(workspace, script)
    results: dict[str, Any] = {}
    for saver in ("none", "sqlite"):
        for name, run in runners.items():  # warm-up: imports, caches, first compile
            time_run(run, name, saver, tmp)
        samples: dict[str, list[dict[str, float]]] = {name: [] for name in runners}
        for rep in range(reps):
            order = list(runners) if rep % 2 == 0 else list(reversed(runners))
            for name in order:
                samples[name].append(time_run(runners[name], name, saver, tmp))
        row: dict[str, Any] = {}
        for name, runs in samples.items():
            seconds = [r["seconds"] for r in runs]
            median = statistics.median(seconds)
            row[name] = {
                "compile_ms_median": statistics.median(r["compile_s"] for r in runs) * 1000,
                "total_s_median": median,
                "per_step_ms_median": median / MODEL_STEPS * 1000,
                "per_step_ms_min": min(seconds) / MODEL_STEPS * 1000,
                "totals_s": seconds,
            }
            if "db_bytes" in runs[0]:
                row[name]["db_bytes"] = runs[0]["db_bytes"]
        for base in ("bare", "bare_inline"):
            ours, other = row["ours"], row[base]
            row[f"ratio_ours_over_{base}"] = ours["total_s_median"] / other["total_s_median"]
            # Less sensitive to other load on the machine: best runs, and runs side by side.
            row[f"ratio_ours_over_{base}_min"] = min(ours["totals_s"]) / min(other["totals_s"])
            paired = [a / b for a, b in zip(ours["totals_s"], other["totals_s"], strict=True)]
            row[f"ratio_ours_over_{base}_paired_median"] = statistics.median(paired)
        results[saver] = row
    return results


def cli_command() -> tuple[list[str] | None, str]:
    """How to start ``jarvis``: the console script, else the module, else the app function."""
    script = Path(sys.executable).parent / ("jarvis.exe" if os.name == "nt" else "jarvis")
    if script.is_file():
        return [str(script)], str(script)
    cli = ROOT / "jarvis_graph" / "cli"
    if (cli / "__main__.py").is_file():
        return [sys.executable, "-m", "jarvis_graph.cli"], "python -m jarvis_graph.cli"
    if (cli / "app.py").is_file():
        code = "import sys; from jarvis_graph.cli.app import main; sys.exit(main())"
        return [sys.executable, "-c", code], "python -c 'jarvis_graph.cli.app:main()'"
    return None, "missing"


def time_command(cmd: list[str], runs: int, env: dict[str, str]) -> dict[str, Any]:
    """Median wall time of a subprocess (after one untimed run to warm the file cache)."""
    env = {**env, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))}
    first = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    if first.returncode != 0:
        lines = (first.stderr or first.stdout).strip().splitlines() or ["(no output)"]
        error = f"exit code {first.returncode}: {lines[-1]}"
        return {"ok": False, "returncode": first.returncode, "error": error}
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, capture_output=True, env=env, cwd=ROOT, check=False)
        times.append(time.perf_counter() - start)
    return {"ok": True, "median_s": statistics.median(times), "times_s": times}


def bench_startup(runs: int, env: dict[str, str]) -> dict[str, Any]:
    """``jarvis --help`` and a bare ``import jarvis_graph``."""
    cmd, how = cli_command()
    help_result: dict[str, Any] = {"command": how}
    if cmd is None:
        help_result.update(
            ok=False, missing=True, error="missing: the CLI does not exist yet (jarvis_graph/cli/)"
        )
    else:
        help_result.update(time_command([*cmd, "--help"], runs, env))
    imp = time_command([sys.executable, "-c", "import jarvis_graph"], runs, env)
    python = time_command([sys.executable, "-c", "pass"], runs, env)
    return {"jarvis_help": help_result, "import_jarvis_graph": imp, "python_startup": python}


def package_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def jarvis_version() -> str:
    from jarvis_graph import __version__

    return __version__


def verdict(ok: bool | None) -> str:
    return "PASS" if ok else ("FAIL" if ok is not None else "N/A ")


def report(loops: dict[str, Any], startup: dict[str, Any]) -> dict[str, Any]:
    """Print the figures and the targets; return the targets for the JSON."""
    print(f"\nPer-step time ({MODEL_STEPS} model steps, {TOOL_TURNS} list_files calls), median ms:")
    print(
        f"  {'checkpointer':<13}{'ours':>8}{'bare':>8}{'ratio':>7}"
        f"{'inline':>9}{'ratio':>7}{'db ours':>10}{'db bare':>10}"
    )
    for saver, row in loops.items():
        ours, bare, inline = row["ours"], row["bare"], row["bare_inline"]
        dbs = [f"{r['db_bytes'] / 1024:.0f} KiB" if "db_bytes" in r else "-" for r in (ours, bare)]
        print(
            f"  {saver:<13}{ours['per_step_ms_median']:>8.2f}{bare['per_step_ms_median']:>8.2f}"
            f"{row['ratio_ours_over_bare']:>7.2f}{inline['per_step_ms_median']:>9.2f}"
            f"{row['ratio_ours_over_bare_inline']:>7.2f}{dbs[0]:>10}{dbs[1]:>10}"
        )
    print(
        "  bare = MessagesState + ToolNode + tools_condition (the baseline of the target); "
        "inline = the same loop with the tool called inline instead of through ToolNode"
    )
    print("\nStart-up (median wall time):")
    for key, label in (
        ("jarvis_help", "jarvis --help"),
        ("import_jarvis_graph", 'python -c "import jarvis_graph"'),
        ("python_startup", 'python -c "pass"'),
    ):
        res = startup[key]
        shown = f"{res['median_s']:.3f} s" if res.get("ok") else f"not measured: {res['error']}"
        print(f"  {label:<34}{shown}")
    ratio = loops["none"]["ratio_ours_over_bare"]
    help_res = startup["jarvis_help"]
    if help_res.get("ok"):
        help_ok: bool | None = help_res["median_s"] < HELP_TARGET_S
        shown = f"{help_res['median_s']:.3f} s"
    elif help_res.get("missing") or "skipped" in help_res.get("error", ""):
        help_ok, shown = None, help_res["error"]  # not a verdict on a CLI nobody ran
    else:
        help_ok, shown = False, f"the CLI failed ({help_res['error']})"
    targets = {
        "ratio_no_checkpointer": {
            "target": f"<= {RATIO_TARGET}",
            "value": ratio,
            "pass": ratio <= RATIO_TARGET,
        },
        "jarvis_help_s": {
            "target": f"< {HELP_TARGET_S}",
            "value": help_res.get("median_s"),
            "pass": help_ok,
        },
    }
    print("\nTargets:")
    print(
        f"  [{verdict(ratio <= RATIO_TARGET)}] ours/bare per step, no checkpointer: "
        f"{ratio:.2f} (target <= {RATIO_TARGET})"
    )
    sqlite_ratio = loops["sqlite"]["ratio_ours_over_bare"]
    print(f"  [info] ours/bare per step, SqliteSaver: {sqlite_ratio:.2f} (no target)")
    for saver, row in loops.items():
        print(
            f"  [info] {saver}: ratio of best runs {row['ratio_ours_over_bare_min']:.2f}, "
            f"median of side-by-side ratios {row['ratio_ours_over_bare_paired_median']:.2f}; "
            f"vs inline {row['ratio_ours_over_bare_inline']:.2f}"
        )
    print(f"  [{verdict(help_ok)}] jarvis --help median: {shown} (target < {HELP_TARGET_S} s)")
    return targets


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=7, help="timed runs per loop and saver")
    parser.add_argument("--cli-runs", type=int, default=7, help="timed runs of each command")
    parser.add_argument("--skip-cli", action="store_true", help="only measure the loops")
    parser.add_argument("--output", type=Path, default=RESULTS, help="where to write the JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="jarvis-bench-") as tmp_name:
        tmp = Path(tmp_name)
        env = isolate_home(tmp / "home")
        startup = {} if args.skip_cli else bench_startup(args.cli_runs, env)
        loops = bench_loops(args.reps, tmp)
    if args.skip_cli:
        missing = {"ok": False, "error": "skipped (--skip-cli)"}
        startup = {k: missing for k in ("jarvis_help", "import_jarvis_graph", "python_startup")}
    targets = report(loops, startup)
    data = {
        "benchmark": "overhead",
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": {
            "nproc": len(os.sched_getaffinity(0))
            if hasattr(os, "sched_getaffinity")
            else os.cpu_count(),
            "cpu_count": os.cpu_count(),
            "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(),
        },
        "versions": {
            "python": platform.python_version(),
            "langgraph": package_version("langgraph"),
            "langgraph-prebuilt": package_version("langgraph-prebuilt"),
            "langgraph-checkpoint-sqlite": package_version("langgraph-checkpoint-sqlite"),
            "langchain-core": package_version("langchain-core"),
            "jarvis-graph": jarvis_version(),
        },
        "setup": {
            "tool_turns": TOOL_TURNS,
            "model_steps": MODEL_STEPS,
            "tool": "list_files on a 2-file workspace",
            "repetitions": args.reps,
            "cli_runs": args.cli_runs,
            "recursion_limit": RECURSION_LIMIT,
            "per_step": "total wall time / model steps",
        },
        "loops": loops,
        "startup": startup,
        "targets": targets,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print(f"\nWrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
