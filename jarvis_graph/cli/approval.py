r"""The confirm prompt: what a tool call will do, shown so that what is approved is what runs.

A call whose arguments fit on the line is shown whole, as before. A longer one is shown
argument by argument: each short argument whole, each long one as its head and its tail
(the last lines of a script are where a command hides), with how much is hidden between
and the ``v`` key that prints the whole call. The files a call writes are always shown
whole, and a write into Jarvis' own files (``protected``, see
:mod:`jarvis_graph.tools.protected`) is asked about a second time, naming the paths.

Everything shown is escaped: control and direction-changing characters appear as
``\x1b``, ``\u202e``, so the text on the screen is the text that runs.
"""

from __future__ import annotations

import json
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.markup import escape

CONFIRM_PROMPT = "[a]pprove, [e]dit arguments, [r]eject? [a] "  # shown as is (no markup)
CONFIRM_PROMPT_HIDDEN = "[a]pprove, [e]dit arguments, [r]eject, [v]iew all? [a] "
LINE_LIMIT = 400  # a call whose JSON is at most this long is shown whole on the confirm line
ARG_LIMIT = 600  # an argument up to this long (and ARG_LINES lines) is shown whole
ARG_LINES = 12
HEAD_CHARS, HEAD_LINES = 240, 4  # of a longer argument: its first lines...
TAIL_CHARS, TAIL_LINES = 400, 6  # ...and its last ones, which run last
_ESCAPED = {"Cc", "Cf", "Zl", "Zp", "Co", "Cs"}


@dataclass
class Shown:
    """The lines that show a confirm request, and how many characters they leave out."""

    lines: list[str] = field(default_factory=list)
    hidden: int = 0


def shown_text(text: str) -> str:
    r"""``text`` with control, format and separator characters written as escapes.

    Newlines are kept (the caller splits on them); a tab is shown as ``\t``.
    """
    out = []
    for char in text:
        if char == "\n" or unicodedata.category(char) not in _ESCAPED:
            out.append(char)
        elif char == "\t":
            out.append("\\t")
        else:
            code = ord(char)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
    return "".join(out)


def show_request(request: dict[str, Any]) -> Shown:
    """The confirm request as lines for the terminal (plain text, already escaped)."""
    where = f" (step {request['step']} of chain {request['chain']})" if "chain" in request else ""
    title = shown_text(f"{request['name']}{where}")
    args = request.get("args")
    whole = json.dumps(args, ensure_ascii=False, default=str)
    shown = Shown()
    if len(whole) <= LINE_LIMIT:
        shown.lines.append(f"confirm {title} {shown_text(whole)}")
    else:
        shown.lines.append(f"confirm {title}")
    shown.lines += [f"  writes: {shown_text(t)}" for t in request.get("targets") or []]
    if len(whole) > LINE_LIMIT:
        items = args.items() if isinstance(args, dict) else [("arguments", args)]
        for key, value in items:
            shown.hidden += _show_argument(shown.lines, shown_text(str(key)), _as_text(value))
    return shown


def show_whole_request(request: dict[str, Any]) -> list[str]:
    """Every argument of the request in full (escaped), for the ``v`` key."""
    args = request.get("args")
    items = args.items() if isinstance(args, dict) else [("arguments", args)]
    lines = [f"── the whole call to {shown_text(str(request['name']))} ──"]
    for key, value in items:
        lines.append(f"  {shown_text(str(key))}:")
        lines += [f"    {line}" for line in shown_text(_as_text(value)).split("\n")]
    lines.append("── end of the call ──")
    return lines


def confirm(request: dict[str, Any], console: Console) -> dict[str, Any]:
    """Ask the user about one confirm request; the decision for ``confirm_tools``."""
    shown = show_request(request)
    for line in shown.lines:
        console.print(line, markup=False, highlight=False)
    prompt = CONFIRM_PROMPT_HIDDEN if shown.hidden else CONFIRM_PROMPT
    while True:
        choice = console.input(prompt, markup=False).strip().lower()
        if choice in ("v", "view"):
            for line in show_whole_request(request):
                console.print(line, markup=False, highlight=False)
            continue
        if choice in ("r", "reject", "n", "no"):
            return {"action": "reject", "reason": console.input("reason (optional): ").strip()}
        decision = _approve_or_edit(choice, console)
        if decision is not None:
            return _allow_protected(request, decision, console)


def _approve_or_edit(choice: str, console: Console) -> dict[str, Any] | None:
    """The decision for an approve or edit answer; ``None`` to ask again."""
    if choice in ("", "a", "approve", "y", "yes"):
        return {"action": "approve"}
    if choice not in ("e", "edit"):
        return None
    raw = console.input("new arguments as JSON: ").strip()
    try:
        args = json.loads(raw)
    except json.JSONDecodeError as exc:
        console.print(f"[red]not valid JSON ({escape(str(exc))}); try again[/]")
        return None
    if not isinstance(args, dict):
        console.print("[red]arguments must be a JSON object; try again[/]")
        return None
    return {"action": "edit", "args": args}


def _allow_protected(
    request: dict[str, Any], decision: dict[str, Any], console: Console
) -> dict[str, Any]:
    """Ask again, naming them, before a call writes Jarvis' own files.

    A yes to the call is not a yes to the path: its content may be long, the path not
    looked at, and a write there changes every later session (settings, MCP commands,
    tools). Only a typed ``yes`` allows it.
    """
    protected = [str(p) for p in request.get("protected") or []]
    if not protected:
        return decision
    named = ", ".join(shown_text(p) for p in protected)
    console.print(
        f"⚠ this call writes {named}: Jarvis' own settings, tools and memories, read by "
        "every later session (a change there can run commands in them).",
        markup=False,
        highlight=False,
    )
    answer = console.input(f'allow writing {named}? type "yes" to allow: ', markup=False)
    if answer.strip().lower() != "yes":
        return {"action": "reject", "reason": f"the user did not allow writing {named}"}
    return {**decision, "allow_protected": protected}


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _show_argument(lines: list[str], key: str, value: str) -> int:
    """Add the lines of one argument; the number of characters left out."""
    if len(value) <= ARG_LIMIT and value.count("\n") < ARG_LINES:
        if "\n" not in value:
            lines.append(f"  {key}: {shown_text(value)}")
        else:
            lines.append(f"  {key}:")
            lines += [f"    {line}" for line in shown_text(value).split("\n")]
        return 0
    head_end, tail_start = _head_end(value), _tail_start(value)
    tail_start = max(tail_start, head_end)
    hidden = value[head_end:tail_start]
    count = hidden.strip("\n").count("\n") + 1 if hidden.strip("\n") else 0
    head, tail = value[:head_end].removesuffix("\n"), value[tail_start:].removeprefix("\n")
    lines.append(f"  {key}: ({len(value):,} characters, {value.count(chr(10)) + 1:,} lines)")
    lines += [f"    {line}" for line in shown_text(head).split("\n")] if head else []
    lines.append(
        f"    … {len(hidden):,} more characters ({count:,} line{'' if count == 1 else 's'}) "
        "hidden — press v to view all"
    )
    lines += [f"    {line}" for line in shown_text(tail).split("\n")] if tail else []
    return len(hidden)


def _head_end(text: str) -> int:
    """Where the shown head ends: whole first lines within the limits, or part of the first."""
    end = 0
    for n, line in enumerate(text.split("\n")):
        if n == HEAD_LINES or end + len(line) > HEAD_CHARS:
            break
        end += len(line) + 1
    return min(end, len(text)) if end else min(HEAD_CHARS, len(text))


def _tail_start(text: str) -> int:
    """Where the shown tail starts: whole last lines within the limits, or the last line's end."""
    start = len(text)
    for n, line in enumerate(reversed(text.split("\n"))):
        if n == TAIL_LINES or len(text) - start + len(line) > TAIL_CHARS:
            break
        start -= len(line) + (1 if n else 0)
    if start == len(text):  # the last line alone is longer than the limit: its end
        return max(len(text) - TAIL_CHARS, 0)
    return start
