"""What a task's answer may rest on: the thread's content, the counts tools add, the calls."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage

from jarvis_graph.messages import refused_call
from jarvis_graph.platforms.local_protocol import looks_failed
from jarvis_graph.state import CHECK_NAME, CONTEXT_NAME, CORRECTION_NAME, is_task_message

_LINE_COLUMN = re.compile(r"^ *\d+ \| ", re.MULTILINE)


@dataclass(frozen=True)
class Call:
    """One tool call of the task that ran, with its result."""

    name: str
    meta: dict[str, Any]
    """The tool's metadata (``runs_code``, ``edits_files``, ``saves_memory``)."""
    result: str
    failed: bool
    args: dict[str, Any] = field(default_factory=dict)
    """The arguments the model gave."""


@dataclass(frozen=True)
class Evidence:
    """What a task's answer may rest on."""

    text: str
    """What the user said on the thread, the attached files and every tool result: their
    content, without the counts the tools add (see :attr:`counts`)."""
    calls: list[Call]
    """Tool calls of this task that ran, in order."""
    counts: str = ""
    """The lines the tools add about what they show (``a.py (lines 1-9 of 9)``, ``7 files
    under docs``): they support a count, not a value. The sizes the attached context
    shows (``The workspace holds 2 files``, ``config.toml (4 lines)``) support neither:
    those files are attached for being small, not for being asked about."""
    computed: str = ""
    """What was counted or computed rather than read: :attr:`counts`, the output of tools
    that compute or run code, and what the user said."""
    notices: str = ""
    """What the run itself told the model since the task (check and correction notices,
    refused calls): an answer that copies them answers nothing."""
    looked: bool = False
    """Whether any tool result is on the thread (of this task or an earlier one)."""


def evidence_of(messages: list[AnyMessage], metadata: dict[str, dict[str, Any]]) -> Evidence:
    """The evidence for the latest task: text of the whole thread, calls since the task.

    Not evidence: the run's own notices, refused calls (their text quotes the model's own
    reply), what a failed call quotes of its own arguments, and the line-number column of
    file listings.
    """
    texts: list[str] = []
    counts: list[str] = []
    computed: list[str] = []
    notices: list[str] = []
    calls: list[Call] = []
    looked = False
    asked: dict[str, Any] = {}
    for message in messages:
        if is_task_message(message):
            calls, notices = [], []
        if getattr(message, "name", None) in (CHECK_NAME, CORRECTION_NAME):
            notices.append(str(message.text))
            continue  # the run's own notices: a number they quote is not evidence
        if isinstance(message, AIMessage):
            asked.update({c["id"] or "": c for c in message.tool_calls})
        elif isinstance(message, ToolMessage) and refused_call(str(message.text)):
            notices.append(str(message.text))
        elif isinstance(message, ToolMessage):
            name, text = message.name or "", _LINE_COLUMN.sub("", str(message.text))
            meta = metadata.get(name, {})
            failed = message.status == "error" or looks_failed(text)
            made = asked.get(message.tool_call_id)
            args = made["args"] if made and isinstance(made.get("args"), dict) else {}
            calls.append(Call(name, meta, text, failed, args))
            looked = True
            content, count = _split_counts(text)
            texts.append(_without_echoes(content, args) if failed else content)
            counts.append(count)
            if (meta.get("computes") and not failed) or (
                meta.get("runs_code") and not COULD_NOT_START.search(text)
            ):
                computed.append(text)  # a run that failed may have counted; one that never
                # started, or a computation that failed, counted nothing ("line 1" of bash)
            if made and not failed and (meta.get("edits_files") or meta.get("runs_code")):
                # The arguments are the model's own, but a value it wrote into a file or a
                # script that ran is what that file now holds.
                texts.append(str(made["args"]))
        elif isinstance(message, HumanMessage):
            content, count = _split_counts(str(message.text))
            texts.append(content)
            # The attached context's counts ("config.toml (4 lines)") count nothing the task
            # asked: the files are attached because they are small (a count is counted).
            if getattr(message, "name", None) != CONTEXT_NAME:
                counts.append(count)
                computed.append(content)  # what the user says counts as given
    count_text = "\n".join(c for c in counts if c)
    return Evidence(
        "\n".join(texts),
        calls,
        count_text,
        "\n".join([count_text, *computed]),
        "\n".join(notices),
        looked,
    )


COULD_NOT_START = re.compile(
    r"^exit code: 12[67]\b|command not found|can't open file|cannot execute|Permission denied"
    r"|^bash: -c: line \d+: syntax error",
    re.MULTILINE,
)
"""A run whose program never started: no such command, file or permission, or a command
line bash could not parse."""


def _without_echoes(text: str, args: dict[str, Any]) -> str:
    """A failed call's result without the model's own arguments it quotes back.

    ``no matches for 'TODO' under app/format.py`` holds no TODO line of the files, and
    ``len(order) == 10 failed: unknown name`` no 10 of the data: the model wrote both.
    """
    for value in args.values():
        if isinstance(value, str) and len(value.strip()) >= 2:
            # as the tool quotes it (``no matches for 'TODO\\(.*\\)'``: a repr), then as is
            text = text.replace(repr(value), " ").replace(value, " ")
    return text


_FILES_UNDER = r"\d+ files? under .*"
"""list_files' count line: how many files a listing holds."""
_LINES_OF = r".+ \(lines \d+-\d+ of \d+[^)]*\)"
"""read_code's count line: which lines of how many a read shows."""
_COUNT_LINE = re.compile(
    rf"^(?:{_LINES_OF}"  # read_code
    rf"|{_FILES_UNDER}"  # list_files
    r"|\d+ matching lines? in \d+ files?:"  # search_files
    r"|\[\d+ more (?:lines|matches)?.*\]"  # a cut listing
    r"|--- .* ---|The workspace holds \d+ files?:)$",  # attached context
    re.MULTILINE,
)


_POSITIONS = re.compile(r"lines \d+-\d+ (?=of )|start_line=\d+|^\[\d+ more .*\]$", re.MULTILINE)
"""Line positions inside count lines, and a cut listing's note: where a listing starts and
how much of it is not shown count nothing a task asks ("[1 more lines]" answered "how many
orders are shipped?")."""


FILE_COUNT_LINE = re.compile(rf"^{_FILES_UNDER}\n?", re.MULTILINE)
"""A count line of files among :attr:`Evidence.counts` (list_files)."""
LINE_COUNT_LINE = re.compile(r"^.+ \(of \d+[^)]*\)\n?", re.MULTILINE)
"""A file's count of lines among :attr:`Evidence.counts`: ``_LINES_OF`` as ``_POSITIONS``
leaves it (``src/a.py (of 40 lines)``)."""


def _split_counts(text: str) -> tuple[str, str]:
    """``text`` without its count lines, and those lines (their line positions left out)."""
    counts = "\n".join(m.group(0) for m in _COUNT_LINE.finditer(text))
    return _COUNT_LINE.sub("", text), _POSITIONS.sub("", counts)
