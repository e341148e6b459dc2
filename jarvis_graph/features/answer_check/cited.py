"""The two tools of cited answers: the task's declaration, and the final answer with cites.

``state_task`` is the first call of every task: the model states, under the tool's schema,
what the task needs done (run, change files, remember) and what kind of answer it asks for.
The checks hold the answer to that statement, so learning what a task asks takes no word
list and works in any language the model reads.

``final_answer`` is how a task ends: the answer and its cites. It is never run; the call
becomes the reply's answer (see ``nodes.call_model``), its cites kept with it.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from jarvis_graph.citations import ALWAYS_OFFERED, ANSWERS_TASK, CITES_MARK, DECLARES_TASK
from jarvis_graph.features.base import run_tool

COMPUTED_KINDS = frozenset({"count", "sum", "max_or_min", "date_difference"})
"""Answer kinds that come from a computation or a run, never from reading."""
ANSWER_CHARS = 400

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
        answer: What kind of answer the task asks for: value (looked up in a file or a
            result), count, sum, max_or_min, date_difference, file_name, yes_or_no,
            general_knowledge (nothing in this workspace to look up), text, or nothing
            (the task only asks for something to be done).
        asks_to_run_a_program: The user asks you to run or execute a given script,
            command or test suite (false when you only need to look something up).
        asks_to_change_files: The user asks you to create, write, fix or edit a file.
        asks_to_remember: The user asks you to remember something for later sessions.
    """
    return "Noted. Now take the first step: call the tool it needs."


def final_answer(cites: list[dict[str, str]], answer: str) -> str:
    """Give the final answer of the task, with the lines of the results it comes from."""
    return answer


CITES_PARAM: dict[str, Any] = {
    "type": "array",
    CITES_MARK: True,
    "description": (
        'The evidence: [{"quote": LINE, "source": ID}], LINE a line of a result that holds '
        'what the answer states, ID that result\'s source id ("task" or "context" for those)'
    ),
    "items": {
        "type": "object",
        "properties": {"quote": {"type": "string"}, "source": {"type": "string"}},
        "required": ["quote", "source"],
    },
}
FINAL_ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    # the evidence before the answer: a small model picks the lines, then answers from them
    "properties": {
        "cites": CITES_PARAM,
        "answer": {
            "type": "string",
            "maxLength": ANSWER_CHARS,
            "description": "The answer, briefly, in the language of the task, numbers in digits",
        },
    },
    "required": ["cites", "answer"],
}


def cited_tools() -> list[Any]:
    """``state_task`` and ``final_answer``, marked for the graph by their metadata."""
    declare = run_tool(
        state_task, parse_docstring=True, metadata={DECLARES_TASK: True, ALWAYS_OFFERED: True}
    )
    answer = run_tool(
        final_answer,
        args_schema=FINAL_ANSWER_SCHEMA,
        metadata={ANSWERS_TASK: True, ALWAYS_OFFERED: True},
    )
    return [declare, answer]
