"""The tool of cited answers: the task's declaration.

``state_task`` is the first call of every task: the model states, under the tool's schema,
what the task needs done (run, change files, remember) and what kind of answer it asks for.
The checks hold the answer to that statement, so learning what a task asks takes no word
list and works in any language the model reads. The answer itself is words; its cites are
located in the results (:func:`jarvis_graph.citations.locate`).
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from jarvis_graph.citations import ALWAYS_OFFERED, DECLARES_TASK
from jarvis_graph.features.base import run_tool

COMPUTED_KINDS = frozenset({"count", "sum", "max_or_min", "date_difference"})
"""Answer kinds that come from a computation or a run, never from reading."""

AnswerKind = Literal[
    "value",
    "count",
    "sum",
    "max_or_min",
    "date_difference",
    "file_name",
    "yes_or_no",
    "general_knowledge",
    "text",
    "nothing",
]
ANSWER_KINDS: tuple[str, ...] = get_args(AnswerKind)


def state_task(
    answer: AnswerKind,
    asks_to_run_a_program: bool,
    asks_to_change_files: bool,
    asks_to_remember: bool,
) -> str:
    """Say what this task needs before its first step (call it once, first).

    Args:
        answer: What kind of answer the task asks for: value (one value looked up in a
            file or a result), count (how many of something), sum (a total of several
            numbers), max_or_min (the largest or smallest), date_difference (days between
            dates), file_name (which file), yes_or_no, general_knowledge (a question that
            nothing in this workspace answers: never when it asks about files, code or
            the workspace), text (a name, a word, or what a program prints), or nothing
            (the task only asks for something to be done).
        asks_to_run_a_program: The user asks you to run or execute a given script,
            command or test suite (false when you only need to look something up).
        asks_to_change_files: The user asks you to create, write, fix or edit a file.
        asks_to_remember: The user asks you to remember something for later sessions.
    """
    return "Noted. Now take the first step: call the tool it needs."


def cited_tools() -> list[Any]:
    """``state_task``, marked for the graph by its metadata."""
    declare = run_tool(
        state_task, parse_docstring=True, metadata={DECLARES_TASK: True, ALWAYS_OFFERED: True}
    )
    return [declare]
