"""Focused answers: a small model writes its final answer from the facts and the question.

Asked to answer inside the agent conversation, a small model often copies the task, a
reminder or a tool's error text instead of answering. The ``focus_answer`` node asks it
once more, in a short prompt of its own: the question, the facts the task gathered (the
thread's earlier turns, the attached context, every tool result, failed ones too), and the
question again. The answer it writes replaces the conversation's answer, and then goes
through the answer check like any answer; when it fails the check where the model's own
answer passes, the model's own answer is kept.
"""

from __future__ import annotations

import re

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage, ToolMessage

from jarvis_graph.features.base import Feature, RunSetup
from jarvis_graph.messages import refused_call
from jarvis_graph.state import CHECK_NAME, CORRECTION_NAME, is_task_message, task_start

FROM_REPEATS = "(repeated calls)"
"""``focused_from`` of an answer written after a turn of repeated calls (no answer before)."""
FACTS_CHARS = 12_000
"""The latest facts are kept up to this size."""
ANSWER_SYSTEM = (
    "Answer the question using the facts. Give only the value, name or number that answers "
    "it, copied exactly from the facts. If the facts show that what is asked for does not "
    "exist or failed, say so."
)
SEVERAL = " The question asks for several things: give each of them."
_SEVERAL = re.compile(r"\band (?:how many|how much|what|which|where|who)\b", re.IGNORECASE)
_LINE_NUMBER = re.compile(r"^ *\d+ \| ", re.MULTILINE)
_SUCCESS = re.compile(r"\Aexit code: 0\n")  # a script that worked: only its output matters


class FocusedAnswer(Feature):
    """Turns the ``focus_answer`` node on: ``auto`` for the local platform's models."""

    name = "focused_answer"
    settings = ("focused_answers",)

    def enabled(self, setup: RunSetup) -> bool:
        """``on``: always; ``auto``: for models of the local platform; ``off``: never."""
        mode = setup.settings.focused_answers
        if mode != "auto":
            return mode == "on"
        if setup.settings.answer_check == "cited":
            return False  # a cited answer is checked as the model wrote it, cites and all
        # deferred: resolving the platform reads the model spec only, no provider import
        from jarvis_graph.platforms.registry import resolve_platform

        return resolve_platform(setup.settings.model_for("normal")) == "local"


def facts_of(messages: list[AnyMessage]) -> list[str]:
    """The facts for the latest task, oldest first: earlier turns, context, tool results.

    The model's answers count only from earlier tasks of the thread (what was said then).
    """
    facts: list[str] = []
    last_task = task_start(messages)
    for index, message in enumerate(messages):
        name = getattr(message, "name", None)
        if index == last_task:
            continue  # the question itself
        if name in (CHECK_NAME, CORRECTION_NAME):
            continue
        if isinstance(message, ToolMessage):
            if refused_call(str(message.text)):
                continue  # a call that did not run says nothing about the task
            text = _SUCCESS.sub("", _LINE_NUMBER.sub("", str(message.text)), count=1)
            facts.append(f"Result of {message.name or 'a tool'}:\n{text}")
        elif isinstance(message, HumanMessage):
            said = "The user said" if is_task_message(message) else "Context"
            facts.append(f"{said}:\n{message.text}")
        elif isinstance(message, AIMessage) and message.text and not message.tool_calls:
            if index > last_task:
                # The model's own answers to this task are not evidence: one the check sent
                # back, shown as a fact, is copied again (a 1.5B model answered "10 rows,
                # total 100.00" again right after running the script that printed 4 rows).
                continue
            facts.append(f"You answered:\n{message.text}")
    return facts


def answer_messages(task: str, facts: list[str]) -> list[AnyMessage]:
    """The focused prompt: the question, the latest facts (up to :data:`FACTS_CHARS`), again."""
    kept: list[str] = []
    size = 0
    for fact in reversed(facts):
        size += len(fact)
        if kept and size > FACTS_CHARS:
            break
        kept.insert(0, fact[-FACTS_CHARS:])
    system = ANSWER_SYSTEM + (SEVERAL if _SEVERAL.search(task) else "")
    body = "\n\n".join(kept)
    question = f"Question: {task}\n\nFacts:\n\n{body}\n\nQuestion: {task}"
    return [SystemMessage(system), HumanMessage(question)]
