"""What an answer cites: the sources of a task, their lines, and the lines located for it.

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
    MAX_CITES,
    TASK,
    Cite,
    Source,
    holds,
    lines_of,
    locate,
    values_in,
    words_in,
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


def test_a_call_id_the_provider_reuses_pairs_each_result_with_its_own_call() -> None:
    """OpenAI-compatible servers number calls per reply: ``call_0`` in every turn."""
    messages = [
        HumanMessage("What do a.txt and b.txt hold?"),
        call("read_code", "call_0", path="a.txt"),
        result("read_code", "call_0", "a.txt (lines 1-1 of 1)\n 1 | alpha", read_artifact()),
        call("read_code", "call_0", path="b.txt"),
        result("read_code", "call_0", "b.txt (lines 1-1 of 1)\n 1 | beta", read_artifact()),
    ]
    first, second = task_sources(messages)[1:]
    assert (first.args, second.args) == ({"path": "a.txt"}, {"path": "b.txt"})


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


# --- values_in, holds ---------------------------------------------------------------------


def test_values_are_numbers_and_tokens_with_a_digit_or_a_joining_mark() -> None:
    text = "kim.ortega@example.org has 1,270.50 in ledger_2 since 2024-05-03; see src/app.py"
    found = values_in(text)
    assert "1270.50" in found and "kim.ortega@example.org" in found
    assert {"ledger_2", "src/app.py", "2024-05-03"} <= set(found)
    assert "has" not in found and "since" not in found  # plain words are no values


def test_a_number_holds_by_value_a_token_whole() -> None:
    assert holds("total: 270.0", "270") and holds("a,11,7.00", "7")
    assert not holds("port 80800", "8080")
    assert holds("PORT = 8123 in settings.py", "settings.py")
    assert not holds("mysettings.py", "settings.py")


def test_words_of_three_characters_or_more_in_any_script() -> None:
    assert words_in("It is 七个文件 files, Priya") == ["七个文件", "files", "Priya"]


# --- lines_of, locate -----------------------------------------------------------------------


def test_the_context_lines_carry_the_file_they_show_and_no_framing() -> None:
    head = "Workspace context for this task (attached by Jarvis):"
    text = f"{head}\n--- a.py ---\nX = 1\n--- b.py ---\nY = 2"
    assert lines_of(Source(CONTEXT, CONTEXT, text)) == [("X = 1", "a.py"), ("Y = 2", "b.py")]


def test_each_value_is_cited_by_the_newest_successful_line_that_holds_it() -> None:
    sources = [
        Source(TASK, TASK, "What port does settings.py set?"),
        Source(CONTEXT, CONTEXT, "--- settings.py ---\nPORT = 8123"),
        Source("c1", "read_code", "LOG = 1\nPORT = 8123", args={"path": "settings.py"}),
        Source("c2", "search_files", "no 8123 here", failed=True),
    ]
    cites = locate("settings.py sets PORT to 8123.", sources)
    # settings.py is the task's own name: no claim; the read beats the failed search and
    # the context
    assert cites == [Cite("c1", "PORT = 8123")]


def test_the_context_is_cited_with_its_file_when_no_call_holds_the_value() -> None:
    sources = [
        Source(TASK, TASK, "What port?"),
        Source(CONTEXT, CONTEXT, "--- settings.py ---\nPORT = 8123"),
    ]
    assert locate("8123", sources) == [Cite(CONTEXT, "PORT = 8123", "settings.py")]


def test_a_value_no_result_holds_has_no_cite() -> None:
    sources = [Source(TASK, TASK, "What port?"), Source("c1", "read_code", "PORT = 8123")]
    assert locate("It is 8080.", sources) == []


def test_the_declaration_and_the_task_are_no_evidence() -> None:
    sources = [
        Source(TASK, TASK, "Is 42 the answer?"),
        Source("d", "state_task", "Noted. 7 steps."),
    ]
    assert locate("42, in 7 steps", sources, skip=["state_task"]) == []


def test_an_answer_of_words_is_cited_by_the_line_holding_most_of_them() -> None:
    sources = [
        Source(TASK, TASK, "What status does the script print?"),
        Source("c1", "execute_script", "exit code: 0\nstatus: scarlet"),
        Source("c2", "execute_script", "status: scarlet alarm", failed=True),
    ]
    assert locate("The status is scarlet.", sources) == [Cite("c1", "status: scarlet")]


def test_at_most_max_cites() -> None:
    text = "\n".join(f"row {n}" for n in range(100, 120))
    sources = [Source(TASK, TASK, "rows?"), Source("c1", "read_code", text)]
    answer = " ".join(str(n) for n in range(100, 120))
    assert len(locate(answer, sources)) == MAX_CITES


# --- the attached context's framing ----------------------------------------------------------


def test_the_context_framing_is_never_cited(tmp_path: Path) -> None:
    """Every line attachment_text adds around the files matches CONTEXT_FRAME, no file line
    does: the context is cited by what the files hold, not by what Jarvis says of them."""
    from jarvis_graph.citations import CONTEXT_FRAME
    from jarvis_graph.tools.attachments import AttachLimits, attachment_text

    (tmp_path / "settings.py").write_text("MAX_RETRIES = 9\nPORT = 8042\n", encoding="utf-8")
    (tmp_path / "long.txt").write_text("".join(f"row {i}\n" for i in range(30)), encoding="utf-8")
    limits = AttachLimits(named_files=3, max_lines=10, listing=40)
    text = attachment_text("read settings.py and long.txt and nope.py", tmp_path, limits)
    assert text is not None
    files = {"MAX_RETRIES = 9", "PORT = 8042", "settings.py", "long.txt"} | {
        f"row {i}" for i in range(10)
    }
    offered = [line for line, _ in lines_of(Source(CONTEXT, CONTEXT, text))]
    framing = [line for line in text.splitlines() if line.strip() and line not in files]
    assert "No file of this name is in the workspace now: nope.py" in offered  # a fact
    assert files <= set(offered)
    assert [line for line in framing if not CONTEXT_FRAME.match(line)] == [
        "No file of this name is in the workspace now: nope.py"
    ]
