"""run_tools: every pending call gets a tool message; failures become text for the model."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, StateGraph

from jarvis_graph.context import JarvisContext
from jarvis_graph.events import Event, get_event_bus
from jarvis_graph.features.builtin import BuiltinTools
from jarvis_graph.nodes.run_tools import run_tools
from jarvis_graph.state import AgentState
from jarvis_graph.tools.builtin import BUILTIN_TOOLS


def call(name: str, args: Any, call_id: str) -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def run(workspace: Path, ai: AIMessage, **ctx: Any) -> list[ToolMessage]:
    builder = StateGraph(AgentState, context_schema=JarvisContext)
    builder.add_node("run_tools", run_tools)
    builder.add_edge(START, "run_tools")
    builder.add_edge("run_tools", END)
    context = JarvisContext(workspace=str(workspace), **ctx)
    out = builder.compile().invoke({"messages": [HumanMessage("task"), ai]}, context=context)
    return [m for m in out["messages"] if isinstance(m, ToolMessage)]


@pytest.fixture(autouse=True)
def cwd_elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tools must use the run's workspace, not the process' current directory."""
    other = tmp_path / "elsewhere"
    other.mkdir()
    monkeypatch.chdir(other)


def test_tools_run_in_the_context_workspace_in_parallel(workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    (workspace / "b.txt").write_text("beta\n")
    ai = AIMessage(
        "",
        tool_calls=[
            call("read_code", {"path": "a.txt"}, "1"),
            call("read_code", {"path": "b.txt"}, "2"),
            call("execute_script", {"script": "pwd"}, "3"),
        ],
    )
    results = run(workspace, ai)
    assert [m.tool_call_id for m in results] == ["1", "2", "3"]
    assert results[0].content.endswith("1 | alpha")
    assert results[1].content.endswith("1 | beta")
    assert results[2].content == f"exit code: 0\n{workspace.resolve()}\n"
    assert all(m.status == "success" for m in results)
    assert [m.name for m in results] == ["read_code", "read_code", "execute_script"]


def test_answered_calls_are_not_run_again(workspace: Path) -> None:
    ai = AIMessage(
        "",
        tool_calls=[
            call("execute_script", {"script": "echo x >> log"}, "1"),
            call("execute_script", {"script": "echo y >> log"}, "2"),
        ],
    )
    builder = StateGraph(AgentState, context_schema=JarvisContext)
    builder.add_node("run_tools", run_tools)
    builder.add_edge(START, "run_tools")
    builder.add_edge("run_tools", END)
    messages = [HumanMessage("t"), ai, ToolMessage("done before", tool_call_id="1")]
    out = builder.compile().invoke(
        {"messages": messages}, context=JarvisContext(workspace=str(workspace))
    )
    assert (workspace / "log").read_text() == "y\n"
    assert [m.tool_call_id for m in out["messages"] if isinstance(m, ToolMessage)] == ["1", "2"]


def test_unknown_tool_lists_the_available_ones(workspace: Path) -> None:
    (result,) = run(workspace, AIMessage("", tool_calls=[call("delete_all", {}, "1")]))
    assert result.status == "error"
    assert result.content == (
        "There is no tool named 'delete_all'. Available tools: "
        "ask_document, ask_user, clear_memory, compute, edit_file, execute_script, list_files, "
        "methodology, read_code, read_document, retrieve_memory, save_memory, "
        "search_episodic_memory, search_files, write_file."
    )


def test_invalid_arguments_are_explained(workspace: Path) -> None:
    ai = AIMessage("", tool_calls=[call("read_code", {"path": "a.py", "start_line": "x"}, "1")])
    (result,) = run(workspace, ai)
    assert result.status == "error"
    assert result.content.startswith("Invalid arguments for read_code: start_line:")
    assert "Expected parameters: ['path', 'start_line', 'end_line']" in result.content


def test_missing_required_argument(workspace: Path) -> None:
    (result,) = run(workspace, AIMessage("", tool_calls=[call("read_code", {}, "1")]))
    assert result.status == "error"
    assert "Invalid arguments for read_code: path: Field required" in result.content


def test_arguments_that_were_not_json(workspace: Path) -> None:
    ai = AIMessage(
        "",
        invalid_tool_calls=[
            {
                "name": "list_files",
                "args": '{"path": ".',
                "id": "bad",
                "error": "unterminated string",
                "type": "invalid_tool_call",
            }
        ],
    )
    (result,) = run(workspace, ai)
    assert result.tool_call_id == "bad"
    assert result.status == "error"
    assert "could not be run: unterminated string" in result.content
    assert """'{"path": ".'""" in result.content  # the model sees what it sent
    assert "Send the call again" in result.content


def test_a_runaway_unparsable_call_is_quoted_back_cut_short(workspace: Path) -> None:
    runaway = '{"expression": "max(' + "float(r[0]) + " * 200
    bad = {"name": "compute", "args": runaway, "id": "bad", "error": "cut off"}
    (result,) = run(
        workspace, AIMessage("", invalid_tool_calls=[{**bad, "type": "invalid_tool_call"}])
    )
    assert runaway[:300] in result.content
    assert runaway not in result.content
    assert f"… ({len(runaway)} characters)" in result.content


def test_tool_input_error_is_shown_to_the_model(workspace: Path) -> None:
    (result,) = run(workspace, AIMessage("", tool_calls=[call("read_code", {"path": "x"}, "1")]))
    assert result.status == "error"
    assert result.content.startswith("Error: file 'x' does not exist")


def test_a_crashing_tool_is_logged_and_reported(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    @tool
    def explode(reason: str) -> str:
        """Always fails.

        Args:
            reason: Why.
        """
        raise RuntimeError(reason)

    monkeypatch.setattr(BuiltinTools, "tools", lambda _self, _setup: [*BUILTIN_TOOLS, explode])
    ai = AIMessage("", tool_calls=[call("explode", {"reason": "kaboom"}, "1")])
    with caplog.at_level(logging.ERROR, logger="jarvis_graph.nodes.run_tools"):
        (result,) = run(workspace, ai)
    assert result.status == "error"
    assert result.content == "Error: tool explode failed: RuntimeError: kaboom"
    assert any("explode" in r.getMessage() and r.exc_info for r in caplog.records)


def test_events_and_large_outputs(workspace: Path) -> None:
    config = workspace / ".jarvis" / "config.yaml"
    config.parent.mkdir()
    config.write_text("tool_output_limit: 300\n")
    seen: list[tuple[Event, dict[str, Any]]] = []
    bus = get_event_bus("run-tools-test")
    bus.subscribe(Event.BEFORE_TOOL_CALL, lambda e, p: seen.append((e, p)))
    bus.subscribe(Event.AFTER_TOOL_CALL, lambda e, p: seen.append((e, p)))

    ai = AIMessage("", tool_calls=[call("execute_script", {"script": "seq 1 500"}, "1")])
    (result,) = run(workspace, ai, event_bus="run-tools-test")

    assert [e for e, _ in seen] == [Event.BEFORE_TOOL_CALL, Event.AFTER_TOOL_CALL]
    before, after = seen[0][1], seen[1][1]
    assert before == {
        "name": "execute_script",
        "args": {"script": "seq 1 500"},
        "tool_call_id": "1",
    }
    assert after["status"] == "success"
    assert after["output"] == result.content
    saved = Path(after["output_path"])
    assert saved.parent == workspace.resolve() / ".jarvis" / "tool_outputs"
    # the script's whole output, streamed to the file while it ran
    assert saved.read_text() == "".join(f"{n}\n" for n in range(1, 501))
    assert str(saved.relative_to(workspace.resolve())) in result.content
    assert result.content.startswith("exit code: 0\n1\n2\n")
    assert result.content.endswith("499\n500\n")


def test_a_refused_repeat_is_known_to_the_next_turn(workspace: Path) -> None:
    from jarvis_graph.nodes.run_tools import refused_repeats

    first = AIMessage("", tool_calls=[call("list_files", {"path": "."}, "1")])
    again = AIMessage("", tool_calls=[call("list_files", {"path": "."}, "2")])
    messages = [
        HumanMessage("task"),
        first,
        ToolMessage("a.py", tool_call_id="1", name="list_files"),
    ]
    assert refused_repeats(messages) == set()
    builder = StateGraph(AgentState, context_schema=JarvisContext)
    builder.add_node("run_tools", run_tools)
    builder.add_edge(START, "run_tools")
    builder.add_edge("run_tools", END)
    out = builder.compile().invoke(
        {"messages": [*messages, again]}, context=JarvisContext(workspace=str(workspace))
    )
    assert str(out["messages"][-1].content).startswith("Not run again:")
    assert refused_repeats(out["messages"]) == {"list_files"}


def test_a_call_id_used_again_by_the_provider_is_a_new_call(workspace: Path) -> None:
    """Providers number calls per reply: ``call_0`` of the next turn is another call."""
    (workspace / "sub").mkdir()
    (workspace / "sub" / "inner.txt").write_text("x\n")
    first = AIMessage("", tool_calls=[call("list_files", {"path": "."}, "call_0")])
    listed = ToolMessage("sub/", tool_call_id="call_0", name="list_files")
    other = AIMessage("", tool_calls=[call("list_files", {"path": "sub"}, "call_0")])
    builder = StateGraph(AgentState, context_schema=JarvisContext)
    builder.add_node("run_tools", run_tools)
    builder.add_edge(START, "run_tools")
    builder.add_edge("run_tools", END)
    out = builder.compile().invoke(
        {"messages": [HumanMessage("task"), first, listed, other]},
        context=JarvisContext(workspace=str(workspace)),
    )
    result = out["messages"][-1]
    assert result.status == "success" and "inner.txt" in str(result.content)


def test_a_repeated_failed_call_is_refused_with_its_error_again(workspace: Path) -> None:
    """The refusal of a call that failed before says the error (and its fix) again."""
    bad = {"expression": "len(utils.py.splitlines())"}
    first = AIMessage("", tool_calls=[call("compute", bad, "1")])
    error = "Error: utils.py is not a value. In this workspace that is: len(open('utils.py'))"
    failed = ToolMessage(error, tool_call_id="1", name="compute", status="error")
    builder = StateGraph(AgentState, context_schema=JarvisContext)
    builder.add_node("run_tools", run_tools)
    builder.add_edge(START, "run_tools")
    builder.add_edge("run_tools", END)
    graph = builder.compile()
    context = JarvisContext(workspace=str(workspace))
    again = AIMessage("", tool_calls=[call("compute", bad, "2")])
    out = graph.invoke({"messages": [HumanMessage("task"), first, failed, again]}, context=context)
    text = str(out["messages"][-1].content)
    assert text.startswith("Not run again: you already called compute with these arguments")
    assert "it failed: Error: utils.py is not a value. In this workspace that is: len(" in text
    assert "change its arguments as the error says" in text
    # a call that worked is refused as before: its result is the answer
    fine = ToolMessage("len(open('utils.py')) = 6", tool_call_id="1", name="compute")
    out = graph.invoke({"messages": [HumanMessage("task"), first, fine, again]}, context=context)
    text = str(out["messages"][-1].content)
    assert "Its result is above: use it" in text and "failed" not in text
    # a failure in an earlier task is not this task's
    old = [
        HumanMessage("old task"),
        AIMessage("", tool_calls=[call("compute", bad, "7")]),
        ToolMessage(error, tool_call_id="7", name="compute", status="error"),
        HumanMessage("task"),
        AIMessage("", tool_calls=[call("compute", bad, "8")]),
        ToolMessage("6", tool_call_id="8", name="compute"),
    ]
    out = graph.invoke({"messages": [*old, again]}, context=context)
    assert str(out["messages"][-1].content).startswith("Not run again:")
    assert "failed" not in str(out["messages"][-1].content)


def test_a_local_models_history_is_summarized_within_its_window(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jarvis_graph.nodes.run_tools import route_after_tools

    monkeypatch.chdir(workspace)
    long = ToolMessage("x" * 24_000, tool_call_id="1", name="read_code")  # ~6000 tokens
    state = {
        "messages": [
            HumanMessage("task"),
            AIMessage("", tool_calls=[call("read_code", {}, "1")]),
            long,
        ]
    }
    # no key: the local model (n_ctx 8192), whose window is far below max_input_tokens
    assert route_after_tools(state) == "summarize_history"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert route_after_tools(state) == "call_model"


def test_what_the_next_turn_may_do() -> None:
    """After a refused repeat the turn must answer; after the answer check's notice, call.

    Unless all the notice tells is that a file the task names is not there.
    """
    from jarvis_graph.nodes.call_model import _tool_choice
    from jarvis_graph.state import CHECK_NAME, CORRECTION_NAME

    def choice(messages: list, problems: list[str] | None = None) -> str:
        return _tool_choice({"messages": messages, "answer_problems": problems or []})

    first = AIMessage("", tool_calls=[call("list_files", {"path": "."}, "1")])
    done = [HumanMessage("task"), first, ToolMessage("a.py", tool_call_id="1", name="list_files")]
    assert choice(done) == "auto"
    notice = HumanMessage("Your answer is not supported ...", name=CHECK_NAME)
    unsupported = ["the number 42 appears in no tool result: look it up"]
    assert choice([*done, AIMessage("42"), notice], unsupported) == "required"
    missing = [
        "the number 42 appears in no tool result: look it up",
        "the task names b.py, which is not in the workspace, and the answer does not say so: "
        "say plainly that it does not exist",
    ]
    assert choice([*done, AIMessage("42"), notice], missing) == "none"  # say so: no tool
    refused = ToolMessage("Not run again: you already called list_files", tool_call_id="2")
    again = AIMessage("", tool_calls=[call("list_files", {"path": "."}, "2")])
    assert choice([*done, again, refused]) == "none"
    prose = AIMessage('I will call {"tool": "list_files", "arguments": {}} now.')
    told = HumanMessage("Your last reply holds a call written as text", name=CORRECTION_NAME)
    assert choice([*done, prose, told]) == "auto"  # it may have meant an answer
    twice = [*done, prose, told, prose, told]
    assert choice(twice) == "required"  # the same prose again: it means to call
    # a tool that ran is progress: the count of corrections in a row starts again
    made = AIMessage("", tool_calls=[call("read_code", {"path": "a.py"}, "3")])
    ran = ToolMessage("a.py (1 line)", tool_call_id="3", name="read_code")
    assert choice([*twice, made, ran, prose, told]) == "auto"
    assert choice([*twice, made, ran, prose, told, prose, told]) == "required"


def test_the_turn_made_to_call_may_call_only_the_tool_the_text_named() -> None:
    """Written as text twice, ``list_files``: the turn that must call may call only it."""
    from types import SimpleNamespace

    from jarvis_graph.nodes.call_model import _asked as asked_with
    from jarvis_graph.nodes.call_model import _tool_choice
    from jarvis_graph.state import CORRECTION_NAME

    services: Any = SimpleNamespace(tools={"list_files": None, "read_code": None})

    def _asked(state: Any, services: Any) -> list[str] | None:
        return asked_with(state, services, _tool_choice(state))

    fenced = '```json\n{"tool": "list_files", "arguments": {"path": "."}}\n```'
    prose = AIMessage(f"I will list the files:\n{fenced}")
    told = HumanMessage("Your last reply holds a call written as text", name=CORRECTION_NAME)
    task = HumanMessage("task")
    assert _asked({"messages": [task, prose, told]}, services) is None  # may still answer
    assert _asked({"messages": [task, prose, told, prose, told]}, services) == ["list_files"]
    tag = AIMessage("<tool_call>list the files</tool_call>")  # no tool named: any of them
    assert _asked({"messages": [task, tag, told, tag, told]}, services) is None
    unselected = {"messages": [task, prose, told, prose, told], "selected_tools": ["read_code"]}
    assert _asked(unselected, services) is None  # a tool this run does not offer is not made
