"""No false alarm of cited answers on any bench task's known-good answer (issue 47, item 8).

For every task of both splits of ``bench/local_agent.py``, the transcript a careful model
would leave is built in a fresh workspace from the task's own data, every call run by the
``run_tools`` node with the real tools (``answer_check: cited``, so the run's services offer
``state_task``): the task (after its earlier turns), a ``state_task`` declaration that fits
it, a read of each file the task names, the files a right run leaves (``good_files``)
written with ``write_file``, the task's ``solution`` run with ``execute_script``, the
memory saved with ``save_memory``, and a search for each value the good answer states that
no result shows yet. ``task.good`` is the final answer; its cites are located as the
``review_answer`` node locates them (:func:`locate`), and the review is assembled as that
node assembles it (``declared_of``, the workspace digest before and after, the services'
tool metadata); it must find no problem.

A task whose good transcript gets a problem is a false alarm of a check: it is marked
``xfail(strict=True)`` with the check and the cause (:data:`FALSE_ALARMS`), so the suite
stays green and honest; a fixed check turns its mark into a failure, to be removed.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from jarvis_graph.citations import DECLARES_TASK, Source, holds, lines_of, locate, values_in
from jarvis_graph.context import JarvisContext
from jarvis_graph.features.answer_check import checks, workspace_digest
from jarvis_graph.features.base import AnswerReview
from jarvis_graph.messages import task_sources
from jarvis_graph.nodes.review_answer import declared_of
from jarvis_graph.nodes.run_tools import run_tools
from jarvis_graph.runtime.services import services_of
from jarvis_graph.state import AgentState

ROOT = Path(__file__).resolve().parents[2]


def _load_bench() -> ModuleType:
    """``bench/local_agent.py``, loaded as ``tests/unit/test_bench_local_agent.py`` loads it."""
    spec = importlib.util.spec_from_file_location(
        "bench_local_agent", ROOT / "bench" / "local_agent.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module


TASKS = _load_bench().TASKS

# --- what each task declares: test data, from the task's kind (and name where a kind mixes)

ANSWER_BY_KIND = {
    # development split
    "read_value": "value",
    "find_file": "file_name",
    "run_script": "value",
    "compute_csv": "count",
    "json_key": "value",
    "largest": "max_or_min",
    "script_with_arg": "value",
    "combine_files": "value",
    "search": "value",
    "count_files": "count",
    "count_matches": "count",
    "write_file": "nothing",
    "fix_and_run": "value",
    "edit_json": "nothing",
    "create_module": "value",
    "count_log": "count",
    "missing_file": "value",
    "failing_tests": "text",
    "thread_recall": "value",
    "remember": "nothing",
    "run_command": "value",
    # held-out split
    "other_format": "value",
    "git_history": "value",
    "dates": "value",
    "word_line_count": "count",
    "multi_file": "value",
    "write_other": "nothing",
    "zh_config": "value",
    "zh_count": "count",
    "zh_run_script": "value",
    "zh_find_file": "file_name",
    "zh_missing_file": "value",
    "zh_csv": "sum",
    "zh_edit_file": "nothing",
    "zh_date": "date_difference",
    "no_tool": "general_knowledge",
    "failing_check": "text",
}
ANSWER_BY_TASK = {
    # kinds whose tasks ask for different kinds of answer
    "csv_sum": "sum",
    "combine_config_data": "count",
    "search_error_code": "file_name",
    "missing_sales_total": "sum",
    "tests_do_they_pass": "yes_or_no",
    "recall_followup": "count",
    "cmd_count_items": "count",
    "h_git_docs_commits": "count",
    "h_git_line_added_message": "text",
    "h_dates_beta_to_launch": "date_difference",
    "h_longest_line_number": "max_or_min",
    "h_multi_max_revenue_file": "file_name",
    "h_multi_failed_logins": "file_name",
    "h_zh_csv_class_max": "max_or_min",
}
RUN_KINDS = frozenset(
    {
        "run_script",
        "script_with_arg",
        "fix_and_run",
        "create_module",
        "failing_tests",
        "run_command",
        "zh_run_script",
        "failing_check",
    }
)
"""Kinds whose task asks for a program to be run (its solution runs what the user named)."""

_PRINTS_ONLY = re.compile(r"""^echo\s+(?:'[^']*'|"[^"$`]*"|[^\s'"|;&<>$`]+)$""")
"""A solution that prints a fixed text looks nothing up: a careful model runs nothing for it
(a question of general knowledge, a note to remember, what the user said earlier)."""

DETAILS = {
    "h_git_line_added_message": (
        "git log -S'retry_limit = 7' --date=short --format='%an %ad %s' -- settings.conf"
    ),
    "h_longest_line_number": "awk '{print NR, length($0)}' poem.txt",
    "h_multi_max_revenue_file": (
        "for f in reports/*.csv; do "
        "echo \"$(awk -F, 'NR > 1 {s += $2} END {print s}' $f) $f\"; done"
    ),
}
"""A run that shows what a good answer states beside what its task's solution prints (the
author and date of a commit, a line's length, a file's total): a careful model that states
it saw it."""


def declaration(task: Any) -> dict[str, Any]:
    """The ``state_task`` arguments that fit ``task``."""
    return {
        "answer": ANSWER_BY_TASK.get(task.name, ANSWER_BY_KIND[task.kind]),
        "asks_to_run_a_program": task.kind in RUN_KINDS,
        "asks_to_change_files": bool(task.good_files),
        "asks_to_remember": bool(task.memory),
    }


# --- the transcript ------------------------------------------------------------------------


class Run:
    """One task's thread, its calls run by the ``run_tools`` node in ``workspace``."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.messages: list[Any] = []
        self.tools: dict[str, dict[str, Any]] = {}
        self.calls = 0

    def step(self, name: str, **args: Any) -> str:
        """Run one call; its result joins the thread. The call's id."""
        self.calls += 1
        call_id = f"call_{self.calls}"
        ai = AIMessage("", tool_calls=[{"name": name, "args": args, "id": call_id}])

        def services(state: AgentState, runtime: Runtime[JarvisContext]) -> dict[str, Any]:
            # the metadata review_answer passes: the tools of the run's services
            self.tools = {n: dict(t.metadata or {}) for n, t in services_of(runtime).tools.items()}
            return {}

        builder = StateGraph(AgentState, context_schema=JarvisContext)
        builder.add_node("run_tools", run_tools)
        builder.add_node("services", services)
        builder.add_edge(START, "run_tools")
        builder.add_edge("run_tools", "services")
        builder.add_edge("services", END)
        state = {"messages": [*self.messages, ai]}
        context = JarvisContext(workspace=str(self.workspace), non_interactive=True)
        out = builder.compile().invoke(state, context=context)
        (result,) = [m for m in out["messages"] if getattr(m, "tool_call_id", None) == call_id]
        assert result.status != "error", f"{name} failed: {result.text}"
        self.messages += [ai, result]
        return call_id


def _hits(artifact: Any) -> int | None:
    """The lines a search's artifact matched (``None`` for any other result)."""
    if not isinstance(artifact, dict) or artifact.get("kind") != "search":
        return None
    return int(artifact.get("matching_lines") or 0)


def unshown(answer: str, sources: list[Source]) -> list[str]:
    """The values of ``answer`` that no line of a result holds yet."""
    # not the declaration (it looked at nothing), nor a search that found nothing (its
    # text only says the pattern back)
    shown = [s for s in sources if s.tool not in ("task", "state_task") and _hits(s.artifact) != 0]
    lines = [line for s in shown for line, _ in lines_of(s)]
    return [v for v in values_in(answer) if not any(holds(q, v) for q in lines)]


def look_up(run: Run, values: list[str]) -> None:
    """The calls a careful model makes for the values it states that no result shows.

    Each is searched for in the files (the line of a config that names a file, the row a
    date or an id comes from); a file no other file mentions is seen in a listing.
    """
    listed = False
    for value in values:
        run.step("search_files", pattern=rf"\b{re.escape(value)}\b")
        found = _hits(run.messages[-1].artifact) > 0
        if not (found or listed) and any(run.workspace.rglob(value.split("/")[-1])):
            run.step("list_files", path=".")
            listed = True


def good_review(task: Any, workspace: Path) -> AnswerReview:
    """The review of ``task``'s known-good transcript, as ``review_answer`` assembles it."""
    task.setup(workspace)
    config = workspace / ".jarvis" / "config.yaml"  # hidden: not in the workspace digest
    config.parent.mkdir(exist_ok=True)
    config.write_text("answer_check: cited\n")
    run = Run(workspace)
    for turn in task.turns:  # an earlier task and its answer; no source of this one
        run.messages += [HumanMessage(turn), AIMessage("Done.")]
    run.messages.append(HumanMessage(task.text))
    before = workspace_digest(workspace)
    declared = declaration(task)
    run.step("state_task", **declared)
    for name in values_in(task.text):  # the files the task names, read first
        if (workspace / name).is_file():
            run.step("read_code", path=name)
    for path, content in task.good_files.items():
        run.step("write_file", path=path, content=content)
    if not _PRINTS_ONLY.fullmatch(task.solution.strip()):
        run.step("execute_script", script=task.solution)
    if task.name in DETAILS:
        run.step("execute_script", script=DETAILS[task.name])
    for record in task.good_memories():
        memory = {
            "memory_type": record["type"],
            "tags": record["tags"],
            "content": record["content"],
        }
        run.step("save_memory", memories=[memory])
    if declared["answer"] != "general_knowledge":  # nothing of the workspace to look up
        look_up(run, unshown(task.good, task_sources(run.messages)))
    declaring = [n for n, m in run.tools.items() if m.get(DECLARES_TASK)]
    messages = [*run.messages, AIMessage(task.good)]
    return AnswerReview(
        answer=task.good,
        cites=locate(task.good, task_sources(messages), declaring),
        messages=messages,
        workspace=workspace,
        workspace_changed=None if before is None else workspace_digest(workspace) != before,
        tools=run.tools,
        declared=declared_of(messages, declaring),
    )


# --- the test --------------------------------------------------------------------------------

_WORD_VALUE = (
    ("states_something",),
    "the value asked for is a word (a name, a level, a codename), and values_in takes only "
    "numbers and tokens with a digit or _ . / @, so the answer 'states none'",
)
_NUMBER_WORD = (
    ("states_something",),
    "the count is written as a word (five, Six, 七个), which values_in does not read, so the "
    "answer 'states none'",
)
_KEY_PATH = (
    ("grounded", "files_exist"),
    "a dotted key path (services.worker.queue.port) is a value and a file name to them, and "
    "the path of a nested YAML key is written in no file",
)
FALSE_ALARMS: dict[str, tuple[tuple[str, ...], str]] = {
    "recall_user_fact": (
        _WORD_VALUE[0],
        _WORD_VALUE[1] + " (nor is the earlier turn that holds it a source of this task)",
    ),
    "count_test_files": _NUMBER_WORD,
    "csv_filter_count": _NUMBER_WORD,
    "h_zh_count_py_files": _NUMBER_WORD,
    "h_zh_csv_city_sum": (
        ("grounded",),
        "the good answer also says how many rows it added (4), a count that no result line "
        "holds (the sum's computation prints the total only)",
    ),
    "h_yaml_queue_port": _KEY_PATH,
    "h_zh_yaml_db_port": _KEY_PATH,
}
"""Tasks whose known-good transcript checks reject: task name -> those checks, and why.
Findings for the checks, not fixed here."""


class FalseAlarm(AssertionError):
    """The known false alarm of a task (:data:`FALSE_ALARMS`), exactly: any other problem
    fails the test."""


def _params() -> list[Any]:
    params = []
    for task in TASKS:
        marks = []
        if task.name in FALSE_ALARMS:
            names, why = FALSE_ALARMS[task.name]
            reason = f"false alarm: {', '.join(names)}: {why}"
            marks.append(pytest.mark.xfail(strict=True, raises=FalseAlarm, reason=reason))
        params.append(pytest.param(task, id=task.name, marks=marks))
    return params


def test_both_splits_are_covered() -> None:
    splits = {t.split for t in TASKS}
    assert splits == {"dev", "heldout"}
    assert {t.kind for t in TASKS} <= set(ANSWER_BY_KIND)
    assert set(FALSE_ALARMS) <= {t.name for t in TASKS}


@pytest.mark.parametrize("task", _params())
def test_the_known_good_answer_raises_no_alarm(task: Any, workspace: Path) -> None:
    review = good_review(task, workspace)
    assert review.declared == declaration(task)  # the node found the declaration
    assert review.workspace_changed is bool(task.good_files)
    found = [(p.check, p.message) for p in checks.review(review)]
    cites = [(c.source, c.quote) for c in review.cites]
    known = FALSE_ALARMS.get(task.name)
    if found and known and tuple(check for check, _ in found) == known[0]:
        raise FalseAlarm(f"{found}; cites: {cites}")
    assert found == [], f"cites: {cites}"
