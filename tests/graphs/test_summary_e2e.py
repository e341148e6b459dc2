"""A scripted run long enough to be summarized goes on with the script after each summary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from langgraph.checkpoint.sqlite import SqliteSaver

from jarvis_graph.events import Event, get_event_bus
from jarvis_graph.graphs.agent import build_agent_graph

CALLS = 8


def test_summaries_keep_the_scripted_run_on_track(workspace: Path, tmp_path: Path) -> None:
    for i in range(CALLS):
        (workspace / f"f{i}.txt").write_text(f"file {i}\n" + "data " * 800)
    turns: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "read_code", "args": {"path": f"f{i}.txt"}}]} for i in range(CALLS)
    ]
    turns.append({"text": "All files read. !!!COMPLETE!!!"})
    normal, cheap = workspace / "normal.yaml", workspace / "cheap.yaml"
    normal.write_text(yaml.safe_dump({"turns": turns}))
    cheap.write_text(yaml.safe_dump({"turns": [{"text": "Files were read."}]}))
    roles = {"normal": {"script": str(normal)}, "cheap": {"script": str(cheap)}}
    settings = {"attach_listing": 0, "max_input_tokens": 2500, "model_groups": {"default": roles}}
    (workspace / ".jarvis").mkdir()
    (workspace / ".jarvis" / "config.yaml").write_text(json.dumps(settings))
    reads: list[str] = []
    get_event_bus().subscribe(Event.AFTER_TOOL_CALL, lambda _e, p: reads.append(p["args"]["path"]))
    summaries: list[str] = []
    get_event_bus().subscribe(Event.AFTER_SUMMARY, lambda _e, p: summaries.append(p["summary"]))

    with SqliteSaver.from_conn_string(str(tmp_path / "s.sqlite")) as saver:
        graph = build_agent_graph().compile(checkpointer=saver)
        out = graph.invoke(
            {"task": "read every file"},
            {"configurable": {"thread_id": "t"}, "recursion_limit": 100},
            context={"workspace": str(workspace), "non_interactive": True},
        )

    assert out["status"] == "completed" and out["final_answer"] == "All files read."
    assert reads == [f"f{i}.txt" for i in range(CALLS)]  # no turn replayed after a summary
    assert len(summaries) >= 2 and set(summaries) == {"Files were read."}
    assert out["messages"][1].name == "jarvis_summary"
