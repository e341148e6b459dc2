"""Kill -9 a run at random points and resume it: nothing recorded runs twice, nothing is left.

Run with ``.venv/bin/python bench/kill_resume.py`` (``--kills N``, ``--seed S``, ``--jobs J``).

A scripted 6-step run (``jarvis run -n --yes --platform scripted``) in a temporary
workspace with a temporary HOME: each step is an ``execute_script`` call that appends
``step-K`` to ``steps.log`` when it starts, and steps 2, 4 and 6 then ``sleep`` so that
kills land during tool calls too; such a step whose agent was killed meanwhile goes on
sleeping for a minute (a script that outlives its agent, as a long build would), so a
resume that does not end it leaves it running. Calibration runs (not killed) give the
time the six steps take; each trial then starts the run afresh, sends SIGKILL to the agent
process at a random point of that span after its session line (seeded; the points are
printed; start-up time varies with the machine's load and is left out), and resumes it
with ``jarvis sessions resume <thread> -n --yes`` until it completes.

Per trial, from the session DB after the kill and after the resume:

- **re-run recorded calls**: calls whose result (a ToolMessage) was recorded before the
  kill and whose step line appears more than once. Target 0.
- **in-flight calls**: calls started (their line written) but not recorded at the kill;
  resuming runs them again by design. Reported apart.
- **orphaned processes**: processes still alive after the resume whose working directory
  is in the trial's folder or whose command line holds the run's marker. Target 0.
- **corrupt DBs**: ``PRAGMA integrity_check`` not ``ok`` after the kill or after the
  resume, or the thread not loading. Target 0.

Figures are printed and written to ``bench/results/kill_resume.json``; exits 0.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import re
import secrets
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "kill_resume.json"
STEPS = 6
SLEEP = 0.6  # seconds the even steps sleep
LINGER = 60  # seconds they go on sleeping when their agent was killed meanwhile

if str(ROOT) not in sys.path:  # run from a checkout without installing the package
    sys.path.insert(0, str(ROOT))


def script_turns(marker: str) -> dict[str, Any]:
    """The scripted model's turns: one execute_script per step, then the answer."""
    turns: list[dict[str, Any]] = []
    for k in range(1, STEPS + 1):
        body = f": {marker}; echo step-{k} >> steps.log"
        if k % 2 == 0:  # outlives its agent (as a long build or server would) if it is killed
            body += f"; p=$PPID; sleep {SLEEP}; kill -0 $p 2>/dev/null || sleep {LINGER}"
        turns.append({"tool_calls": [{"name": "execute_script", "args": {"script": body}}]})
    turns.append({"text": "all six steps done !!!COMPLETE!!!"})
    return {"turns": turns}


def env_for(home: Path) -> dict[str, str]:
    """The user's environment without Jarvis settings, HOME in the trial's folder."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("JARVIS_")}
    env.update(
        HOME=str(home),
        JARVIS_HOME=str(home / ".jarvis"),
        LANGSMITH_TRACING="false",
        PYTHONUNBUFFERED="1",
        COLUMNS="200",
    )
    return env


def jarvis(args: list[str], ws: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "jarvis_graph.cli", *args],
        cwd=ws,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )


def setup(folder: Path) -> tuple[Path, Path, dict[str, str], str]:
    """A workspace, its script file, the environment and the script's marker."""
    ws, home = folder / "ws", folder / "home"
    ws.mkdir(parents=True)
    home.mkdir()
    marker = f"kill-resume-{secrets.token_hex(4)}"
    script = folder / "steps.yaml"
    script.write_text(yaml.safe_dump(script_turns(marker)))
    return ws, script, env_for(home), marker


def run_args(script: Path) -> list[str]:
    return ["run", "-n", "--yes", "--platform", "scripted", "--script", str(script), "six steps"]


def thread_of(output: str) -> str | None:
    found = re.search(r"session (\S+) · workspace", output)
    return found.group(1) if found else None


def step_counts(ws: Path) -> dict[int, int]:
    path = ws / "steps.log"
    lines = path.read_text().splitlines() if path.exists() else []
    return {k: lines.count(f"step-{k}") for k in range(1, STEPS + 1)}


def recorded_steps(ws: Path, thread: str) -> set[int] | None:
    """Steps whose ToolMessage the thread holds; None if the thread does not load.

    ``get_state`` counts the results a step saved before its checkpoint was written (a
    kill can land in between): a resume uses them and must not run those calls again.
    """
    from jarvis_graph.checkpointing import open_checkpointer
    from jarvis_graph.graphs.agent import build_agent_graph

    try:
        with open_checkpointer(ws) as saver:
            graph = build_agent_graph().compile(checkpointer=saver)
            state = graph.get_state({"configurable": {"thread_id": thread}})
    except Exception:
        return None
    messages = state.values.get("messages", [])
    # The scripted platform names the call of turn i (0-based) call_i_0: step i + 1.
    return {int(m.tool_call_id.split("_")[1]) + 1 for m in messages if m.type == "tool"}


def db_ok(ws: Path) -> bool:
    path = ws / ".jarvis" / "sessions.sqlite"
    if not path.exists():
        return True
    conn = sqlite3.connect(path)
    try:
        return conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    except sqlite3.DatabaseError:
        return False
    finally:
        conn.close()


def leftovers(folder: Path, marker: str) -> list[int]:
    """Live processes working in ``folder`` or carrying ``marker`` (zombies excluded)."""
    found = []
    with os.scandir("/proc") as entries:
        names = [entry.name for entry in entries if entry.name.isdigit()]
    for name in names:
        try:
            stat = Path(f"/proc/{name}/stat").read_text()
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes().decode(errors="replace")
            cwd = os.readlink(f"/proc/{name}/cwd")
        except OSError:
            continue
        if stat.rsplit(")", 1)[-1].split()[0] in ("Z", "X"):
            continue
        if marker in cmdline or Path(cwd).is_relative_to(folder):
            found.append(int(name))
    return found


def calibrate(tmp: Path, jobs: int) -> tuple[float, float, float]:
    """Seconds to the session line, to the last step's result and to the end of an unkilled
    run (``jobs`` at once, as the trials run)."""

    def one(n: int) -> tuple[float, float, float]:
        ws, script, env, _ = setup(tmp / f"calibrate-{n}")
        start = time.monotonic()
        proc = jarvis(run_args(script), ws, env)
        assert proc.stdout is not None
        first = last_step = 0.0
        for line in proc.stdout:
            if not first and thread_of(line):
                first = time.monotonic() - start
            if "↳ execute_script" in line:
                last_step = time.monotonic() - start
        code = proc.wait()
        if code != 0 or step_counts(ws) != dict.fromkeys(range(1, STEPS + 1), 1):
            raise SystemExit(f"calibration run failed (exit {code}); see {ws}")
        return first, last_step, time.monotonic() - start

    with ThreadPoolExecutor(jobs) as pool:
        times = list(pool.map(one, range(jobs)))
    to_session, to_steps, to_end = (sum(t[i] for t in times) / jobs for i in range(3))
    return to_session, to_steps, to_end


def trial(tmp: Path, n: int, kill_at: float) -> dict[str, Any]:
    """One run killed ``kill_at`` seconds after its session line, then resumed to the end."""
    folder = tmp / f"trial-{n:02d}"
    ws, script, env, marker = setup(folder)
    proc = jarvis(run_args(script), ws, env)
    assert proc.stdout is not None
    head = ""
    while not thread_of(head):  # start-up time varies with the machine's load: skip it
        line = proc.stdout.readline()
        if not line:
            break
        head += line
    time.sleep(kill_at)
    proc.send_signal(signal.SIGKILL)
    rest, _ = proc.communicate()
    out = head + rest
    thread = thread_of(out)
    before = step_counts(ws)
    started = {k for k, c in before.items() if c}
    recorded = recorded_steps(ws, thread) if thread else set()
    corrupt = not db_ok(ws) or recorded is None
    left_running = len(leftovers(folder, marker))
    result: dict[str, Any] = {"trial": n, "kill_at_s": round(kill_at, 3), "thread": thread}
    result |= {"recorded_at_kill": sorted(recorded or []), "started_at_kill": sorted(started)}
    if thread is None or (recorded == set() and not started and not _has_thread(ws, thread)):
        # Killed before the session's first checkpoint: nothing to resume; start again.
        result["resumed"] = "started afresh (killed before the first checkpoint)"
        rerun = jarvis(run_args(script), ws, env)
        out2, _ = rerun.communicate()
        code, thread = rerun.returncode, thread_of(out2)
    else:
        resume = jarvis(["sessions", "resume", thread, "-n", "--yes"], ws, env)
        out2, _ = resume.communicate()
        code = resume.returncode
        result["resumed"] = "resumed"
    after = step_counts(ws)
    final = recorded_steps(ws, thread) if thread else None
    corrupt = corrupt or not db_ok(ws) or final is None
    in_flight = started - (recorded or set())
    result |= {
        "exit_code": code,
        "completed": code == 0 and final == set(range(1, STEPS + 1)),
        "step_lines": after,
        "rerun_recorded": sum(after[k] - 1 for k in (recorded or set())),
        "in_flight": len(in_flight),
        "in_flight_rerun": sum(1 for k in in_flight if after[k] > 1),
        "processes_running_after_kill": left_running,
        "orphans": len(orphans := leftovers(folder, marker)),
        "corrupt_db": corrupt,
    }
    for pid in orphans:  # counted: now end them, the benchmark leaves nothing behind
        try:
            group = os.getpgid(pid)
            if group == os.getpgrp():  # never this benchmark's own group
                os.kill(pid, signal.SIGKILL)
            else:
                os.killpg(group, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    if not result["completed"]:
        result["output"] = out2[-2000:]
    return result


def _has_thread(ws: Path, thread: str) -> bool:
    path = ws / ".jarvis" / "sessions.sqlite"
    if not path.exists():
        return False
    conn = sqlite3.connect(path)
    try:
        sql = "SELECT COUNT(*) FROM checkpoints WHERE thread_id = ?"
        return bool(conn.execute(sql, (thread,)).fetchone()[0])
    except sqlite3.OperationalError:
        return False
    finally:
        conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=30, help="runs to kill (default 30)")
    parser.add_argument("--seed", type=int, default=18, help="seed of the kill points")
    parser.add_argument("--jobs", type=int, default=2, help="trials at once (default 2)")
    args = parser.parse_args()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="jarvis-kill-resume-") as tmp_name:
        tmp = Path(tmp_name)
        to_session, to_steps, length = calibrate(tmp, args.jobs)
        rng = random.Random(args.seed)
        # Seconds after the session line: over the six steps, and a little after (the
        # final answer, the task's completion and the process's end follow).
        points = [rng.uniform(0, (to_steps - to_session) * 1.2) for _ in range(args.kills)]
        print(
            f"calibration: session after {to_session:.2f} s, last step after {to_steps:.2f} s, "
            f"run ends after {length:.2f} s"
        )
        print(
            f"seed {args.seed}; kill points (s after the session line): "
            + ", ".join(f"{p:.2f}" for p in points)
        )
        with ThreadPoolExecutor(args.jobs) as pool:
            trials = list(pool.map(lambda a: trial(tmp, *a), enumerate(points)))
    summary = summarize(trials, time.monotonic() - started)
    report(summary, trials)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "date": dt.datetime.now().isoformat(timespec="seconds"),
        "seed": args.seed,
        "kills": args.kills,
        "jobs": args.jobs,
        "calibration_s": {
            "to_session": round(to_session, 3),
            "to_last_step": round(to_steps, 3),
            "run": round(length, 3),
        },
        "summary": summary,
        "trials": trials,
    }
    RESULTS.write_text(json.dumps(payload, indent=2) + "\n")
    print(f"written {RESULTS.relative_to(ROOT)}")


def summarize(trials: list[dict[str, Any]], seconds: float) -> dict[str, Any]:
    return {
        "trials": len(trials),
        "completed": sum(t["completed"] for t in trials),
        "killed_during_a_tool_call": sum(1 for t in trials if t["in_flight"]),
        "killed_before_first_checkpoint": sum(1 for t in trials if t["resumed"] != "resumed"),
        "rerun_recorded_calls": sum(t["rerun_recorded"] for t in trials),
        "in_flight_calls": sum(t["in_flight"] for t in trials),
        "in_flight_calls_rerun": sum(t["in_flight_rerun"] for t in trials),
        "processes_left_running_by_kills": sum(t["processes_running_after_kill"] for t in trials),
        "orphaned_processes": sum(t["orphans"] for t in trials),
        "corrupt_dbs": sum(t["corrupt_db"] for t in trials),
        "seconds": round(seconds, 1),
    }


def report(summary: dict[str, Any], trials: list[dict[str, Any]]) -> None:
    for t in trials:
        print(
            f"  #{t['trial']:02d} kill at {t['kill_at_s']:5.2f} s · recorded "
            f"{t['recorded_at_kill']} · in flight {t['in_flight']} · {t['resumed']} · "
            f"{'completed' if t['completed'] else 'NOT COMPLETED'}"
        )
    for key, value in summary.items():
        print(f"{key.replace('_', ' ')}: {value}")
    for key in ("rerun_recorded_calls", "orphaned_processes", "corrupt_dbs"):
        verdict = "PASS" if summary[key] == 0 else "FAIL"
        print(f"{verdict} {key.replace('_', ' ')} = {summary[key]} (target 0)")
    verdict = "PASS" if summary["completed"] == summary["trials"] else "FAIL"
    done = f"{summary['completed']}/{summary['trials']}"
    print(f"{verdict} every killed run completed after resume ({done})")


if __name__ == "__main__":
    main()
