"""Memory end to end: scripted runs in separate processes, real stores, real MiniLM.

Thread one saves memories; a second process (a restart) runs thread two, which
retrieves them by meaning, by tags and by type. What the tools answered is read from
the session file afterwards.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.messages import ToolMessage

from jarvis_graph.checkpointing import open_checkpointer
from jarvis_graph.graphs.agent import build_agent_graph
from tests.support.cli import run_process, write_script

MARKER = "!!!COMPLETE!!!"

SAVE_TURNS: list[dict[str, Any]] = [
    {
        "tool_calls": [
            {
                "name": "save_memory",
                "args": {
                    "memories": [
                        {
                            "memory_type": "project_long_term",
                            "tags": ["deploy", "ops"],
                            "content": "Releases are deployed with ./deploy.sh --prod",
                        },
                        {
                            "memory_type": "global_long_term",
                            "tags": ["editor"],
                            "content": "My favourite editor is vim",
                        },
                        {
                            "memory_type": "short_term",
                            "tags": ["scratch"],
                            "content": "The flaky test is test_dates",
                        },
                    ]
                },
            }
        ]
    },
    {"tool_calls": [{"name": "retrieve_memory", "args": {"memory_types": ["short_term"]}}]},
    {"text": f"Saved. {MARKER}"},
]

RETRIEVE_TURNS: list[dict[str, Any]] = [
    {
        "tool_calls": [
            {"name": "retrieve_memory", "args": {"query": "how do we ship a release", "limit": 1}},
            {"name": "retrieve_memory", "args": {"tags": ["editor"]}},
            {
                "name": "retrieve_memory",
                "args": {"memory_types": ["project_long_term"], "query": "preferred text editor"},
            },
            {"name": "retrieve_memory", "args": {"memory_types": ["short_term"]}},
        ]
    },
    {"text": f"Found them. {MARKER}"},
]


def messages(workspace: Path, thread: str) -> list[Any]:
    with open_checkpointer(workspace) as saver:  # the CLI's session store, as it reads it
        graph = build_agent_graph().compile(checkpointer=saver)
        return list(graph.get_state({"configurable": {"thread_id": thread}}).values["messages"])


def tool_outputs(workspace: Path, thread: str) -> list[str]:
    return [str(m.content) for m in messages(workspace, thread) if isinstance(m, ToolMessage)]


def run_thread(workspace: Path, script: Path, thread: str) -> None:
    args = ["run", "-n", "--yes", "--platform", "scripted", "--script", str(script)]
    proc = run_process([*args, "--new-thread", thread, "remember things"], cwd=workspace)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_fact_saved_in_one_thread_is_found_in_another_after_a_restart(
    workspace: Path, tmp_path: Path
) -> None:
    run_thread(workspace, write_script(tmp_path / "save.yaml", SAVE_TURNS), "one")
    saved, short = tool_outputs(workspace, "one")
    assert saved.startswith("saved 3 memories")
    assert "The flaky test is test_dates" in short  # short-term: within its thread

    run_thread(workspace, write_script(tmp_path / "find.yaml", RETRIEVE_TURNS), "two")
    by_query, by_tag, by_type, short_term = tool_outputs(workspace, "two")

    assert by_query.startswith("1 memory:") and "./deploy.sh --prod" in by_query
    assert "My favourite editor is vim" in by_tag and "deploy" not in by_tag
    assert "[project_long_term]" in by_type and "vim" not in by_type
    assert short_term == "no memories found in short_term"  # a new process, a new thread

    system = str(messages(workspace, "two")[0].content)  # tags saved so far are listed
    tags = system.split("Known memory tags: ")[1].split(".")[0]
    assert set(tags.split(", ")) == {"deploy", "ops", "editor"}
