"""Short tasks: the fixed cost of a 1- and a 3-step run, and what a one-step run loads.

Run alone with ``.venv/bin/python bench/short_task.py``; ``bench/overhead.py`` prints the
same rows. Three figures:

1. **Fixed cost** (in process, warm): a scripted task of 1 step (the answer) and of 3 steps
   (two ``list_files`` calls, then the answer), the agent graph against the cheapest
   LangGraph loop doing the same work (``MessagesState``, the same scripted model, the tool
   called inline); the median over interleaved runs, ours minus the bare loop.
2. **What a one-step run loads**: ``jarvis run`` (scripted, one step) in a fresh process;
   its peak RSS and which heavy modules it imported (embedder, vector index, providers).
3. **Time to first output**: from starting ``jarvis run`` to its first line, against
   ``python -c "from langgraph.graph import StateGraph"`` in the same run (interleaved).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "short_task.json"
FIXED_COST_TARGET_MS = 15.0
RSS_TARGET_MB = 150.0
FIRST_OUTPUT_TARGET = 1.2
HEAVY = ("onnxruntime", "faiss", "tokenizers", "langchain_openai", "llama_cpp", "openai")
TASK = "List the files of the workspace."

# The CLI run in this interpreter, then what it imported and its peak RSS.
PROBE = """
import json, sys
from jarvis_graph.cli.app import app
code = 0
try:
    app(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
heavy = [m for m in HEAVY_NAMES if m in sys.modules]
# VmHWM: the peak of this process's memory (ru_maxrss would include the parent's when
# it started us by vfork, and it survives exec)
status = open("/proc/self/status").read().split("VmHWM:")[1].split()
rss = int(status[0]) / 1024
print("PROBE " + json.dumps({"code": code, "heavy": heavy, "rss_mb": rss}))
""".replace("HEAVY_NAMES", repr(HEAVY))


def isolate(home: Path) -> dict[str, str]:
    """Environment without user config: HOME and the Jarvis folders in ``home``."""
    for var in [v for v in os.environ if v.startswith("JARVIS_")]:
        del os.environ[var]
    os.environ.update(
        {"HOME": str(home), "JARVIS_HOME": str(home / ".jarvis"), "LANGSMITH_TRACING": "false"}
    )
    return dict(os.environ)


def write_task(root: Path, steps: int) -> tuple[Path, Path]:
    """A workspace and a script of ``steps`` model steps (the last one answers)."""
    workspace = root / f"ws{steps}"
    (workspace / "src").mkdir(parents=True, exist_ok=True)
    (workspace / "README.md").write_text("# demo\n", encoding="utf-8")
    (workspace / "src" / "main.py").write_text("print('hi')\n", encoding="utf-8")
    turns: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "list_files", "args": {"path": "."}}]} for _ in range(steps - 1)
    ]
    turns.append({"text": "Two files. !!!COMPLETE!!!"})
    script = root / f"short{steps}.json"
    script.write_text(json.dumps({"turns": turns}), encoding="utf-8")
    return workspace, script


def bare_loop(script: Path, tool_node: bool = False) -> Any:
    """The cheapest hand-written LangGraph loop on ``script``: ``MessagesState``, one model
    node, the tools called inline (``tool_node``: through ``ToolNode`` + ``tools_condition``).
    """
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    from jarvis_graph.context import JarvisContext
    from jarvis_graph.platforms.scripted import ScriptedChatModel
    from jarvis_graph.tools.builtin import BUILTIN_TOOLS

    by_name = {t.name: t for t in BUILTIN_TOOLS}
    # The script's turn is chosen by the AI messages so far: every run starts at turn one.
    model = ScriptedChatModel.from_file(script).bind_tools(BUILTIN_TOOLS)

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    def tools(state: MessagesState) -> dict[str, Any]:
        calls = state["messages"][-1].tool_calls  # type: ignore[union-attr]
        return {"messages": [by_name[c["name"]].invoke({**c, "type": "tool_call"}) for c in calls]}

    loop = StateGraph(MessagesState, context_schema=JarvisContext)  # the tools read the workspace
    loop.add_node("agent", agent)
    loop.add_node("tools", ToolNode(BUILTIN_TOOLS) if tool_node else tools)
    loop.add_edge(START, "agent")
    loop.add_conditional_edges("agent", tools_condition)
    loop.add_edge("tools", "agent")
    return loop


def loops(workspace: Path, script: Path) -> dict[str, Any]:
    """``name -> run()`` for the agent graph and the bare loop on one script."""
    from langchain_core.messages import HumanMessage, SystemMessage

    from jarvis_graph.context import JarvisContext
    from jarvis_graph.graphs.agent import build_agent_graph
    from jarvis_graph.runtime.services import RunServices

    context: dict[str, Any] = {
        "workspace": str(workspace),
        "platform": "scripted",
        "script": str(script),
        "non_interactive": True,
    }
    bare_app = bare_loop(script).compile()
    ours_app = build_agent_graph().compile()
    prompt = RunServices(JarvisContext(**context)).system_prompt(TASK)

    def run_bare() -> Any:
        messages = [SystemMessage(content=prompt), HumanMessage(content=TASK)]
        return bare_app.invoke({"messages": messages}, context=context)

    def run_ours() -> Any:
        return ours_app.invoke({"task": TASK}, context=context)

    return {"ours": run_ours, "bare": run_bare}


def settle() -> None:
    """After-answer work (the episodic archive) is not charged to the next run."""
    from jarvis_graph.memory.background import wait_for_background

    wait_for_background()


def fixed_cost(reps: int, root: Path) -> dict[str, Any]:
    """Median wall time of each loop per task length; ours minus bare."""
    out: dict[str, Any] = {}
    for steps in (1, 3):
        runs = loops(*write_task(root, steps))
        for run in runs.values():  # warm-up: imports, first compile, first services
            run()
            settle()
        times: dict[str, list[float]] = {name: [] for name in runs}
        for rep in range(reps):
            for name in runs if rep % 2 == 0 else reversed(list(runs)):
                start = time.perf_counter()
                state = runs[name]()
                times[name].append(time.perf_counter() - start)
                settle()
                ai = [m for m in state["messages"] if m.type == "ai"]
                if len(ai) != steps:
                    msg = f"{name}: {len(ai)} model steps instead of {steps}"
                    raise RuntimeError(msg)
        ours, bare = (statistics.median(times[n]) * 1000 for n in ("ours", "bare"))
        out[f"{steps}_step"] = {
            "ours_ms": ours,
            "bare_ms": bare,
            "fixed_cost_ms": ours - bare,
            "ours_runs_ms": [t * 1000 for t in times["ours"]],
            "bare_runs_ms": [t * 1000 for t in times["bare"]],
        }
    return out


def probe_run(root: Path, env: dict[str, str]) -> dict[str, Any]:
    """A one-step ``jarvis run`` in a fresh process: exit code, heavy imports, peak RSS."""
    workspace, script = write_task(root / "probe", 1)
    args = ["run", "-n", "--yes", "--platform", "scripted", "--script", str(script), TASK]
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        cwd=workspace,
        capture_output=True,
        text=True,
        env={**env, "PYTHONPATH": str(ROOT)},
        timeout=300,
    )
    if "PROBE " not in proc.stdout:
        return {"ok": False, "error": (proc.stderr or proc.stdout)[-500:]}
    return {"ok": True, **json.loads(proc.stdout.rsplit("PROBE ", 1)[-1])}


def first_output(runs: int, root: Path, env: dict[str, str]) -> dict[str, Any]:
    """Time to the first line of ``jarvis run`` against importing LangGraph, interleaved."""
    workspace, script = write_task(root / "first", 1)
    jarvis = [sys.executable, "-m", "jarvis_graph.cli"]
    cmd = [*jarvis, "run", "-n", "--yes", "--platform", "scripted", "--script", str(script), TASK]
    env = {**env, "PYTHONPATH": str(ROOT)}
    lines: list[float] = []
    imports: list[float] = []
    first_line = ""
    for _ in range(runs + 1):  # the first pair warms the file cache
        start = time.perf_counter()
        proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=workspace, env=env
        )
        assert proc.stdout is not None
        first_line = proc.stdout.readline().decode(errors="replace").strip()
        lines.append(time.perf_counter() - start)
        proc.stdout.read()
        proc.wait()
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-c", "from langgraph.graph import StateGraph"], env=env, check=True
        )
        imports.append(time.perf_counter() - start)
    line, imp = statistics.median(lines[1:]), statistics.median(imports[1:])
    return {
        "first_output_s": line,
        "langgraph_import_s": imp,
        "ratio": line / imp,
        "first_line": first_line,
        "first_output_runs_s": lines[1:],
        "langgraph_import_runs_s": imports[1:],
    }


def measure(reps: int, cli_runs: int) -> dict[str, Any]:
    """Every short-task figure, in a temporary home."""
    with tempfile.TemporaryDirectory(prefix="jarvis-bench-short-") as tmp:
        root = Path(tmp)
        env = isolate(root / "home")
        return {
            "fixed_cost": fixed_cost(reps, root),
            "probe": probe_run(root, env),
            "first_output": first_output(cli_runs, root, env),
        }


def report(result: dict[str, Any]) -> dict[str, Any]:
    """Print the rows and the PASS/FAIL lines; return the checks."""
    print("\nShort tasks (median ms, warm process, no checkpointer):")
    print(f"  {'steps':<7}{'ours':>9}{'bare':>9}{'fixed cost':>12}")
    checks: dict[str, Any] = {}
    for key, row in result["fixed_cost"].items():
        print(
            f"  {key.split('_')[0]:<7}{row['ours_ms']:>9.1f}{row['bare_ms']:>9.1f}"
            f"{row['fixed_cost_ms']:>12.1f}"
        )
        ok = row["fixed_cost_ms"] <= FIXED_COST_TARGET_MS
        checks[f"fixed_cost_{key}"] = ok
        print(
            f"  [{'PASS' if ok else 'FAIL'}] {key.replace('_', '-')} task: ours minus bare "
            f"{row['fixed_cost_ms']:.1f} ms (target <= {FIXED_COST_TARGET_MS:.0f} ms)"
        )
    probe = result["probe"]
    if probe.get("ok"):
        ok = probe["rss_mb"] <= RSS_TARGET_MB and not probe["heavy"] and probe["code"] in (0, None)
        checks["one_step_run"] = ok
        print(
            f"  [{'PASS' if ok else 'FAIL'}] one-step scripted `jarvis run`: peak RSS "
            f"{probe['rss_mb']:.0f} MB (target <= {RSS_TARGET_MB:.0f}), heavy modules loaded: "
            f"{', '.join(probe['heavy']) or 'none'} (exit {probe['code']})"
        )
    else:
        checks["one_step_run"] = False
        print(f"  [FAIL] one-step scripted `jarvis run` failed: {probe['error']}")
    first = result["first_output"]
    ok = first["ratio"] <= FIRST_OUTPUT_TARGET
    checks["first_output"] = ok
    print(
        f"  [{'PASS' if ok else 'FAIL'}] `jarvis run` to first output "
        f"{first['first_output_s']:.2f} s"
        f" = {first['ratio']:.2f}x `from langgraph.graph import StateGraph` "
        f"({first['langgraph_import_s']:.2f} s; target <= {FIRST_OUTPUT_TARGET})"
    )
    return checks


def main() -> None:
    import argparse
    import datetime as dt

    if str(ROOT) not in sys.path:  # run from a checkout without installing the package
        sys.path.insert(0, str(ROOT))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=15, help="timed runs per loop and length")
    parser.add_argument("--cli-runs", type=int, default=7, help="timed `jarvis run` starts")
    args = parser.parse_args()
    result = measure(args.reps, args.cli_runs)
    checks = report(result)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        **result,
        "checks": checks,
    }
    RESULTS.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    print(f"written to {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
