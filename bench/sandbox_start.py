"""Start cost of the sandbox: ``execute_script`` of ``echo hi`` sandboxed against unsandboxed.

Run with ``.venv/bin/python bench/sandbox_start.py`` (``--runs N``, default 50).

Each row calls the tool's implementation (``execute_script_impl``) the way a run does, on a
temporary workspace, ``N`` times per level, the levels interleaved call by call so that
drift hits them alike. The baseline is the same call with ``sandbox: off`` (the script
reaper, bash, nothing else): the cheapest fair comparison, since both run the same reaper
and script. Two sizes of script: ``echo hi`` (the start cost alone) and a Python start
(``python3 -c pass``, a typical first command). The added cost of a level is the median of
its calls minus the median of the baseline's.

Figures are printed and written to ``bench/results/sandbox_start.json``; a PASS/FAIL line
reports the target (under 30 ms added for bwrap with ``echo hi``). Always exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "sandbox_start.json"
TARGET_MS = 30.0
SCRIPTS = {"echo": "echo hi", "python": "python3 -c pass"}


def main() -> int:
    """Measure and report; see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="jarvis-bench-sandbox-"))
    os.environ["HOME"] = str(tmp / "home")
    os.environ["JARVIS_HOME"] = str(tmp / "home" / ".jarvis")
    (tmp / "home").mkdir()
    ws = tmp / "ws"
    ws.mkdir()
    sys.path.insert(0, str(ROOT))
    from jarvis_graph import sandbox
    from jarvis_graph.config import Settings
    from jarvis_graph.tools.base import ToolEnv
    from jarvis_graph.tools.builtin import execute_script_impl

    levels = ["off"] + [
        level
        for level in ("bwrap", "landlock")
        if sandbox.level_for(Settings(sandbox=level)).level == level
    ]
    envs = {level: ToolEnv(ws, Settings(sandbox=level)) for level in levels}
    rows: dict[str, dict[str, float]] = {}
    for size, script in SCRIPTS.items():
        times: dict[str, list[float]] = {level: [] for level in levels}
        for level in levels:  # one call each first: probes and caches are not measured
            execute_script_impl(envs[level], script)
        for _ in range(args.runs):
            for level in levels:
                start = time.perf_counter()
                out = execute_script_impl(envs[level], script)
                times[level].append((time.perf_counter() - start) * 1000)
                assert out.startswith("exit code: 0"), out
        base = statistics.median(times["off"])
        for level in levels:
            median = statistics.median(times[level])
            rows[f"{size}/{level}"] = {
                "median_ms": round(median, 2),
                "p90_ms": round(statistics.quantiles(times[level], n=10)[-1], 2),
                "added_ms": round(median - base, 2),
            }
    print(f"execute_script start cost, median of {args.runs} calls (ms)")
    print(f"{'script/level':<18}{'median':>9}{'p90':>9}{'added':>9}")
    for name, row in rows.items():
        print(f"{name:<18}{row['median_ms']:>9.1f}{row['p90_ms']:>9.1f}{row['added_ms']:>9.1f}")
    added = rows.get("echo/bwrap", {}).get("added_ms")
    if added is not None:
        verdict = "PASS" if added < TARGET_MS else "FAIL"
        print(f"{verdict}: bwrap adds {added:.1f} ms to `echo hi` (target < {TARGET_MS:g} ms)")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "runs": args.runs,
                "machine": {"cpus": os.cpu_count(), "kernel": platform.release()},
                "levels": {
                    level: sandbox.level_for(Settings(sandbox=level)).reason for level in levels
                },
                "rows": rows,
                "target_added_ms": TARGET_MS,
            },
            indent=2,
        )
        + "\n",
        encoding="utf-8",
    )
    print(f"written to {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
