"""The checks of a cited answer: a few general ones, in one ordered registry.

Each check reads the answer, its cites (the result lines that hold what it states,
:func:`jarvis_graph.citations.locate`), the task's sources and what the model declared the
task needs (:mod:`.cited`); none reads a word list, so they hold in any language. A check
returns at most one :class:`Problem`; the first checks find what makes the later ones moot
(no answer at all, nothing done that was asked).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jarvis_graph.citations import (
    CONTEXT,
    DECLARES_TASK,
    TASK,
    Cite,
    Source,
    holds,
    lines_of,
    squash,
    values_in,
    words_in,
)
from jarvis_graph.features.answer_check.cited import ANSWER_KINDS, COMPUTED_KINDS
from jarvis_graph.features.answer_check.workspace import exists
from jarvis_graph.features.base import AnswerReview, Problem
from jarvis_graph.messages import task_sources
from jarvis_graph.state import CHECK_NAME, CORRECTION_NAME

COPY_CHARS = 16
"""An answer this long found inside a notice of the run is a copy of it (a short one, "9",
is found in any text)."""
_NUMERIC = re.compile(r"\d+(?:\.\d+)?")
_PATHLIKE = re.compile(r"[/\\]|\.[A-Za-z][A-Za-z0-9]{0,7}$")


@dataclass(frozen=True)
class Facts:
    """What every check reads, computed once per review."""

    review: AnswerReview
    sources: dict[str, Source]
    cites: list[Cite]
    declared: dict[str, Any]

    @property
    def task(self) -> str:
        """The text of the task the answer answers."""
        return self.sources[TASK].text if TASK in self.sources else ""

    def cited(self) -> list[Source]:
        """The sources the answer cites (each once, in order)."""
        ids = dict.fromkeys(c.source for c in self.cites)
        return [self.sources[i] for i in ids if i in self.sources]

    def calls(self) -> list[Source]:
        """The task's tool calls that ran.

        Not the task text or the context, and not the task's declaration (it looked at
        nothing).
        """
        return [
            s
            for s in self.sources.values()
            if s.args is not None and not self.meta(s).get(DECLARES_TASK)
        ]

    def meta(self, source: Source) -> dict[str, Any]:
        """The metadata of the tool behind ``source`` (empty for task and context)."""
        return self.review.tools.get(source.tool, {})

    def tools_with(self, key: str) -> tuple[str, ...] | None:
        """The offered tools whose metadata sets ``key`` (``None`` when there are none)."""
        return tuple(n for n, m in self.review.tools.items() if m.get(key)) or None


def not_an_answer(facts: Facts) -> Problem | None:
    """Empty, the task said back, a notice of the run copied, or a plan naming a tool."""
    answer = squash(facts.review.answer)
    task = squash(facts.task)
    notices = [
        squash(str(m.text))
        for m in facts.review.messages
        if getattr(m, "name", None) in (CHECK_NAME, CORRECTION_NAME)
    ]
    # an answer that names a tool of the run (the task does not) talks about the steps:
    # a plan, or a call written out, not what they found
    plan = any(holds(answer, n) and not holds(task, n) for n in facts.review.tools)
    copied = len(answer) >= COPY_CHARS and any(answer in n for n in notices)
    if not answer or answer == task or copied or plan:
        return Problem(
            "not_an_answer",
            "That is not an answer to the task: take the first step with a tool, then answer "
            "with what it returned.",
        )
    return None


def _failed(facts: Facts, source_id: str) -> bool:
    source = facts.sources.get(source_id)
    return source is None or source.failed


VALUE_KINDS = frozenset({"value", "count", "sum", "max_or_min", "date_difference", "file_name"})
"""Answer kinds that name a value: such an answer states one, or says what failed."""


def states_something(facts: Facts) -> Problem | None:
    """A task that asks for a value or an answer gets one, or is told what it names failed.

    Stated means a value or a word a successful result holds (not the task's own). Failed
    means a call that failed on a file or path the task names (the file it asks
    about is not there); the failure of a computation the model thought up answers
    nothing. A file name asked for is a path-like value.
    """
    kind = facts.declared.get("answer")
    task = facts.task
    # the task's own names said back state nothing ("the value of MAX_RETRIES is ..."); a
    # word counts when a successful result holds it (a codename, a person's name)
    stated = [v for v in values_in(facts.review.answer) if not holds(task, v)]
    found = "\n".join(c.quote for c in facts.cites if not _failed(facts, c.source))
    stated += [w for w in words_in(facts.review.answer) if holds(found, w)]
    stated = [v for v in stated if not holds(task, v)]
    if kind == "file_name":
        stated = [v for v in stated if _PATHLIKE.search(v)]
    acts = any(facts.declared.get(need) is True for need, _, _ in ACTIONS)
    # a task declared to ask for nothing and to do nothing still asks for something
    asks = kind in VALUE_KINDS or kind == "text" or (kind == "nothing" and not acts)
    if not asks or stated:
        return None
    named = {v for v in values_in(task) if _PATHLIKE.search(v)}
    for source in facts.calls():
        if source.failed and any(holds(_args_text(source), n) for n in named):
            return None
    what = f"a {kind.replace('_', ' ')}" if kind in VALUE_KINDS else "an answer"
    return Problem(
        "states_something",
        f"The task asks for {what}, and yours states nothing the results above hold: "
        "answer from them, or take a further step.",
    )


def grounded(facts: Facts) -> Problem | None:
    """Every value the answer states is held by a line of a result (or by the task).

    A question of general knowledge (so declared, no tool called, and no file of the
    workspace named in the task) has nothing to cite.
    """
    quotes = "\n".join(c.quote for c in facts.cites if c.source in facts.sources)
    task = facts.task
    # a value the user gave is no claim of the answer (a change made: actions_done)
    missing = [
        v for v in values_in(facts.review.answer) if not holds(quotes, v) and not holds(task, v)
    ]
    if not missing or knowledge(facts):
        return None
    shown = ", ".join(missing[:3])
    return Problem(
        "grounded",
        f"{shown} appears in no result of this task: get it with a tool first, or answer "
        "with what the results above hold.",
    )


def knowledge(facts: Facts) -> bool:
    """Whether the task is a question of general knowledge (nothing of it to look up)."""
    if facts.declared.get("answer") != "general_knowledge" or facts.calls():
        return False
    task = facts.task
    workspace = facts.review.workspace
    named = [v for v in values_in(task) if _PATHLIKE.search(v)]
    return not any(exists(workspace, v) for v in named)


def looked(facts: Facts) -> Problem | None:
    """A task that names a file of the workspace gets a look at it before its answer.

    The first step is a call unless the task was declared general knowledge; a task so
    declared that names a workspace file was declared wrong, and its answer looked at
    nothing.
    """
    if facts.calls():
        return None
    task = facts.task
    named = [v for v in values_in(task) if _PATHLIKE.search(v)]
    here = [v for v in named if exists(facts.review.workspace, v)]
    if not here:
        return None
    return Problem(
        "looked",
        f"The task is about {here[0]}, a file of this workspace: look at it with a tool, "
        "then answer from what it shows.",
    )


_IDENTIFIER = re.compile(r"\b(?:[A-Za-z]+_[A-Za-z0-9_]+|[a-z]+[A-Z]\w*|[A-Z][A-Z0-9]{2,})\b")


def on_topic(facts: Facts) -> Problem | None:
    """A file given as the answer is shown to hold what the task names.

    A line of a result holds both the file and one of the task's names (a search's hit
    ``src/hashing.py:3: def digest``), or a call made on that file returned one of them (a
    read of it), or a call made with one returned the file (``grep -l``), or the attached
    context shows one of them in that file's part. A listing line shows that the file
    exists, not that it is the one asked for.
    """
    if facts.declared.get("answer") != "file_name":
        return None
    task = facts.task
    named = set(values_in(task)) | set(_IDENTIFIER.findall(task))
    answer = facts.review.answer
    files = [v for v in values_in(answer) if _PATHLIKE.search(v) and not holds(task, v)]
    if not named or not files:
        return None
    shown = [s for s in facts.calls() if not s.failed]
    shown += [s for s in facts.sources.values() if s.id == CONTEXT]
    for source in shown:
        asked = any(holds(_args_text(source), n) for n in named)
        for line, where in lines_of(source):
            for file in files:
                about = holds(line, file) or holds(where or _args_text(source), file)
                if about and (asked and holds(line, file) or any(holds(line, n) for n in named)):
                    return None
    return Problem(
        "on_topic",
        f"Nothing shows that {files[0]} holds what the task asks about "
        f"({', '.join(sorted(named)[:3])}): look for it with a tool, and answer from that.",
    )


def _args_text(source: Source) -> str:
    return " ".join(str(v) for v in (source.args or {}).values())


COUNTING_ARTIFACTS = frozenset({"computation", "run", "listing", "search"})
"""Results whose numbers a tool counted or computed (a listing's files, a search's hits),
as their typed artifacts say: a count cited from them was not counted by reading."""


def computed(facts: Facts) -> Problem | None:
    """A number comes from what computed it: a run the task asks for, or a computation.

    When the task asks for a program to be run and a run worked, the answer's numbers are
    ones a run printed (not the numbers of the code it runs: ``6 * 7 + 1000``). A count,
    total, extreme or date difference comes from a computation or a run: the line that
    holds the answer's number comes from one; an answer whose number is a word ("nine",
    九) is located nowhere, and then a computation or a run of the task that succeeded is
    what is asked.
    """
    problem = _printed(facts)
    if problem is not None or facts.declared.get("answer") not in COMPUTED_KINDS:
        return problem
    numeric = any(_NUMERIC.fullmatch(v) for v in values_in(facts.review.answer))
    for source in facts.cited() if numeric else facts.calls():
        meta = facts.meta(source)
        kind = source.artifact.get("kind") if isinstance(source.artifact, dict) else None
        if source.failed:
            continue
        if meta.get("computes") or meta.get("runs_code") or kind in COUNTING_ARTIFACTS:
            return None
    tools = tuple(
        n for n, m in facts.review.tools.items() if m.get("computes") or m.get("runs_code")
    )
    return Problem(
        "computed",
        f"A {facts.declared['answer'].replace('_', ' ')} must come from a computation or a "
        "run, not from reading: compute it with a tool, then answer with its result.",
        tools_allowed=tools or None,
    )


def _printed(facts: Facts) -> Problem | None:
    """The answer's numbers, for a task that asks for a run, are ones a run printed."""
    runs = [s for s in facts.calls() if facts.meta(s).get("runs_code") and not s.failed]
    if facts.declared.get("asks_to_run_a_program") is not True or not runs:
        return None
    task = facts.task
    values = values_in(facts.review.answer)
    # a number, not the start of a version or a date the answer also states (2.3 of 2.3.1)
    numbers = [
        v
        for v in values
        if _NUMERIC.fullmatch(v)
        and not holds(task, v)
        and not any(w != v and w.startswith(v) for w in values)
    ]
    printed = "\n".join(s.text for s in runs)
    missing = [n for n in numbers if not holds(printed, n)]
    if not missing:
        return None
    return Problem(
        "computed",
        f"{missing[0]} is not in what the run printed: answer with the run's output, or run "
        "what prints it.",
        tools_allowed=tuple(n for n, m in facts.review.tools.items() if m.get("runs_code")) or None,
    )


ACTIONS = (
    ("asks_to_run_a_program", "runs_code", "run it"),
    ("asks_to_change_files", "edits_files", "change the files"),
    ("asks_to_remember", "saves_memory", "save it to memory"),
)
"""A declared need, the tool metadata of the calls that meet it, and what to tell."""


def actions_done(facts: Facts) -> Problem | None:
    """What the task declared it needs done was done.

    A run ran; a file changed (by an edit, or by a script that wrote it: what counts is
    that the workspace changed); a memory was saved.
    """
    for need, key, told in ACTIONS:
        if facts.declared.get(need) is not True:
            continue
        # a run that failed still ran (failure_owned holds the answer to saying so)
        done = [
            s
            for s in facts.calls()
            if facts.meta(s).get(key) and (key == "runs_code" or not s.failed)
        ]
        if key == "edits_files":
            ran = [s for s in facts.calls() if facts.meta(s).get("runs_code")]
            done = done + ran if facts.review.workspace_changed is not False else []
        if not done:
            return Problem(
                "actions_done",
                f"The task asks you to {told}, and no call did that yet: do it with a tool, "
                "then answer.",
                tools_allowed=None if key == "edits_files" else facts.tools_with(key),
            )
    return None


def files_exist(facts: Facts) -> Problem | None:
    """A file the answer names exists, unless a result line says otherwise.

    A file the task names is the user's word, not a claim of the answer ("prod.yaml does
    not exist"); a value the answer gives about it is grounded or not.
    """
    workspace = facts.review.workspace
    task = facts.task
    for value in values_in(facts.review.answer):
        if not _PATHLIKE.search(value) or "@" in value or "://" in value or holds(task, value):
            continue
        name = value.strip("/")
        if exists(workspace, name) or exists(workspace, name.split("/")[-1]):
            continue
        if any(holds(c.quote, value) for c in facts.cites):
            continue  # said of the file with a result line that names it: "not found"
        return Problem(
            "files_exist",
            f"{value} is not a file of the workspace: name the file that holds the answer, "
            "or say that it does not exist.",
        )
    return None


def failure_owned(facts: Facts) -> Problem | None:
    """The last run's failure is not hidden: an answer after a failed run says what failed.

    It states a value or a word of the failed run's output that the task does not hold
    (the error's name, the line, the message).
    """
    runs = [s for s in facts.calls() if facts.meta(s).get("runs_code")]
    if not runs or not runs[-1].failed:
        return None
    task = facts.task
    said = values_in(facts.review.answer) + words_in(facts.review.answer)
    if any(holds(runs[-1].text, w) and not holds(task, w) for w in said):
        return None
    return Problem(
        "failure_owned",
        "Your last run failed: fix the cause and run it again, or answer that it failed, "
        "with what its output says.",
    )


CHECKS: tuple[Callable[[Facts], Problem | None], ...] = (
    not_an_answer,
    actions_done,
    looked,
    failure_owned,
    states_something,
    computed,
    grounded,
    on_topic,
    files_exist,
)
"""The checks, in order: the first problem found is the one told to the model. What was
not done comes first: the values are checked against its result, once it is there."""


def review(answer: AnswerReview) -> list[Problem]:
    """Every check's problem with ``answer`` (empty: it passed)."""
    sources = {s.id: s for s in task_sources(answer.messages)}
    declared = dict(answer.declared or {})
    if declared.get("answer") not in ANSWER_KINDS:
        declared.pop("answer", None)
    facts = Facts(answer, sources, list(answer.cites), declared)
    found = [check(facts) for check in CHECKS]
    return [p for p in found if p is not None]


__all__ = ["CHECKS", "Facts", "review"]
