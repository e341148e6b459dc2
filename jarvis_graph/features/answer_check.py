"""The answer check: before a task completes, its answer is compared with the tools' evidence.

Small models end tasks with answers nothing supports: a number no tool returned, "I fixed
the file" when no tool wrote anything, a file said to be created that is not on disk. The
``check_answer`` node of the agent graph runs :func:`problems` on the final answer; a
failed check goes back to the model (``answer_check_retries`` times), and a run that
still fails ends with status ``unverified`` instead of ``completed``.

The rules are plain and general (no task wording is special):

- **Numbers**: every number of the answer must occur in the evidence: the task and
  everything the user said on the thread, attached context, and every tool result (a failed
  one too: "the file does not exist" is evidence).
- **Actions**: a task that asks to run something needs a call of a tool that runs code; one
  that asks to write, create, fix or change something needs a call that edits files or runs
  code; "remember" needs a memory save. Asked is an imperative clause ("Fix the typo, then
  run it", "Could you create ...").
- **Files**: a file the answer says it wrote or created must exist in the workspace.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage

from jarvis_graph.features.base import Feature, RunSetup
from jarvis_graph.state import CHECK_NAME, CORRECTION_NAME, is_task_message

LOCAL_PLATFORMS = frozenset({"local"})
"""Platforms whose models are small enough that ``answer_check: auto`` turns the check on."""

_NUMBER = re.compile(r"(?<![\w.\-/])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?![\w/]|\.\d)")
_LIST_MARK = re.compile(r"^\s*\d+[.)]\s", re.MULTILINE)
_CLAUSES = re.compile(r"[.;!?\n]+|,?\s+(?:and\s+)?then\s+|,\s+and\s+|\s+and\s+(?=\w+\s)")
_LEAD = re.compile(
    r"^(?:(?:please|now|also|first|next|finally|and|then|just|kindly)\b[\s,]*"
    r"|(?:can|could|would|will)\s+you\s+(?:please\s+)?"
    r"|i\s+(?:want|need|would like)\s+you\s+to\s+)+",
    re.IGNORECASE,
)
_VERBS = {
    "run": {"run", "execute", "test", "launch", "invoke"},
    "write": {
        "write",
        "create",
        "save",
        "add",
        "append",
        "fix",
        "change",
        "edit",
        "update",
        "rename",
        "replace",
        "delete",
        "remove",
        "insert",
        "modify",
        "correct",
        "generate",
        "store",
    },  # fmt: skip
    "remember": {"remember", "memorize", "memorise", "note"},
}
_CLAIMED = re.compile(
    r"\b(?:created|wrote|written|saved|generated)\b[^.\n]*?`?([\w./-]+\.[A-Za-z0-9]{1,5})\b`?",
    re.IGNORECASE,
)


class AnswerCheck(Feature):
    """Adds nothing to the prompt or the tools: it turns the ``check_answer`` node on."""

    name = "answer_check"
    state_keys = ("answer_problems",)
    settings = ("answer_check", "answer_check_retries")

    def enabled(self, setup: RunSetup) -> bool:
        """``rules``: always; ``auto``: for models of the local platform; ``off``: never."""
        mode = setup.settings.answer_check
        if mode != "auto":
            return mode == "rules"
        # deferred: resolving the platform reads the model spec only, no provider import
        from jarvis_graph.platforms.registry import resolve_platform

        return resolve_platform(setup.settings.model_for("normal")) in LOCAL_PLATFORMS


@dataclass(frozen=True)
class Evidence:
    """What a task's answer may rest on."""

    text: str
    """Everything the user said on the thread, the attached context and every tool result."""
    calls: list[tuple[str, dict[str, Any]]]
    """Tool calls of this task that ran (name and metadata of the tool), in order."""


def evidence_of(messages: list[AnyMessage], metadata: dict[str, dict[str, Any]]) -> Evidence:
    """The evidence for the latest task: text of the whole thread, calls since the task."""
    texts: list[str] = []
    calls: list[tuple[str, dict[str, Any]]] = []
    for message in messages:
        if getattr(message, "name", None) in (CHECK_NAME, CORRECTION_NAME):
            continue  # the run's own notices: a number they quote is not evidence
        if isinstance(message, HumanMessage | ToolMessage):
            texts.append(str(message.text))
        if is_task_message(message):
            calls = []
        elif isinstance(message, ToolMessage) and not str(message.text).startswith("Not run"):
            name = message.name or ""
            calls.append((name, metadata.get(name, {})))
        elif isinstance(message, AIMessage):
            # The arguments a call was made with are the model's own, but a value the model
            # wrote into a file or a script is what that file now holds.
            texts.extend(str(c["args"]) for c in message.tool_calls)
    return Evidence("\n".join(texts), calls)


def problems(answer: str, task: str, evidence: Evidence, workspace: Path) -> list[str]:
    """What in ``answer`` the evidence does not support (empty: the answer passes)."""
    if not answer.strip():
        return ["the answer is empty"]
    if _repeats_task(answer, task):
        return ["the answer repeats the task instead of answering it"]
    found = _unsupported_numbers(answer, evidence.text)
    found += _actions_not_done(task, evidence.calls)
    found += _files_not_written(answer, workspace)
    return found


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def _repeats_task(answer: str, task: str) -> bool:
    """The answer holds the task's words in order (a small model copying the prompt)."""
    words = _words(task)
    return len(words) >= 4 and " ".join(words) in " ".join(_words(answer))


def _numbers(text: str) -> set[float]:
    return {float(n.replace(",", "")) for n in _NUMBER.findall(text)}


def _unsupported_numbers(answer: str, evidence: str) -> list[str]:
    known = _numbers(evidence)
    missing = sorted(n for n in _numbers(_LIST_MARK.sub("", answer)) if n not in known)
    if not missing:
        return []
    shown = ", ".join(f"{n:g}" for n in missing[:5])
    several = len(missing) > 1
    return [
        f"the number{'s' if several else ''} {shown} appear{'' if several else 's'} in no tool "
        "result: look it up or compute it with a tool, or leave it out"
    ]


def asked_actions(task: str) -> list[str]:
    """The kinds of action (``run``, ``write``, ``remember``) the task asks for, in order."""
    kinds: list[str] = []
    for clause in _CLAUSES.split(task):
        words = _LEAD.sub("", clause.strip()).split()
        verb = words[0].lower().strip(",:`'\"") if words else ""
        for kind, verbs in _VERBS.items():
            if verb in verbs and kind not in kinds:
                kinds.append(kind)
    return kinds


def _does(kind: str, name: str, meta: dict[str, Any]) -> bool:
    runs = bool(meta.get("runs_code"))
    if kind == "run":
        return runs
    if kind == "write":
        return runs or bool(meta.get("edits_files"))
    return bool(meta.get("saves_memory"))


_ASKED = {
    "run": "to run something, but no tool ran anything",
    "write": "to write or change something, but no tool wrote a file or ran a command",
    "remember": "to remember something, but nothing was saved to memory",
}


def _actions_not_done(task: str, calls: list[tuple[str, dict[str, Any]]]) -> list[str]:
    return [
        f"the task asks {_ASKED[kind]}: do it with a tool, then answer"
        for kind in asked_actions(task)
        if not any(_does(kind, name, meta) for name, meta in calls)
    ]


def _files_not_written(answer: str, workspace: Path) -> list[str]:
    missing = []
    for path in dict.fromkeys(_CLAIMED.findall(answer)):
        target = (workspace / path).resolve()
        if target.is_relative_to(workspace.resolve()) and not target.exists():
            missing.append(path)
    return [
        f"the answer says {p} was written, but there is no {p} in the workspace" for p in missing
    ]
