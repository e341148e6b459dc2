"""The checks of a cited answer: a few general ones, in one ordered registry.

Each check reads the answer, its cites, the task's sources (:mod:`jarvis_graph.citations`)
and what the model declared the task needs (:mod:`.cited`); none reads a word list, so
they hold in any language. A check returns at most one :class:`Problem`; the first checks
find what makes the later ones moot (no answer at all, cites of nothing).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jarvis_graph.citations import DECLARES_TASK, Cite, Source, occurs_in, squash
from jarvis_graph.features.answer_check.cited import ANSWER_KINDS, COMPUTED_KINDS
from jarvis_graph.features.base import AnswerReview, Problem
from jarvis_graph.messages import task_sources
from jarvis_graph.state import CHECK_NAME, CORRECTION_NAME

_TOKEN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-/@:]*[A-Za-z0-9_]|[0-9]")
_NUMBER = re.compile(r"(?<![A-Za-z0-9_.])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")
"""A number: ``1,270.50`` whole, a CSV field (``gadget,11,7.00``) each on its own."""
COPY_CHARS = 16
"""An answer this long found inside a notice of the run is a copy of it (a short one, "9",
is found in any text)."""
_PATHLIKE = re.compile(r"[/\\]|\.[A-Za-z][A-Za-z0-9]{0,7}$")


@dataclass(frozen=True)
class Facts:
    """What every check reads, computed once per review."""

    review: AnswerReview
    sources: dict[str, Source]
    cites: list[Cite]
    declared: dict[str, Any]

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


def values_in(text: str) -> list[str]:
    """What an answer states that can be checked.

    Numbers, and tokens that hold a digit or a ``_ . / @`` inside: file names, paths,
    identifiers, versions, addresses, dates. Plain words are not checked.
    """
    found = [m.group(0).replace(",", "") for m in _NUMBER.finditer(text)]
    for token in _TOKEN.findall(text):
        if any(c.isdigit() for c in token) and _NUMBER.fullmatch(token):
            continue  # a number: already taken, by value
        if any(c.isdigit() for c in token) or re.search(r"[_./@]", token):
            found.append(token)
    return list(dict.fromkeys(found))


def holds(text: str, value: str) -> bool:
    """Whether ``text`` states ``value``: a number by value, anything else as a token."""
    if _NUMBER.fullmatch(value):
        wanted = float(value.replace(",", ""))
        return any(abs(float(n.replace(",", "")) - wanted) < 1e-9 for n in _NUMBER.findall(text))
    pattern = rf"(?<![A-Za-z0-9_]){re.escape(value)}(?![A-Za-z0-9_])"
    return re.search(pattern, text, re.IGNORECASE) is not None


def not_an_answer(facts: Facts) -> Problem | None:
    """Empty, the task said back, a notice of the run copied, or a plan naming tools."""
    answer = squash(facts.review.answer)
    task = squash(facts.sources["task"].text) if "task" in facts.sources else ""
    notices = [
        squash(str(m.text))
        for m in facts.review.messages
        if getattr(m, "name", None) in (CHECK_NAME, CORRECTION_NAME)
    ]
    tools = "|".join(re.escape(n) for n in facts.review.tools)
    plan = bool(tools) and re.search(rf"\b(?:{tools})\b\s*[({{:]", answer) is not None
    copied = len(answer) >= COPY_CHARS and any(answer in n for n in notices)
    if not answer or answer == task or copied or plan:
        return Problem(
            "not_an_answer",
            "That is not an answer to the task: take the first step with a tool, then answer "
            "with what it returned.",
        )
    return None


_WORD = re.compile(r"\w{3,}")
"""A word of an answer, in any script (a name, a code word, 七个)."""


def _failed(facts: Facts, source_id: str) -> bool:
    source = facts.sources.get(source_id)
    return source is None or source.failed


VALUE_KINDS = frozenset({"value", "count", "sum", "max_or_min", "date_difference", "file_name"})
"""Answer kinds that name a value: such an answer states one, or says what failed."""


def states_something(facts: Facts) -> Problem | None:
    """A task that asks for a value gets one, or is told that what it names failed.

    Failed means a cited call that failed on a file or path the task names (the file it
    asks about is not there); the failure of a computation the model thought up answers
    nothing. A file name asked for is a path-like value.
    """
    kind = facts.declared.get("answer")
    task = facts.sources["task"].text if "task" in facts.sources else ""
    # the task's own names said back state nothing ("the value of MAX_RETRIES is ..."); a
    # word counts when a successful cited result holds it ("marigold", "Devi Rao")
    stated = [v for v in values_in(facts.review.answer) if not holds(task, v)]
    found = "\n".join(c.quote for c in facts.cites if not _failed(facts, c.source))
    stated += [w for w in _WORD.findall(facts.review.answer) if holds(found, w)]
    stated = [v for v in stated if not holds(task, v)]
    if kind == "file_name":
        stated = [v for v in stated if _PATHLIKE.search(v)]
    if kind not in VALUE_KINDS or stated:
        return None
    named = {v for v in values_in(task) if _PATHLIKE.search(v)}
    for source in facts.cited():
        args = " ".join(str(v) for v in (source.args or {}).values())
        if source.failed and any(holds(args, n) for n in named):
            return None
    return Problem(
        "states_something",
        f"The task asks for a {str(kind).replace('_', ' ')}, and your answer states none: "
        "answer with it, from the results above or from a further step.",
    )


def cites_exist(facts: Facts) -> Problem | None:
    """Each cite names a source of this task and quotes what that source holds."""
    for cite in facts.cites:
        source = facts.sources.get(cite.source)
        if source is None:
            return Problem(
                "cites_exist",
                f"Your answer cites {cite.source!r}, which is no result of this task: cite a "
                "result's source id, task or context.",
            )
        if not occurs_in(cite.quote, source):
            return Problem(
                "cites_exist",
                f"The quote {cite.quote[:80]!r} is not in {cite.source}: quote its text exactly.",
            )
    return None


def grounded(facts: Facts) -> Problem | None:
    """Every value the answer states occurs in a quote it cites (or in the task).

    A question of general knowledge (so declared, no tool called, and no file of the
    workspace named in the task) has nothing to cite.
    """
    quotes = "\n".join(c.quote for c in facts.cites if c.source in facts.sources)
    task = facts.sources["task"].text if "task" in facts.sources else ""
    # a value the user gave is no claim of the answer (a change made: actions_done)
    missing = [
        v for v in values_in(facts.review.answer) if not holds(quotes, v) and not holds(task, v)
    ]
    if not missing or knowledge(facts):
        return None
    shown = ", ".join(missing[:3])
    return Problem(
        "grounded",
        f"{shown} appears in no quote your answer cites: cite the result line that holds it, "
        "or get it with a tool first.",
    )


def knowledge(facts: Facts) -> bool:
    """Whether the task is a question of general knowledge (nothing of it to look up)."""
    if facts.declared.get("answer") != "general_knowledge" or facts.calls():
        return False
    task = facts.sources["task"].text if "task" in facts.sources else ""
    workspace = facts.review.workspace
    named = [v for v in values_in(task) if _PATHLIKE.search(v)]
    return not any((workspace / v).exists() or any(workspace.rglob(v)) for v in named)


_IDENTIFIER = re.compile(r"\b(?:[A-Za-z]+_[A-Za-z0-9_]+|[a-z]+[A-Z]\w*|[A-Z][A-Z0-9]{2,})\b")


def on_topic(facts: Facts) -> Problem | None:
    """The cites touch what the task names.

    A quote holds one of the task's values or names, or a cited call was made with one
    (the file the task asks about, read). A line that holds the answer's value but nothing
    the task asks about (a file name in a listing, for "which file defines f") shows that
    the value exists, not that it answers.
    """
    task = facts.sources["task"].text if "task" in facts.sources else ""
    named = set(values_in(task)) | set(_IDENTIFIER.findall(task))
    cited = [c for c in facts.cites if c.source in facts.sources and c.source != "task"]
    if not named or not cited or knowledge(facts):
        return None
    for cite in cited:
        args = " ".join(str(v) for v in (facts.sources[cite.source].args or {}).values())
        if any(holds(cite.quote, n) or holds(args, n) for n in named):
            return None
    shown = ", ".join(sorted(named)[:3])
    return Problem(
        "on_topic",
        f"The lines you cite say nothing of what the task asks about ({shown}): find the "
        "lines that do with a tool, and cite them.",
    )


COUNTING_ARTIFACTS = frozenset({"computation", "run", "listing", "search"})
"""Results whose numbers a tool counted or computed (a listing's files, a search's hits),
as their typed artifacts say: a count cited from them was not counted by reading."""


def computed(facts: Facts) -> Problem | None:
    """A count, total, extreme or date difference comes from a computation or a run."""
    if facts.declared.get("answer") not in COMPUTED_KINDS:
        return None
    for source in facts.cited():
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
        "run, not from reading: compute it with a tool, then cite that result.",
        tools_allowed=tools or None,
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
    """A file the answer names exists, unless a failed call it cites says otherwise."""
    workspace = facts.review.workspace
    for value in values_in(facts.review.answer):
        if not _PATHLIKE.search(value) or "@" in value or "://" in value:
            continue
        name = value.strip("/")
        if (workspace / name).exists() or any(workspace.rglob(name.split("/")[-1])):
            continue
        if any(holds(c.quote, value) for c in facts.cites):
            continue  # said of the file with a line that names it: "it does not exist"
        return Problem(
            "files_exist",
            f"{value} is not a file of the workspace: name the file that holds the answer, "
            "or say that it does not exist.",
        )
    return None


def failure_owned(facts: Facts) -> Problem | None:
    """The last run's failure is not hidden: an answer after a failed run cites it."""
    runs = [s for s in facts.calls() if facts.meta(s).get("runs_code")]
    if not runs or not runs[-1].failed or runs[-1] in facts.cited():
        return None
    return Problem(
        "failure_owned",
        "Your last run failed: fix the cause and run it again, or answer that it failed, "
        "citing its output.",
    )


CHECKS: tuple[Callable[[Facts], Problem | None], ...] = (
    not_an_answer,
    actions_done,
    failure_owned,
    states_something,
    cites_exist,
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


__all__ = ["CHECKS", "Facts", "holds", "review", "values_in"]
