"""Tool artifacts: real tools on real files give their results as data beside the text.

Calls go through the ``run_tools`` node as in a run, so what is asserted is the artifact
on the :class:`ToolMessage` the session store keeps; the last test runs the agent graph
on the session store the CLI opens and reads the artifacts back after a resume.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command

from jarvis_graph.checkpoint_serde import checkpoint_serializer
from jarvis_graph.context import JarvisContext
from jarvis_graph.nodes.run_tools import run_tools
from jarvis_graph.state import AgentState
from jarvis_graph.tools import artifacts, builtin
from jarvis_graph.tools.base import ToolEnv
from jarvis_graph.tools.builtin import list_files_impl, read_code_impl, search_files_impl
from tests.support.sandboxed import user_config


def call(name: str, call_id: str = "1", **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def run(workspace: Path, *calls: dict[str, Any], **ctx: Any) -> list[ToolMessage]:
    """The tool messages of one turn making ``calls``, run by the ``run_tools`` node."""
    builder = StateGraph(AgentState, context_schema=JarvisContext)
    builder.add_node("run_tools", run_tools)
    builder.add_edge(START, "run_tools")
    builder.add_edge("run_tools", END)
    context = JarvisContext(workspace=str(workspace), **ctx)
    state = {"messages": [HumanMessage("task"), AIMessage("", tool_calls=list(calls))]}
    out = builder.compile().invoke(state, context=context)
    return [m for m in out["messages"] if isinstance(m, ToolMessage)]


def one(workspace: Path, name: str, **args: Any) -> ToolMessage:
    (message,) = run(workspace, call(name, **args))
    return message


@pytest.fixture
def ws(workspace: Path) -> Path:
    """A workspace with a JSON file, a table, logs in a folder and a text file."""
    orders = {"orders": [{"id": 1, "items": ["a", "b"]}, {"id": 2, "items": ["c"]}], "tags": []}
    (workspace / "orders.json").write_text(json.dumps(orders, indent=2) + "\n")
    (workspace / "sales.csv").write_text("day,qty\nmon,3\ntue,4\n\nwed,5\n")
    (workspace / "logs").mkdir()
    (workspace / "logs" / "api.log").write_text("ERROR boot\nok\nERRORS: 2 ERROR again\n")
    (workspace / "logs" / "db.log").write_text("ERROR_CODE 7\nERROR\n")
    (workspace / "notes.txt").write_text("one\ntwo\nthree\n")
    return workspace.resolve()


# --- read -----------------------------------------------------------------------------------


def test_a_read_names_its_file_lines_and_each_json_list_length(ws: Path) -> None:
    message = one(ws, "read_code", path="orders.json", start_line=2, end_line=4)
    assert message.content == read_code_impl(ToolEnv(ws), "orders.json", 2, 4)  # text as before
    total = len((ws / "orders.json").read_text().splitlines())
    assert message.artifact == {
        "kind": "read",
        "ok": True,
        "path": "orders.json",
        "first_line": 2,
        "last_line": 4,
        "total_lines": total,
        "data_rows": None,
        "list_lengths": {"orders": 2, "orders.0.items": 2, "orders.1.items": 1, "tags": 0},
    }


def test_a_table_read_counts_its_data_rows(ws: Path) -> None:
    artifact = one(ws, "read_code", path="sales.csv").artifact
    assert (artifact["total_lines"], artifact["data_rows"]) == (5, 3)
    assert artifact["list_lengths"] == {}


def test_a_folder_given_to_read_code_is_answered_with_a_listing(ws: Path) -> None:
    artifact = one(ws, "read_code", path="logs").artifact
    assert artifact["kind"] == "listing"
    assert artifact["entries"] == ["api.log", "db.log"]


# --- listing --------------------------------------------------------------------------------


def test_a_listing_has_its_entries_and_counts_per_kind(ws: Path) -> None:
    message = one(ws, "list_files")
    assert message.content == list_files_impl(ToolEnv(ws))
    assert message.artifact == {
        "kind": "listing",
        "ok": True,
        "folder": ".",
        "pattern": "*",
        "entries": ["notes.txt", "orders.json", "sales.csv", "logs/api.log", "logs/db.log"],
        "files": 5,
        "folders": 1,
        "extensions": {".txt": 1, ".json": 1, ".csv": 1, ".log": 2},
    }


def test_a_listing_caps_its_entries_as_the_text_does(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(builtin, "MAX_LIST_ENTRIES", 2)
    message = one(ws, "list_files")
    assert message.content.endswith("orders.json\n[3 more; narrow with path or pattern]")
    assert message.artifact["entries"] == ["notes.txt", "orders.json"]
    assert message.artifact["files"] == 5
    logs = one(ws, "list_files", path="logs", pattern="db*").artifact
    assert (logs["folder"], logs["pattern"], logs["entries"]) == ("logs", "db*", ["db.log"])


def test_a_file_given_to_list_files_is_answered_with_a_read(ws: Path) -> None:
    artifact = one(ws, "list_files", path="notes.txt").artifact
    assert (artifact["kind"], artifact["path"], artifact["last_line"]) == ("read", "notes.txt", 3)


# --- search ---------------------------------------------------------------------------------


def test_a_search_has_hits_per_file_and_whole_word_counts(ws: Path) -> None:
    message = one(ws, "search_files", pattern="ERROR", path="logs")
    assert message.content == search_files_impl(ToolEnv(ws), "ERROR", "logs")
    assert message.artifact == {
        "kind": "search",
        "ok": True,
        "pattern": "ERROR",
        "path": "logs",
        "glob": "*",
        "hits": {"logs/api.log": [1, 3], "logs/db.log": [1, 2]},
        "matching_lines": 4,
        # ERRORS and ERROR_CODE contain it, but not as a word
        "word_counts": {"logs/api.log": 2, "logs/db.log": 1},
    }


def test_a_search_of_one_file_and_a_search_with_no_match(ws: Path) -> None:
    artifact = one(ws, "search_files", pattern="t", path="notes.txt").artifact
    assert artifact["hits"] == {"notes.txt": [2, 3]}
    assert artifact["word_counts"] == {}
    empty = one(ws, "search_files", pattern="nothing here").artifact
    assert (empty["hits"], empty["matching_lines"]) == ({}, 0)


def test_a_file_name_pattern_given_to_search_is_answered_with_a_listing(ws: Path) -> None:
    artifact = one(ws, "search_files", pattern="*.log").artifact
    assert artifact["kind"] == "listing"
    assert artifact["entries"] == ["logs/api.log", "logs/db.log"]


# --- run ------------------------------------------------------------------------------------


def test_a_run_has_its_command_exit_code_and_output(ws: Path) -> None:
    message = one(ws, "execute_script", script="wc -l < notes.txt; exit 3")
    assert message.content == "exit code: 3\n3\n"
    assert message.artifact == {
        "kind": "run",
        "ok": True,
        "command": "wc -l < notes.txt; exit 3",
        "exit_code": 3,
        "output": "3\n",
        "output_file": None,
        "timed_out": False,
        "started": True,
    }


def test_a_command_that_is_not_found_did_not_start(ws: Path) -> None:
    artifact = one(ws, "execute_script", script="no-such-program-here").artifact
    assert (artifact["exit_code"], artifact["started"]) == (127, False)


def test_a_run_that_timed_out(ws: Path) -> None:
    artifact = one(ws, "execute_script", script="echo begun; sleep 30", timeout=1).artifact
    assert (artifact["timed_out"], artifact["exit_code"]) == (True, None)
    assert artifact["output"] == "begun\n"


def test_a_long_output_is_cut_in_the_artifact_as_in_the_text(ws: Path, isolated_home: Path) -> None:
    user_config(isolated_home, tool_output_limit=400)
    message = one(ws, "execute_script", script="seq 1 2000")
    artifact = message.artifact
    assert artifact["output"] in message.content
    assert artifact["output"].startswith("1\n2\n") and artifact["output"].endswith("2000\n")
    assert "characters omitted" in artifact["output"]
    saved = ws / artifact["output_file"]
    assert saved.read_text().splitlines() == [str(n) for n in range(1, 2001)]


# --- computation, edit, memory --------------------------------------------------------------


def test_a_computation_has_its_expression_and_value(ws: Path) -> None:
    expression = "sum(int(r['qty']) for r in csv.DictReader(open('sales.csv')))"
    message = one(ws, "compute", expression=expression)
    assert message.content == f"{expression} = 12"
    assert message.artifact == {
        "kind": "computation",
        "ok": True,
        "expression": expression,
        "value": "12",
        "read_as": "",
    }


def test_a_computation_read_as_another_names_the_one_computed(ws: Path) -> None:
    (ws / "numbers.txt").write_text("4\n230\n17\n")
    artifact = one(ws, "compute", expression="sum(numbers.txt)").artifact
    assert artifact["value"] == "251"
    assert artifact["read_as"].startswith("sum(") and "numbers.txt" in artifact["read_as"]


def test_writes_and_edits_say_which_files_changed_and_their_size_after(ws: Path) -> None:
    created = one(ws, "write_file", path="out/report.md", content="# Report\ntotal 12\n")
    assert created.artifact == {
        "kind": "edit",
        "ok": True,
        "files": [{"path": "out/report.md", "created": True, "bytes": 18, "lines": 2}],
    }
    diffs = [{"search": "total 12", "replace": "total 12\nrows 3"}]
    edited = one(ws, "edit_file", files=[{"path": "out/report.md", "diffs": diffs}])
    assert edited.status == "success"
    assert edited.artifact["files"] == [
        {"path": "out/report.md", "created": False, "bytes": 25, "lines": 3}
    ]
    rewritten = run(ws, call("rewrite_file", path="notes.txt", content="only"), toolset="code")
    assert rewritten[0].artifact["files"] == [
        {"path": "notes.txt", "created": False, "bytes": 4, "lines": 1}
    ]


def test_a_memory_save_lists_what_was_saved_in_which_tier(ws: Path) -> None:
    memories = [
        {"memory_type": "project_long_term", "tags": ["deploy"], "content": "Deploy on Fridays"},
        {"memory_type": "short_term", "content": "Draft is in out/"},
    ]
    message = one(ws, "save_memory", memories=memories)
    assert message.status == "success"
    saved = message.artifact["saved"]
    assert [(m["tier"], m["tags"], m["content"]) for m in saved] == [
        ("project_long_term", ["deploy"], "Deploy on Fridays"),
        ("short_term", [], "Draft is in out/"),
    ]
    assert all(m["id"] in message.content for m in saved)


# --- failures -------------------------------------------------------------------------------


def test_a_call_that_failed_in_the_tool_has_a_failed_artifact_of_its_kind(ws: Path) -> None:
    missing = one(ws, "read_code", path="gone.txt")
    assert missing.status == "error"
    assert missing.artifact == {
        "kind": "read",
        "ok": False,
        "error": missing.content.removeprefix("Error: "),
    }
    diffs = [{"search": "not in the file", "replace": "x"}]
    edit = one(ws, "edit_file", files=[{"path": "notes.txt", "diffs": diffs}])
    assert (edit.status, edit.artifact["kind"], edit.artifact["ok"]) == ("error", "edit", False)
    assert (ws / "notes.txt").read_text() == "one\ntwo\nthree\n"
    value = one(ws, "compute", expression="12").artifact
    assert (value["kind"], value["ok"]) == ("computation", False)


def test_a_call_that_failed_before_the_tool_ran_has_no_artifact(ws: Path) -> None:
    unknown_arg = one(ws, "read_code", path="notes.txt", line=2)
    wrong_type = one(ws, "read_code", path="notes.txt", start_line="x")
    no_tool = one(ws, "no_such_tool")
    asks = one(ws, "ask_user", question="which file?")  # a tool without artifacts
    for message in (unknown_arg, wrong_type, no_tool):
        assert (message.status, message.artifact) == ("error", None)
    assert (asks.status, asks.artifact) == ("success", None)


def test_secrets_are_masked_in_the_artifact_as_in_the_text(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdef")
    (ws / "leak.txt").write_text("key sk-test-0123456789abcdef\n")
    message = one(ws, "execute_script", script="cat leak.txt")
    assert "sk-test" not in message.content
    assert "sk-test" not in json.dumps(message.artifact)
    assert message.artifact["output"] in message.content


def test_an_artifact_of_another_tool_is_not_kept(ws: Path) -> None:
    assert not artifacts.is_artifact({"kind": "mine", "ok": True})
    assert not artifacts.is_artifact(object())
    assert artifacts.is_artifact(artifacts.computation("1+1", "2"))


# --- stored ---------------------------------------------------------------------------------


def test_every_kind_survives_the_strict_checkpoint_serializer(ws: Path) -> None:
    serde = checkpoint_serializer()
    messages = run(
        ws,
        call("read_code", "r", path="orders.json"),
        call("list_files", "l"),
        call("search_files", "s", pattern="ERROR"),
        call("execute_script", "x", script="echo 42"),
        call("compute", "c", expression="len(glob('logs/*.log'))"),
        call("write_file", "w", path="new.txt", content="n\n"),
        call("read_code", "f", path="gone.txt"),
    )
    kinds = [m.artifact["kind"] for m in messages]
    assert kinds == ["read", "listing", "search", "run", "computation", "edit", "read"]
    for message in messages:
        back = serde.loads_typed(serde.dumps_typed(message))
        assert back == message
        assert back.artifact == message.artifact


def test_artifacts_are_read_back_from_the_cli_session_store_after_a_resume(
    ws: Path, tmp_path: Path
) -> None:
    """A run stops for a confirmation; a new graph on the same store resumes it."""
    from jarvis_graph.checkpointing import open_checkpointer
    from jarvis_graph.graphs.agent import build_agent_graph

    script = tmp_path / "script.yaml"
    read = {"name": "read_code", "id": "read-1", "args": {"path": "sales.csv"}}
    tail = {"name": "execute_script", "id": "run-1", "args": {"script": "tail -n 1 sales.csv"}}
    turns = [
        {"tool_calls": [read]},
        {"tool_calls": [tail]},
        {"text": "The last row is wed,5. !!!COMPLETE!!!"},
    ]
    script.write_text(yaml.safe_dump({"turns": turns}))
    context = {"platform": "scripted", "script": str(script), "workspace": str(ws)}
    config = {"configurable": {"thread_id": "t-artifacts"}, "recursion_limit": 100}

    with open_checkpointer(ws) as saver:  # process 1: stops before running the script
        graph = build_agent_graph().compile(checkpointer=saver)
        graph.invoke({"task": "what is the last row of sales.csv?"}, config, context=context)
        assert [i.value["requests"][0]["id"] for i in graph.get_state(config).interrupts] == [
            "run-1"
        ]
    with open_checkpointer(ws) as saver:  # process 2: resumes from the store
        graph = build_agent_graph().compile(checkpointer=saver)
        graph.invoke(Command(resume="approve"), config, context=context)
    with open_checkpointer(ws) as saver:  # and what the store now holds
        values = build_agent_graph().compile(checkpointer=saver).get_state(config).values

    results = {m.tool_call_id: m for m in values["messages"] if isinstance(m, ToolMessage)}
    shown, ran = results["read-1"].artifact, results["run-1"].artifact
    assert (shown["kind"], shown["path"], shown["data_rows"]) == ("read", "sales.csv", 3)
    assert (ran["kind"], ran["exit_code"], ran["output"]) == ("run", 0, "wed,5\n")
