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

import hashlib
import re
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage

from jarvis_graph.features.base import Feature, RunSetup
from jarvis_graph.messages import refused_call
from jarvis_graph.platforms.local_protocol import looks_failed
from jarvis_graph.state import CHECK_NAME, CONTEXT_NAME, CORRECTION_NAME, is_task_message
from jarvis_graph.tools.attachments import FILE_NAME
from jarvis_graph.tools.builtin import walk_files

LOCAL_PLATFORMS = frozenset({"local"})
"""Platforms whose models are small enough that ``answer_check: auto`` turns the check on."""

_NUMBER = re.compile(r"(?<![\w.\-/])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?![\w/]|\.\d)")
_LIST_MARK = re.compile(r"^\s*\d+[.)]\s", re.MULTILINE)
_CLAUSES = re.compile(r"[.;:!?]+(?=\s|$)|\n+|,?\s+(?:and\s+)?then\s+|,\s+and\s+|\s+and\s+(?=\w+\s)")
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
        "set",
        "put",
        "rewrite",
        "overwrite",
        "patch",
        "refactor",
        "move",
        "copy",
        "increase",
        "decrease",
        "bump",
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
    state_keys = ("answer_problems", "workspace_digest")
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
class Call:
    """One tool call of the task that ran, with its result."""

    name: str
    meta: dict[str, Any]
    """The tool's metadata (``runs_code``, ``edits_files``, ``saves_memory``)."""
    result: str
    failed: bool


@dataclass(frozen=True)
class Evidence:
    """What a task's answer may rest on."""

    text: str
    """What the user said on the thread, the attached files and every tool result: their
    content, without the counts the tools add (see :attr:`counts`)."""
    calls: list[Call]
    """Tool calls of this task that ran, in order."""
    counts: str = ""
    """The lines the tools and the workspace context add about what they show (``a.py
    (lines 1-9 of 9)``, ``7 files under docs``, ``The workspace holds 2 files``): they
    support a count, not a value."""
    computed: str = ""
    """What was counted or computed rather than read: :attr:`counts`, the output of tools
    that compute or run code, and what the user said."""


def evidence_of(messages: list[AnyMessage], metadata: dict[str, dict[str, Any]]) -> Evidence:
    """The evidence for the latest task: text of the whole thread, calls since the task.

    Not evidence: the run's own notices, refused calls (their text quotes the model's own
    reply), and the line-number column of file listings.
    """
    texts: list[str] = []
    counts: list[str] = []
    computed: list[str] = []
    calls: list[Call] = []
    asked: dict[str, Any] = {}
    for message in messages:
        if getattr(message, "name", None) in (CHECK_NAME, CORRECTION_NAME):
            continue  # the run's own notices: a number they quote is not evidence
        if is_task_message(message):
            calls = []
        if isinstance(message, AIMessage):
            asked.update({c["id"] or "": c for c in message.tool_calls})
        elif isinstance(message, ToolMessage) and not refused_call(str(message.text)):
            name, text = message.name or "", _LINE_COLUMN.sub("", str(message.text))
            meta = metadata.get(name, {})
            failed = message.status == "error" or looks_failed(text)
            calls.append(Call(name, meta, text, failed))
            content, count = _split_counts(text)
            texts.append(content)
            counts.append(count)
            if meta.get("computes") or meta.get("runs_code"):
                computed.append(text)
            made = asked.get(message.tool_call_id)
            if made and not failed and (meta.get("edits_files") or meta.get("runs_code")):
                # The arguments are the model's own, but a value it wrote into a file or a
                # script that ran is what that file now holds.
                texts.append(str(made["args"]))
        elif isinstance(message, HumanMessage):
            content, count = _split_counts(str(message.text))
            texts.append(content)
            counts.append(count)
            if getattr(message, "name", None) != CONTEXT_NAME:
                computed.append(content)  # what the user says counts as given
    count_text = "\n".join(c for c in counts if c)
    return Evidence("\n".join(texts), calls, count_text, "\n".join([count_text, *computed]))


_COUNT_LINE = re.compile(
    r"^(?:.+ \(lines \d+-\d+ of \d+[^)]*\)"  # read_code
    r"|\d+ files? under .*"  # list_files
    r"|\d+ matching lines? in \d+ files?:"  # search_files
    r"|\[\d+ more (?:lines|matches)?.*\]"  # a cut listing
    r"|--- .* ---|The workspace holds \d+ files?:)$",  # attached context
    re.MULTILINE,
)


def _split_counts(text: str) -> tuple[str, str]:
    """``text`` without its count lines, and those lines."""
    return _COUNT_LINE.sub("", text), "\n".join(m.group(0) for m in _COUNT_LINE.finditer(text))


_AGGREGATE = re.compile(
    r"\b(?:how many|how much|sum|total|average|count|number of|largest|smallest|highest|"
    r"lowest|biggest|maximum|minimum)\b",
    re.IGNORECASE,
)
_LINE_COLUMN = re.compile(r"^ *\d+ \| ", re.MULTILINE)


def problems(
    answer: str,
    task: str,
    evidence: Evidence,
    workspace: Path,
    changed: bool | None = None,
    offered: dict[str, dict[str, Any]] | None = None,
) -> list[str]:
    """What in ``answer`` the evidence does not support (empty: the answer passes).

    ``changed`` says whether a workspace file changed since the task started (``None``:
    not known; then a call that edits files or runs code stands for a change).
    ``offered`` maps the run's tools to their metadata: the notices name the tools that
    do what is missing.
    """
    if not answer.strip():
        return ["the answer is empty"]
    if _repeats_task(answer, task):
        return ["the answer repeats the task instead of answering it"]
    counts = evidence.counts if _AGGREGATE.search(task) else ""
    found = _unsupported_numbers(answer, f"{evidence.text}\n{counts}")
    found = found or _aggregate_not_computed(answer, task, evidence, offered or {})
    found += _actions_not_done(task, evidence.calls, changed, offered or {})
    found += _failure_not_said(answer, task, evidence.calls)
    found += _files_missing(answer, task, workspace)
    found += _named_file_lacks_term(answer, task, workspace)
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


def _verb(clause: str) -> str:
    """The first word of an imperative clause, after "please", "could you" and the like."""
    words = _LEAD.sub("", clause.strip()).split()
    return words[0].lower().strip(",:`'\"") if words else ""


def _aggregate_not_computed(
    answer: str, task: str, evidence: Evidence, offered: dict[str, dict[str, Any]]
) -> list[str]:
    """A count, a total or an extreme that was read off a file instead of computed.

    For a question that asks how many, a sum, a total, an average or the largest or
    smallest value, a number of the answer must come from something that counted or
    computed: a tool's count line (``lines 1-9 of 9``, ``3 matching lines``), a
    computation, a script's output, or the user.
    """
    if not _AGGREGATE.search(task) or asked_actions(task):
        return []
    said = _numbers(_LIST_MARK.sub("", answer))
    if not said or said & _numbers(evidence.computed):
        return []
    tools = sorted(n for n, m in offered.items() if m.get("computes")) or sorted(
        n for n, m in offered.items() if m.get("runs_code")
    )
    how = f"with {' or '.join(tools)}" if tools else "with a tool"
    return [
        "the question asks for a count, a total or a largest or smallest value, but the "
        "answer's number was not counted or computed by any tool (it is only a value read "
        f"from a file): compute it {how}, then answer"
    ]


def asked_actions(task: str) -> list[str]:
    """The kinds of action (``run``, ``write``, ``remember``) the task asks for, in order."""
    kinds: list[str] = []
    for clause in _CLAUSES.split(task):
        verb = _verb(clause)
        for kind, verbs in _VERBS.items():
            if verb in verbs and kind not in kinds:
                kinds.append(kind)
    return kinds


def _does(kind: str, call: Call) -> bool:
    runs = bool(call.meta.get("runs_code"))
    if kind == "run":
        return runs
    if kind == "write":
        return runs or bool(call.meta.get("edits_files"))
    return bool(call.meta.get("saves_memory"))


_ASKED = {
    "run": "to run something, but no tool ran anything",
    "write": "to write or change something, but no tool wrote a file or ran a command",
    "remember": "to remember something, but nothing was saved to memory",
}


def _actions_not_done(
    task: str, calls: list[Call], changed: bool | None, offered: dict[str, dict[str, Any]]
) -> list[str]:
    found = []
    for kind in asked_actions(task):
        if kind == "write" and changed is False:
            found.append(
                "the task asks to write or change something, but no file in the workspace "
                f"changed: do it{_with(kind, offered)}, then answer"
            )
        elif not any(_does(kind, call) for call in calls if not call.failed or kind == "run"):
            found.append(f"the task asks {_ASKED[kind]}: do it{_with(kind, offered)}, then answer")
    return found


_DOER = {"run": "runs_code", "write": "edits_files", "remember": "saves_memory"}


def _with(kind: str, offered: dict[str, dict[str, Any]]) -> str:
    """The tools the run offers that do ``kind`` ("with a tool" when none is known)."""
    names = sorted(name for name, meta in offered.items() if meta.get(_DOER[kind]))
    return f" with {' or '.join(names)}" if names else " with a tool"


_OWNED_UP = re.compile(
    r"fail|error|exception|traceback|crash|exit (?:code|status)|non-?zero|\bnot\b|n't\b|"
    r"cannot|unable|broken|timed out|timeout|killed|missing|no such|invalid",
    re.IGNORECASE,
)
_NAME_TOKEN = re.compile(r"\b\w*(?:_\w+|[a-z][A-Z]\w*)\b")


def _failure_not_said(answer: str, task: str, calls: list[Call]) -> list[str]:
    """The task asked to run something, the last run failed, and the answer hides it.

    The answer owns up to the failure with a word that says so, or by naming something
    only the failed output names (a failing test, an exception).
    """
    if "run" not in asked_actions(task):
        return []
    runs = [call for call in calls if call.meta.get("runs_code")]
    if not runs or not runs[-1].failed or _OWNED_UP.search(answer):
        return []
    named = {t for t in _NAME_TOKEN.findall(answer) if len(t) >= 4}
    if any(t in runs[-1].result and t not in task for t in named):
        return []
    first = runs[-1].result.splitlines()[0] if runs[-1].result else "it failed"
    return [
        f"the last run failed ({first}), but the answer does not say so: fix the cause and "
        "run it again, or say that it failed and why"
    ]


_SAID_MISSING = re.compile(
    r"not (?:exist|found|present|there|in the workspace|available)|n't (?:exist|find|found)|"
    r"no such|missing|cannot find|can't find|could not find|no file|there is no|absent|"
    r"does not have|doesn't have",
    re.IGNORECASE,
)
_REMOVES = {"delete", "remove", "rename", "move"}


def _files_missing(answer: str, task: str, workspace: Path) -> list[str]:
    """Files that must be in the workspace and are not, or whose absence goes unsaid.

    A file the answer says it wrote, or a write clause of the task names (``... into
    count.txt``), must exist. A file a question names that does not exist must be said
    not to exist.
    """
    root = workspace.resolve()
    wanted = list(_CLAIMED.findall(answer))
    for clause in _CLAUSES.split(task):
        if _verb(clause) in _VERBS["write"] - _REMOVES:
            wanted += FILE_NAME.findall(clause)
    found = [
        f"the answer says {p} was written, but there is no {p} in the workspace"
        if p in _CLAIMED.findall(answer)
        else f"the task asks for {p} to be written, but there is no {p} in the workspace"
        for p in dict.fromkeys(wanted)
        if not _exists(root, p)
    ]
    if found or asked_actions(task):
        return found
    absent = [p for p in dict.fromkeys(FILE_NAME.findall(task)) if not _exists(root, p)]
    if absent and not _SAID_MISSING.search(answer):
        names = ", ".join(absent)
        return [
            f"the task names {names}, which is not in the workspace, and the answer does not "
            "say so: check with list_files, and if it does not exist, say that plainly"
        ]
    return []


def _exists(root: Path, rel: str) -> bool:
    """Whether ``rel`` names a file in the workspace: as a path, or by its name alone."""
    target = (root / rel).resolve()
    if not target.is_relative_to(root):
        return True  # outside: not this check's business (tools refuse such paths)
    if target.exists():
        return True
    if "/" in rel:
        return False
    for index, path in enumerate(walk_files(root, hidden=False, within=root)):
        if path.name == rel:
            return True
        if index >= MAX_WALK:
            return True  # too large to tell: give the benefit of the doubt
    return False


MAX_WALK = 5000
"""Files looked at to find a file by its name alone, or to fingerprint the workspace."""


def workspace_digest(workspace: Path) -> str | None:
    """A fingerprint of the workspace's files (paths, sizes, modification times).

    Hidden files and folders (``.jarvis``, ``.git``) and caches are left out. ``None``
    when the workspace holds more than :data:`MAX_WALK` files.
    """
    root = workspace.resolve()
    digest = hashlib.sha256()
    for index, path in enumerate(walk_files(root, hidden=False, within=root)):
        if index >= MAX_WALK:
            return None
        try:
            info = path.lstat()
        except OSError:
            continue
        digest.update(f"{path.relative_to(root)}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
    return digest.hexdigest()


_WHICH_FILE = re.compile(
    r"\b(?:which|what|in what)\s+(?:\w+\s+)?(?:file|module|script|log)s?\b", re.I
)
_TERM = re.compile(r"(?<![\w.])(?=\w*(?:\d|_|[a-z][A-Z]))\w{4,}(?!\w|\.\w)")


def _named_file_lacks_term(answer: str, task: str, workspace: Path) -> list[str]:
    """A "which file ..." answer whose files hold none of the question's own terms.

    ``Which file contains E4471?`` answered ``logs/api.log``: the file named must contain
    one of the identifiers the question quotes (words with a digit, an underscore or an
    inner capital, like ``E4471``, ``compute_checksum``, ``parseConfig``).
    """
    if not _WHICH_FILE.search(task):
        return []
    terms = [t for t in _TERM.findall(task) if not FILE_NAME.fullmatch(t)]
    root = workspace.resolve()
    named = [p for p in dict.fromkeys(FILE_NAME.findall(answer)) if p not in task]
    files = [f for p in named if (f := _find(root, p)) is not None]
    if not terms or not files:
        return []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")[:MAX_READ]
        except OSError:
            return []
        if any(term in text for term in terms):
            return []
    names, quoted = ", ".join(named), ", ".join(terms)
    return [
        f"the answer names {names}, but no such file contains {quoted}: search the files "
        "for it (search_files) and answer with the one that does"
    ]


MAX_READ = 1 << 20
"""Bytes of a named file read to look for the question's terms."""


def _find(root: Path, rel: str) -> Path | None:
    """The workspace file ``rel`` names (a path, or a name unique in the workspace)."""
    target = (root / rel).resolve()
    if not target.is_relative_to(root):
        return None
    if target.is_file():
        return target
    if "/" in rel:
        return None
    walk = islice(walk_files(root, hidden=False, within=root), MAX_WALK)
    found = [p for p in walk if p.name == rel]
    return found[0] if len(found) == 1 else None
