"""End-to-end runs of the agent graph with the scripted platform and a real SqliteSaver."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command

from jarvis_graph.events import reset_event_buses
from jarvis_graph.graphs.agent import build_agent_graph
from jarvis_graph.platforms.registry import PlatformError

MARKER = "!!!COMPLETE!!!"


def tool_call(name: str, call_id: str | None = None, **args: Any) -> dict[str, Any]:
    call: dict[str, Any] = {"name": name, "args": args}
    if call_id:
        call["id"] = call_id
    return call


class Run:
    """A workspace, a script and a session file: what one CLI invocation would have."""

    def __init__(self, tmp_path: Path, workspace: Path) -> None:
        self.workspace = workspace
        self.script = tmp_path / "script.yaml"
        self.db = tmp_path / "sessions.sqlite"
        self.thread = "thread-1"

    def write_script(self, *turns: dict[str, Any]) -> None:
        self.script.write_text(yaml.safe_dump({"turns": list(turns)}), encoding="utf-8")

    def context(self, **extra: Any) -> dict[str, Any]:
        return {
            "platform": "scripted",
            "script": str(self.script),
            "workspace": str(self.workspace),
            **extra,
        }

    def config(self) -> dict[str, Any]:
        return {"configurable": {"thread_id": self.thread}, "recursion_limit": 200}

    @contextmanager
    def graph(self) -> Iterator[CompiledStateGraph]:
        """A fresh graph over a fresh connection to the session file."""
        conn = sqlite3.connect(str(self.db), check_same_thread=False)
        try:
            yield build_agent_graph().compile(checkpointer=SqliteSaver(conn))
        finally:
            conn.close()

    def invoke(self, value: Any, **ctx: Any) -> dict[str, Any]:
        with self.graph() as graph:
            return graph.invoke(value, self.config(), context=self.context(**ctx))

    def start(self, task: str = "do the task", **ctx: Any) -> dict[str, Any]:
        return self.invoke({"task": task}, **ctx)

    def resume(self, value: Any, **ctx: Any) -> dict[str, Any]:
        return self.invoke(Command(resume=value), **ctx)

    def values(self) -> dict[str, Any]:
        with self.graph() as graph:
            return graph.get_state(self.config()).values

    def interrupts(self) -> list[Any]:
        with self.graph() as graph:
            snapshot = graph.get_state(self.config())
        return [i.value for i in snapshot.interrupts]

    def finished(self) -> bool:
        with self.graph() as graph:
            return graph.get_state(self.config()).next == ()


@pytest.fixture
def run(tmp_path: Path, workspace: Path) -> Run:
    return Run(tmp_path, workspace)


def of_type(messages: list[Any], kind: type) -> list[Any]:
    return [m for m in messages if isinstance(m, kind)]


def assert_every_call_answered(messages: list[Any]) -> None:
    calls = [c["id"] for m in of_type(messages, AIMessage) for c in m.tool_calls]
    answers = [m.tool_call_id for m in of_type(messages, ToolMessage)]
    assert sorted(calls) == sorted(answers)


# --- plain runs -----------------------------------------------------------------------------


def test_tool_call_then_answer(run: Run) -> None:
    (run.workspace / "a.py").write_text("print('hi')\n")
    run.write_script(
        {"tool_calls": [tool_call("list_files", path=".")]},
        {"text": f"There is one file, a.py. {MARKER}"},
    )

    out = run.start("Which files are there?")

    assert out["status"] == "completed"
    assert out["final_answer"] == "There is one file, a.py."
    messages = out["messages"]
    assert [type(m) for m in messages] == [
        SystemMessage,
        HumanMessage,
        HumanMessage,  # the workspace context attached to the task
        AIMessage,
        ToolMessage,
        AIMessage,
    ]
    assert messages[1].content == "Which files are there?"
    assert messages[2].name == "jarvis_context"
    assert "The workspace holds 1 file:\na.py" in messages[2].content
    assert messages[4].content == "1 file under .:\na.py"
    assert messages[4].tool_call_id == messages[3].tool_calls[0]["id"]
    assert run.finished()


def test_files_named_in_the_task_are_attached(run: Run) -> None:
    (run.workspace / "app.json").write_text('{"level": "warning"}\n')
    run.write_script({"text": f"warning {MARKER}"})

    out = run.start("Which level does app.json set?")
    context = [m for m in out["messages"] if getattr(m, "name", None) == "jarvis_context"]
    assert len(context) == 1
    assert '--- app.json (1 line) ---\n{"level": "warning"}' in context[0].content


def test_events_reach_the_custom_stream(run: Run) -> None:
    run.write_script(
        {"tool_calls": [tool_call("list_files")]},
        {"text": f"Done {MARKER}"},
    )
    with run.graph() as graph:
        items = list(
            graph.stream({"task": "t"}, run.config(), context=run.context(), stream_mode="custom")
        )
    assert [i["event"] for i in items] == [
        "task_started",
        "before_model_call",
        "after_model_call",
        "before_tool_call",
        "after_tool_call",
        "before_model_call",
        "after_model_call",
        "task_completed",
    ]
    assert items[0]["payload"] == {"task": "t", "max_iterations": 40}
    assert items[2]["payload"]["tool_calls"] == ["list_files"]
    assert items[4]["payload"]["name"] == "list_files"
    assert items[4]["payload"]["status"] == "success"
    assert items[-1]["payload"] == {"status": "completed", "final_answer": "Done", "iterations": 2}


def test_parallel_tool_calls_in_one_turn(run: Run) -> None:
    (run.workspace / "data.txt").write_text("42\n")
    run.write_script(
        {
            "tool_calls": [
                tool_call("execute_script", "w1", script="echo one > one.txt"),
                tool_call("execute_script", "w2", script="echo two > two.txt"),
                tool_call("read_code", "r1", path="data.txt"),
            ]
        },
        {"text": f"Wrote both. {MARKER}"},
    )

    out = run.start(confirm="never")

    assert (run.workspace / "one.txt").read_text() == "one\n"
    assert (run.workspace / "two.txt").read_text() == "two\n"
    tools = of_type(out["messages"], ToolMessage)
    assert [m.tool_call_id for m in tools] == ["w1", "w2", "r1"]
    assert tools[2].content.endswith("1 | 42")
    assert len(of_type(out["messages"], AIMessage)) == 2
    assert out["status"] == "completed"


def test_marker_is_stripped_from_answer_and_message(run: Run) -> None:
    run.write_script({"text": f"The answer is 4.\n{MARKER}"})
    out = run.start("2+2?")
    assert out["final_answer"] == "The answer is 4."
    (ai,) = of_type(out["messages"], AIMessage)  # replaced in place, not appended
    assert ai.content == "The answer is 4."
    stored = of_type(run.values()["messages"], AIMessage)
    assert [m.content for m in stored] == ["The answer is 4."]


def test_unknown_tool_and_bad_arguments_are_reported_and_the_run_goes_on(run: Run) -> None:
    run.write_script(
        {
            "tool_calls": [
                tool_call("delete_everything", "u1"),
                tool_call("read_code", "b1", start_line="first"),
            ]
        },
        {"text": f"Those failed; giving up. {MARKER}"},
    )

    out = run.start()

    unknown, bad = of_type(out["messages"], ToolMessage)
    assert unknown.status == "error"
    assert unknown.content.startswith("There is no tool named 'delete_everything'.")
    assert bad.status == "error"
    assert bad.content.startswith("Invalid arguments for read_code:")
    assert "path: Field required" in bad.content
    assert out["status"] == "completed"
    assert len(of_type(out["messages"], AIMessage)) == 2


def test_large_tool_output_is_cut_and_saved(run: Run) -> None:
    config = run.workspace / ".jarvis" / "config.yaml"
    config.parent.mkdir()
    config.write_text("tool_output_limit: 600\n")
    run.write_script(
        {"tool_calls": [tool_call("execute_script", script="seq 1 3000")]},
        {"text": f"Big. {MARKER}"},
    )

    out = run.start(confirm="never")

    (result,) = of_type(out["messages"], ToolMessage)
    assert len(result.content) < 1000
    saved = list((run.workspace / ".jarvis" / "tool_outputs").iterdir())
    assert len(saved) == 1
    full = saved[0].read_text()  # the script's output, streamed to the file as it came
    assert full == "".join(f"{n}\n" for n in range(1, 3001))
    assert f"saved in {saved[0].relative_to(run.workspace)}" in result.content
    assert result.content.startswith("exit code: 0\n1\n2\n3\n")
    assert result.content.endswith("2999\n3000\n")


def test_missing_script_raises_a_clear_platform_error(run: Run) -> None:
    with pytest.raises(PlatformError) as info:
        run.start()
    assert f"script file {str(run.script)!r} not found" in str(info.value)


def test_exhausted_script_raises(run: Run) -> None:
    run.write_script({"tool_calls": [tool_call("list_files")]})
    with pytest.raises(PlatformError, match="has 1 turns and the model was asked for turn 2"):
        run.start()


# --- iteration cap --------------------------------------------------------------------------


def test_iteration_cap_stops_the_run_and_answers_every_call(run: Run) -> None:
    run.write_script(
        *[{"tool_calls": [tool_call("execute_script", script="echo x >> log")]}] * 5,
    )

    out = run.start(max_iterations=2, confirm="never")

    assert out["status"] == "max_iterations"
    assert out["final_answer"].startswith("Stopped after 2 model calls (max_iterations=2)")
    messages = out["messages"]
    assert len(of_type(messages, AIMessage)) == 2
    assert_every_call_answered(messages)
    assert (run.workspace / "log").read_text() == "x\n"  # the second call never ran
    last = messages[-1]
    assert isinstance(last, ToolMessage)
    assert last.status == "error"
    assert "iteration cap" in last.content
    assert run.finished()


# --- confirmation ---------------------------------------------------------------------------

RISKY = {"tool_calls": [tool_call("execute_script", "x1", script="echo ran > ran.txt")]}


def confirm_request(run: Run) -> dict[str, Any]:
    (value,) = run.interrupts()
    assert value["type"] == "confirm_tools"
    return value


def test_confirm_interrupts_before_the_side_effect_and_approve_runs_it(run: Run) -> None:
    run.write_script(RISKY, {"text": f"Ran it. {MARKER}"})

    run.start()

    request = confirm_request(run)
    assert request["requests"] == [
        {
            "id": "x1",
            "name": "execute_script",
            "args": {"script": "echo ran > ran.txt"},
            "kind": "confirm",
        }
    ]
    assert not (run.workspace / "ran.txt").exists()

    out = run.resume({"x1": {"action": "approve"}})

    assert (run.workspace / "ran.txt").read_text() == "ran\n"
    assert out["status"] == "completed"
    assert out["final_answer"] == "Ran it."
    assert run.interrupts() == []


def test_bare_approve_applies_to_every_request(run: Run) -> None:
    run.write_script(
        {
            "tool_calls": [
                tool_call("execute_script", "a", script="echo a > a.txt"),
                tool_call("execute_script", "b", script="echo b > b.txt"),
            ]
        },
        {"text": f"ok {MARKER}"},
    )
    run.start()
    assert [r["id"] for r in confirm_request(run)["requests"]] == ["a", "b"]
    run.resume("approve")
    assert (run.workspace / "a.txt").exists()
    assert (run.workspace / "b.txt").exists()


def test_confirm_edit_runs_the_edited_arguments(run: Run) -> None:
    run.write_script(RISKY, {"text": f"Done. {MARKER}"})
    run.start()

    out = run.resume({"x1": {"action": "edit", "args": {"script": "echo edited > other.txt"}}})

    assert not (run.workspace / "ran.txt").exists()
    assert (run.workspace / "other.txt").read_text() == "edited\n"
    first_ai = of_type(out["messages"], AIMessage)[0]
    assert first_ai.tool_calls[0]["args"] == {"script": "echo edited > other.txt"}
    (result,) = of_type(out["messages"], ToolMessage)
    assert result.tool_call_id == "x1"
    assert result.content == "exit code: 0\n"
    assert len(of_type(out["messages"], AIMessage)) == 2  # not duplicated by the edit


def test_confirm_reject_tells_the_model_and_moves_on(run: Run) -> None:
    run.write_script(RISKY, {"text": f"Understood, not running it. {MARKER}"})
    run.start()

    out = run.resume({"x1": {"action": "reject", "reason": "too risky"}})

    assert not (run.workspace / "ran.txt").exists()
    (result,) = of_type(out["messages"], ToolMessage)
    assert result.status == "error"
    assert result.content.startswith(
        "The user declined this call to execute_script (too risky). It was not run."
    )
    ais = of_type(out["messages"], AIMessage)
    assert len(ais) == 2  # the next model turn happened, once
    assert ais[1].content == "Understood, not running it."
    assert out["status"] == "completed"
    assert run.interrupts() == []  # no re-ask loop


def test_reject_one_approve_the_other(run: Run) -> None:
    run.write_script(
        {
            "tool_calls": [
                tool_call("execute_script", "keep", script="echo k > keep.txt"),
                tool_call("execute_script", "drop", script="echo d > drop.txt"),
                tool_call("list_files", "safe"),
            ]
        },
        {"text": f"ok {MARKER}"},
    )
    run.start()
    assert [r["id"] for r in confirm_request(run)["requests"]] == ["keep", "drop"]

    out = run.resume({"keep": "approve", "drop": "reject"})

    assert (run.workspace / "keep.txt").exists()
    assert not (run.workspace / "drop.txt").exists()
    by_id = {m.tool_call_id: m for m in of_type(out["messages"], ToolMessage)}
    assert by_id["keep"].status == "success"
    assert by_id["drop"].status == "error"
    assert by_id["safe"].status == "success"
    assert_every_call_answered(out["messages"])


def test_ask_user_tool_is_answered_through_the_interrupt(run: Run) -> None:
    run.write_script(
        {"tool_calls": [tool_call("ask_user", "q1", question="Which file should I read?")]},
        {"text": f"I will read b.txt. {MARKER}"},
    )

    run.start(confirm="never")

    request = confirm_request(run)
    assert request["requests"] == [
        {
            "id": "q1",
            "name": "ask_user",
            "args": {"question": "Which file should I read?"},
            "kind": "question",
            "question": "Which file should I read?",
        }
    ]
    out = run.resume({"q1": "b.txt please"})

    (answer,) = of_type(out["messages"], ToolMessage)
    assert answer.tool_call_id == "q1"
    assert answer.content == "b.txt please"
    assert out["final_answer"] == "I will read b.txt."


# --- the ask_user node ----------------------------------------------------------------------


def test_ask_user_node_waits_for_the_next_instruction(run: Run) -> None:
    run.write_script(
        {"text": "Here is a long draft answer."},
        {"text": "Short answer."},
    )

    run.start("Write an answer")

    assert run.interrupts() == [{"type": "ask_user", "question": "Here is a long draft answer."}]

    run.resume("Make it shorter")

    assert run.interrupts() == [{"type": "ask_user", "question": "Short answer."}]
    messages = run.values()["messages"]
    assert isinstance(messages[-2], HumanMessage)
    assert messages[-2].content == "Make it shorter"
    assert len(of_type(messages, AIMessage)) == 2

    out = run.resume("")

    assert out["status"] == "completed"
    assert out["final_answer"] == "Short answer."
    assert run.finished()


def test_ask_user_node_complete_action_ends_the_run(run: Run) -> None:
    run.write_script({"text": "Draft."})
    run.start()
    out = run.resume({"action": "complete"})
    assert out["status"] == "completed"
    assert out["final_answer"] == "Draft."


def test_non_interactive_run_never_interrupts(run: Run) -> None:
    run.write_script(
        {
            "tool_calls": [
                tool_call("ask_user", "q", question="Which colour?"),
                tool_call("execute_script", "x", script="echo ran > ran.txt"),
                tool_call("list_files", "l"),
            ]
        },
        {"text": "Blue, I assumed."},
    )

    out = run.start(non_interactive=True)

    assert run.finished()
    assert run.interrupts() == []
    assert out["status"] == "completed"
    assert out["final_answer"] == "Blue, I assumed."
    by_id = {m.tool_call_id: m for m in of_type(out["messages"], ToolMessage)}
    assert "No user is available" in by_id["q"].content
    assert by_id["l"].status == "success"
    # A risky call is declined, not run unconfirmed and not asked about.
    assert by_id["x"].status == "error"
    assert "non-interactive" in by_id["x"].content
    assert not (run.workspace / "ran.txt").exists()


def test_non_interactive_with_confirm_never_runs_risky_tools(run: Run) -> None:
    run.write_script(RISKY, {"text": "Done."})
    out = run.start(non_interactive=True, confirm="never")
    assert run.finished()
    assert (run.workspace / "ran.txt").exists()
    assert out["status"] == "completed"


# --- persistence ----------------------------------------------------------------------------


def forget_process_state() -> None:
    """What a new process would not have: cached settings and buses."""
    reset_event_buses()


def test_resume_in_a_new_process_does_not_rerun_recorded_calls(run: Run) -> None:
    run.write_script(
        {"tool_calls": [tool_call("execute_script", "s1", script="echo first >> log.txt")]},
        {"tool_calls": [tool_call("execute_script", "s2", script="echo second >> log.txt")]},
        {"text": f"Logged twice. {MARKER}"},
    )
    log = run.workspace / "log.txt"

    with run.graph() as graph:  # process 1
        graph.invoke({"task": "log"}, run.config(), context=run.context())
        graph.invoke(Command(resume="approve"), run.config(), context=run.context())
        snapshot = graph.get_state(run.config())
    assert [i.value["requests"][0]["id"] for i in snapshot.interrupts] == ["s2"]
    assert log.read_text() == "first\n"

    forget_process_state()
    with run.graph() as graph:  # process 2: new objects, same session file
        pending = graph.get_state(run.config())
        assert pending.next == ("confirm_tools",)
        out = graph.invoke(Command(resume="approve"), run.config(), context=run.context())

    assert log.read_text() == "first\nsecond\n"
    assert out["status"] == "completed"
    assert out["final_answer"] == "Logged twice."
    assert_every_call_answered(out["messages"])


def test_ask_user_interrupt_survives_a_new_process(run: Run) -> None:
    run.write_script(
        {"tool_calls": [tool_call("execute_script", "s1", script="echo once >> log.txt")]},
        {"text": "What next?"},
        {"text": f"Finished. {MARKER}"},
    )
    run.start(confirm="never")
    assert run.interrupts() == [{"type": "ask_user", "question": "What next?"}]

    forget_process_state()
    out = run.resume("wrap up")

    assert (run.workspace / "log.txt").read_text() == "once\n"
    assert out["final_answer"] == "Finished."


def test_thread_continued_with_a_new_task(run: Run) -> None:
    run.write_script(
        {"text": f"First done. {MARKER}"},
        {"tool_calls": [tool_call("list_files")]},
        {"text": f"Second done. {MARKER}"},
    )
    first = run.start("first task")
    assert first["final_answer"] == "First done."

    second = run.start("second task")

    messages = second["messages"]
    assert second["status"] == "completed"
    assert second["final_answer"] == "Second done."
    assert len(of_type(messages, SystemMessage)) == 1
    assert [m.content for m in of_type(messages, HumanMessage)] == ["first task", "second task"]
    assert [m.content for m in of_type(messages, AIMessage)] == [
        "First done.",
        "",
        "Second done.",
    ]
    values = run.values()
    assert values["task"] == "second task"
    assert values["iteration"] == 2  # counted from the new task


def test_separate_threads_do_not_share_history(run: Run) -> None:
    run.write_script({"text": f"Answer. {MARKER}"})
    run.start("one")
    run.thread = "thread-2"
    out = run.start("two")
    assert [m.content for m in of_type(out["messages"], HumanMessage)] == ["two"]


def test_new_task_after_a_failed_run_is_not_lost(run: Run) -> None:
    with pytest.raises(PlatformError):
        run.start("old task")  # no script yet: fails before the model answers
    run.write_script({"text": f"New answer. {MARKER}"})

    out = run.start("new task")

    humans = [m.content for m in of_type(out["messages"], HumanMessage)]
    assert humans == ["old task", "new task"]
    assert run.values()["task"] == "new task"
    assert out["final_answer"] == "New answer."


def test_retrying_the_same_task_after_a_failure_does_not_repeat_it(run: Run) -> None:
    (run.workspace / "a.txt").write_text("x\n")  # a workspace context message is attached
    with pytest.raises(PlatformError):
        run.start("the task")
    run.write_script({"text": f"Done. {MARKER}"})

    out = run.start("the task")

    humans = of_type(out["messages"], HumanMessage)
    assert [m.content for m in humans if m.name is None] == ["the task"]
    assert [m.name for m in humans] == [None, "jarvis_context"]  # neither is repeated
    assert out["status"] == "completed"


def test_retrying_a_task_sent_as_a_message_attaches_its_context_once(run: Run) -> None:
    (run.workspace / "a.txt").write_text("x\n")
    with pytest.raises(PlatformError):
        run.invoke({"messages": [HumanMessage("say hello")]})
    run.write_script({"text": f"Hello. {MARKER}"})

    out = run.invoke({})

    assert [m.name for m in of_type(out["messages"], HumanMessage)] == [None, "jarvis_context"]
    assert out["status"] == "completed"


def test_task_sent_as_a_message(run: Run) -> None:
    run.write_script({"text": f"Hello. {MARKER}"})
    out = run.invoke({"messages": [HumanMessage("say hello")]})
    assert [m.content for m in of_type(out["messages"], HumanMessage)] == ["say hello"]
    assert run.values()["task"] == "say hello"


def test_no_task_is_an_error(run: Run) -> None:
    run.write_script({"text": "x"})
    with pytest.raises(ValueError, match="no task given"):
        run.invoke({})
