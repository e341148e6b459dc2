"""What an answer may cite: the sources of a task, their lines, and the schema of its cites.

The message lists are real langchain messages, as the graph stores them: a task, the
context attached to it, the model's calls and their tool messages with their artifacts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from jarvis_graph.citations import (
    CONTEXT,
    MAX_LINES,
    QUOTE_CHARS,
    TASK,
    Cite,
    Source,
    cites_of,
    cites_schema,
    occurs_in,
    quotable_lines,
)
from jarvis_graph.messages import task_sources
from jarvis_graph.state import CHECK_NAME, CONTEXT_NAME
from jarvis_graph.tools import artifacts

READ_TEXT = 'settings.py (lines 1-2 of 2)\n 1 | LOG_LEVEL = "info"\n 2 | PORT = 8123'


def call(name: str, call_id: str, **args: Any) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id}])


def result(
    name: str, call_id: str, text: str, artifact: Any = None, status: str = "success"
) -> ToolMessage:
    return ToolMessage(
        content=text, tool_call_id=call_id, name=name, artifact=artifact, status=status
    )


def read_artifact() -> dict[str, Any]:
    return artifacts.read("settings.py", 1, 2, 2)


def run_artifact(exit_code: int | None, timed_out: bool = False) -> dict[str, Any]:
    return artifacts.run(
        "python3 app.py",
        exit_code,
        "boom",
        output_file=None,
        timed_out=timed_out,
        shell_started=True,
    )


def by_id(messages: list[Any]) -> dict[str, Source]:
    return {s.id: s for s in task_sources(messages)}


# --- task_sources ----------------------------------------------------------------------


def test_no_task_no_sources() -> None:
    assert task_sources([SystemMessage("sys")]) == []


def test_the_task_its_context_and_each_result_of_the_latest_task() -> None:
    messages = [
        SystemMessage("You are Jarvis."),
        HumanMessage("What level does settings.py log at?"),
        HumanMessage("settings.py:\n1 | LOG_LEVEL = 'info'", name=CONTEXT_NAME),
        call("read_code", "c1", path="settings.py"),
        result("read_code", "c1", READ_TEXT, read_artifact()),
        call("list_files", "c2", path="."),
        result("list_files", "c2", "settings.py\napp.py"),
    ]
    sources = task_sources(messages)
    assert [s.id for s in sources] == [TASK, CONTEXT, "c1", "c2"]
    task, context, read, listing = sources
    assert task.tool == TASK and task.text == "What level does settings.py log at?"
    assert task.args is None and context.args is None
    assert context.tool == CONTEXT
    # the line-number column is a position, not a value: dropped from the context too
    assert context.text == "settings.py:\nLOG_LEVEL = 'info'"
    assert read.tool == "read_code" and read.args == {"path": "settings.py"}
    assert read.artifact == read_artifact() and not read.failed
    assert listing.text == "settings.py\napp.py"


def test_only_the_latest_tasks_results_are_sources() -> None:
    messages = [
        HumanMessage("What port does settings.py set?"),
        call("read_code", "old", path="settings.py"),
        result("read_code", "old", READ_TEXT, read_artifact()),
        AIMessage("8123"),
        HumanMessage("And what does app.py print?"),
        call("read_code", "new", path="app.py"),
        result("read_code", "new", "app.py (lines 1-1 of 1)\n 1 | print('hi')", read_artifact()),
    ]
    sources = by_id(messages)
    assert set(sources) == {TASK, "new"}
    assert sources[TASK].text == "And what does app.py print?"
    # the arguments are found for the latest call; an old call's are not mixed in
    assert sources["new"].args == {"path": "app.py"}


def test_an_earlier_tasks_context_is_no_source_of_a_later_task() -> None:
    # start_task attaches context only when the task names files; a follow-up that names
    # none has no context of its own, and the first task's files are not its evidence.
    messages = [
        HumanMessage("What port does settings.py set?"),
        HumanMessage("settings.py:\n1 | PORT = 8123", name=CONTEXT_NAME),
        AIMessage("8123"),
        HumanMessage("Thanks. What is 2 + 2?"),
    ]
    assert set(by_id(messages)) == {TASK}


def test_a_review_notice_is_not_a_new_task() -> None:
    messages = [
        HumanMessage("What port does settings.py set?"),
        call("read_code", "c1", path="settings.py"),
        result("read_code", "c1", READ_TEXT, read_artifact()),
        AIMessage("8080"),
        HumanMessage("8080 appears in no quote your answer cites.", name=CHECK_NAME),
    ]
    sources = by_id(messages)
    assert set(sources) == {TASK, "c1"}
    assert sources[TASK].text == "What port does settings.py set?"


@pytest.mark.parametrize(
    "text",
    [
        "Not run: you made this call already; its result is above.",
        "The user declined this call.",
        "Your call to read_code could not be parsed: {'path': 'settings.py' PORT = 9",
    ],
)
def test_refused_calls_are_no_source(text: str) -> None:
    messages = [
        HumanMessage("What port does settings.py set?"),
        call("read_code", "c1", path="settings.py"),
        result("read_code", "c1", text, status="error"),
    ]
    assert set(by_id(messages)) == {TASK}


def test_a_reads_header_line_is_dropped_when_its_artifact_is_a_read() -> None:
    messages = [
        HumanMessage("What port does settings.py set?"),
        call("read_code", "c1", path="settings.py"),
        result("read_code", "c1", READ_TEXT, read_artifact()),
    ]
    read = by_id(messages)["c1"]
    assert read.text == 'LOG_LEVEL = "info"\nPORT = 8123'
    assert "settings.py" not in read.text  # the header would ground "settings.py" alone


def test_a_header_like_first_line_stays_without_a_read_artifact() -> None:
    # a tool that is no read (or a read that failed) keeps its first line: it is the result
    failed_read = artifacts.failed("read", "no such file")
    messages = [
        HumanMessage("What port does settings.py set?"),
        call("search_files", "c1", pattern="PORT"),
        result("search_files", "c1", "settings.py (1 match)\nsettings.py:2: PORT = 8123"),
        call("read_code", "c2", path="other.py"),
        result("read_code", "c2", "other.py (lines 1-1)\nError: no such file", failed_read),
    ]
    sources = by_id(messages)
    assert sources["c1"].text.startswith("settings.py (1 match)")
    assert sources["c2"].text.startswith("other.py (lines 1-1)")


@pytest.mark.parametrize(
    ("artifact", "status", "failed"),
    [
        (run_artifact(0), "success", False),
        (run_artifact(1), "success", True),
        (run_artifact(None, timed_out=True), "success", True),
        (None, "error", True),
        (None, "success", False),
    ],
)
def test_a_run_that_exits_non_zero_or_times_out_is_failed(
    artifact: Any, status: str, failed: bool
) -> None:
    messages = [
        HumanMessage("Run app.py."),
        call("execute_script", "r1", script="python3 app.py"),
        result("execute_script", "r1", "exit code: 1\nboom", artifact, status),
    ]
    assert by_id(messages)["r1"].failed is failed


# --- quotable_lines ----------------------------------------------------------------------


def test_quotable_lines_are_stripped_distinct_and_squashed() -> None:
    text = "  a  =  1 \n\n\ta = 1\nb = 2\n   \nb = 2\n"
    assert quotable_lines(text) == ["a = 1", "b = 2"]


def test_a_long_line_is_offered_by_its_start() -> None:
    long = "x" * (QUOTE_CHARS + 50)
    (line,) = quotable_lines(long)
    assert line == "x" * QUOTE_CHARS


def test_the_last_lines_of_a_long_source_are_offered() -> None:
    lines = quotable_lines("\n".join(f"line {n}" for n in range(MAX_LINES + 10)))
    assert len(lines) == MAX_LINES
    assert lines[0] == "line 10" and lines[-1] == f"line {MAX_LINES + 9}"


# --- cites_schema ------------------------------------------------------------------------


def test_the_schema_names_only_the_given_sources_and_their_lines() -> None:
    sources = [
        Source(TASK, TASK, "What port does settings.py set?"),
        Source("c1", "read_code", 'LOG_LEVEL = "info"\nPORT = 8123', args={}),
        Source("c2", "list_files", "", args={}),  # nothing to quote: not offered
    ]
    schema = cites_schema(sources)
    assert schema["type"] == "array" and schema["minItems"] == 1
    items = schema["items"]["anyOf"]
    offered = {i["properties"]["source"]["const"]: i["properties"]["quote"]["enum"] for i in items}
    assert offered == {
        "c1": ['LOG_LEVEL = "info"', "PORT = 8123"],
        TASK: ["What port does settings.py set?"],
    }
    # the newest result first, the task last: a small model picks from the top
    assert [i["properties"]["source"]["const"] for i in items] == ["c1", TASK]
    for item in items:
        assert item["required"] == ["quote", "source"]
        assert item["additionalProperties"] is False
        assert list(item["properties"]) == ["quote", "source"]  # the line before its source


def test_one_source_is_the_item_itself() -> None:
    schema = cites_schema([Source("c1", "read_code", "PORT = 8123", args={})])
    assert schema["items"]["properties"]["source"] == {"const": "c1"}
    assert schema["items"]["properties"]["quote"] == {"enum": ["PORT = 8123"]}


@pytest.mark.parametrize("sources", [[], [Source("c1", "list_files", "  \n", args={})]])
def test_no_quotable_source_allows_no_cite(sources: list[Source]) -> None:
    assert cites_schema(sources) == {"type": "array", "maxItems": 0}


# --- occurs_in, cites_of ---------------------------------------------------------------------


def test_a_quote_occurs_whitespace_normalised_case_kept() -> None:
    source = Source("c1", "read_code", "def  total(rows):\n    return   sum(rows)")
    assert occurs_in("def total(rows): return sum(rows)", source)
    assert occurs_in("  return sum(rows)  ", source)
    assert not occurs_in("RETURN SUM(ROWS)", source)
    assert not occurs_in("return max(rows)", source)
    assert not occurs_in("   ", source)  # an empty quote occurs nowhere


def test_cites_of_drops_malformed_entries() -> None:
    raw = [
        {"source": "c1", "quote": "PORT = 8123"},
        {"source": "c2", "quote": 8123},  # a number quoted: kept, as text
        {"quote": "no source"},
        {"source": 3, "quote": "source not a string"},
        {"source": "c3"},
        "c1: PORT = 8123",
        None,
    ]
    assert cites_of(raw) == [Cite("c1", "PORT = 8123"), Cite("c2", "8123")]


@pytest.mark.parametrize("raw", [None, "c1", {"source": "c1", "quote": "x"}, 3])
def test_cites_of_something_not_a_list_is_none(raw: Any) -> None:
    assert cites_of(raw) == []


# --- the attached context's framing ----------------------------------------------------------


def test_the_context_framing_is_never_offered_as_a_quote(tmp_path: Path) -> None:
    """Every line attachment_text adds around the files matches CONTEXT_FRAME, no file line
    does: the context is quoted by what the files hold, not by what Jarvis says of them."""
    from jarvis_graph.citations import CONTEXT_FRAME, quotable_lines
    from jarvis_graph.tools.attachments import AttachLimits, attachment_text

    (tmp_path / "settings.py").write_text("MAX_RETRIES = 9\nPORT = 8042\n", encoding="utf-8")
    (tmp_path / "long.txt").write_text("".join(f"row {i}\n" for i in range(30)), encoding="utf-8")
    limits = AttachLimits(named_files=3, max_lines=10, listing=40)
    text = attachment_text("read settings.py and long.txt and nope.py", tmp_path, limits)
    assert text is not None
    files = {"MAX_RETRIES = 9", "PORT = 8042", "settings.py", "long.txt"} | {
        f"row {i}" for i in range(10)
    }
    offered = quotable_lines(text, CONTEXT_FRAME)
    framing = [line for line in text.splitlines() if line.strip() and line not in files]
    assert "No file of this name is in the workspace now: nope.py" in offered  # a fact
    assert files <= set(offered)
    assert [line for line in framing if not CONTEXT_FRAME.match(line)] == [
        "No file of this name is in the workspace now: nope.py"
    ]
