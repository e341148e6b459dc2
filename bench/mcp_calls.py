"""Latency of one MCP tool call over stdio: a long-lived session against a session per call.

Run with ``.venv/bin/python bench/mcp_calls.py`` (``--calls N`` for more calls).

Both sides call ``echo`` on the test suite's FastMCP fixture server
(``tests/support/mcp_fixture_server.py``, started with this interpreter) in the same run,
interleaved so that other load on the machine hits them alike:

- **long-lived**: the tool as the agent sees it (``ToolRegistry`` -> ``McpHub``): one
  server process and session for the whole run, the call submitted from a plain thread
  as the ``run_tools`` node does. Opening the session is timed apart.
- **per call**: langchain-mcp-adapters' ``MultiServerMCPClient.get_tools()`` without a held
  session, where every call starts the server, initialises a session and closes it.

Figures (medians, in milliseconds) are printed and written to
``bench/results/mcp_calls.json``. The script always exits 0.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "mcp_calls.json"
sys.path.insert(0, str(ROOT))  # the fixture server is imported as tests.support...


def server_entry() -> dict[str, Any]:
    return {
        "name": "fixture",
        "type": "stdio",
        "command": sys.executable,
        "args": ["-m", "tests.support.mcp_fixture_server", "stdio"],
        "cwd": str(ROOT),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=15, help="calls per side (default 15)")
    args = parser.parse_args()

    from langchain_mcp_adapters.client import MultiServerMCPClient

    from jarvis_graph.config import Settings
    from jarvis_graph.tools.registry import build_registry

    entry = server_entry()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["JARVIS_HOME"] = str(Path(tmp) / "home")  # no user tools, no user mcp.json
        started = time.perf_counter()
        registry = build_registry(Settings.model_validate({"mcp": [entry]}), Path(tmp))
        open_ms = (time.perf_counter() - started) * 1000
        assert not registry.problems, registry.problems
        held = registry.tools["fixture__echo"]
        connection: Any = {
            "transport": "stdio",
            "command": entry["command"],
            "args": entry["args"],
            "cwd": entry["cwd"],
        }
        client = MultiServerMCPClient({"fixture": connection})
        (per_call,) = [t for t in asyncio.run(client.get_tools()) if t.name == "echo"]

        held.invoke({"message": "warm-up"})
        asyncio.run(per_call.ainvoke({"message": "warm-up"}))
        long_lived: list[float] = []
        fresh: list[float] = []
        for i in range(args.calls):
            t0 = time.perf_counter()
            assert held.invoke({"message": f"m{i}"}) == f"m{i}"
            long_lived.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            asyncio.run(per_call.ainvoke({"message": f"m{i}"}))
            fresh.append((time.perf_counter() - t0) * 1000)
        registry.close()

    report = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "versions": {p: version(p) for p in ("mcp", "langchain-mcp-adapters")},
        "server": "tests/support/mcp_fixture_server.py over stdio (FastMCP)",
        "calls_per_side": args.calls,
        "long_lived_open_session_ms": round(open_ms, 1),
        "long_lived_call_ms_median": round(statistics.median(long_lived), 2),
        "per_call_session_ms_median": round(statistics.median(fresh), 1),
        "speedup_median": round(statistics.median(fresh) / statistics.median(long_lived), 1),
        "long_lived_call_ms": [round(x, 2) for x in long_lived],
        "per_call_session_ms": [round(x, 1) for x in fresh],
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print(f"calls per side: {args.calls} (interleaved, same run)")
    print(f"long-lived session: open once {report['long_lived_open_session_ms']} ms, ", end="")
    print(f"median call {report['long_lived_call_ms_median']} ms")
    print(f"session per call:   median call {report['per_call_session_ms_median']} ms")
    print(f"per-call / long-lived: {report['speedup_median']}x")
    print(f"wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
