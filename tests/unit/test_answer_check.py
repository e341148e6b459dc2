"""The answer check's rules, on plain message lists (the node runs in the graph tests)."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from jarvis_graph.features.answer_check import (
    asked_actions,
    evidence_of,
    problems,
    workspace_digest,
)
from jarvis_graph.features.answer_check.rules import asked_aggregate
from jarvis_graph.nodes.check_answer import tools_asked_for
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


def looked(task: str) -> list:
    """A thread where a tool listed the files since ``task``: the answer rests on more than
    the attached file list (the other rules' business)."""
    return conversation(task, ("list_files", {"path": "."}, "the workspace's files"))


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
        ("In features.json, switch the dark_mode flag off.", ["write"]),
        ("For the http section, turn the retries down to 2", ["write"]),
        ("Please disable the cache in app.toml", ["write"]),
        ("In the logs, how many errors are there?", []),
        ("If the tests fail, tell me which one.", []),
        ("Remember that the deploy day is Friday.", ["remember"]),
        ("What does run.py print?", []),
        ("How many lines does notes.txt have?", []),
        ("Which test fails when the tests are run?", []),
        ("Write units.py. Then use python3 to import it and print f(2).", ["write", "run"]),
        ("Use bash to count the files.", ["run"]),
        ("Use a python3 -c one-liner to count the entries of the list.", ["run"]),
        ("Use the config in app.toml to find the port.", []),
    ],
)
def test_asked_actions_are_imperative_clauses(task: str, kinds: list[str]) -> None:
    assert asked_actions(task) == kinds


def test_a_one_liner_asked_for_that_only_failed_is_no_answer(tmp_path: Path) -> None:
    """The 0.5B's two one-liners failed (SyntaxError, exit code 1) and it answered 1."""
    (tmp_path / "inventory.json").write_text('{"items": [1, 2, 3]}')
    task = "Use a python3 -c one-liner to count the entries in the items list of inventory.json."
    failed = 'exit code: 1\n  File "<string>", line 1\nSyntaxError: invalid syntax'
    script = {"script": "python3 -c \"import csv; with open('inventory.json') as f: return 1\""}
    messages = conversation(task, ("execute_script", script, failed))
    assert any("failed" in p for p in check("1", messages, tmp_path))


def test_an_action_asked_for_but_not_done_fails(tmp_path: Path) -> None:
    (tmp_path / "greet.py").write_text("print('hi')\n")
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
    (tmp_path / "settings.json").write_text('{"workers": 8}')
    messages = conversation(task, ("write_file", {"path": "settings.json"}, "Rewrote it"))
    assert check(f"The task: {task}\nIf these results answer it, reply.", messages, tmp_path) == [
        "the answer repeats the task instead of answering it"
    ]
    assert check("Done: workers is now 8 in settings.json.", messages, tmp_path) == []


def test_line_numbers_of_a_listing_are_not_evidence(tmp_path: Path) -> None:
    listing = "utils.py (lines 1-4 of 4)\n     1 | def a():\n     2 |     pass\n     3 | def b():"
    messages = conversation("How many functions?", ("read_code", {"path": "utils.py"}, listing))
    assert check("4", messages, tmp_path) == []  # the tool counted 4 lines
    assert check("3", messages, tmp_path)  # only a line number


def test_refused_calls_and_read_arguments_are_not_evidence(tmp_path: Path) -> None:
    messages = [HumanMessage("What is the sum of qty?")]
    messages.append(
        AIMessage("", tool_calls=[{"name": "read_code", "args": {"end": 77}, "id": "1"}])
    )
    messages.append(ToolMessage("qty: 4, 5", tool_call_id="1", name="read_code"))
    messages.append(
        AIMessage("", tool_calls=[{"name": "read_code", "args": {"end": 77}, "id": "2"}])
    )
    messages.append(
        ToolMessage("Your call to 'compute' could not be run: ... '61'", tool_call_id="2")
    )
    assert check("77", messages, tmp_path)  # an argument of a read is the model's own
    assert check("61", messages, tmp_path)  # quoted in a refusal: the model's own
    assert check("9", messages, tmp_path)  # not computed by any tool either


def test_a_write_task_needs_a_change_in_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "inventory.py").write_text("pritn('x')\n")
    before = workspace_digest(tmp_path)
    task = "The inventory.py script crashes: fix it, then run it."
    ran = conversation(task, ("execute_script", {"script": "python3 x"}, "exit code: 0\nx"))
    unchanged = problems("x", task, evidence_of(ran, META), tmp_path, changed=False)
    assert any("no file in the workspace changed" in p for p in unchanged)
    offered = {**META, "edit_file": {"risky": True, "edits_files": True}}
    [told] = problems("x", task, evidence_of(ran, META), tmp_path, False, offered)
    # the call to make, with the file the task names in place
    assert told.endswith(
        ', for example edit_file with {"files": [{"path": "inventory.py", "diffs": '
        '[{"search": "<its text now>", "replace": "<the fix>"}]}]}'
    )
    (tmp_path / "inventory.py").write_text("print('x')\n")
    assert workspace_digest(tmp_path) != before
    assert problems("x", task, evidence_of(ran, META), tmp_path, changed=True) == []


def test_a_task_that_writes_a_new_file_is_shown_write_file_for_it(tmp_path: Path) -> None:
    """The file to create, not an edit of the file the task reads."""
    (tmp_path / "data.txt").write_text("a\nb\n")
    task = "Count the lines of data.txt and write that count into a new file named count.txt."
    read = conversation(task, ("read_code", {"path": "data.txt"}, "data.txt (lines 1-2 of 2)"))
    offered = {
        **META,
        "edit_file": {"risky": True, "edits_files": True},
        "write_file": {"risky": True, "edits_files": True},
    }
    found = problems("2", task, evidence_of(read, META), tmp_path, False, offered)
    [told] = [p for p in found if "no file in the workspace changed" in p]
    assert "changed: do it with write_file, then answer" in told  # not "edit_file or ..."
    assert tools_asked_for(found, list(offered)) == ["write_file"]
    assert told.endswith(
        ', for example write_file with {"path": "count.txt", "content": '
        '"<what the task asks to write>"}'
    )
    fix = "Fix the typo in report.py, then run it."  # not there: nothing to create
    ran = conversation(fix, ("read_code", {"path": "report.py"}, "report.py does not exist"))
    found = problems("done", fix, evidence_of(ran, META), tmp_path, False, offered)
    assert not any("write_file with" in p for p in found)
    without = {k: v for k, v in offered.items() if k != "write_file"}
    found = problems("2", task, evidence_of(read, META), tmp_path, False, without)
    [told] = [p for p in found if "no file in the workspace changed" in p]
    assert '"path": "data.txt"' in told  # no way to create: the one file there, edited


def test_the_digest_ignores_hidden_folders_and_caches(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a")
    before = workspace_digest(tmp_path)
    (tmp_path / ".jarvis").mkdir()
    (tmp_path / ".jarvis" / "sessions.sqlite").write_text("x")
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "a.pyc").write_text("x")
    assert workspace_digest(tmp_path) == before


def test_a_failed_write_is_no_write(tmp_path: Path) -> None:
    task = "Change the port in config.json to 9091."
    (tmp_path / "config.json").write_text("{}")
    failed = [HumanMessage(task)]
    failed.append(AIMessage("", tool_calls=[{"name": "write_file", "args": {}, "id": "1"}]))
    failed.append(ToolMessage("Error: invalid JSON", tool_call_id="1", name="write_file"))
    assert any("write or change" in p for p in check("Done.", failed, tmp_path))


def test_a_file_the_task_says_to_write_must_exist(tmp_path: Path) -> None:
    (tmp_path / "data.txt").write_text("a\nb\n")
    task = "Count the lines of data.txt and write the count into a new file named count.txt."
    messages = conversation(
        task, ("write_file", {"path": "data.txt", "content": "a"}, "Rewrote data.txt")
    )
    found = check("2", messages, tmp_path)
    assert any("to be written, but there is no count.txt" in p for p in found)
    (tmp_path / "count.txt").write_text("2")
    assert not any("count.txt" in p for p in check("2", messages, tmp_path))


def test_a_question_about_a_missing_file_must_say_it_is_missing(tmp_path: Path) -> None:
    (tmp_path / "settings_dev.py").write_text("TIMEOUT = 10\n")
    task = "What is TIMEOUT in settings_prod.py?"
    messages = conversation(task, ("read_code", {"path": "settings_dev.py"}, "TIMEOUT = 10"))
    [found] = check("10", messages, tmp_path)
    assert "settings_prod.py" in found and "not in the workspace" in found
    assert check("settings_prod.py does not exist.", messages, tmp_path) == []
    assert check("There is no settings_prod.py in the workspace.", messages, tmp_path) == []
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "settings_prod.py").write_text("TIMEOUT = 30\n")
    # found by its name in a folder: not missing, but never looked at (10 was settings_dev's)
    [found] = check("10", messages, tmp_path)
    assert "the task is about settings_prod.py too, but no tool looked at it" in found
    looked = conversation(
        task, ("read_code", {"path": "conf/settings_prod.py"}, "1 | TIMEOUT = 30")
    )
    assert check("30", looked, tmp_path) == []


def test_a_question_on_two_files_answered_after_a_look_at_one_fails(tmp_path: Path) -> None:
    """The 0.5B read extensions.csv alone and answered "Liang Wu": who is on call is in
    team.txt, which no tool looked at."""
    (tmp_path / "team.txt").write_text("# on-call rota\nthis week: Marta Jensen\n")
    (tmp_path / "extensions.csv").write_text("name,extension\nMarta Jensen,3581\nLiang Wu,2290\n")
    task = (
        "team.txt says who is on call this week. What's that person's desk phone extension? "
        "The extensions are in extensions.csv."
    )
    csv = ("read_code", {"path": "extensions.csv"}, "2 | Marta Jensen,3581\n3 | Liang Wu,2290")
    [found] = check("Liang Wu", conversation(task, csv), tmp_path)
    assert found.startswith("the task is about team.txt too, but no tool looked at it")
    team = ("read_code", {"path": "team.txt"}, "2 | this week: Marta Jensen")
    assert check("3581", conversation(task, team, csv), tmp_path) == []


def test_a_failed_last_run_must_be_owned_up_to(tmp_path: Path) -> None:
    task = "Run the tests with python3 -m unittest and tell me the result."
    out = "exit code: 1\nFAIL: test_apply_discount (test_pricing.PricingTests)\nFAILED (failures=1)"
    messages = conversation(task, ("execute_script", {"script": "python3 -m unittest"}, out))
    [found] = check("All good: 1 test ran.", messages, tmp_path)
    assert "the last run failed (exit code: 1)" in found
    assert check("The tests failed: 1 failure.", messages, tmp_path) == []
    assert check("test_apply_discount", messages, tmp_path) == []  # named from the output
    fixed = [*messages, *conversation(task, ("execute_script", {}, "exit code: 0\nOK"))[1:]]
    fixed[-2].tool_calls[0]["id"] = fixed[-1].tool_call_id = "9"
    assert check("All 1 tests pass.", fixed, tmp_path) == []


def test_a_total_must_be_computed_not_read_off_a_file(tmp_path: Path) -> None:
    task = "What is the sum of the qty column in sales.csv?"
    (tmp_path / "sales.csv").write_text("item,qty\na,11\nb,23\n")
    read = "sales.csv (lines 1-3 of 3: a header line and 2 data rows)\nitem,qty\na,11\nb,23"
    messages = conversation(task, ("read_code", {"path": "sales.csv"}, read))
    [found] = check("11", messages, tmp_path)
    assert "count, a total or a largest" in found
    computed = conversation(
        task,
        ("read_code", {"path": "sales.csv"}, read),
        ("compute", {"expression": "sum(...)"}, "sum(...) = 34"),
    )
    meta = {**META, "compute": {"computes": True}}
    asked = next(str(m.text) for m in computed if m.type == "human")
    assert problems("34", asked, evidence_of(computed, meta), tmp_path) == []
    assert problems("11", asked, evidence_of(computed, meta), tmp_path)


def test_counts_tools_print_are_computed(tmp_path: Path) -> None:
    task = "How many data rows does users.csv have?"
    (tmp_path / "users.csv").write_text("name\nann\nbob\n")
    read = "users.csv (lines 1-3 of 3: a header line and 2 data rows)\nname\nann\nbob"
    messages = conversation(task, ("read_code", {"path": "users.csv"}, read))
    assert check("2", messages, tmp_path) == []
    context = "Workspace context:\n\n--- users.csv (3 lines: a header line and 2 data rows) ---"
    attached = [HumanMessage(task), HumanMessage(context, name=CONTEXT_NAME)]
    assert check("2", attached, tmp_path)  # the context's sizes count nothing (see below)
    assert check(
        "3", [HumanMessage("How many rows?"), HumanMessage("a\n3\n", name=CONTEXT_NAME)], tmp_path
    )


def test_the_notice_names_the_tools_that_do_what_is_missing(tmp_path: Path) -> None:
    task = "Run the script compute.py with python3 and report what it prints."
    messages = conversation(task, ("compute", {"expression": "1"}, "1 = 1"))
    asked = str(messages[0].text)
    found = problems("1", asked, evidence_of(messages, META), tmp_path, offered=META)
    assert any("no tool ran anything: do it with execute_script, then answer" in p for p in found)
    found = problems("1", asked, evidence_of(messages, META), tmp_path, offered={})
    assert any("do it with a tool" in p for p in found)


def test_a_largest_value_must_be_computed_too(tmp_path: Path) -> None:
    (tmp_path / "numbers.txt").write_text("19\n230\n7\n")
    task = "What is the largest number in numbers.txt?"
    read = "numbers.txt (lines 1-3 of 3)\n19\n230\n7"
    messages = conversation(task, ("read_code", {"path": "numbers.txt"}, read))
    meta = {**META, "compute": {"computes": True}}
    [found] = problems("19", task, evidence_of(messages, meta), tmp_path, offered=meta)
    assert "compute it with compute, then answer" in found


def test_a_number_computed_with_another_aggregate_than_asked_fails(tmp_path: Path) -> None:
    (tmp_path / "numbers.txt").write_text("19\n230\n7\n")
    task = "What is the largest number in numbers.txt?"
    meta = {**META, "compute": {"computes": True}}
    read_as = "(read as sum(float(x) for x in open('numbers.txt').read().split()))"
    total = f"sum(numbers.txt) = 256 {read_as}"
    summed = conversation(task, ("compute", {"expression": "sum(numbers.txt)"}, total))
    [found] = problems("256", task, evidence_of(summed, meta), tmp_path, offered=meta)
    assert "256 is not what the question asks for" in found
    assert "sum(numbers.txt) is a total, the question asks for the largest value" in found
    assert "for example compute(expression='max(numbers.txt)')" in found
    # a value read off the file, with the wrong computation made: the notice shows the fix
    read = ("read_code", {"path": "numbers.txt"}, "numbers.txt (lines 1-3 of 3)\n19\n230\n7")
    summed = conversation(task, read, ("compute", {"expression": "sum(numbers.txt)"}, total))
    [found] = problems("19", task, evidence_of(summed, meta), tmp_path, offered=meta)
    assert "compute it with compute (sum(numbers.txt) is a total" in found
    assert "for example compute(expression='max(numbers.txt)'))" in found
    largest = "max(numbers.txt) = 230 (read as max(float(x) for x in open('numbers.txt')))"
    done = conversation(task, ("compute", {"expression": "max(numbers.txt)"}, largest))
    assert problems("230", task, evidence_of(done, meta), tmp_path, offered=meta) == []
    # no one aggregate asked for, or one that is not sum/max/min: nothing to judge
    for other in (
        "What is the sum of the largest and smallest numbers?",
        "What is the total number of lines of numbers.txt?",
    ):
        assert asked_aggregate(other) is None
    assert asked_aggregate("What is the lowest temperature?") == "min"
    assert asked_aggregate("Sum the qty column.") == "sum"


def test_counts_the_tools_add_support_counts_not_values(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha 17\n")
    (tmp_path / "b.txt").write_text("beta 25\n")
    context = (
        "Workspace context for this task (attached by Jarvis):\n\n"
        "The workspace holds 2 files:\na.txt\nb.txt\n\n"
        "--- a.txt (1 line) ---\nalpha 17\n--- end of a.txt ---\n\n"
        "--- b.txt (1 line) ---\nbeta 25\n--- end of b.txt ---"
    )
    task = "Read a.txt and b.txt and tell me the number in each."
    messages = [HumanMessage(task), HumanMessage(context, name=CONTEXT_NAME)]
    assert check("2", messages, tmp_path)  # the listing's count is not a value of a file
    assert check("1", messages, tmp_path)
    assert check("a.txt has 17 and b.txt has 25.", messages, tmp_path) == []
    how_many = [HumanMessage("How many files are there?"), HumanMessage(context, name=CONTEXT_NAME)]
    assert check("2", how_many, tmp_path)  # counted by a tool in the task, not read off
    listed = conversation("How many files are there?", ("read_code", {}, "2 files under .:"))
    assert check("2", listed, tmp_path) == []


def test_a_which_file_answer_must_name_a_file_holding_the_term(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "api.log").write_text("10:01 start\n")
    (tmp_path / "logs" / "worker-2.log").write_text("10:03 error E4471 disk\n")
    task = "One file under logs/ contains the error code E4471. Which file is it?"
    [found] = check("logs/api.log", looked(task), tmp_path)
    assert "no such file contains E4471" in found and "search_files" in found
    assert check("logs/worker-2.log", looked(task), tmp_path) == []
    assert check("worker-2.log", looked(task), tmp_path) == []  # by its name


def test_a_which_file_question_about_a_function(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "util.py").write_text("def helper():\n    pass\n")
    (tmp_path / "src" / "wire.py").write_text("def compute_checksum(data):\n    return 0\n")
    task = "Which file defines the function compute_checksum?"
    assert check("src/util.py", looked(task), tmp_path)
    assert check("It is defined in src/wire.py.", looked(task), tmp_path) == []
    plain = "Which file is the largest?"  # no term to look for: not this rule's business
    assert check("src/util.py", looked(plain), tmp_path) == []


@pytest.mark.parametrize(
    "definition",
    [
        "class InvoiceStore:\n    pass\n",
        "export class InvoiceStore {}\n",
        "InvoiceStore = make_store()\n",
        "InvoiceStore: type[Store] = Store\n",
        "pub struct InvoiceStore;\n",
    ],
)
def test_where_something_is_defined_the_file_must_define_it(
    tmp_path: Path, definition: str
) -> None:
    (tmp_path / "store.py").write_text(definition)
    (tmp_path / "app.py").write_text("from store import InvoiceStore\nif x == InvoiceStore: pass\n")
    task = "Which file defines the InvoiceStore class?"
    [found] = check("app.py", looked(task), tmp_path)
    assert "no such file contains a definition of InvoiceStore" in found
    assert check("store.py", looked(task), tmp_path) == []
    used = "Which file uses InvoiceStore?"  # a use is enough when the question asks for one
    assert check("app.py", looked(used), tmp_path) == []


def test_a_run_task_reports_what_the_run_printed(tmp_path: Path) -> None:
    (tmp_path / "build.sh").write_text('echo "build tag: lima-$((6 * 7))"\n')
    task = "Run build.sh with bash and report the build tag it prints."
    source = 'build.sh (lines 1-1 of 1)\necho "build tag: lima-$((6 * 7))"'
    messages = conversation(
        task,
        ("read_code", {"path": "build.sh"}, source),
        ("execute_script", {"script": "bash build.sh"}, "exit code: 0\nbuild tag: lima-42"),
    )
    [found] = check("build tag: lima-6*7", messages, tmp_path)
    assert "7 is not in what the run printed" in found
    assert check("build tag: lima-42", messages, tmp_path) == []
    asked = "What does build.sh echo?"  # not asked to run: the source is evidence
    assert check("lima-6*7", [HumanMessage(asked), *messages[1:3]], tmp_path) == []


@pytest.mark.parametrize(
    ("task", "wrong", "right"),
    [
        (
            "Look the login up in users.json and report the user's email address.",
            "kortega",
            "kim.ortega@example.org",
        ),
        ("What is the IP address of the db host in hosts.txt?", "db-1", "10.0.0.7"),
        ("Which URL does README.md link to for the docs?", "the docs page", "https://x.org/docs"),
        ("How many users are in users.json?", "users", "three"),
    ],
)
def test_an_answer_of_the_wrong_shape_fails(
    tmp_path: Path, task: str, wrong: str, right: str
) -> None:
    messages = [HumanMessage(task), HumanMessage(f"x {right} 3", name=CONTEXT_NAME)]
    assert any("but the answer holds none" in p for p in check(wrong, messages, tmp_path))
    assert not any("holds none" in p for p in check(right, messages, tmp_path))
    assert not any("holds none" in p for p in check("It is not in the file.", messages, tmp_path))


def test_secret_files_are_never_read_for_a_which_file_answer(tmp_path: Path) -> None:
    (tmp_path / "credentials.json").write_text('{"token": "abc"}')  # no E4471: read, it fails
    task = "Which file contains E4471?"
    assert check("credentials.json", looked(task), tmp_path) == []  # not looked into


def test_where_a_listing_starts_is_no_count(tmp_path: Path) -> None:
    (tmp_path / "orders.csv").write_text("id,state\n1,open\n2,done\n3,open\n")
    task = "How many rows of orders.csv have state open?"
    read = "orders.csv (lines 1-4 of 4: a header line and 3 data rows)\nid,state\n1,open\n2,done"
    messages = conversation(task, ("read_code", {"path": "orders.csv"}, read))
    found = check("1", messages, tmp_path)  # "1" only as the first line's number
    assert any("count, a total" in p for p in found)
    assert check("3", messages, tmp_path) == []  # the tool counted 3 data rows


CONFIG_JSON = '{\n  "server": {"host": "0.0.0.0", "port": 8080},\n  "debug": false\n}\n'


def edit_result(tmp_path: Path, search: str, replace: str) -> str:
    """What the real edit tool says about one edit of config.json."""
    from jarvis_graph.tools.base import ToolEnv
    from jarvis_graph.tools.code_tools import edit_file_impl

    diffs = [{"search": search, "replace": replace}]
    return edit_file_impl(ToolEnv(tmp_path), [{"path": "config.json", "diffs": diffs}])


def test_a_value_change_that_renamed_a_key_fails(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(CONFIG_JSON)
    task = "Change the server port in config.json to 9091."
    result = edit_result(tmp_path, '"server"', '"9091"')
    messages = conversation(task, ("write_file", {"path": "config.json"}, result))
    found = check("Done, the port is 9091.", messages, tmp_path)
    assert any("removed server.host, server.port" in p for p in found), found
    assert any("after the edits no value is 9091" in p for p in found), found


def test_a_value_set_then_overwritten_by_a_later_edit_fails(tmp_path: Path) -> None:
    """The 1.5B set http.timeout_s to 45, then rewrote the file with 300 there, and
    answered 45."""
    (tmp_path / "config.json").write_text(CONFIG_JSON)
    task = "Change the server port in config.json to 9091."
    right = edit_result(tmp_path, '"port": 8080', '"port": 9091')
    again = edit_result(tmp_path, '"port": 9091', '"port": 8081')
    calls = [("write_file", {"path": "config.json"}, r) for r in (right, again)]
    found = check("The port is now 9091.", conversation(task, *calls), tmp_path)
    assert any("after the edits no value is 9091" in p for p in found), found


def test_a_renamed_key_put_back_and_the_value_set_passes(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(CONFIG_JSON)
    task = "Change the server port in config.json to 9091."
    wrong = edit_result(tmp_path, '"server"', '"9091"')
    back = edit_result(tmp_path, '"9091"', '"server"')
    right = edit_result(tmp_path, '"port": 8080', '"port": 9091')
    calls = [("write_file", {"path": "config.json"}, r) for r in (wrong, back, right)]
    assert check("The port is now 9091.", conversation(task, *calls), tmp_path) == []


def test_a_value_set_right_passes_and_a_rename_task_may_remove_keys(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(CONFIG_JSON)
    right = edit_result(tmp_path, '"port": 8080', '"port": 9091')
    task = "Set the server port in config.json to 9091"
    assert check("Set to 9091.", conversation(task, ("write_file", {}, right)), tmp_path) == []
    renamed = edit_result(tmp_path, '"server"', '"backend"')
    task = "Rename the server section of config.json to backend"
    assert check("Renamed.", conversation(task, ("write_file", {}, renamed)), tmp_path) == []


def test_a_question_about_a_file_answered_without_looking_fails(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("deploy window: friday 18:00\nowner: dana\n")
    task = "Who is the owner in notes.txt?"
    [found] = check("The owner is sam.", [HumanMessage(task)], tmp_path)
    assert "nothing was looked at since the task" in found and "notes.txt" in found
    read = conversation(task, ("read_code", {"path": "notes.txt"}, "owner: dana"))
    assert check("dana", read, tmp_path) == []


def test_a_file_seen_earlier_on_the_thread_or_attached_needs_no_new_look(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("deploy window: friday 18:00\nowner: dana\n")
    earlier = conversation("Read notes.txt", ("read_code", {}, "deploy window: friday 18:00"))
    messages = [*earlier, AIMessage("Read it."), HumanMessage("When is the window in notes.txt?")]
    assert check("friday 18:00", messages, tmp_path) == []
    attached = HumanMessage("--- notes.txt ---\nowner: dana\n", name=CONTEXT_NAME)
    assert check("dana", [HumanMessage("Owner in notes.txt?"), attached], tmp_path) == []
    assert check("No idea.", [HumanMessage("What is in missing.txt?")], tmp_path)  # other rule


def test_an_answer_that_copies_the_runs_notice_fails(tmp_path: Path) -> None:
    note = (
        "Your answer is not supported by what the tools returned:\n- the last run failed "
        "(exit code: 127), but the answer does not say so"
    )
    messages = conversation("Run compute.py", ("execute_script", {}, "exit code: 127"))
    messages += [AIMessage("127"), HumanMessage(note, name=CHECK_NAME)]
    copied = "The answer is not supported by what the tools returned: - the last run failed"
    [found] = check(copied, messages, tmp_path)
    assert "copies a notice of the run" in found
    # a short overlap is no copy, and a notice of an earlier task does not count
    assert not any("copies" in p for p in check("It failed: exit code 127.", messages, tmp_path))
    later = [*messages, AIMessage("ok"), HumanMessage("Run compute.py again")]
    assert not any("copies" in p for p in check(copied, later, tmp_path))


def test_an_answer_that_copies_a_refused_repeat_fails(tmp_path: Path) -> None:
    refused = (
        "Not run again: you already called read_code with these arguments in this task, "
        "and nothing changed since."
    )
    messages = conversation("Read a.txt", ("read_code", {"path": "a.txt"}, refused))
    answer = "you already called read_code with these arguments in this task"
    assert any("copies a notice" in p for p in check(answer, messages, tmp_path))


def test_a_count_is_counted_in_the_task_not_read_off_the_attached_context(
    tmp_path: Path,
) -> None:
    """config.toml is attached because it is small; its size answers no count question."""
    (tmp_path / "config.toml").write_text('[job]\ninput = "data/rows.txt"\nretries = 2\n')
    context = (
        "The workspace holds 2 files:\nconfig.toml\ndata/rows.txt\n"
        '--- config.toml (3 lines) ---\n[job]\ninput = "data/rows.txt"\nretries = 2\n'
        "--- end of config.toml ---"
    )
    attached = HumanMessage(context, name=CONTEXT_NAME)
    task = "config.toml names the input file of the job. How many lines does that file have?"
    [found] = check("3", [HumanMessage(task), attached], tmp_path)
    assert "3 appears in no tool result" in found
    counted = conversation(
        task, ("read_code", {"path": "data/rows.txt"}, "rows.txt (lines 1-3 of 3)\na\nb\nc")
    )
    assert check("3", [*counted[:1], attached, *counted[1:]], tmp_path) == []


def test_the_note_of_a_cut_listing_counts_nothing(tmp_path: Path) -> None:
    (tmp_path / "orders.csv").write_text("order,status\no-7,shipped\no-8,pending\no-9,x\n")
    task = "How many orders in orders.csv have the status shipped?"
    page = (
        "orders.csv (lines 1-3 of 4: a header line and 3 data rows)\norder,status\n"
        "o-7,shipped\no-8,pending\n[1 more lines; call read_code with start_line=4]"
    )
    messages = conversation(task, ("read_code", {"path": "orders.csv"}, page))
    assert check("1", messages, tmp_path)  # how much is not shown is no count of orders
    assert check("3", messages, tmp_path) == []  # the data rows are a count the tool made


def test_a_question_about_the_workspace_answered_from_the_file_list_alone_fails(
    tmp_path: Path,
) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "parse.py").write_text("def parse(text):\n    # TODO(priya): empty\n")
    task = "Somewhere in the source files there is one TODO(name). Who is it assigned to?"
    listing = HumanMessage("The workspace holds 1 file:\napp/parse.py", name=CONTEXT_NAME)
    [found] = check("parse", [HumanMessage(task), listing], tmp_path)
    assert "asks about the workspace's source" in found and "search or read" in found
    searched = conversation(
        task, ("search_files", {"pattern": "TODO"}, "app/parse.py:2: # TODO(priya)")
    )
    assert check("priya", searched, tmp_path) == []
    # a tool result of an earlier task on the thread may hold the answer
    messages = [*searched, AIMessage("priya"), HumanMessage("Which file was that TODO in?")]
    assert check("app/parse.py", messages, tmp_path) == []
    # a question about nothing in the workspace needs no look
    assert check("Paris.", [HumanMessage("What is the capital of France?")], tmp_path) == []


def docs_tree(root: Path) -> None:
    for name in ("README.md", "docs/a.md", "docs/b.md", "docs/notes.txt", "docs/api/c.md"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x\n")


def test_a_count_of_every_file_does_not_answer_how_many_of_one_kind_in_a_folder(
    tmp_path: Path,
) -> None:
    docs_tree(tmp_path)
    task = "How many Markdown (.md) files are in the docs folder, including its subfolders?"
    everything = "5 files under . (4 .md, 1 .txt):\nREADME.md\ndocs/a.md\ndocs/b.md\n..."
    messages = conversation(task, ("list_files", {"path": "."}, everything))
    [found] = check("5", messages, tmp_path)
    assert "5 counts every file under . (4 .md, 1 .txt)" in found
    assert "asks about .md files under docs only" in found and "*.md" in found
    root_md = "4 files under .:\nREADME.md\ndocs/a.md\ndocs/b.md\ndocs/api/c.md"
    messages = conversation(task, ("list_files", {"pattern": "*.md"}, root_md))
    [found] = check("4", messages, tmp_path)  # README.md is outside docs
    assert "4 counts every file under ." in found
    docs_md = "3 files under docs:\na.md\nb.md\napi/c.md"
    messages = conversation(task, ("list_files", {"path": "docs", "pattern": "*.md"}, docs_md))
    assert check("There are 3.", messages, tmp_path) == []


def test_a_search_of_every_file_does_not_count_the_files_of_one_kind(tmp_path: Path) -> None:
    """The 0.5B searched ``.*`` in docs and answered with the number of files it matched."""
    docs_tree(tmp_path)
    task = "How many Markdown (.md) files are in the docs folder, including its subfolders?"
    every = "4 matching lines in 4 files:\na.md:1:x\nb.md:1:x\nnotes.txt:1:x\napi/c.md:1:x"
    messages = conversation(task, ("search_files", {"pattern": ".*", "path": "docs"}, every))
    [found] = check("4", messages, tmp_path)
    assert "4 counts every file the search matched (3 .md, 1 .txt)" in found
    assert "asks about .md files only" in found and "*.md" in found
    only_md = "3 matching lines in 3 files:\na.md:1:x\nb.md:1:x\napi/c.md:1:x"
    messages = conversation(task, ("search_files", {"pattern": ".*", "glob": "*.md"}, only_md))
    assert check("3", messages, tmp_path) == []
    # a count of matching lines is an answer when the task asks for lines
    lines = "How many lines of the docs folder's Markdown (.md) files mention x?"
    messages = conversation(lines, ("search_files", {"pattern": "x", "glob": "*.md"}, only_md))
    assert check("3", messages, tmp_path) == []


def test_a_count_per_kind_or_a_question_about_everything_passes(tmp_path: Path) -> None:
    docs_tree(tmp_path)
    everything = "5 files under . (4 .md, 1 .txt):\nREADME.md\ndocs/a.md"
    kind = "How many .md files does the workspace hold?"
    assert check("4", conversation(kind, ("list_files", {}, everything)), tmp_path) == []
    all_files = "How many files does the workspace hold?"
    assert check("5", conversation(all_files, ("list_files", {}, everything)), tmp_path) == []
    in_docs = "How many files are under docs?"
    listing = "4 files under docs (3 .md, 1 .txt):\na.md"
    assert check("4", conversation(in_docs, ("list_files", {}, listing)), tmp_path) == []


def test_a_short_answer_must_come_from_a_line_with_what_the_question_quotes(
    tmp_path: Path,
) -> None:
    task = "One comment of the form TODO(name) is in the source. Who is that TODO assigned to?"
    source = (
        "app/parse.py (lines 1-3 of 3)\n1 | def parse_items(text):\n"
        "2 |     # TODO(priya): handle empty input\n3 |     return []"
    )
    messages = conversation(task, ("read_code", {"path": "app/parse.py"}, source))
    [found] = check("parse", messages, tmp_path)
    assert "stand on no line of the tool results that holds TODO" in found
    assert check("priya", messages, tmp_path) == []
    assert check("The TODO is assigned to Priya.", messages, tmp_path) == []


def test_a_value_next_to_the_quoted_identifier_passes_and_another_fails(tmp_path: Path) -> None:
    (tmp_path / "settings.py").write_text("TIMEOUT = 30\nMAX_RETRIES = 9\n")
    task = "What is MAX_RETRIES set to in settings.py?"
    source = "settings.py (lines 1-2 of 2)\n1 | TIMEOUT = 30\n2 | MAX_RETRIES = 9"
    messages = conversation(task, ("read_code", {"path": "settings.py"}, source))
    assert check("9", messages, tmp_path) == []
    assert check("MAX_RETRIES is 9.", messages, tmp_path) == []
    [found] = check("30", messages, tmp_path)
    assert "holds MAX_RETRIES" in found
    # a long answer, a file name, or a question without a quoted identifier: other rules
    plain = conversation("What is the timeout?", ("read_code", {}, source))
    assert check("30", plain, tmp_path) == []


def test_a_count_of_lines_with_a_tag_is_not_held_to_those_lines(tmp_path: Path) -> None:
    (tmp_path / "app.log").write_text("10:01 ERROR disk\n10:02 ok\n10:03 ok\n10:09 ERROR net\n")
    task = "How many lines of app.log contain ERROR?"
    hits = "2 matching lines in 1 file:\napp.log:1:10:01 ERROR disk\napp.log:4:10:09 ERROR net"
    messages = conversation(task, ("search_files", {"pattern": "ERROR"}, hits))
    assert check("2", messages, tmp_path) == []


def test_the_length_of_the_file_that_names_the_one_to_count_is_no_answer(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "config.toml").write_text('[job]\nname = "n"\ninput = "data/b.txt"\nx = 2\n')
    (tmp_path / "data" / "b.txt").write_text("a\nb\nc\nd\ne\nf\ng\nh\ni\n")
    task = "config.toml names the input file of the job. How many lines does that file have?"
    config = (
        "config.toml (lines 1-1 of 4)\n1 | [job]\n[3 more lines; call read_code with start_line=2]"
    )
    messages = conversation(task, ("read_code", {"path": "config.toml"}, config))
    [found] = check("4", messages, tmp_path)
    assert "4 is the length of config.toml, the file that names the one" in found
    assert "config.toml names data/b.txt: count that file" in found
    data = "data/b.txt (lines 1-9 of 9)\n1 | a"
    messages = conversation(task, ("read_code", {}, config), ("read_code", {}, data))
    assert check("9", messages, tmp_path) == []
    asked = "How many lines does config.toml have?"  # the file itself is asked about
    assert check("4", conversation(asked, ("read_code", {}, config)), tmp_path) == []


def test_a_value_in_the_block_a_quoted_key_opens_passes(tmp_path: Path) -> None:
    task = "What port does the SERVICE_A block use?"
    source = "services.yaml (lines 1-6 of 6)\nSERVICE_A:\n  host: a\n  port: 8080\n"
    source += "SERVICE_B:\n  host: b\n  port: 9090"
    messages = conversation(task, ("read_code", {"path": "services.yaml"}, source))
    assert check("8080", messages, tmp_path) == []
    [found] = check("9090", messages, tmp_path)  # the other block's port
    assert "holds SERVICE_A" in found


def test_a_question_answered_from_a_file_the_run_wrote_fails(tmp_path: Path) -> None:
    # sales_2024.csv did not exist; the model wrote one of its own and summed it
    (tmp_path / "sales_2024.csv").write_text("amount\n12345\n")
    messages = conversation(
        "What is the sum of the amount column in sales_2024.csv?",
        ("write_file", {"path": "sales_2024.csv", "content": "amount\n12345\n"}, "Wrote it."),
        ("read_code", {"path": "sales_2024.csv"}, "amount\n12345\n"),
    )
    found = check("The sum is 12345.", messages, tmp_path)
    assert any("wrote sales_2024.csv itself" in f for f in found), found


def test_a_helper_the_task_does_not_name_and_an_asked_write_pass(tmp_path: Path) -> None:
    (tmp_path / "data.csv").write_text("amount\n5\n7\n")
    (tmp_path / "count.py").write_text("print(12)\n")
    helper = conversation(
        "What is the sum of the amount column in data.csv?",
        ("write_file", {"path": "count.py", "content": "print(12)"}, "Wrote count.py."),
        ("execute_script", {"command": "python3 count.py"}, "12"),
    )
    assert not any("itself" in f for f in check("The sum is 12.", helper, tmp_path))
    asked = conversation(
        "Create data.csv with an amount column holding 5 and 7.",
        ("write_file", {"path": "data.csv", "content": "amount\n5\n7\n"}, "Wrote data.csv."),
    )
    assert check("Created data.csv.", asked, tmp_path) == []


def test_add_up_computes_and_asks_for_no_write(tmp_path: Path) -> None:
    """ "Add up the amount column" sums: writing the missing file it names is not asked."""
    assert asked_actions("Can you add up the amount column of sales_2024.csv for me?") == []
    assert asked_actions("Add them up, then write the sum into total.txt.") == ["write"]
    assert asked_actions("Add a line to notes.txt.") == ["write"]
    (tmp_path / "sales_2024.csv").write_text("amount,200\namount,300\n")
    messages = conversation(
        "Can you add up the amount column of sales_2024.csv for me?",
        ("read_code", {"path": "sales_2024.csv"}, "Error: file 'sales_2024.csv' does not exist"),
        ("write_file", {"path": "sales_2024.csv", "content": "amount,200\n"}, "Created it."),
    )
    assert any("wrote sales_2024.csv itself" in f for f in check("No", messages, tmp_path))


def test_a_count_asked_into_a_file_must_be_a_counted_number(tmp_path: Path) -> None:
    """The 0.5B wrote "The number of lines in data.txt is " into count.txt and answered "1"
    (the write tool's own "1 lines"): the run ended completed with no count in the file."""
    (tmp_path / "count.txt").write_text("The number of lines in data.txt is ")
    task = "Count the lines of data.txt and write that count (only the number) into count.txt."
    no_number = conversation(
        task,
        ("write_file", {"path": "count.txt", "content": "The number of lines in data.txt is "},
         "Created count.txt (1 lines)."),
    )  # fmt: skip
    [found] = [f for f in check("1", no_number, tmp_path) if "count or a total" in f]
    assert "holds no number" in found and "count.txt" in found
    made_up = conversation(
        task, ("write_file", {"path": "count.txt", "content": "12"}, "Created count.txt.")
    )
    assert any("not counted or computed" in f for f in check("Done.", made_up, tmp_path))
    counted = conversation(
        task,
        ("read_code", {"path": "data.txt"}, "data.txt (lines 1-11 of 11)\na\nb"),
        ("write_file", {"path": "count.txt", "content": "11"}, "Created count.txt."),
    )
    assert not any("count or a total" in f for f in check("Done.", counted, tmp_path))
    scripted = conversation(
        task, ("execute_script", {"command": "wc -l < data.txt > count.txt"}, "")
    )
    assert not any("count or a total" in f for f in check("Done.", scripted, tmp_path))


def test_a_short_answer_about_a_term_no_tool_showed_fails(tmp_path: Path) -> None:
    task = "One comment of the form TODO(name) is in the source. Who is that TODO assigned to?"
    other = "app/format.py (lines 1-3 of 3)\n1 | def fmt(row):\n2 |     # FIXME(omar): pad"
    messages = conversation(
        task,
        ("search_files", {"pattern": "app/*.py", "glob": ".*"}, "no file matches the glob"),
        ("read_code", {"path": "app/format.py"}, other),
    )
    [found] = check("parse", messages, tmp_path)
    assert "no tool result shows a line with TODO" in found
    assert check("No file holds such a TODO.", messages, tmp_path) == []
    (tmp_path / "config.py").write_text("TIMEOUT = 30\n")
    settings = "config.py (lines 1-1 of 1)\n1 | TIMEOUT = 30"
    asked = conversation("Is MAX_RETRIES set in config.py?", ("read_code", {}, settings))
    assert check("No, it is not.", asked, tmp_path) == []


def test_a_run_that_never_started_reports_nothing(tmp_path: Path) -> None:
    """The 0.5B ran ``check_dates.py`` as a command (exit 127) and answered with a check
    name taken from the script's source, "FAIL check_dates.py:iso_dates"."""
    (tmp_path / "check_dates.py").write_text("print('ok iso_dates')\n")
    task = "There's a self-test script, check_dates.py. Execute it and tell me which check fails."
    not_found = (
        "exit code: 127\nbash: line 1: check_dates.py: command not found\n"
        "[check_dates.py is a file, not a command: run it with `python3 check_dates.py`]"
    )
    messages = conversation(task, ("execute_script", {"script": "check_dates.py"}, not_found))
    found = check("FAIL check_dates.py:iso_dates", messages, tmp_path)
    assert any("never started" in f for f in found)
    said = check("It could not run: check_dates.py: command not found.", messages, tmp_path)
    assert not any("never started" in f for f in said)


def test_a_status_must_stand_on_the_line_of_the_name_it_is_given(tmp_path: Path) -> None:
    (tmp_path / "check_dates.py").write_text("print('ok')\n")
    task = "Execute check_dates.py and tell me which of its checks doesn't pass."
    output = "exit code: 1\nok iso_dates\nFAIL us_dates\nok eu_dates"
    messages = conversation(task, ("execute_script", {"script": "python3 check_dates.py"}, output))
    [found] = check("FAIL eu_dates", messages, tmp_path)
    assert "no line of the output shows FAIL with eu_dates" in found
    assert check("FAIL us_dates", messages, tmp_path) == []
    assert check("us_dates fails.", messages, tmp_path) == []


def test_a_word_of_a_match_line_s_path_is_not_what_the_line_says(tmp_path: Path) -> None:
    """The 0.5B answered "parse" from ``app/parse.py:2: # TODO(priya): ...``."""
    task = "One comment of the form TODO(name) is in the source. Who is that TODO assigned to?"
    found_line = "1 matching line in 1 file:\napp/parse.py:2: # TODO(priya): handle empty input"
    messages = conversation(task, ("search_files", {"pattern": "TODO"}, found_line))
    [found] = check("parse", messages, tmp_path)
    assert "stand on no line of the tool results that holds TODO" in found
    assert check("priya", messages, tmp_path) == []


def test_the_tools_a_notice_names_are_those_the_next_turn_is_offered() -> None:
    from jarvis_graph.nodes.check_answer import tools_asked_for

    tools = ["read_code", "execute_script", "compute", "write_file"]
    ran = "the task asks to run something, but no tool ran anything: do it with execute_script"
    number = "the number 7 appears in no tool result: compute it with compute or execute_script"
    assert tools_asked_for([ran], tools) == ["execute_script"]
    # an action not done is told alone: its tools only, not compute for the numbers
    assert tools_asked_for([ran, number], tools) == ["execute_script"]
    assert tools_asked_for([number], tools) == ["execute_script", "compute"]
    # a problem that names no tool may need any of them: no narrowing
    assert tools_asked_for([number, "the answer repeats the task"], tools) is None
    assert tools_asked_for([], tools) is None
    assert tools_asked_for(["read it with read_code_x"], tools) is None  # whole names only


def test_a_tool_the_task_names_is_not_a_term_the_answer_must_stand_on(tmp_path: Path) -> None:
    # "Use ask_document on manual.pdf ..." answered "24" from its passage was sent back
    # three times: ask_document (a tool) was taken for a term the answer's line must hold
    task = "Use ask_document on manual.pdf to answer: What supply voltage does it need?"
    passage = "[1] manual.pdf, page 1 (score 0.68):\nThe Orbit 7 controller needs a 24 volt supply."
    messages = conversation(task, ("ask_document", {"path": "manual.pdf"}, passage))
    assert check("24", messages, tmp_path) == []
    assert check("12", messages, tmp_path)  # a number the passage does not hold still fails


def test_a_run_not_done_comes_back_with_the_call_of_the_command_the_task_quotes(
    tmp_path: Path,
) -> None:
    # the 0.5B searched for data.csv twice, then answered "1, 2" for `make demo`'s task
    task = (
        "Look at the files in this workspace, then run `python3 report.py` and tell me the "
        "total it prints and how many rows it read."
    )
    messages = conversation(task, ("search_files", {"pattern": "data.csv"}, "no matches"))
    told = problems("1, 2", task, evidence_of(messages, META), tmp_path, None, META)
    found = [p for p in told if "to run something" in p]
    assert found == [
        "the task asks to run something, but no tool ran anything: do it with execute_script, "
        'then answer, for example execute_script with {"script": "python3 report.py"}'
    ]
    # backticks around a file name are not a command to run
    other = "Run the report on `data.csv` and give the total."
    told = problems("3", other, evidence_of(conversation(other), META), tmp_path, None, META)
    [plain] = [p for p in told if "to run something" in p]
    assert plain.endswith("do it with execute_script, then answer")


def test_a_fix_then_run_task_asks_for_both_and_shows_the_script_to_run(tmp_path: Path) -> None:
    """ "Please fix it, run it": a run asked after a comma, with the one script it names."""
    (tmp_path / "inventory.py").write_text("pritn(1)\n")
    task = "inventory.py has a typo. Please fix it, run it and tell me what it prints."
    assert asked_actions(task) == ["write", "run"]
    edit = {"files": [{"path": "inventory.py", "diffs": [{"search": "pritn", "replace": "print"}]}]}
    offered = {**META, "edit_file": {"risky": True, "edits_files": True}}
    edited = conversation(task, ("edit_file", edit, "Edited inventory.py: 1 edit applied."))
    told = problems("1", task, evidence_of(edited, offered), tmp_path, True, offered)
    assert (
        "the task asks to run something, but no tool ran anything: do it with execute_script, "
        'then answer, for example execute_script with {"script": "python3 inventory.py"}'
    ) in told
    (tmp_path / "other.py").write_text("")
    two = "Fix inventory.py, run it, then run other.py."  # which one first? no example
    told = problems("1", two, evidence_of(edited, offered), tmp_path, True, offered)
    [run] = [p for p in told if "to run something" in p]
    assert run.endswith("then answer")


def test_a_module_to_import_and_print_from_is_not_run_as_a_script(tmp_path: Path) -> None:
    """The 1.5B ran `python3 units.py` as the notice showed; it printed nothing, and the
    answer was the task's own 1.609344."""
    task = (
        "Write a module named units.py that defines KM_PER_MILE = 1.609344 and a function "
        "miles_to_km(miles). Then use python3 to import it and print miles_to_km(26.2) "
        "rounded to one decimal place."
    )
    module = "KM_PER_MILE = 1.609344\n\ndef miles_to_km(miles):\n    return miles * KM_PER_MILE\n"
    (tmp_path / "units.py").write_text(module)
    offered = {**META, "write_file": {"risky": True, "edits_files": True}}
    wrote = ("write_file", {"path": "units.py", "content": module}, "Created units.py (4 lines).")
    told = problems("1.609344", task, evidence_of(conversation(task, wrote), offered), tmp_path,
                    True, offered)  # fmt: skip
    [run] = [p for p in told if "to run something" in p]
    assert run.endswith("do it with execute_script, then answer")  # no `python3 units.py`
    # a script whose import line fails is still run as a script
    broken = "units.py fails on its import line. Repair the file, then run it."
    told = problems("1", broken, evidence_of(conversation(broken, wrote), offered), tmp_path,
                    True, offered)  # fmt: skip
    assert any('{"script": "python3 units.py"}' in p for p in told)
    silent = ("execute_script", {"script": "python3 units.py"}, "exit code: 0\n")
    messages = conversation(task, wrote, silent)
    told = problems("1.609344", task, evidence_of(messages, offered), tmp_path, True, offered)
    assert any("no run printed anything" in p for p in told)
    command = 'python3 -c "import units; print(round(units.miles_to_km(26.2), 1))"'
    printed = ("execute_script", {"script": command}, "exit code: 0\n42.2\n")
    messages = conversation(task, wrote, printed)
    assert problems("42.2", task, evidence_of(messages, offered), tmp_path, True, offered) == []


def test_a_command_run_with_the_templates_placeholder_left_in_fails(tmp_path: Path) -> None:
    """The 0.5B ran `python3 greet.py NAME` as quoted and reported "code: NAME-29"."""
    (tmp_path / "user.txt").write_text("orlando\n")
    task = (
        "The file user.txt contains a user name. Run `python3 greet.py NAME` with that name "
        "as the argument and report the code the script prints."
    )
    templated = conversation(
        task, ("execute_script", {"script": "python3 greet.py NAME"}, "code: NAME-29")
    )
    found = check("code: NAME-29", templated, tmp_path)
    assert any("NAME as written in the task's template" in f for f in found)
    filled = conversation(
        task,
        ("read_code", {"path": "user.txt"}, "orlando"),
        ("execute_script", {"script": "python3 greet.py orlando"}, "code: ORLANDO-72"),
    )
    assert not any("template" in f for f in check("code: ORLANDO-72", filled, tmp_path))
    # a word in capitals the task does not describe in words is not a placeholder
    literal = "Run `python3 check.py --mode FAST` and report what it prints."
    ran = conversation(
        literal, ("execute_script", {"script": "python3 check.py --mode FAST"}, "ok 3")
    )
    assert not any("template" in f for f in check("It printed ok 3.", ran, tmp_path))
    # nor is an environment variable
    env = "Run `echo $HOME` and tell me the home folder."
    home = conversation(env, ("execute_script", {"script": "echo $HOME"}, "/home/me"))
    assert not any("template" in f for f in check("The home folder is /home/me.", home, tmp_path))


def test_what_a_failed_call_quotes_of_its_own_arguments_is_not_evidence(tmp_path: Path) -> None:
    """The 0.5B's compute call `len(order) == 10` failed with an error quoting it, and it
    answered 10 to "how many orders are shipped"; a search for TODO in the wrong file found
    nothing ("no matches for 'TODO' ..."), and it answered with the FIXME's owner it read."""
    task = "How many orders in orders.csv have the status shipped? Answer with the number."
    failed = "Error: len(order) == 10 failed: unknown name 'order'"
    messages = conversation(task, ("compute", {"expression": "len(order) == 10"}, failed))
    assert any("10" in f for f in check("10", messages, tmp_path))
    todo = (
        "Somewhere in the source files there is exactly one comment of the form TODO(name). "
        "Report the name of the person that TODO is assigned to."
    )
    searched = conversation(
        todo,
        ("search_files", {"pattern": "TODO", "path": "app/format.py"}, (
            "no matches for 'TODO' under app/format.py"
        )),
        ("read_code", {"path": "app/format.py"}, (
            "app/format.py (lines 1-3 of 3)\n1 | def fmt(row):\n2 |     # FIXME(omar): pad"
        )),
    )  # fmt: skip
    said = check("omar", searched, tmp_path)
    assert any("no tool result shows a line with TODO" in f for f in said)
    found = conversation(
        todo,
        ("search_files", {"pattern": "TODO"}, "app/parse.py:2:    # TODO(priya): handle empty"),
    )
    assert check("priya", found, tmp_path) == []


def test_a_run_after_the_asked_change_that_still_fails_is_not_done(tmp_path: Path) -> None:
    """The 0.5B rewrote stats.py wrongly, ran it (NameError again) and answered with the
    error of its first run, which ended "completed"."""
    task = (
        "Running stats.py gives me a NameError, I think a variable name is misspelled. Can "
        "you correct it in the file and run the script again? I want the mean it prints."
    )
    first = "exit code: 1\nTraceback\nNameError: name 'avrage' is not defined"
    then = "exit code: 1\nTraceback\nNameError: name 'values' is not defined"
    messages = conversation(
        task,
        ("execute_script", {"script": "python3 stats.py"}, first),
        ("write_file", {"path": "stats.py", "content": "print(round(sum(values)))"}, "Rewrote"),
        ("execute_script", {"script": "python3 stats.py"}, then),
    )
    found = check("NameError: name 'avrage' is not defined.", messages, tmp_path)
    assert any("still fails (NameError: name 'values' is not defined)" in f for f in found)
    owned = check("My change did not work: it still fails with a NameError.", messages, tmp_path)
    assert not any("still fails (" in f for f in owned)
    fixed = conversation(
        task,
        ("write_file", {"path": "stats.py", "content": "print('mean:', 18.17)"}, "Rewrote"),
        ("execute_script", {"script": "python3 stats.py"}, "mean: 18.17"),
    )
    assert check("I fixed the name; it prints mean: 18.17", fixed, tmp_path) == []


def test_a_run_that_never_started_or_a_failed_computation_counted_nothing(
    tmp_path: Path,
) -> None:
    """The 0.5B ran a Python expression with bash (a syntax error on "line 1") and answered
    "1" to "how many ... are there?"."""
    (tmp_path / "access.log").write_text("GET / 504\nGET /a 200\n")
    task = "Some requests in access.log ended with a 504 status. How many of them are there?"
    bash = (
        "exit code: 2\nbash: -c: line 1: syntax error near unexpected token `float'\n"
        "bash: -c: line 1: `max(float(x) for x in open('access.log'))'"
    )
    script = {"script": "max(float(x) for x in open('access.log'))"}
    messages = conversation(task, ("execute_script", script, bash))
    assert any("not counted or computed" in f for f in check("1", messages, tmp_path))
    counted = conversation(task, ("execute_script", {"script": "grep -c ' 504' access.log"}, "3"))
    assert check("3", counted, tmp_path) == []
    tests = "Run the tests (python3 -m unittest) and tell me how many of them fail."
    failing = conversation(
        tests,
        ("execute_script", {"script": "python3 -m unittest"}, "exit code: 1\nFAILED (failures=2)"),
    )
    assert check("2 tests fail.", failing, tmp_path) == []  # a run that failed still counted


def test_a_memory_saved_must_hold_the_fact_the_task_asked_to_keep(tmp_path: Path) -> None:
    """The 0.5B saved "billing/invoice.py (lines 1-1 of 1)" for "the billing module is
    owned by Dana Whitfield. Keep that in your memory"."""
    task = (
        "Note for future sessions: the billing module is owned by Dana Whitfield. "
        "Keep that in your memory."
    )
    wrong = {"memories": [{"content": "billing/invoice.py (lines 1-1 of 1)"}]}
    messages = conversation(task, ("save_memory", wrong, "saved 1 memory"))
    found = check("Dana Whitfield", messages, tmp_path)
    assert any("holds none of what the task asked to keep (Dana, Whitfield)" in f for f in found)
    right = {"memories": [{"content": "The billing module is owned by Dana Whitfield."}]}
    kept = conversation(task, ("save_memory", right, "saved 1 memory"))
    assert check("Saved: billing is owned by Dana Whitfield.", kept, tmp_path) == []
    port = "Remember that the staging port is 8443."
    saved = conversation(port, ("save_memory", {"content": "staging port: 8443"}, "saved"))
    assert check("Saved.", saved, tmp_path) == []


def test_an_answer_that_only_repeats_the_quoted_term_fails(tmp_path: Path) -> None:
    """The 1.5B searched ``TODO\\(.*\\)`` in the wrong file, found nothing, answered "TODO"."""
    task = "Somewhere in the source there is one comment TODO(name). Who is it assigned to?"
    nothing = "no matches for 'TODO\\(.*\\)' under app/format.py"
    messages = conversation(task, ("search_files", {"pattern": "TODO\\(.*\\)"}, nothing))
    [found] = check("TODO", messages, tmp_path)
    assert "only repeats TODO, what the question asks about" in found
    hit = "1 matching line in 1 file:\napp/parse.py:2:    # TODO(priya): handle empty input"
    messages = conversation(task, ("search_files", {"pattern": "TODO"}, hit))
    [found] = check("The TODO.", messages, tmp_path)  # found, still not the answer
    assert "only repeats TODO" in found
    assert check("TODO(priya)", messages, tmp_path) == []
    assert check("priya", messages, tmp_path) == []
    # a choice between two quoted names is answered by one of them
    (tmp_path / "limits.py").write_text("MAX_A = 3\nMAX_B = 7\n")
    choice = "Which is larger, MAX_A or MAX_B in limits.py?"
    source = "limits.py (lines 1-2 of 2)\nMAX_A = 3\nMAX_B = 7"
    assert check("MAX_B", conversation(choice, ("read_code", {}, source)), tmp_path) == []


def test_a_count_computed_over_the_file_that_names_the_one_to_count_fails(
    tmp_path: Path,
) -> None:
    (tmp_path / "config.toml").write_text('[job]\nname = "n"\ninput = "data/b.txt"\nx = 2\n')
    task = "config.toml names the input file of the job. How many lines does that file have?"
    meta = {**META, "compute": {"computes": True}}
    expression = "len(open('config.toml').read().splitlines())"
    messages = conversation(task, ("compute", {"expression": expression}, f"{expression} = 4"))
    [found] = problems("4", task, evidence_of(messages, meta), tmp_path)
    assert "4 was computed over config.toml, the file that names the one the task" in found
    assert "find the file config.toml names" in found  # data/b.txt is not there
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "b.txt").write_text("a\nb\n")
    [found] = problems("4", task, evidence_of(messages, meta), tmp_path)
    assert "config.toml names data/b.txt: compute over that file" in found
    # the call to make instead: the same expression over the named file
    example = "(for example compute(expression=\"len(open('data/b.txt').read().splitlines())\"))"
    assert example in found
    assert "find the file config.toml names" not in found
    (tmp_path / "data" / "c.txt").write_text("c\n")
    (tmp_path / "config.toml").write_text('input = "data/b.txt"\nspare = "data/c.txt"\n')
    [found] = problems("4", task, evidence_of(messages, meta), tmp_path)
    assert "names data/b.txt and data/c.txt" in found and "for example" not in found  # which?
    other = "len(open('data/b.txt').read().splitlines())"
    read = ("read_code", {"path": "config.toml"}, 'input = "data/b.txt"')
    messages = conversation(task, read, ("compute", {"expression": other}, f"{other} = 9"))
    assert problems("9", task, evidence_of(messages, meta), tmp_path) == []
    # the right file guessed without a look at the one that names it
    messages = conversation(task, ("compute", {"expression": other}, f"{other} = 9"))
    [found] = problems("9", task, evidence_of(messages, meta), tmp_path)
    assert "the task is about config.toml too, but no tool looked at it" in found
    # the pointer file's own length, when the task asks about it, is the answer
    asked = "How many lines does config.toml have?"
    messages = conversation(asked, ("compute", {"expression": expression}, f"{expression} = 4"))
    assert problems("4", asked, evidence_of(messages, meta), tmp_path) == []


def test_a_number_asked_for_to_some_decimal_places_must_be_rounded_so(tmp_path: Path) -> None:
    task = "Use python3 to print miles_to_km(26.2) from units.py rounded to one decimal place."
    printed = "exit code: 0\n42.1648128"
    run = ("execute_script", {"script": "python3 -c 'import units'"}, printed)
    messages = conversation(task, run)
    [found] = check("42.1648128", messages, tmp_path)
    assert "rounded to 1 decimal place, and the answer gives 42.1648128" in found
    assert check("42.2", messages, tmp_path) == []  # the printed value, rounded as asked
    assert check("It prints 42.1648128, which is 42.2 rounded.", messages, tmp_path) == []
    [found] = check("42.3", messages, tmp_path)  # not the printed value rounded
    assert "42.3 appears in no tool result" in found
    (tmp_path / "data.txt").write_text("12\n13\n")
    whole = "What is the mean of data.txt, to the nearest whole number?"
    mean = conversation(whole, ("compute", {}, "mean = 12.5"))
    assert check("13", mean, tmp_path) == []  # half up
    assert "rounded to a whole number" in check("12.5", mean, tmp_path)[0]
    # no rounding asked: the unrounded value passes and a rounded one is not in the evidence
    plain = conversation("What does it print?", run)
    assert check("42.1648128", plain, tmp_path) == []
    assert check("42.2", plain, tmp_path)


def test_adding_up_a_column_of_a_missing_file_asks_for_no_file_to_be_written(
    tmp_path: Path,
) -> None:
    """ "Can you add up the amount column of sales_2024.csv?" sums; it writes nothing."""
    (tmp_path / "sales_2023.csv").write_text("item,amount\na,10\n")
    task = "Can you add up the amount column of sales_2024.csv for me?"
    listing = "1 file under .: sales_2023.csv"
    messages = conversation(task, ("list_files", {"path": "."}, listing))
    assert (
        check("sales_2024.csv does not exist, so there is nothing to add up.", messages, tmp_path)
        == []
    )
    [found] = check("The total is not known yet.", messages, tmp_path)
    assert "the task names sales_2024.csv, which is not in the workspace" in found
    # a write clause still needs its file
    written = "Add the total to summary.txt."
    assert any(
        "asks for summary.txt to be written" in p for p in check("Done.", looked(written), tmp_path)
    )


def test_an_ip_address_or_a_version_must_stand_in_the_evidence(tmp_path: Path) -> None:
    """Dotted values are no numbers: "10.0.0.1" answered a question about a missing log."""
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "access.log").write_text("10.0.0.7 GET /\n10.0.0.7 GET /a\n")
    task = "Which IP address shows up most often in logs/access.log?"
    log = "logs/access.log (lines 1-2 of 2)\n10.0.0.7 GET /\n10.0.0.7 GET /a"
    messages = conversation(task, ("read_code", {"path": "logs/access.log"}, log))
    assert check("10.0.0.7", messages, tmp_path) == []
    [found] = check("10.0.0.1", messages, tmp_path)
    assert "10.0.0.1 appears in no tool result" in found
    pyproject = "pyproject.toml (lines 1-2 of 2)\n[project]\nversion = '2.4.1'"
    version = conversation("What version is the project?", ("read_code", {}, pyproject))
    assert check("2.4.1", version, tmp_path) == []
    assert check("Version 2.4.0", version, tmp_path)


@pytest.mark.parametrize(
    "answer",
    [
        "To find Marta Jensen's desk phone extension, I'll follow these steps: 1. Read the "
        "`team.txt` file to get the current on-call person. 2. Search for her name.",
        "To answer this question, I need to find the extension in `extensions.csv`. Here's the "
        "step-by-step process: 1. Open the file.",
        "I need to create sales_2024.csv in the workspace before I can add up the column.",
        "Let me check the file first.",
        "First, I will read config.toml to find the input file.",
    ],
)
def test_an_answer_that_describes_its_steps_instead_of_taking_them_fails(
    tmp_path: Path, answer: str
) -> None:
    messages = conversation("What is the on-call person's extension? See team.txt.")
    [found] = check(answer, messages, tmp_path)
    assert "describes steps to take instead of taking them" in found


@pytest.mark.parametrize(
    "answer",
    [
        "I ran the tests: test_apply_discount fails.",
        "I can't find team.txt: it does not exist.",
        "To use the module, import units and call miles_to_km(26.2).",
        "Marta Jensen is on call; I checked extensions.csv and her extension is 3581.",
    ],
)
def test_an_answer_that_reports_what_was_done_is_no_plan(tmp_path: Path, answer: str) -> None:
    messages = conversation("Who is on call?", ("read_code", {}, "team.txt: Marta Jensen 3581"))
    assert not any("describes steps" in p for p in check(answer, messages, tmp_path))


def test_not_there_after_a_look_at_one_file_is_no_answer_about_the_workspace(
    tmp_path: Path,
) -> None:
    """The 1.5B searched app/format.py alone and said there was no TODO in the source."""
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "format.py").write_text("def f():\n    return 1\n")
    (tmp_path / "app" / "parse.py").write_text("# TODO(priya): handle empty input\n")
    task = "Somewhere in the source files there is one TODO(name) comment. Who is it assigned to?"
    nothing = "no matches for 'TODO\\(.*\\)' under app/format.py"
    one = ("search_files", {"pattern": "TODO\\(.*\\)", "path": "app/format.py"}, nothing)
    answer = "The search found no matches: there are no TODO comments in the source."
    [found] = check(answer, conversation(task, one), tmp_path)
    assert "only app/format.py was looked at" in found and "search_files without a path" in found
    # a search of a folder, or of the whole workspace, may say so
    everywhere = ("search_files", {"pattern": "FIXME", "path": "app"}, "no matches for 'FIXME'")
    assert check(answer, conversation(task, everywhere), tmp_path) == []
    # a question about that one file is answered by a look at it
    named = "Is there a TODO comment in app/format.py?"
    assert check("No, there is none.", conversation(named, one), tmp_path) == []


def test_an_answer_that_copies_the_error_of_a_failed_call_fails(tmp_path: Path) -> None:
    (tmp_path / "inventory.json").write_text('{"items": ["a", "b"]}\n')
    task = "How many entries does the items list of inventory.json have?"
    error = (
        "Error: len(items) failed: unknown name 'items': an expression has no variables; "
        "read the values from the file inside it"
    )
    meta = {**META, "compute": {"computes": True}}
    messages = conversation(task, ("compute", {"expression": "len(items)"}, error))
    found = problems(error, task, evidence_of(messages, meta), tmp_path)
    assert found and "copies the error of a failed compute call" in found[0]
    # an error that says a file is not there is an answer
    gone = "Error: file 'stock.json' does not exist (looked at stock.json); use list_files"
    missing = conversation("How many items are in stock.json?", ("read_code", {}, gone))
    assert check(gone, missing, tmp_path) == []


def test_an_answer_that_copies_the_prompts_placeholder_fails(tmp_path: Path) -> None:
    """The 0.5B answered with the text its prompt shows for an answer sent back."""
    from jarvis_graph.platforms.local_protocol import REJECTED_ANSWER

    messages = conversation("How many .md files are in docs?", ("list_files", {}, "3 files"))
    [found] = check(REJECTED_ANSWER, messages, tmp_path)
    assert "copies a placeholder of the conversation" in found


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("The file logs/nginx.log does not exist.", True),
        ("The tests do not pass: test_add fails.", True),
        ("There are 17 entries.", True),  # a number a tool returned
        ("It is 10.0.0.7.", True),
        ("There are 9 entries.", False),  # the task's own number
        ("I apologize for the confusion. Please provide the call in JSON format.", False),
        ("(an answer the check did not accept)", False),
    ],
)
def test_grounded_answers_say_what_the_evidence_shows(answer: str, expected: bool) -> None:
    from jarvis_graph.features.answer_check import grounded

    task = "How many entries (not 9) does inventory.json hold, and from which host?"
    messages = conversation(task, ("read_code", {}, "17 entries from 10.0.0.7"))
    assert grounded(answer, task, evidence_of(messages, META)) is expected


def test_a_search_pattern_quoted_back_by_its_repr_holds_no_line_of_the_files(
    tmp_path: Path,
) -> None:
    """``no matches for 'TODO\\\\(.*\\\\)'`` (the pattern's repr) held the TODO the 1.5B
    then answered from the next tool result: the FIXME's owner."""
    pattern = r"TODO\(.*\)"
    nothing = f"no matches for {pattern!r} under app/format.py; search_files searches contents"
    source = "app/format.py (lines 1-3 of 3)\n1 | def fmt(row):\n2 |     # FIXME(omar): pad\n3 |"
    task = "Somewhere in the source there is one comment TODO(name). Who is it assigned to?"
    messages = conversation(
        task,
        ("search_files", {"pattern": pattern, "path": "app/format.py"}, nothing),
        ("read_code", {"path": "app/format.py"}, source),
    )
    found = check("omar", messages, tmp_path)
    assert found and "no tool result shows a line with TODO" in found[0]


def test_a_value_from_the_line_of_another_label_fails(tmp_path: Path) -> None:
    """The 0.5B answered with next week's person for "who is on call this week?"."""
    (tmp_path / "team.txt").write_text(
        "# on-call rota\nthis week: Marta Jensen\nnext week: Olu Bakare\n"
    )
    (tmp_path / "extensions.csv").write_text("name,extension\nOlu Bakare,4127\nMarta Jensen,3581\n")
    task = (
        "team.txt says who is on call this week. What's that person's desk phone extension? "
        "The extensions are in extensions.csv."
    )
    shown = (
        "team.txt: this week: Marta Jensen / next week: Olu Bakare\n"
        "extensions.csv: Olu Bakare,4127 / Marta Jensen,3581"
    )
    messages = conversation(task, ("read_code", {"path": "team.txt"}, shown))
    [found] = check("Olu Bakare,4127", messages, tmp_path)
    assert "takes Olu Bakare from the line 'next week: Olu Bakare' of team.txt" in found
    assert "asks about 'this week'" in found
    assert check("Marta Jensen is on call; her extension is 3581.", messages, tmp_path) == []
    assert check("3581", messages, tmp_path) == []
    # a value the task itself names is no pick, and a label the task asks about is right
    named = "What is Olu Bakare's extension? See extensions.csv and team.txt."
    assert check("Olu Bakare: 4127", conversation(named, ("read_code", {}, shown)), tmp_path) == []


def test_labelled_lines_of_source_files_are_no_labels(tmp_path: Path) -> None:
    (tmp_path / "limits.py").write_text("MAX_UPLOAD_MB = 48\nMIN_UPLOAD_MB = 1\n")
    task = "What is the upload limit in limits.py?"
    source = "limits.py (lines 1-2 of 2)\nMAX_UPLOAD_MB = 48\nMIN_UPLOAD_MB = 1"
    assert check("48", conversation(task, ("read_code", {}, source)), tmp_path) == []


def test_a_count_of_matches_holding_the_word_inside_longer_ones_fails(tmp_path: Path) -> None:
    """The search for ERROR also matched NOERROR and ERRORS=0: 6 lines, 4 entries."""
    (tmp_path / "service.log").write_text("x\n")
    task = "How many lines in service.log are actual ERROR-level entries?"
    hits = (
        "6 matching lines in 1 file:\nservice.log:2:08:00 ERROR db refused\n"
        "service.log:5:08:02 ERROR gateway timeout\nservice.log:6:08:03 DEBUG flag NOERROR set\n"
        "service.log:8:08:05 ERROR disk quota\nservice.log:9:08:06 INFO ok (ERRORS=0)\n"
        "service.log:10:08:07 ERROR cache down"
    )
    messages = conversation(task, ("search_files", {"pattern": "ERROR"}, hits))
    [found] = check("6", messages, tmp_path)
    assert "only part of a longer word (ERRORS, NOERROR)" in found and "\\bERROR\\b" in found
    words = (
        "4 matching lines in 1 file:\nservice.log:2:08:00 ERROR db\nservice.log:5:08:02 ERROR gw\n"
        "service.log:8:08:05 ERROR disk\nservice.log:10:08:07 ERROR cache"
    )
    bounded = conversation(task, ("search_files", {"pattern": "\\bERROR\\b"}, words))
    assert check("4", bounded, tmp_path) == []
    plain = conversation(task, ("search_files", {"pattern": "ERROR"}, words))
    assert check("4", plain, tmp_path) == []  # every match is the word itself


@pytest.mark.parametrize(
    "question",
    [
        "How many lines long is that file?",
        "How many lines does src/headers.py have?",
        "What is the line count of that file?",
    ],
)
def test_a_files_length_is_not_a_searchs_match_count(tmp_path: Path, question: str) -> None:
    """The 1.5B answered "how long is that file?" with the search's 6 matching lines."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "headers.py").write_text("\\n".join(f"x{i} = {i}" for i in range(12)))
    hits = "6 matching lines in 2 files:\nheaders.py:4:def parse_header(line):\nbody.py:1:import"
    first = conversation("Which file in src/ defines parse_header?", ("search_files", {}, hits))
    thread = [*first, AIMessage("src/headers.py"), HumanMessage(question)]
    found = check("6", thread, tmp_path)
    assert any("6 is how many lines a search matched, not how long the file is" in p for p in found)
    size = "src/headers.py (lines 1-12 of 12)\nx0 = 0"
    read = [*thread, *conversation(question, ("read_code", {}, size))[1:]]
    assert check("12", read, tmp_path) == []


def test_a_count_of_matching_lines_is_still_a_searchs_count(tmp_path: Path) -> None:
    (tmp_path / "app.log").write_text("ERROR a\nok\nERROR b\n")
    task = "How many lines of app.log contain ERROR?"
    hits = "2 matching lines in 1 file:\napp.log:1:ERROR a\napp.log:3:ERROR b"
    assert (
        check("2", conversation(task, ("search_files", {"pattern": "ERROR"}, hits)), tmp_path) == []
    )


def test_rounding_skips_a_number_longer_than_a_decimal_context(tmp_path: Path) -> None:
    (tmp_path / "big.py").write_text("print(10**40 - 0.5)\nprint(3.14159)\n")
    task = "What does big.py print, rounded to two decimal places?"
    printed = "exit code: 0\n" + "9" * 40 + ".5\n3.14159"
    messages = conversation(task, ("execute_script", {"script": "python3 big.py"}, printed))
    assert check("3.14", messages, tmp_path) == []


def after_compute(
    answer: str, task: str, expression: str, value: str, workspace: Path
) -> list[str]:
    """The problems of ``answer`` after one ``compute`` of ``expression`` gave ``value``."""
    call = ("compute", {"expression": expression}, f"{expression} = {value}")
    meta = {**META, "compute": {"computes": True}}
    return problems(answer, task, evidence_of(conversation(task, call), meta), workspace)


def test_a_count_of_0_for_a_text_the_file_holds_fails(tmp_path: Path) -> None:
    """0 counted where the last field still ended with its newline; 3 lines hold 'shipped'."""
    (tmp_path / "orders.csv").write_text(
        "id,customer,status\n1,ann,shipped\n2,bob,pending\n3,cy,shipped\n4,di,shipped\n"
    )
    task = "How many orders in orders.csv have the status shipped? Answer with the number."
    wrong = "len([line for line in open('orders.csv') if line.split(',')[2] == 'shipped'])"
    [found] = after_compute("0", task, wrong, "0", tmp_path)
    assert "0 is what the code counted, but lines of orders.csv hold 'shipped'" in found
    right = "len([l for l in open('orders.csv') if l.strip().split(',')[2] == 'shipped'])"
    assert after_compute("3", task, right, "3", tmp_path) == []
    # a 0 the file bears out stands: no line holds 'returned'
    none = "len([l for l in open('orders.csv') if 'returned' in l])"
    assert after_compute("0", task, none, "0", tmp_path) == []
    # the expression's own 0 (an index) is not the value it gave
    first = "len([l for l in open('orders.csv') if l.split(',')[0] == 'shipped'])"
    found = after_compute("0", task, first, "2", tmp_path)
    assert not any("0 is what the code counted" in problem for problem in found)
    # a run of grep is judged the same way
    grep = "grep -c 'shipped' orders.csv"
    ran = conversation(task, ("execute_script", {"script": grep}, "exit code: 0\n0"))
    [found] = problems("0", task, evidence_of(ran, META), tmp_path)
    assert "lines of orders.csv hold 'shipped'" in found


def test_a_count_over_a_text_narrower_than_the_tasks_terms_fails(tmp_path: Path) -> None:
    """Counted over 'GET /api/orders 504' where the task asks about 504: more lines hold it."""
    (tmp_path / "access.log").write_text(
        "10.0.0.1 GET /api/orders 504 12ms\n"
        "10.0.0.2 POST /api/cart 504 30ms\n"
        "10.0.0.3 GET /health 200 1ms\n"
        "10.0.0.4 GET /api/users 504 9ms\n"
    )
    task = "Some requests in access.log ended with a 504 status. How many of them are there?"
    narrow = "len([l for l in open('access.log') if 'GET /api/orders 504' in l])"
    [found] = after_compute("1", task, narrow, "1", tmp_path)
    assert "1 counts the lines of access.log holding 'GET /api/orders 504'" in found
    assert "the task asks about 504: more lines of it hold that" in found
    wide = "len([l for l in open('access.log') if ' 504 ' in l])"
    assert after_compute("3", task, wide, "3", tmp_path) == []
    # extra words that narrow nothing (every 504 line is a GET here) are not judged
    (tmp_path / "access.log").write_text("GET /a 504\nGET /b 504\nPOST /c 200\n")
    got = "len([l for l in open('access.log') if 'GET /a 504' in l or 'GET /b 504' in l])"
    assert after_compute("2", task, got, "2", tmp_path) == []
    # a run of grep is judged the same way
    grep = "grep -c 'GET /a 504' access.log"
    ran = conversation(task, ("execute_script", {"script": grep}, "exit code: 0\n1"))
    [found] = problems("1", task, evidence_of(ran, META), tmp_path)
    assert "1 counts the lines of access.log holding 'GET /a 504'" in found


def test_a_count_of_a_json_objects_keys_for_one_keys_entries_fails(tmp_path: Path) -> None:
    """The 0.5B printed len(json.load(...)), 2 (the object's keys), for the items list's 17."""
    items = ", ".join(f'"sku-{n}"' for n in range(101, 118))
    (tmp_path / "inventory.json").write_text(f'{{"items": [{items}], "archived": ["sku-1"]}}')
    task = "Use a python3 -c one-liner to count the entries in the items list of inventory.json."
    whole = "import json; items = json.load(open('inventory.json')); print(len(items))"
    ran = conversation(
        task, ("execute_script", {"script": f'python3 -c "{whole}"'}, "exit code: 0\n2")
    )
    [found] = check("2", ran, tmp_path)
    assert "2 is the number of top-level keys of inventory.json (items, archived)" in found
    assert "len(data['items'])" in found
    # the key's own entries, counted by quoting it (the shell's escaped quotes too), pass
    for right in ("len(json.load(open('inventory.json'))['items'])", 'len(d[\\"items\\"])'):
        ran = conversation(
            task, ("execute_script", {"script": f'python3 -c "{right}"'}, "exit code: 0\n17")
        )
        assert check("17", ran, tmp_path) == []
        ran = conversation(
            task, ("execute_script", {"script": f'python3 -c "{right}"'}, "exit code: 0\n2")
        )
        assert not any("top-level keys" in p for p in check("2", ran, tmp_path))
    # a question about the top-level keys themselves is not judged
    keys = "How many top-level keys does inventory.json have? Use python3 to count them."
    ran = conversation(
        keys, ("execute_script", {"script": f'python3 -c "{whole}"'}, "exit code: 0\n2")
    )
    assert check("2", ran, tmp_path) == []


def test_a_run_that_failed_on_the_models_own_code_is_no_answer(tmp_path: Path) -> None:
    """The 1.5B's one-liner put a with block after ';' and it answered that it had a syntax
    error (results as execute_script returns them)."""
    (tmp_path / "inventory.json").write_text('{"items": [1, 2, 3], "archived": [4]}')
    task = "Use a python3 -c one-liner to count the entries in the items list of inventory.json."
    one_liner = (
        'python3 -c \'import json; with open("inventory.json") as f: data = json.load(f); '
        'print(len(data["items"]))\''
    )
    syntax = (
        'exit code: 1\n  File "<string>", line 1\n    import json; with open("inventory.json")'
        ' as f: data = json.load(f); print(len(data["items"]))\n                 ^^^^\n'
        "SyntaxError: invalid syntax\n"
    )
    said = "The error indicates a syntax error in the Python code: data['items'] is right."
    ran = conversation(task, ("execute_script", {"script": one_liner}, syntax))
    [found] = check(said, ran, tmp_path)
    assert "a fault of the code written for this task (SyntaxError: invalid syntax)" in found
    # a name the one-liner never defined is its own fault too
    name = (
        "exit code: 1\nTraceback (most recent call last):\n"
        "  File \"<string>\", line 1, in <module>\nNameError: name 'dta' is not defined\n"
    )
    ran = conversation(task, ("execute_script", {"script": "python3 -c 'print(len(dta))'"}, name))
    assert any("NameError" in p for p in check("It failed: dta is not defined.", ran, tmp_path))
    # the workspace at fault: a file that is not there, an error inside a workspace module
    missing = (
        "exit code: 1\nTraceback (most recent call last):\n"
        '  File "<string>", line 1, in <module>\n'
        "FileNotFoundError: [Errno 2] No such file or directory: 'nope.json'\n"
    )
    inner = (
        "exit code: 1\nTraceback (most recent call last):\n"
        '  File "<string>", line 1, in <module>\n  File "/w/m.py", line 2, in f\n'
        "    return undefined_x\nNameError: name 'undefined_x' is not defined\n"
    )
    for result in (missing, inner):
        ran = conversation(task, ("execute_script", {"script": "python3 -c 'x'"}, result))
        assert check("It failed: the run raised an error.", ran, tmp_path) == []
    # the task's own command failing is its answer
    given = "What does python3 -c 'print(len(dta))' print? Run it."
    ran = conversation(given, ("execute_script", {"script": 'python3 -c "print(len(dta))"'}, name))
    assert check("It fails with NameError: dta is not defined.", ran, tmp_path) == []


def test_a_call_over_the_workspaces_absolute_path_is_judged_as_over_its_file(
    tmp_path: Path,
) -> None:
    """The 0.5B counted the lines starting with 'Failed password for root' in
    /tmp/.../work/auth.log (its lines start with the date) and answered 0."""
    (tmp_path / "auth.log").write_text(
        "Jul  2 09:00:01 gw sshd[811]: Accepted password for ana from 10.0.0.5\n"
        "Jul  2 09:00:07 gw sshd[812]: Failed password for root from 203.0.113.9\n"
        "Jul  2 09:02:11 gw sshd[815]: Failed password for admin from 198.51.100.4\n"
    )
    task = "Count the failed SSH login attempts recorded in auth.log."
    expression = (
        f"sum(1 for line in open('{tmp_path}/auth.log') "
        "if line.startswith('Failed password for root'))"
    )
    found = after_compute("0", task, expression, "0", tmp_path)
    held = "0 is what the code counted, but lines of auth.log hold 'Failed password for root'"
    assert any(held in problem for problem in found)


def test_a_count_of_files_does_not_answer_how_many_lines(tmp_path: Path) -> None:
    """The 0.5B answered "how many lines long is that file?" with list_files' "1 file"."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "headers.py").write_text("".join(f"x{i} = {i}\n" for i in range(12)))
    messages = [
        *conversation(
            "Which file in src/ defines the function parse_header?",
            ("search_files", {"pattern": "def parse_header"}, "src/headers.py:3:def parse_header"),
        ),
        AIMessage("src/headers.py"),
    ]
    listed = ("list_files", {"pattern": "headers.py"}, "1 file under .: src/headers.py")
    task = "How many lines long is that file?"
    found = check("1", [*messages, *conversation(task, listed)], tmp_path)
    assert any("1 appears in no tool result" in p for p in found)
    read = ("read_code", {"path": "src/headers.py"}, "src/headers.py (lines 1-12 of 12)\n1 | x")
    assert check("12", [*messages, *conversation(task, read)], tmp_path) == []
    # and the other way round: a file's line count is no count of files
    files = "How many Python files are in src?"
    found = check("12", conversation(files, read, listed), tmp_path)
    assert any("12 appears in no tool result" in p for p in found)
    assert check("1", conversation(files, read, listed), tmp_path) == []
