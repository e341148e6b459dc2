"""The answer check's rules, on plain message lists (the node runs in the graph tests)."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from jarvis_graph.features.answer_check import asked_actions, evidence_of, problems
from jarvis_graph.state import CHECK_NAME, CONTEXT_NAME

META = {
    "read_code": {},
    "execute_script": {"risky": True, "runs_code": True},
    "write_file": {"risky": True, "edits_files": True},
    "save_memory": {"saves_memory": True},
}


def conversation(task: str, *calls: tuple[str, dict, str]) -> list:
    messages: list = [HumanMessage(task)]
    for i, (name, args, result) in enumerate(calls):
        messages.append(AIMessage("", tool_calls=[{"name": name, "args": args, "id": str(i)}]))
        messages.append(ToolMessage(result, tool_call_id=str(i), name=name))
    return messages


def check(answer: str, messages: list, workspace: Path) -> list[str]:
    task = next(str(m.text) for m in reversed(messages) if m.type == "human" and not m.name)
    return problems(answer, task, evidence_of(messages, META), workspace)


def test_a_number_a_tool_returned_passes(tmp_path: Path) -> None:
    messages = conversation("What port?", ("read_code", {"path": "c.json"}, '{"port": 8123}'))
    assert check("The port is 8123.", messages, tmp_path) == []
    assert check("The port is 8,123.", messages, tmp_path) == []


def test_an_invented_number_fails_and_is_named(tmp_path: Path) -> None:
    messages = conversation("What port?", ("read_code", {"path": "c.json"}, '{"port": 8123}'))
    [found] = check("The port is 8080.", messages, tmp_path)
    assert "8080" in found and "no tool result" in found


def test_a_failed_result_is_evidence(tmp_path: Path) -> None:
    messages = conversation(
        "What is the total in sales_2023.csv?",
        ("read_code", {"path": "sales_2023.csv"}, "Error: sales_2023.csv does not exist"),
    )
    assert check("sales_2023.csv does not exist, so there is no total.", messages, tmp_path) == []
    assert check("The total is 4200.", messages, tmp_path)


def test_numbers_said_earlier_on_the_thread_are_evidence(tmp_path: Path) -> None:
    messages = [
        HumanMessage("My locker code is 4417, keep it in mind."),
        AIMessage("Noted."),
        HumanMessage("What is my locker code?"),
    ]
    assert check("Your locker code is 4417.", messages, tmp_path) == []


def test_the_checks_own_notice_is_not_evidence(tmp_path: Path) -> None:
    messages = conversation("What port?", ("read_code", {"path": "c.json"}, "{}"))
    messages.append(AIMessage("It is 8080."))
    messages.append(HumanMessage("the number 8080 appears in no tool result", name=CHECK_NAME))
    assert check("It is 8080.", messages, tmp_path)


def test_attached_context_is_evidence(tmp_path: Path) -> None:
    messages = [HumanMessage("What port?"), HumanMessage("c.json: port 9000", name=CONTEXT_NAME)]
    assert check("9000", messages, tmp_path) == []


def test_list_markers_and_paths_are_not_claims(tmp_path: Path) -> None:
    messages = conversation("List the logs", ("read_code", {"path": "."}, "worker-3.log"))
    assert check("1. worker-3.log", messages, tmp_path) == []


@pytest.mark.parametrize(
    ("task", "kinds"),
    [
        ("Fix the typo in greet.py, then run it.", ["write", "run"]),
        ("Could you run python3 -c 'print(2**10)' for me?", ["run"]),
        ("Please create util.py with a function add(a, b) and import it", ["write"]),
        ("Change the port in config.json to 9090", ["write"]),
        ("Remember that the deploy day is Friday.", ["remember"]),
        ("What does run.py print?", []),
        ("How many lines does notes.txt have?", []),
        ("Which test fails when the tests are run?", []),
    ],
)
def test_asked_actions_are_imperative_clauses(task: str, kinds: list[str]) -> None:
    assert asked_actions(task) == kinds


def test_an_action_asked_for_but_not_done_fails(tmp_path: Path) -> None:
    task = "Fix the typo in greet.py, then run it."
    read_only = conversation(task, ("read_code", {"path": "greet.py"}, "prnt('hi')"))
    found = check("I fixed it and it prints hi.", read_only, tmp_path)
    assert any("write or change" in p for p in found)
    assert any("to run something" in p for p in found)
    done = conversation(
        task,
        ("write_file", {"path": "greet.py", "content": "print('hi')"}, "Rewrote greet.py"),
        ("execute_script", {"script": "python3 greet.py"}, "exit code: 0\nhi"),
    )
    assert check("Fixed; it prints hi.", done, tmp_path) == []


def test_remember_needs_a_memory_save(tmp_path: Path) -> None:
    task = "Remember that the deploy day is Friday."
    assert check("Noted.", [HumanMessage(task)], tmp_path)
    saved = conversation(task, ("save_memory", {"memories": []}, "Saved 1 memory"))
    assert check("Noted.", saved, tmp_path) == []


def test_a_file_said_to_be_written_must_exist(tmp_path: Path) -> None:
    messages = conversation("Create notes.md", ("write_file", {"path": "x"}, "Created x"))
    [found] = check("I created notes.md for you.", messages, tmp_path)
    assert "no notes.md" in found
    (tmp_path / "notes.md").write_text("hi")
    assert check("I created notes.md for you.", messages, tmp_path) == []


def test_an_empty_answer_fails(tmp_path: Path) -> None:
    assert check("  ", [HumanMessage("hi")], tmp_path) == ["the answer is empty"]


def test_small_talk_passes(tmp_path: Path) -> None:
    assert check("Hello! How can I help?", [HumanMessage("hi there")], tmp_path) == []


def test_an_answer_copying_the_task_fails(tmp_path: Path) -> None:
    task = "Set workers to 8 in settings.json."
    messages = conversation(task, ("write_file", {"path": "settings.json"}, "Rewrote it"))
    assert check(f"The task: {task}\nIf these results answer it, reply.", messages, tmp_path) == [
        "the answer repeats the task instead of answering it"
    ]
    assert check("Done: workers is now 8 in settings.json.", messages, tmp_path) == []
