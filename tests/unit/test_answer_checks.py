"""The checks of a cited answer (``features.answer_check.checks``), each on a real thread.

A thread is built as a run builds it: the task, the model's ``state_task`` call and its
result, then real tools run on real files by the ``run_tools`` node (so the texts and
artifacts are the ones the checks meet), and a final answer with its cites. Every check
gets one case where it fires and one where it does not, as a rule ships lines that must
fire and lines that must not.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.graph import END, START, StateGraph

from jarvis_graph.citations import holds, locate, values_in
from jarvis_graph.context import JarvisContext
from jarvis_graph.features.answer_check.checks import CHECKS, review
from jarvis_graph.features.answer_check.cited import cited_tools
from jarvis_graph.features.base import AnswerReview, Problem
from jarvis_graph.memory.tools import save_memory
from jarvis_graph.messages import task_sources
from jarvis_graph.nodes.run_tools import run_tools
from jarvis_graph.state import CHECK_NAME, AgentState
from jarvis_graph.tools.builtin import execute_script, list_files, read_code, search_files
from jarvis_graph.tools.code_tools import edit_file
from jarvis_graph.tools.compute import compute

TOOLS = {
    t.name: dict(t.metadata or {})
    for t in (
        read_code,
        list_files,
        search_files,
        execute_script,
        compute,
        edit_file,
        save_memory,
        *cited_tools(),
    )
}
"""The metadata of the tools offered, as ``review_answer`` passes it."""

DECLARE = cited_tools()[0]

NOTHING = {
    "asks_to_run_a_program": False,
    "asks_to_change_files": False,
    "asks_to_remember": False,
}


@pytest.fixture
def ws(workspace: Path) -> Path:
    """A small project: settings, a module, a table, a script that prints, one that fails."""
    (workspace / "settings.py").write_text('LOG_LEVEL = "info"\nPORT = 8123\n')
    (workspace / "utils.py").write_text("def parse_config(path):\n    return {}\n")
    (workspace / "sales.csv").write_text("day,qty\nmon,3\ntue,4\nwed,5\n")
    (workspace / "app.py").write_text('print("total:", 1270)\n')
    (workspace / "broken.py").write_text('import sys\nprint("boom: bad input")\nsys.exit(1)\n')
    return workspace


class Thread:
    """One task of a run: its messages, built by running real tools in ``workspace``."""

    def __init__(self, workspace: Path, task: str, answer: str = "value", **needs: bool) -> None:
        self.workspace = workspace
        self.declared: dict[str, Any] = {"answer": answer, **NOTHING, **needs}
        declare = {"name": "state_task", "args": self.declared, "id": "declare"}
        self.messages: list[Any] = [
            HumanMessage(task),
            AIMessage("", tool_calls=[declare]),
            ToolMessage(DECLARE.invoke(self.declared), tool_call_id="declare", name="state_task"),
        ]

    def step(self, call_id: str, name: str, **args: Any) -> ToolMessage:
        """Run one call through the ``run_tools`` node; its tool message joins the thread."""
        builder = StateGraph(AgentState, context_schema=JarvisContext)
        builder.add_node("run_tools", run_tools)
        builder.add_edge(START, "run_tools")
        builder.add_edge("run_tools", END)
        ai = AIMessage("", tool_calls=[{"name": name, "args": args, "id": call_id}])
        state = {"messages": [*self.messages, ai]}
        out = builder.compile().invoke(state, context=JarvisContext(workspace=str(self.workspace)))
        (message,) = [m for m in out["messages"] if getattr(m, "tool_call_id", None) == call_id]
        self.messages += [ai, message]
        return message

    def answer(self, text: str, changed: bool | None = None) -> AnswerReview:
        """The review of a final answer ``text``, its cites located as ``review_answer`` does."""
        cites = locate(text, task_sources(self.messages), [DECLARE.name])
        return AnswerReview(
            answer=text,
            cites=cites,
            messages=[*self.messages, AIMessage(text)],
            workspace=self.workspace,
            workspace_changed=changed,
            tools=TOOLS,
            declared=self.declared,
        )


def problems(answer: AnswerReview) -> dict[str, Problem]:
    return {p.check: p for p in review(answer)}


def port_read(ws: Path) -> Thread:
    thread = Thread(ws, "What port does settings.py set?")
    thread.step("r1", "read_code", path="settings.py")
    return thread


# --- values_in, holds ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("There are 1,270 rows.", ["1270"]),
        ("It is 3.5 and 12.", ["3.5", "12"]),
        ("共有7个", ["7"]),  # a CJK character before a digit does not hide it
        ("文件config.yaml里有1,270行", ["1270", "config.yaml"]),
        ("It is in config/app_prod.yaml", ["config/app_prod.yaml"]),
        ("parse_config is defined there", ["parse_config"]),
        ("Mail ops@example.com", ["ops@example.com"]),
        ("The answer is yes, it does.", []),  # plain words are not checked
    ],
)
def test_values_in(text: str, values: list[str]) -> None:
    assert values_in(text) == values


def test_values_in_a_date_hold_the_date_itself() -> None:
    assert "2024-03-15" in values_in("The release was on 2024-03-15.")


@pytest.mark.parametrize(
    ("answer", "quote", "held"),
    [
        ("The total is 1,270.", "total: 1270", True),
        ("The total is 1270.", "total: 1,270", True),
        ("The total is 1270.", "total: 1270.0", True),  # by value
        ("The total is 1270.", "total: 12700", False),
        ("The total is 1270.", "version v1270", False),
        ("共有7个", "found: 7 files", True),
        ("共有7个", "共有17个文件", False),
        ("See config.yaml.", "see Config.YAML", True),  # a name, case aside
        ("See config.yaml.", "see myconfig.yaml", False),
        ("parse_config", "def parse_config(path):", True),
        ("parse_config", "def parse_config_file(path):", False),
        ("It shipped on 2024-03-15.", "released 2024-03-15", True),
        ("It shipped on 2024-03-15.", "released 2024-03-16", False),
    ],
)
def test_what_an_answer_states_is_held_by_a_quote(answer: str, quote: str, held: bool) -> None:
    stated = values_in(answer)
    assert stated
    assert all(holds(quote, value) for value in stated) is held


# --- a right answer, and the order of the checks --------------------------------------------


def test_a_right_answer_citing_the_right_line_passes_every_check(ws: Path) -> None:
    thread = port_read(ws)
    assert review(thread.answer("settings.py sets PORT to 8123.")) == []


def test_the_checks_run_in_their_registry_order(ws: Path) -> None:
    names = [c.__name__ for c in CHECKS]
    assert names.index("actions_done") < names.index("grounded")
    assert names.index("states_something") < names.index("grounded")


def test_an_action_not_done_is_told_before_grounding(ws: Path) -> None:
    thread = Thread(ws, "Run app.py and tell me the total it prints.", asks_to_run_a_program=True)
    found = review(thread.answer("It prints 1270."))
    assert [p.check for p in found][:1] == ["actions_done"]
    assert "grounded" in [p.check for p in found]  # found too, told after
    assert found[0].tools_allowed == ("execute_script",)


# --- not_an_answer ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        "",
        "   ",
        "What port does settings.py set?",  # the task said back
        'read_code(path="settings.py")',  # a call written out
        "To find it I will use the `search_files` tool, then report it.",  # a plan
    ],
)
def test_not_an_answer_fires(ws: Path, answer: str) -> None:
    assert "not_an_answer" in problems(port_read(ws).answer(answer))


def test_a_notice_copied_is_not_an_answer(ws: Path) -> None:
    thread = port_read(ws)
    notice = "8080 appears in no quote your answer cites: cite the result line that holds it."
    thread.messages += [AIMessage("8080"), HumanMessage(notice, name=CHECK_NAME)]
    copied = "appears in no quote your answer cites"
    assert "not_an_answer" in problems(thread.answer(copied))


def test_an_answer_is_an_answer(ws: Path) -> None:
    found = problems(port_read(ws).answer("8123"))
    assert "not_an_answer" not in found


# --- looked -------------------------------------------------------------------------------


def test_an_answer_about_a_workspace_file_before_any_look_fires(ws: Path) -> None:
    # declared general knowledge, so no call was required: the declaration was wrong
    thread = Thread(ws, "Run app.py with python3; what does it print?", "general_knowledge")
    problem = problems(thread.answer("No knowledge."))["looked"]
    assert "app.py" in problem.message and problem.tools_allowed is None


def test_a_look_or_a_question_of_knowledge_passes_looked(ws: Path) -> None:
    assert "looked" not in problems(port_read(ws).answer("8123"))
    thread = Thread(ws, "How many days does a leap year have?", "general_knowledge")
    assert "looked" not in problems(thread.answer("366"))
    thread = Thread(ws, "What does prod.yaml set?", "general_knowledge")  # not in the workspace
    assert "looked" not in problems(thread.answer("It is not there."))


# --- actions_done -----------------------------------------------------------------------


def test_a_run_asked_for_and_not_done_fires(ws: Path) -> None:
    thread = Thread(ws, "Run app.py; what does it print?", "text", asks_to_run_a_program=True)
    thread.step("r1", "read_code", path="app.py")
    problem = problems(thread.answer('It prints "total:" and 1270.'))["actions_done"]
    assert problem.tools_allowed == ("execute_script",)


def test_a_run_asked_for_and_done_passes(ws: Path) -> None:
    thread = Thread(ws, "Run app.py; what does it print?", "text", asks_to_run_a_program=True)
    thread.step("x1", "execute_script", script="python3 app.py")
    assert review(thread.answer("It prints total: 1270.")) == []


def test_a_change_asked_for_with_no_file_changed_fires(ws: Path) -> None:
    thread = Thread(ws, "Set PORT in settings.py to 9000.", "nothing", asks_to_change_files=True)
    problem = problems(thread.answer("Done: PORT is 9000.", changed=False))["actions_done"]
    assert problem.tools_allowed is None  # any tool that writes: an edit, or a script


def test_a_change_made_by_an_edit_passes(ws: Path) -> None:
    thread = Thread(ws, "Set PORT in settings.py to 9000.", "nothing", asks_to_change_files=True)
    edit = {"path": "settings.py", "diffs": [{"search": "8123", "replace": "9000"}]}
    message = thread.step("e1", "edit_file", files=[edit])
    assert message.status != "error", message.text
    assert "PORT = 9000" in (ws / "settings.py").read_text()
    found = problems(thread.answer("PORT in settings.py is now 9000.", changed=True))
    assert "actions_done" not in found


def test_an_edit_that_left_the_workspace_unchanged_fires(ws: Path) -> None:
    thread = Thread(ws, "Set PORT in settings.py to 8123.", "nothing", asks_to_change_files=True)
    thread.step("x1", "execute_script", script="true")
    assert "actions_done" in problems(thread.answer("Done.", changed=False))


def test_a_change_made_by_a_script_passes(ws: Path) -> None:
    thread = Thread(ws, "Create notes.txt saying hi.", "nothing", asks_to_change_files=True)
    thread.step("x1", "execute_script", script="echo hi > notes.txt")
    assert (ws / "notes.txt").read_text() == "hi\n"
    assert "actions_done" not in problems(thread.answer("Created notes.txt.", changed=True))


def test_a_memory_asked_for_and_not_saved_fires(ws: Path) -> None:
    thread = Thread(ws, "Remember that I deploy on Fridays.", "nothing", asks_to_remember=True)
    problem = problems(thread.answer("I will remember that."))["actions_done"]
    assert problem.tools_allowed == ("save_memory",)


# --- failure_owned ------------------------------------------------------------------------


def test_a_failed_last_run_not_cited_fires(ws: Path) -> None:
    thread = Thread(ws, "Run broken.py.", "text", asks_to_run_a_program=True)
    thread.step("x1", "execute_script", script="python3 broken.py")
    assert "failure_owned" in problems(thread.answer("It ran fine."))


def test_a_failed_last_run_cited_passes_failure_owned(ws: Path) -> None:
    thread = Thread(ws, "Run broken.py.", "text", asks_to_run_a_program=True)
    message = thread.step("x1", "execute_script", script="python3 broken.py")
    assert "boom: bad input" in message.text
    found = problems(thread.answer("It failed: boom: bad input."))
    assert "failure_owned" not in found


def test_a_run_that_failed_and_is_owned_up_to_passes_every_check(ws: Path) -> None:
    # failure_owned tells the model to "answer that it failed, citing its output": that
    # answer must then pass; the run was asked for, and it ran (its program failed)
    thread = Thread(ws, "Run broken.py.", "text", asks_to_run_a_program=True)
    thread.step("x1", "execute_script", script="python3 broken.py")
    assert review(thread.answer("It failed: boom: bad input.")) == []


# --- states_something -----------------------------------------------------------------------


def test_a_value_asked_for_and_none_stated_fires(ws: Path) -> None:
    assert "states_something" in problems(port_read(ws).answer("I looked at the file."))


def test_a_failure_of_the_file_the_task_names_answers_a_value(ws: Path) -> None:
    thread = Thread(ws, "What port does prod.yaml set?")
    thread.step("r1", "read_code", path="prod.yaml")
    found = problems(thread.answer("There is no such file."))
    assert "states_something" not in found


def test_a_failure_of_a_file_the_model_thought_up_answers_nothing(ws: Path) -> None:
    thread = Thread(ws, "What port does the app listen on?")
    thread.step("r1", "read_code", path="server.conf")
    assert "states_something" in problems(thread.answer("There is no such file."))


def test_a_failed_computation_on_a_name_of_the_task_answers_nothing(ws: Path) -> None:
    """The failure that excuses a missing value is one of the file the task names, not of
    an expression the model wrote with the task's identifier in it."""
    thread = Thread(ws, "Read settings.py and report the value of MAX_RETRIES.")
    thread.step("c1", "compute", expression="MAX_RETRIES")
    answer = "The value of MAX_RETRIES is not a valid Python expression."
    assert "states_something" in problems(thread.answer(answer))


def test_a_file_name_asked_for_needs_a_path(ws: Path) -> None:
    thread = Thread(ws, "Which file sets PORT?", "file_name")
    thread.step("s1", "search_files", pattern="PORT")
    assert "states_something" in problems(thread.answer("The one with PORT = 8123."))
    assert "states_something" not in problems(thread.answer("settings.py"))


def test_a_word_a_result_holds_is_a_value_stated(ws: Path) -> None:
    (ws / "README.md").write_text("# Service\nRelease codename: marigold\n")
    thread = Thread(ws, "What release codename does README.md give?")
    thread.step("r1", "read_code", path="README.md")
    assert "states_something" not in problems(thread.answer("The codename is marigold."))
    # a word of the task said back states nothing
    assert "states_something" in problems(thread.answer("The release codename."))


def test_a_search_that_found_nothing_grounds_no_value_of_its_own_pattern(ws: Path) -> None:
    """``no matches for 'PORT = 9999'`` quotes the model's pattern, not the files."""
    thread = Thread(ws, "What port does settings.py set?")
    message = thread.step("s1", "search_files", pattern="PORT = 9999", path="settings.py")
    line = message.text.splitlines()[0]
    assert "9999" in line  # what the model reads
    found = problems(thread.answer("PORT is 9999."))
    assert "9999" in found["grounded"].message


def test_a_csv_row_holds_each_of_its_fields() -> None:
    assert holds("gadget,11,7.00", "11") and holds("gadget,11,7.00", "7")
    assert holds("total 1,270.50", "1270.5") and not holds("total 1,270.50", "270.5")


# --- located cites ----------------------------------------------------------------------


def test_an_answer_is_cited_by_the_result_line_that_holds_its_value(ws: Path) -> None:
    assert [(c.source, c.quote) for c in port_read(ws).answer("8123").cites] == [
        ("r1", "PORT = 8123")
    ]


def test_a_value_of_an_earlier_task_is_no_evidence(ws: Path) -> None:
    thread = port_read(ws)
    thread.messages += [AIMessage("8123"), HumanMessage("And what level does it log at?")]
    found = problems(thread.answer("It logs at 8123."))
    assert "8123" in found["grounded"].message


# --- computed ---------------------------------------------------------------------------------


def test_a_count_read_off_a_file_fires(ws: Path) -> None:
    thread = Thread(ws, "How many rows of data does sales.csv have?", "count")
    thread.step("r1", "read_code", path="sales.csv")
    problem = problems(thread.answer("3"))["computed"]
    assert set(problem.tools_allowed or ()) == {"compute", "execute_script"}


def test_a_count_computed_passes(ws: Path) -> None:
    thread = Thread(ws, "How many rows of data does sales.csv have?", "count")
    message = thread.step(
        "k1", "compute", expression="len(open('sales.csv').read().splitlines()) - 1"
    )
    assert message.status != "error", message.text
    assert review(thread.answer("sales.csv has 3 rows of data.")) == []


def test_a_number_of_the_code_not_of_the_run_asked_for_fires(ws: Path) -> None:
    (ws / "magic.py").write_text('print("the magic number is", 6 * 7 + 1000)\n')
    thread = Thread(ws, "Run magic.py; what number does it print?", asks_to_run_a_program=True)
    thread.step("r1", "read_code", path="magic.py")
    thread.step("x1", "execute_script", script="python3 magic.py")
    problem = problems(thread.answer("It prints 6 * 7 + 1000."))["computed"]
    assert problem.message.startswith("6 is not in what the run printed")
    assert problem.tools_allowed == ("execute_script",)
    assert "computed" not in problems(thread.answer("It prints 1042."))


# --- grounded ---------------------------------------------------------------------------------


def test_a_value_cited_from_a_line_that_does_not_hold_it_fails_grounded(ws: Path) -> None:
    found = problems(port_read(ws).answer("PORT is 8080."))
    assert "8080" in found["grounded"].message


def test_a_value_of_the_task_needs_no_cite(ws: Path) -> None:
    thread = Thread(ws, "Is 8123 the port settings.py sets?", "yes_or_no")
    thread.step("r1", "read_code", path="settings.py")
    assert "grounded" not in problems(thread.answer("Yes, 8123."))


def test_general_knowledge_with_no_call_passes_grounded(ws: Path) -> None:
    # the bare case: no call of any kind in the thread
    review_ = AnswerReview(
        answer="A leap year has 366 days.",
        cites=[],
        messages=[HumanMessage("How many days does a leap year have?"), AIMessage("366")],
        workspace=ws,
        workspace_changed=None,
        tools=TOOLS,
        declared={"answer": "general_knowledge", **NOTHING},
    )
    assert "grounded" not in problems(review_)


def test_general_knowledge_after_the_tasks_declaration_passes_grounded(ws: Path) -> None:
    # as a run has it: state_task was called, and its result is in the thread
    thread = Thread(ws, "How many days does a leap year have?", "general_knowledge")
    assert "grounded" not in problems(thread.answer("A leap year has 366 days."))


def test_general_knowledge_about_a_workspace_file_fails_grounded(ws: Path) -> None:
    review_ = AnswerReview(
        answer="It sets 8080.",
        cites=[],
        messages=[HumanMessage("What port does settings.py set?"), AIMessage("8080")],
        workspace=ws,
        workspace_changed=None,
        tools=TOOLS,
        declared={"answer": "general_knowledge", **NOTHING},
    )
    assert "grounded" in problems(review_)


# --- on_topic -------------------------------------------------------------------------------


def test_a_which_file_answer_citing_a_bare_listing_line_fails_on_topic(ws: Path) -> None:
    thread = Thread(ws, "Which file defines parse_config?", "file_name")
    listing = thread.step("l1", "list_files", path=".")
    assert "utils.py" in listing.text.splitlines()
    found = problems(thread.answer("utils.py"))
    assert "parse_config" in found["on_topic"].message
    assert "grounded" not in found  # the name is in the line: what is missing is the topic


def test_a_which_file_answer_citing_the_definition_passes(ws: Path) -> None:
    thread = Thread(ws, "Which file defines parse_config?", "file_name")
    thread.step("s1", "search_files", pattern="def parse_config")
    assert review(thread.answer("utils.py defines it.")) == []


def test_a_cite_of_the_file_the_task_names_is_on_topic(ws: Path) -> None:
    # the quote holds no name of the task, but its call read the file the task names
    found = problems(port_read(ws).answer("8123"))
    assert "on_topic" not in found


# --- files_exist ----------------------------------------------------------------------------


def test_a_file_the_answer_names_that_does_not_exist_fires(ws: Path) -> None:
    thread = Thread(ws, "Which file defines parse_config?", "file_name")
    thread.step("s1", "search_files", pattern="def parse_config")
    found = problems(thread.answer("helpers/config_utils.py"))
    assert "helpers/config_utils.py" in found["files_exist"].message


def test_a_file_the_answer_names_that_exists_passes(ws: Path) -> None:
    found = problems(port_read(ws).answer("settings.py sets 8123."))
    assert "files_exist" not in found


def test_a_missing_file_said_missing_with_the_line_that_says_so_passes(ws: Path) -> None:
    thread = Thread(ws, "What port does prod.yaml set?")
    thread.step("r1", "read_code", path="prod.yaml")
    found = problems(thread.answer("prod.yaml does not exist."))
    assert "files_exist" not in found
