"""The answer check's rules: plain functions over the answer, the task and the evidence."""

from __future__ import annotations

import ast
import json
import re
import shlex
from collections import Counter
from dataclasses import replace
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from pathlib import Path, PurePosixPath
from typing import Any

from jarvis_graph.features.answer_check.evidence import (
    COULD_NOT_START,
    FILE_COUNT_LINE,
    LINE_COUNT_LINE,
    Call,
    Evidence,
)
from jarvis_graph.features.answer_check.workspace import exists, find_file, read_head
from jarvis_graph.platforms.local_protocol import REJECTED_ANSWER
from jarvis_graph.tools.attachments import FILE_NAME
from jarvis_graph.tools.builtin import INTERPRETERS
from jarvis_graph.tools.calculator import READ_AS_NOTE, single_call

_NUMBER = re.compile(r"(?<![\w.\-/])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?![\w/]|\.\d)")
_LIST_MARK = re.compile(r"^\s*\d+[.)]\s", re.MULTILINE)
_CLAUSES = re.compile(
    r"[.;:!?]+(?=\s|$)|\n+|,?\s+(?:and\s+)?then\s+|,\s+(?:and\s+)?|\s+and\s+(?=\w+\s)"
)
"""Where a task's clauses part: sentences, lines, commas ("fix it, run it"), "then" and
"and" before a word."""
_LEAD = re.compile(
    r"^(?:(?:please|now|also|first|next|finally|and|then|just|kindly)\b[\s,]*"
    r"|(?:can|could|would|will)\s+you\s+(?:please\s+)?"
    r"|i\s+(?:want|need|would like)\s+you\s+to\s+"
    # a place or a scope before the verb: "In config.json, set ...", "For the cache, ..."
    r"|(?:in|inside|within|for|on|under|at)\s[^,\n]{1,80},\s*)+",
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
        "raise",
        "lower",
        "switch",
        "turn",
        "toggle",
        "flip",
        "enable",
        "disable",
    },  # fmt: skip
    "remember": {"remember", "memorize", "memorise", "note"},
}
_CLAIMED = re.compile(
    r"\b(?:created|wrote|written|saved|generated)\b[^.\n]*?`?([\w./-]+\.[A-Za-z0-9]{1,5})\b`?",
    re.IGNORECASE,
)

_AGGREGATE = re.compile(
    r"\b(?:how many|how much|sum|total|average|count|number of|largest|smallest|highest|"
    r"lowest|biggest|maximum|minimum)\b",
    re.IGNORECASE,
)


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
    if _copies(answer, evidence.notices):
        return [
            "the answer copies a notice of the run instead of answering the task: do what "
            "the notice asks, then answer the task itself"
        ]
    if REJECTED_ANSWER in answer:
        return [
            "the answer copies a placeholder of the conversation instead of answering: "
            "answer the task itself"
        ]
    if _PLAN.match(answer) or _STEPS.search(answer[:_PLAN_CHARS]):
        return [
            "the answer describes steps to take instead of taking them: take the first step "
            "now with a tool, then answer from what it returns"
        ]
    if copied := _copied_failure(answer, evidence.calls):
        return [
            f"the answer copies the error of a failed {copied} call instead of answering: fix "
            "the call as the error says, or use another tool, then answer the task"
        ]
    evidence = _counts_of_the_noun(_relative_paths(evidence, workspace), task)
    asked = asked_actions(task)
    tools = offered or {}
    counts = evidence.counts if _AGGREGATE.search(task) else ""
    places = asked_places(task)
    rounded = _rounded(f"{evidence.text}\n{evidence.computed}", places)
    found = _unsupported_numbers(answer, f"{evidence.text}\n{counts}\n{rounded}")
    found = found or _more_places_than_asked(answer, task, places)
    found = found or _aggregate_not_computed(answer, task, asked, evidence, tools)
    found += _actions_not_done(
        asked,
        evidence.calls,
        changed,
        tools,
        _edit_example(task, workspace, tools),
        _run_example(task, workspace, tools),
    )
    found += (
        _failure_not_said(answer, task, asked, evidence.calls)
        or _own_code_failed(task, asked, evidence.calls)
        or _change_still_fails(answer, asked, evidence.calls)
    )
    found = found or _never_ran(answer, asked, evidence.calls)
    found = found or _placeholder_run(task, evidence.calls)
    found = found or _status_on_another_line(answer, task, evidence)
    found = found or _numbers_not_printed(answer, task, asked, evidence.calls)
    found = found or _nothing_printed(answer, task, asked, evidence.calls)
    found += _files_missing(answer, task, asked, workspace)
    found += _file_not_looked_at(answer, task, asked, evidence, workspace)
    found += _absent_from_a_narrow_look(answer, task, evidence, workspace)
    found += _shape_missing(answer, task, asked)
    found += _named_file_lacks_term(answer, task, workspace)
    found += _value_of_another_label(answer, task, workspace)
    found += _data_edit_problems(task, evidence.calls)
    found += _saved_something_else(task, asked, evidence.calls)
    found += _wrote_what_was_asked_about(task, asked, evidence.calls)
    found += _written_value_not_computed(task, asked, evidence, tools)
    found += _count_wider_than_task(answer, task, evidence, workspace)
    found += _count_of_the_pointer(answer, task, evidence, workspace)
    found += _count_with_part_words(answer, task, evidence.calls)
    found += _match_count_as_length(answer, task, evidence)
    found += _another_aggregate(answer, task, evidence.calls)
    found += _count_narrowed_by_the_model(answer, task, evidence.calls, workspace)
    found += _count_of_nothing(answer, task, evidence.calls, workspace)
    found += _count_of_json_keys(answer, task, evidence.calls, workspace)
    found = found or _answer_off_the_term(answer, task, asked, evidence)
    return found


_COUNTED_NOUN = re.compile(
    r"\b(?:how many|number of|count(?:s|ed|ing)?(?:\s+(?:the|all))?)\s+"
    r"(?:(?!(?:of|in|for|does|do|is|are)\b)[\w.-]+\s+){0,2}?(lines?|files?)\b"
    r"|\b(lines?|files?)\s+count\b",
    re.IGNORECASE,
)
"""What a count question counts, when it is lines or files ("how many Python files")."""
_OTHER_COUNTS = {"line": FILE_COUNT_LINE, "file": LINE_COUNT_LINE}
"""The count lines that answer no question about the key's noun."""


def _counts_of_the_noun(evidence: Evidence, task: str) -> Evidence:
    """``evidence`` without the count lines of the other noun than the question counts.

    "How many lines long is that file?" answered 1 from ``1 file under .: src/headers.py``:
    a count of files answers no question about lines, nor a file's line count one about
    files.
    """
    asked = _COUNTED_NOUN.search(task)
    if asked is None:
        return evidence
    other = _OTHER_COUNTS[(asked.group(1) or asked.group(2)).lower().rstrip("s")]
    return replace(
        evidence, counts=other.sub("", evidence.counts), computed=other.sub("", evidence.computed)
    )


def _relative_paths(evidence: Evidence, workspace: Path) -> Evidence:
    """``evidence`` with the workspace's absolute path taken out of the calls' arguments.

    A model that writes ``open('/tmp/w/auth.log')`` means the workspace's auth.log; the
    rules find the files a call works on by their names relative to the workspace.
    """
    prefixes = sorted({f"{workspace.absolute()}/", f"{workspace.resolve()}/"}, key=len)[::-1]

    def relative(value: Any) -> Any:
        if isinstance(value, str):
            for prefix in prefixes:
                value = value.replace(prefix, "")
            return value
        if isinstance(value, dict):
            return {k: relative(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [relative(v) for v in value]
        return value

    calls = [replace(call, args=relative(call.args)) for call in evidence.calls]
    return replace(evidence, calls=calls)


_PLAN = re.compile(
    r"\s*(?:(?:to|in order to)\s[^.\n]{0,160}?,\s*)?(?:first,?\s*)?"
    r"(?:I(?:'ll| will| need to| must| should| am going to| would need to| can)|let me|let's"
    r"|we(?:'ll| will| need to| can))\s+(?:\w+\s+){0,3}?"
    r"(?:follow|take|use|call|read|open|search|run|check|look|list|find|create|write|"
    r"retrieve|locate|examine|inspect|execute|start|begin|first)\b",
    re.IGNORECASE,
)
"""An answer that opens with what the model is going to do ("To find X, I'll follow these
steps: 1. Read ...", "Let me check the file")."""
_STEPS = re.compile(
    r"\bstep[- ]by[- ]step\b|\bhere(?:'s| is) (?:how|the (?:plan|process|steps?))\b"
    r"|\bfollow(?:ing)? these steps\b",
    re.IGNORECASE,
)
_PLAN_CHARS = 300


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def _repeats_task(answer: str, task: str) -> bool:
    """The answer holds the task's words in order (a small model copying the prompt)."""
    words = _words(task)
    return len(words) >= 4 and " ".join(words) in " ".join(_words(answer))


_COPY_WORDS = 8  # this many words in a row, as a notice has them, make a copy


def _copies(answer: str, notices: str) -> bool:
    """The answer holds a run of words of the run's own notices (a small model echoing)."""
    words = _words(answer)
    if len(words) < _COPY_WORDS or not notices:
        return False
    said = f" {' '.join(_words(notices))} "
    return any(
        f" {' '.join(words[i : i + _COPY_WORDS])} " in said
        for i in range(len(words) - _COPY_WORDS + 1)
    )


_SAYS_FAILED = re.compile(
    r"\bfail(?:s|ed|ing|ures?)?\b|\berrors?\b|\bexception\b|\btraceback\b|\bcrash"
    r"|\bexit (?:code|status):? *[1-9]|\b(?:do|does|did)(?: not|n't) pass\b",
    re.IGNORECASE,
)


def grounded(answer: str, task: str, evidence: Evidence) -> bool:
    """Whether the answer says something the evidence shows beyond the task.

    That a thing is missing or failed, or a number or a dotted value a tool result or the
    thread holds (the task's own aside). Passing the check is not enough to prefer an
    answer: an apology, or a placeholder of the prompt, holds nothing to check.
    """
    if _SAID_MISSING.search(answer) or _SAYS_FAILED.search(answer):
        return True
    if (_answer_numbers(answer) - _numbers(task)) & _numbers(evidence.text):
        return True
    return any(v in evidence.text and v not in task for v in _DOTTED.findall(answer))


def _copied_failure(answer: str, calls: list[Call]) -> str:
    """The tool whose failed call's error the answer copies ("" when none).

    An error about the call itself (a computation that could not run, an edit that did
    not apply) answers nothing. A program's own output (a run that failed) can be the
    answer, and so can an error that says a file is not there.
    """
    if _SAID_MISSING.search(answer):
        return ""
    for call in calls:
        if call.failed and not call.meta.get("runs_code") and _copies(answer, call.result):
            return call.name
    return ""


def _numbers(text: str) -> set[float]:
    return {float(n.replace(",", "")) for n in _NUMBER.findall(text)}


def _answer_numbers(answer: str) -> set[float]:
    """The numbers an answer states (the marks of a numbered list are none)."""
    return _numbers(_LIST_MARK.sub("", answer))


_DOTTED = re.compile(r"(?<![\w.\-/])\d+(?:\.\d+){2,}(?![\w/]|\.\d)")
"""A value of three or more dotted numbers (an IP address, a version): one value, never a
number, so it must stand in the evidence as it is."""


def _numbers_missing(answer: str, source: str) -> tuple[list[float | str], str]:
    """The answer's numbers and dotted values ``source`` does not hold; the first five as text."""
    known = _numbers(source)
    missing: list[float | str] = sorted(n for n in _answer_numbers(answer) if n not in known)
    values = set(_DOTTED.findall(source))
    missing += sorted(v for v in dict.fromkeys(_DOTTED.findall(answer)) if v not in values)
    return missing, ", ".join(n if isinstance(n, str) else f"{n:g}" for n in missing[:5])


def _unsupported_numbers(answer: str, evidence: str) -> list[str]:
    missing, shown = _numbers_missing(answer, evidence)
    if not missing:
        return []
    several = len(missing) > 1
    return [
        f"the number{'s' if several else ''} {shown} appear{'' if several else 's'} in no tool "
        "result: look it up or compute it with a tool, or leave it out"
    ]


_PLACES = re.compile(
    r"\b(?:to|with|at|in)\s+(?:(?:exactly|just|only)\s+)?"
    r"(?P<n>\d|zero|no|one|two|three|four|five|six)\s+"
    r"(?:decimal(?:\s+(?:places?|digits?|points?))?s?|digits?\s+after\s+the\s+(?:decimal\s+)?point)"
    r"|\bto\s+(?:the\s+)?nearest\s+(?P<whole>whole\s+number|integer)\b",
    re.IGNORECASE,
)
_PLACE_WORDS = {"zero": 0, "no": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


def asked_places(task: str) -> int | None:
    """How many decimal places the task asks a number to be given with (``None``: not said).

    "rounded to one decimal place", "with 2 decimals", "to the nearest whole number".
    """
    match = _PLACES.search(task)
    if match is None:
        return None
    if match.group("whole"):
        return 0
    n = match.group("n").lower()
    return int(n) if n.isdigit() else _PLACE_WORDS[n]


def _rounded(evidence: str, places: int | None) -> str:
    """The evidence's numbers rounded (half up) to the places the task asks for.

    A tool's 42.1648128 given as 42.2, as the task asked, invents nothing.
    """
    if places is None:
        return ""
    step = Decimal(1).scaleb(-places)
    values = []
    for text in _NUMBER.findall(evidence):
        if "." in text:
            try:
                value = Decimal(text.replace(",", "")).quantize(step, rounding=ROUND_HALF_UP)
            except InvalidOperation:  # more digits than a decimal context holds
                continue
            values.append(str(value))
    return " ".join(values)


def _places(number: str) -> int:
    return len(number.split(".", 1)[1]) if "." in number else 0


def _more_places_than_asked(answer: str, task: str, places: int | None) -> list[str]:
    """A number asked for to so many decimal places, and none given rounded so.

    Every number the answer states (beyond the task's own) has more places than asked.
    """
    if places is None:
        return []
    given = _numbers(task)
    stated = [
        n for n in _NUMBER.findall(_LIST_MARK.sub("", answer))
        if float(n.replace(",", "")) not in given
    ]  # fmt: skip
    if not stated or any(_places(n) <= places for n in stated):
        return []
    wanted = f"{places} decimal place{'' if places == 1 else 's'}" if places else "a whole number"
    return [
        f"the task asks for the number rounded to {wanted}, and the answer gives {stated[0]}: "
        f"give it rounded as asked (round(value, {places}) in a tool, or round it yourself)"
    ]


def _verb(clause: str) -> str:
    """The first word of an imperative clause, after "please", "could you" and the like."""
    words = _LEAD.sub("", clause.strip()).split()
    return words[0].lower().strip(",:`'\"") if words else ""


def _aggregate_not_computed(
    answer: str,
    task: str,
    asked: list[str],
    evidence: Evidence,
    offered: dict[str, dict[str, Any]],
) -> list[str]:
    """A count, a total or an extreme that was read off a file instead of computed.

    For a question that asks how many, a sum, a total, an average or the largest or
    smallest value, a number of the answer must come from something that counted or
    computed: a tool's count line (``lines 1-9 of 9``, ``3 matching lines``), a
    computation, a script's output, or the user.
    """
    if not _AGGREGATE.search(task) or asked:
        return []
    said = _answer_numbers(answer)
    if not said or said & _numbers(evidence.computed):
        return []
    wanted = asked_aggregate(task)
    example = next((x for c in evidence.calls if (x := _aggregate_example(c, wanted))), "")
    return [
        "the question asks for a count, a total or a largest or smallest value, but the "
        "answer's number was not counted or computed by any tool (it is only a value read "
        f"from a file): compute it{_compute_with(offered)}{example}, then answer"
    ]


_AGGREGATE_WORDS = {
    "max": re.compile(r"\b(?:largest|highest|biggest|greatest|maximum)\b", re.IGNORECASE),
    "min": re.compile(r"\b(?:smallest|lowest|minimum)\b", re.IGNORECASE),
    "sum": re.compile(r"\b(?:sum|total)\b", re.IGNORECASE),
}
_AGGREGATE_NAMES = {"max": "the largest value", "min": "the smallest value", "sum": "a total"}
_COUNTING = re.compile(r"\b(?:how many|count|number of)\b", re.IGNORECASE)


def _outer_aggregate(expression: str) -> tuple[str, str] | None:
    """The outermost ``sum``/``max``/``min`` call of an expression and its argument.

    ``("sum", "numbers.txt")`` for ``sum(numbers.txt)``; ``None`` for anything else (two
    arguments, ``sum(a) + 1``, a syntax error).
    """
    call = single_call(expression, _AGGREGATE_NAMES)
    inner = ast.get_source_segment(expression.strip(), call[1]) if call else None
    return (call[0], inner) if call and inner else None


def asked_aggregate(task: str) -> str | None:
    """``max``, ``min`` or ``sum``: the one aggregate the question asks for, if it is clear.

    "What is the largest number in it?" asks for ``max``. A question naming two (the sum
    of the largest ...) or counting ("the total number of lines") asks for none of them.
    """
    found = [name for name, words in _AGGREGATE_WORDS.items() if words.search(task)]
    if len(found) != 1 or (found == ["sum"] and _COUNTING.search(task)):
        return None
    return found[0]


def _aggregate_example(call: Call, wanted: str | None) -> str:
    """The notice's example for a computation with another aggregate than the one asked.

    `` (sum(numbers.txt) is a total, ...: for example compute(expression='max(numbers.txt)'))``,
    or empty when the call computed what was asked, or no one aggregate was asked.
    """
    expression = call.args.get("expression")
    if wanted is None or call.failed or not call.meta.get("computes"):
        return ""
    if not isinstance(expression, str):
        return ""
    outer = _outer_aggregate(expression)
    if outer is None or outer[0] == wanted:
        return ""
    fixed = f"{wanted}({outer[1]})"
    return (
        f" ({expression.strip()} is {_AGGREGATE_NAMES[outer[0]]}, the question asks "
        f"for {_AGGREGATE_NAMES[wanted]}: for example {call.name}(expression={fixed!r}))"
    )


_LITERAL = re.compile(r"'([^'\n]{2,120})'|\"([^\"\n]{2,120})\"")
_TOKEN = re.compile(r"[A-Za-z0-9_]+")
_REGEX_ESCAPE = re.compile(r"\\[A-Za-z]")


def _count_narrowed_by_the_model(
    answer: str, task: str, calls: list[Call], workspace: Path
) -> list[str]:
    """A count of the lines holding a text the model made narrower than the task's terms.

    "How many requests ended with a 504 status?" answered 1: the model counted the lines
    holding ``GET /api/orders 504``, words the task never says; three lines hold 504.
    Judged only where it can be shown: the count came from a computation or a run over
    one workspace file, a quoted text of it holds some of the task's words and others,
    and the file has more lines holding the task's words alone than lines holding it.
    """
    if not _COUNTING.search(task):
        return []
    said = _answer_numbers(answer)
    words = {w.lower() for w in _TOKEN.findall(task)}
    root = workspace.resolve()
    for call in calls:
        got = said & _result_numbers(call)
        counted = _counted_text(call, root) if got else None
        if counted is None:
            continue
        name, text, quoted = counted
        tokens = [t for t in _TOKEN.findall(_REGEX_ESCAPE.sub(" ", quoted)) if len(t) > 1]
        kept = [t for t in tokens if t.lower() in words]
        if kept and len(kept) < len(tokens):
            lines = text.splitlines()
            narrow = sum(quoted in line for line in lines)
            wide = sum(all(t in line for t in kept) for line in lines)
            if wide > narrow:
                return [
                    f"{min(got):g} counts the lines of {name} holding '{quoted}', but the "
                    f"task asks about {' '.join(kept)}: more lines of it hold that; count the "
                    "lines the task describes, then answer"
                ]
    return []


def _count_of_nothing(answer: str, task: str, calls: list[Call], workspace: Path) -> list[str]:
    """A count of 0 over a file whose lines hold the text counted.

    "How many orders in orders.csv have the status shipped?" answered 0, what
    ``len([l for l in open('orders.csv') if l.split(',')[2] == 'shipped'])`` gave: the
    status is the line's last field, which still ends with the newline. Judged only where
    it can be shown: the 0 came from a computation or a run over one workspace file whose
    code quotes one text, and lines of that file hold that text.
    """
    if not _COUNTING.search(task) or 0 not in _answer_numbers(answer):
        return []
    root = workspace.resolve()
    for call in calls:
        counted = _counted_text(call, root) if _call_value(call) == {0.0} else None
        if counted is None:
            continue
        name, text, quoted = counted
        if any(quoted in line for line in text.splitlines()):
            return [
                f"0 is what the code counted, but lines of {name} hold '{quoted}': read "
                f"{name} to see how its lines look (a line read from a file still ends with "
                "its newline), count them again, then answer"
            ]
    return []


def _count_of_json_keys(answer: str, task: str, calls: list[Call], workspace: Path) -> list[str]:
    """A count of a JSON object's top-level keys where the task asks about one key's entries.

    "Count the entries in the items list of inventory.json" answered 2, what
    ``len(json.load(open('inventory.json')))`` printed: the file is an object with two keys,
    ``items`` (17 entries) and ``archived``. Judged only where it can be shown: the number
    came from a computation or a run over one JSON file of the workspace whose top level is
    an object of that many keys, the task names one of its keys whose value is a list or an
    object of another size, and the code never quotes that key (``data['items']``).
    """
    if not _COUNTING.search(task):
        return []
    said = _answer_numbers(answer)
    root = workspace.resolve()
    for call in calls:
        code = _executed_code(call)
        if code is None:
            continue
        names = [n for n in dict.fromkeys(FILE_NAME.findall(code)) if n.endswith(".json")]
        path = find_file(root, names[0]) if len(names) == 1 else None
        text = read_head(path) if path else None
        try:
            data = json.loads(text) if text else None
        except ValueError:
            continue
        if not isinstance(data, dict) or float(len(data)) not in said & _call_value(call):
            continue
        for key, value in data.items():
            if (
                isinstance(value, list | dict)
                and len(value) != len(data)
                and re.search(rf"(?<![\w.-]){re.escape(key)}(?![\w-])", task, re.IGNORECASE)
                and not re.search(rf"[\"']{re.escape(key)}\\?[\"']", code)
            ):
                keys = ", ".join(data)
                return [
                    f"{len(data)} is the number of top-level keys of {names[0]} ({keys}): "
                    "len() of the whole loaded JSON counts its keys, but the task asks about "
                    f"the entries of its '{key}': count those (len(data['{key}'])), then answer"
                ]
    return []


def _executed_code(call: Call) -> str | None:
    """The text of the code a computation or a run executed (its arguments' strings).

    ``None`` for a call that failed or that neither computes nor runs code.
    """
    if call.failed or not (call.meta.get("computes") or call.meta.get("runs_code")):
        return None
    return _strings(call.args)


def _counted_text(call: Call, root: Path) -> tuple[str, str, str] | None:
    """``(file name, its text, quoted text)`` of a count of one text over one workspace file.

    ``None`` for any other call: not a computation or a run, another number of files.
    Code quoting two texts (``'a' in l or 'b' in l``) counts what no one text says.
    """
    code = _executed_code(call)
    if code is None:
        return None
    paths = {n: p for n in dict.fromkeys(FILE_NAME.findall(code)) if (p := find_file(root, n))}
    if len(paths) != 1:
        return None
    [(name, path)] = paths.items()
    text = read_head(path)
    literals = [q for q in _quoted(code) if not FILE_NAME.fullmatch(q.strip())]
    if not text or len(literals) != 1:
        return None
    return name, text, literals[0]


def _quoted(code: str) -> list[str]:
    """The texts code looks for in lines.

    In a Python expression, the strings compared (``'x' in line``, ``f == 'x'``) or searched
    for (``line.startswith('x')``), not a separator (``split(',')``) or a file name; in a
    shell command, the quoted texts.
    """
    try:
        tree = ast.parse(code.strip(), mode="eval")
    except SyntaxError:
        return [m.group(1) or m.group(2) for m in _LITERAL.finditer(code)]
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id)
            in _SEARCHES
        ):
            operands = list(node.args)
        else:
            continue
        found += [
            n.value for n in operands if isinstance(n, ast.Constant) and isinstance(n.value, str)
        ]
    return [text for text in found if text.strip()]


_SEARCHES = frozenset(
    {"startswith", "endswith", "count", "find", "search", "match", "findall", "fullmatch"}
)


_EXIT_LINE = re.compile(r"\Aexit code: -?\d+(?:\n|\Z)")


def _call_value(call: Call) -> set[float]:
    """The numbers of what a computation or a run gave (none of the expression's own).

    A computation's value after ``expression =``; a run's output after its exit code line.
    """
    result = call.result.split(READ_AS_NOTE)[0]
    if call.meta.get("computes"):  # "expression = value"
        result = result.rsplit(" = ", 1)[1] if " = " in result else ""
    return _numbers(_EXIT_LINE.sub("", result))


def _result_numbers(call: Call) -> set[float]:
    """The numbers of a call's result, without the calculator's note on its reading.

    ``= 256 (read as sum(float(x) for x in ...))``: the note's numbers are the
    expression's, not results.
    """
    return _numbers(call.result.split(READ_AS_NOTE)[0])


def _another_aggregate(answer: str, task: str, calls: list[Call]) -> list[str]:
    """A number computed with another aggregate than the question asks for.

    "What is the largest number in numbers.txt?" answered 558, what ``sum(numbers.txt)``
    returned. Judged only when the question asks for one aggregate and the answer's number
    is the result of a computation whose outermost call is another one.
    """
    wanted = asked_aggregate(task)
    said = _answer_numbers(answer)
    if wanted is None or not said:
        return []
    for call in calls:
        example = _aggregate_example(call, wanted)
        same = said & _result_numbers(call) if example else set()
        if same:
            return [f"{min(same):g} is not what the question asks for{example}"]
    return []


_USE_TO_RUN = re.compile(
    r"use\s+(?:(?:an?|the)\s+)?`?(?:python[\d.]*|bash|sh|zsh|node|deno|ruby|perl|php|go run|"
    r"cargo run|make|"
    r"pytest|npm|npx|java)\b",
    re.IGNORECASE,
)
"""A clause that asks to run code with an interpreter or a runner, by the verb "use" ("use
python3 to ...", "use a python3 -c one-liner to ...")."""


_ARITHMETIC = {"add": re.compile(r"add\s+(?:\w+\s+)?up\b", re.IGNORECASE)}
"""Verbs of writing that, in these phrases, compute: "add up", "add them up"."""


def _action_verb(clause: str) -> str:
    """The verb of an imperative clause as an action.

    "use python3 to ..." runs; "add up" computes, so it is no verb of action.
    """
    verb = _verb(clause)
    if verb == "use" and _USE_TO_RUN.match(_LEAD.sub("", clause.strip())):
        return "run"  # "use python3 to import it and print ..." runs code
    if verb in _ARITHMETIC and _ARITHMETIC[verb].match(_LEAD.sub("", clause.strip())):
        return ""  # "add up the amount column" sums; it writes nothing
    return verb


def asked_actions(task: str) -> list[str]:
    """The kinds of action (``run``, ``write``, ``remember``) the task asks for, in order."""
    kinds: list[str] = []
    for clause in _CLAUSES.split(task):
        verb = _action_verb(clause)
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
    asked: list[str],
    calls: list[Call],
    changed: bool | None,
    offered: dict[str, dict[str, Any]],
    example: str = "",
    run_example: str = "",
) -> list[str]:
    found = []
    for kind in asked:
        if kind == "write" and changed is False:
            # the example creates a new file: the tool to use is the one it shows (told
            # "edit_file or write_file", the 1.5B edited the file it had read instead)
            tools = " with write_file" if "example write_file" in example else _with(kind, offered)
            found.append(
                "the task asks to write or change something, but no file in the workspace "
                f"changed: do it{tools}, then answer{example}"
            )
        elif not any(_does(kind, call) for call in calls if not call.failed or kind == "run"):
            shown = run_example if kind == "run" else ""
            found.append(
                f"the task asks {_ASKED[kind]}: do it{_with(kind, offered)}, then answer{shown}"
            )
    return found


def action_problems(found: list[str]) -> list[str]:
    """The problems of ``found`` that are an action asked for and not done.

    Told back alone: what the action returns is what the answer is checked against next
    (asked both to run a command and to back its numbers, the 0.5B reached for compute
    and never ran the command).
    """
    return [p for p in found if p.startswith("the task asks to")]


_QUOTED_COMMAND = re.compile(r"`([^`\n]{2,200})`")
_RUNNER = re.compile(
    r"(?:python[\d.]*|bash|sh|node|deno|ruby|perl|php|go|cargo|make|pytest|npm|npx|java|"
    r"\./)\S*(?:\s|$)",
)


def _run_example(task: str, workspace: Path, offered: dict[str, dict[str, Any]]) -> str:
    """The call that runs the command the task quotes (`python3 report.py`), to copy.

    A command the user wrote between backticks that starts with an interpreter or a
    runner; else, when the task names exactly one script of the workspace (``.py``,
    ``.sh``, ...: ``INTERPRETERS``), that script run by its interpreter ("fix inventory.py,
    run it"). Only when ``execute_script`` is offered: small models answer "I ran it" or
    look at the files again instead of running what was asked.
    """
    if "execute_script" not in offered:
        return ""
    for quoted in _QUOTED_COMMAND.findall(task):
        command = quoted.strip()
        if _RUNNER.match(command + " "):
            return f", for example execute_script with {json.dumps({'script': command})}"
    if _QUOTED_COMMAND.search(task):
        return ""  # a command of another kind: not for a guess to replace
    root = workspace.resolve()
    scripts = [
        name
        for name in dict.fromkeys(FILE_NAME.findall(task))
        if PurePosixPath(name).suffix.lower() in INTERPRETERS and exists(root, name)
    ]
    if len(scripts) != 1 or _imports(task, scripts[0]):
        return ""  # none, or a module the task imports: running it as a script prints nothing
    command = f"{INTERPRETERS[PurePosixPath(scripts[0]).suffix.lower()]} {scripts[0]}"
    return f", for example execute_script with {json.dumps({'script': command})}"


_DOER = {"run": "runs_code", "write": "edits_files", "remember": "saves_memory"}


_CREATES = re.compile(r"\b(?:new|creat(?:e|es|ing)|make|write|save|store)\b", re.IGNORECASE)


def _edit_example(task: str, workspace: Path, offered: dict[str, dict[str, Any]]) -> str:
    """A call to fill in: write_file to create, or edit_file to change, the task's file.

    write_file for the one file the task names that is not there yet (when the task
    writes or creates: "into a new file named count.txt"), else edit_file on the one
    existing file it names. Small models describe the fix ("the typo is pritn instead of
    print") instead of making it; a call with the file already in place is what they copy.
    """
    root = workspace.resolve()
    names = list(dict.fromkeys(FILE_NAME.findall(task)))
    missing = [p for p in names if not exists(root, p)]
    if "write_file" in offered and len(missing) == 1 and _CREATES.search(task):
        # "write that count into a new file named count.txt": the file to create (a fix
        # of a file that is not there is no reason to create it)
        made = {"path": missing[0], "content": "<what the task asks to write>"}
        return f", for example write_file with {json.dumps(made)}"
    named = [p for p in names if p not in missing]
    if "edit_file" not in offered or len(named) != 1:
        return ""
    files = [{"path": named[0], "diffs": [{"search": "<its text now>", "replace": "<the fix>"}]}]
    return f", for example edit_file with {json.dumps({'files': files})}"


def _with(kind: str, offered: dict[str, dict[str, Any]]) -> str:
    """The tools the run offers that do ``kind`` ("with a tool" when none is known)."""
    return _with_tools(sorted(name for name, meta in offered.items() if meta.get(_DOER[kind])))


def _compute_with(offered: dict[str, dict[str, Any]]) -> str:
    """The run's tools that compute, else those that run code ("with a tool": none)."""
    computes = sorted(n for n, m in offered.items() if m.get("computes"))
    return _with_tools(computes or sorted(n for n, m in offered.items() if m.get("runs_code")))


def _with_tools(names: list[str]) -> str:
    return f" with {' or '.join(names)}" if names else " with a tool"


def _written_paths(call: Call) -> list[str]:
    """The paths a call of a tool that edits files wrote (``path``, or ``files[].path``)."""
    paths = [call.args.get("path")]
    files = call.args.get("files")
    if isinstance(files, list):
        paths += [f.get("path") for f in files if isinstance(f, dict)]
    return [p.strip() for p in paths if isinstance(p, str) and p.strip()]


def _wrote_what_was_asked_about(task: str, asked: list[str], calls: list[Call]) -> list[str]:
    """A task that changes nothing, about a file the run itself wrote.

    "What is the total in sales_2024.csv?" with no such file, answered after the model wrote
    a sales_2024.csv of its own: what the run wrote is not what the workspace held. A
    helper the task does not name (a script to count with) is not this.
    """
    if "write" in asked:
        return []
    mentioned = {name.lower() for name in FILE_NAME.findall(task)}
    for call in calls:
        if call.failed or not call.meta.get("edits_files"):
            continue
        for path in _written_paths(call):
            name = path.replace("\\", "/").removeprefix("./")
            if name.lower() in mentioned or name.rsplit("/", 1)[-1].lower() in mentioned:
                return [
                    f"the task asks about {name} and asks to change nothing, but this run "
                    f"wrote {name} itself ({call.name}): what the run wrote is not what the "
                    f"workspace held. If {name} did not exist, the answer is that it does "
                    "not exist"
                ]
    return []


def _written_value_not_computed(
    task: str, asked: list[str], evidence: Evidence, offered: dict[str, dict[str, Any]]
) -> list[str]:
    """A count or total the task asks to write into a file, written without being computed.

    "Count the lines of data.txt and write that count into count.txt": the file must get a
    number that something counted or computed in the task (as an answer would need), not
    a sentence without one or a number the model made up. A script that wrote the file
    computed what it wrote (its output is not in the arguments): not this.
    """
    if "write" not in asked or not _AGGREGATE.search(task):
        return []
    computed = _numbers(evidence.computed)
    for call in evidence.calls:
        if call.failed or not call.meta.get("edits_files") or call.meta.get("runs_code"):
            continue
        written = " ".join(str(v) for k, v in call.args.items() if k not in ("path", "paths"))
        numbers = _numbers(written)
        where = ", ".join(_written_paths(call)) or "the file"
        if not numbers:
            problem = f"what {call.name} wrote into {where} holds no number"
        elif numbers & computed:
            continue
        else:
            problem = f"the number written into {where} was not counted or computed by a tool"
        return [
            f"the task asks to write a count or a total into a file, but {problem}: count or "
            f"compute it{_compute_with(offered)}, then write that number"
        ]
    return []


def _numbers_not_printed(answer: str, task: str, asked: list[str], calls: list[Call]) -> list[str]:
    """A task that runs something reports what the run printed, not the code's own numbers.

    When the task asks to run something and a run worked, every number of the answer must
    occur in the task or in the output of a run or a computation (``echo "$((6 * 7))"``
    printed 42: an answer of "6*7" read off the script is not what it printed), or be such
    a number rounded as the task asks.
    """
    runs = [c for c in calls if c.meta.get("runs_code") or c.meta.get("computes")]
    if "run" not in asked or not any(not c.failed for c in runs):
        return []
    printed = "\n".join([task, *(c.result for c in runs)])
    missing, shown = _numbers_missing(answer, f"{printed}\n{_rounded(printed, asked_places(task))}")
    if not missing:
        return []
    return [
        f"the task asks to run something and report on it, but {shown} is not in what the "
        "run printed: answer from the run's output"
    ]


_PRINTS = re.compile(r"\bprint(?:s|ed)?\b|\boutputs?\b", re.IGNORECASE)


def _imports(task: str, script: str) -> bool:
    """Whether the task imports the script as a module ("import it", "import units").

    "top_word.py fails on its import line" imports nothing: it is still run as a script.
    """
    stem = re.escape(PurePosixPath(script).stem)
    return re.search(rf"\bimport\s+(?:it|them|{stem})\b", task, re.IGNORECASE) is not None


def _nothing_printed(answer: str, task: str, asked: list[str], calls: list[Call]) -> list[str]:
    """A task that asks what code prints, runs that printed nothing, and a number answered.

    "Write units.py ... Then use python3 to import it and print miles_to_km(26.2)" answered
    1.609344, the task's own number: the one run, ``python3 units.py``, printed nothing (a
    module defines, it does not print). Judged when the task asks to run code and print,
    a run worked, no run or computation that worked gave any output, and the answer states
    a number.
    """
    if "run" not in asked or not _PRINTS.search(task) or not _answer_numbers(answer):
        return []
    done = [
        c for c in calls if (c.meta.get("runs_code") or c.meta.get("computes")) and not c.failed
    ]
    if not any(c.meta.get("runs_code") for c in done):
        return []
    if any(_EXIT_LINE.sub("", c.result).strip() for c in done):
        return []
    return [
        "the task asks what the code prints, but no run printed anything: run code that "
        "prints what the task asks for (a module the task imports is imported by that code, "
        "for example with python3 -c), then answer from its output"
    ]


_OWNED_UP = re.compile(
    r"fail|error|exception|traceback|crash|exit (?:code|status)|non-?zero|\bnot\b|n't\b|"
    r"cannot|unable|broken|timed out|timeout|killed|missing|no such|invalid",
    re.IGNORECASE,
)
_NAME_TOKEN = re.compile(r"\b\w*(?:_\w+|[a-z][A-Z]\w*)\b")


def _failure_not_said(answer: str, task: str, asked: list[str], calls: list[Call]) -> list[str]:
    """The task asked to run something, the last run failed, and the answer hides it.

    The answer owns up to the failure with a word that says so, or by naming something
    only the failed output names (a failing test, an exception).
    """
    if "run" not in asked:
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


_OWN_CODE_ERROR = re.compile(
    r'File "<(?:string|stdin)>", line \d+(?:(?!\n\s*File ")[\s\S])*?\n'
    r"((?:SyntaxError|IndentationError|TabError|NameError)\b.*)\Z"
)
"""A traceback whose last frame is code given on the command line (``python3 -c``, a
pipe), ending in an error of writing: the code itself is at fault, not the workspace."""


def _own_code_failed(task: str, asked: list[str], calls: list[Call]) -> list[str]:
    """The task asked for a run, and the last run failed on a fault of the code written for it.

    "Use a python3 -c one-liner to count the entries": the 1.5B's one-liner put a ``with``
    block after ``;`` (SyntaxError) and it answered that the code had a syntax error. A
    failed run is an answer when the workspace is at fault (a missing file, a failing
    test), not when the model's own code does not parse or names what it never defined.
    Not judged when the code is the task's own (``What does python3 -c '...' print?``).
    """
    if "run" not in asked:
        return []
    runs = [call for call in calls if call.meta.get("runs_code")]
    last = runs[-1] if runs else None
    error = _OWN_CODE_ERROR.search(last.result.rstrip()) if last and last.failed else None
    if last is None or error is None:
        return []
    code = _strings(last.args)
    try:
        words = shlex.split(code)
    except ValueError:
        words = []
    inline = words[words.index("-c") + 1] if "-c" in words[:-1] else code
    if " ".join(inline.split()) in " ".join(task.split()):
        return []
    return [
        f"the last run failed on a fault of the code written for this task ({error.group(1)}"
        "), which answers nothing: fix the code (a python3 -c one-liner holds statements "
        "joined by ';', but no block such as with or for after one; mind the shell's quotes) "
        "and run it again, then answer from its output"
    ]


_FACT_WORD = re.compile(r"(?<![.!?:]\s)(?<!^)\b([A-Z][a-z]+|[\w-]*\d[\w-]*)\b")
"""Words that carry a fact to keep: names in capitals inside a sentence, and numbers or
identifiers with digits (``Dana``, ``8080``, ``rel-2``)."""


def _saved_something_else(task: str, asked: list[str], calls: list[Call]) -> list[str]:
    """A memory was saved, but none of it holds the fact the task asked to keep.

    "Note for future sessions: the billing module is owned by Dana Whitfield. Keep that in
    your memory." The 0.5B saved "billing/invoice.py (lines 1-1 of 1)".
    """
    if "remember" not in asked:
        return []
    saved = " ".join(
        _strings(call.args) for call in calls if call.meta.get("saves_memory") and not call.failed
    )
    facts = {w for w in _FACT_WORD.findall(task) if w.lower() not in _FILLER}
    if not saved or not facts or any(w.lower() in saved.lower() for w in facts):
        return []
    return [
        f"the memory saved holds none of what the task asked to keep ({', '.join(sorted(facts))}):"
        " save the fact itself, in a sentence, then answer"
    ]


def _strings(value: Any) -> str:
    """Every string inside ``value`` (arguments of a call), joined."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return " ".join(_strings(v) for v in value.values())
    if isinstance(value, list | tuple):
        return " ".join(_strings(v) for v in value)
    return ""


_STILL_FAILS = re.compile(
    r"\bstill\b|could ?n[o']t (?:fix|repair|correct|get)|did ?n[o']t (?:work|fix|help)|"
    r"\bnot (?:fixed|working|repaired|solved)\b|unable to (?:fix|repair|correct)",
    re.IGNORECASE,
)
"""An answer saying the change did not make it work."""


def _change_still_fails(answer: str, asked: list[str], calls: list[Call]) -> list[str]:
    """The task asked for a change and a run, and the run after the change still fails.

    "Correct the typo in stats.py and run it": the 0.5B rewrote the file wrongly, ran it
    (NameError again), and answered with the error of its first run. The change is not what
    was asked for, whatever the answer quotes, unless the answer says it did not work.
    """
    if "write" not in asked or "run" not in asked:
        return []
    runs = [i for i, call in enumerate(calls) if call.meta.get("runs_code")]
    changes = [
        i for i, call in enumerate(calls) if call.meta.get("edits_files") and not call.failed
    ]
    if not runs or not changes or _STILL_FAILS.search(answer):
        return []
    last = calls[runs[-1]]
    if changes[0] > runs[-1]:  # every change came after the runs (a note written last)
        return []
    if not last.failed or COULD_NOT_START.search(last.result):
        return []  # it works, or it never started (the rule for that says so)
    lines = [line.strip() for line in last.result.splitlines() if line.strip()]
    shown = lines[-1][:160] if lines else "it failed"
    return [
        f"the run after the change still fails ({shown}): the change does not do what was "
        "asked; read the file again, fix the cause and run it again, or say that it still "
        "fails"
    ]


_SAID_NOT_RUN = re.compile(
    r"not found|no such|could ?n[o']t (?:run|start|execute|be run)|did ?n[o']t run|"
    r"cannot (?:run|execute)|can't (?:run|execute|open)|not executable|permission",
    re.IGNORECASE,
)


def _never_ran(answer: str, asked: list[str], calls: list[Call]) -> list[str]:
    """A run that never started, and an answer that reports what it would have printed.

    ``check_dates.py: command not found`` printed nothing the script checks; "FAIL
    iso_dates" after it was made up from the script's source. The answer can only say
    that it did not run (or the model runs it the right way first).
    """
    if "run" not in asked:
        return []
    runs = [call for call in calls if call.meta.get("runs_code")]
    if not runs or not COULD_NOT_START.search(runs[-1].result) or _SAID_NOT_RUN.search(answer):
        return []
    first = runs[-1].result.splitlines()[0] if runs[-1].result else "it did not start"
    return [
        f"the last run never started ({first}), so it printed nothing the answer could "
        "report: run it the right way (a script with its interpreter, as the tool said), "
        "then answer from its output, or say that it could not be run"
    ]


_QUOTED_COMMAND = re.compile(r"`([^`\n]+)`")
_PLACEHOLDER = re.compile(r"(?<![$\w{])([A-Z][A-Z_]*[A-Z])(?![\w}])")
"""A word in capitals in a command the task quotes (``NAME``, ``INPUT_FILE``): a place to
fill, when the task also names it in words. Not ``$HOME`` nor ``${VAR}``."""


def _placeholder_run(task: str, calls: list[Call]) -> list[str]:
    """A command run as the task's template, its placeholder left in.

    The task quotes `python3 greet.py NAME` and says to pass "that name"; running the
    template as written prints something for the word NAME, which the answer then reports.
    """
    words = {w.lower() for w in re.findall(r"[A-Za-z_]+", _QUOTED_COMMAND.sub(" ", task))}
    holes = {
        hole
        for command in _QUOTED_COMMAND.findall(task)
        for hole in _PLACEHOLDER.findall(command)
        if set(hole.lower().split("_")) <= words  # named in the task's own words too
    }
    runs = [call for call in calls if call.meta.get("runs_code") and not call.failed]
    if not holes or not runs:
        return []
    ran = " ".join(str(v) for v in runs[-1].args.values() if isinstance(v, str))
    left = sorted(holes & set(_PLACEHOLDER.findall(ran)))
    if not left:
        return []
    return [
        f"the last command ran with {', '.join(left)} as written in the task's template: "
        "that is a place for the value the task describes, not the value itself; put the "
        "value in its place, run the command again and answer from what it prints"
    ]


_STATUS = re.compile(r"\b(FAIL(?:ED)?|PASS(?:ED)?|OK|ERROR)\b")
"""Status words as test runners print them (the answer's, in capitals)."""


def _status_on_another_line(answer: str, task: str, evidence: Evidence) -> list[str]:
    """A short answer that pairs a status with a name no output line pairs it with.

    Output ``ok iso_dates / FAIL us_dates / ok eu_dates`` answered "FAIL eu_dates": a status
    and a name stand together in the answer, and the line that holds the name has another
    status.
    """
    statuses = set(_STATUS.findall(answer))
    if len(statuses) != 1 or len(_words(answer)) > _SHORT_ANSWER_WORDS:
        return []
    (status,) = statuses
    names = {
        t for t in _NAME_TOKEN.findall(answer) if len(t) >= 4 and t not in task and t != status
    }
    if not names:
        return []
    root = "FAIL" if status.startswith("FAIL") else "PASS" if status.startswith("PASS") else status
    lines = evidence.text.splitlines()
    with_status = [ln for ln in lines if re.search(rf"\b{root}", ln, re.IGNORECASE)]
    with_name = [ln for ln in lines if any(n in ln for n in names)]
    if not with_status or not with_name or any(any(n in ln for n in names) for ln in with_status):
        return []
    shown = ", ".join(sorted(names))
    return [
        f"the answer says {status} for {shown}, but no line of the output shows {status} "
        f"with {shown}: read the status on the line that names it"
    ]


_SAID_MISSING = re.compile(
    r"not (?:exist|found|present|there|in the workspace|available)|n't (?:exist|find|found)|"
    r"no such|missing|cannot find|can't find|could not find|no file|there is no|absent|"
    r"does not have|doesn't have",
    re.IGNORECASE,
)
_REMOVES = {"delete", "remove", "rename", "move"}
_NEGATED = re.compile(r"\b(?:no|not|none|never|nothing|nobody|nowhere)\b|n't\b", re.IGNORECASE)
"""An answer that says no: "No, MAX_RETRIES is not set" needs no line that holds it."""


def _files_missing(answer: str, task: str, asked: list[str], workspace: Path) -> list[str]:
    """Files that must be in the workspace and are not, or whose absence goes unsaid.

    A file the answer says it wrote, or a write clause of the task names (``... into
    count.txt``), must exist. A file a question names that does not exist must be said
    not to exist.
    """
    root = workspace.resolve()
    claimed = _CLAIMED.findall(answer)
    wanted = list(claimed)
    for clause in _CLAUSES.split(task):
        if _action_verb(clause) in _VERBS["write"] - _REMOVES:
            wanted += FILE_NAME.findall(clause)
    found = [
        f"the answer says {p} was written, but there is no {p} in the workspace"
        if p in claimed
        else f"the task asks for {p} to be written, but there is no {p} in the workspace"
        for p in dict.fromkeys(wanted)
        if not exists(root, p)
    ]
    if found or asked:
        return found
    absent = [p for p in dict.fromkeys(FILE_NAME.findall(task)) if not exists(root, p)]
    if absent and not _SAID_MISSING.search(answer):
        names = " and ".join(absent)
        one = len(absent) == 1
        return [
            f"the task names {names}, which {'is' if one else 'are'} {NOT_IN_WORKSPACE}, and "
            f"the answer does not say so: say plainly that {'it does' if one else 'they do'} "
            "not exist (that is the answer; guess no value)"
        ]
    return []


NOT_IN_WORKSPACE = "not in the workspace"
"""How a problem says a file the task names is missing: the answer is to say so."""


def missing_file_problems(found: list[str]) -> list[str]:
    """The problems of ``found`` that are a file the task names and the workspace lacks.

    Told back alone when no action is missing: a value of a file that is not there is no
    question (told also that a number was unsupported, the 1.5B looked the file up again
    and again), and they need no tool: the check has looked.
    """
    return [
        p
        for p in found
        if f"which is {NOT_IN_WORKSPACE}" in p or f"which are {NOT_IN_WORKSPACE}" in p
    ]


_WHICH_FILE = re.compile(
    r"\b(?:which|what|in what)\s+(?:\w+\s+)?(?:file|module|script|log)s?\b", re.I
)
_TERM = re.compile(r"(?<![\w.])(?=\w*(?:\d|_|[a-z][A-Z]))\w{4,}(?!\w|\.\w)")


def _named_file_lacks_term(answer: str, task: str, workspace: Path) -> list[str]:
    """A "which file ..." answer whose files hold none of the question's own terms.

    ``Which file contains E4471?`` answered ``logs/api.log``: the file named must contain
    one of the identifiers the question quotes (words with a digit, an underscore or an
    inner capital, like ``E4471``, ``compute_checksum``, ``parseConfig``). When the question
    asks where something is defined (declared, implemented), the file must define it, not
    only use it.
    """
    if not _WHICH_FILE.search(task):
        return []
    terms = [t for t in _TERM.findall(task) if not FILE_NAME.fullmatch(t)]
    if not terms:
        return []
    root = workspace.resolve()
    named = [p for p in dict.fromkeys(FILE_NAME.findall(answer)) if p not in task]
    files = [f for p in named if (f := find_file(root, p)) is not None]
    if not files:
        return []
    defines = _DEFINES.search(task) is not None
    for path in files:
        text = read_head(path)
        if text is None:
            return []
        if any(
            (_definition(term) if defines else re.compile(re.escape(term))).search(text)
            for term in terms
        ):
            return []
    names, quoted = ", ".join(named), ", ".join(terms)
    what = f"a definition of {quoted}" if defines else quoted
    return [
        f"the answer names {names}, but no such file contains {what}: search the files "
        "for it (search_files) and answer with the one that does"
    ]


_DEFINES = re.compile(r"\b(?:defin|declar|implement)\w*", re.I)


def _definition(term: str) -> re.Pattern[str]:
    """Where ``term`` is defined in source code: a class, function, type or assignment."""
    name = re.escape(term)
    keywords = r"class|def|function|fn|func|struct|interface|type|enum|trait|const|let|var"
    return re.compile(rf"\b(?:{keywords})\s+{name}\b|^\s*{name}\s*(?::[^=\n]*)?=(?!=)", re.M)


_NUMBER_WORDS = r"zero|none|no|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
_SHAPES: list[tuple[str, re.Pattern[str], re.Pattern[str]]] = [
    (
        "an email address",
        re.compile(r"\be-?mail(?: address)?\b", re.I),
        re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"),
    ),
    (
        "an IP address",
        re.compile(r"\bIP(?:v[46])? address\b", re.I),
        re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}\b|[0-9a-f]*:[0-9a-f:]+", re.I),
    ),
    ("a URL", re.compile(r"\b(?:URL|link)\b", re.I), re.compile(r"\w+://\S+")),
    (
        "a number",
        re.compile(r"\b(?:how many|how much|answer with the number|what (?:port|number))\b", re.I),
        re.compile(rf"\d|\b(?:{_NUMBER_WORDS})\b", re.I),
    ),
]


def _shape_missing(answer: str, task: str, asked: list[str]) -> list[str]:
    """An answer without the kind of value the question asks for.

    Kinds: an email address, an IP address, a URL or a number. An answer that says the
    thing is missing or that something failed needs none.
    """
    if asked or _SAID_MISSING.search(answer) or _OWNED_UP.search(answer):
        return []
    return [
        f"the question asks for {what}, but the answer holds none: find it with a tool, or "
        "say that it is not there"
        for what, asks, shape in _SHAPES
        if asks.search(task) and not shape.search(answer)
    ][:1]


_VALUE_VERBS = {
    "change", "set", "switch", "turn", "toggle", "flip", "enable", "disable", "bump", "raise",
    "lower", "increase", "decrease", "update", "modify", "correct", "fix", "put",
}  # fmt: skip
_KEY_VERBS = _REMOVES | {"add", "insert", "replace", "rewrite", "restructure", "drop"}
_EDITED = re.compile(r"^(?:Edited|Rewrote) (\S+?)[:.]? ", re.MULTILINE)
_DATA_LINE = re.compile(
    r"^  (?:added (?P<added>\S+) = (?P<value>.*)|removed (?P<removed>\S+) \(was .*\)"
    r"|(?P<key>\S+): .* -> (?P<new>.*))$",
    re.MULTILINE,
)
_TARGET = re.compile(r"\bto\s+(-?\d+(?:\.\d+)?|true|false)\b", re.IGNORECASE)


def _data_edit_problems(task: str, calls: list[Call]) -> list[str]:
    """A value change of a data file that lost keys, or that never set the value asked for.

    Edits of JSON, TOML and YAML files report the data they changed (see
    :mod:`jarvis_graph.editing.data_changes`). When the task only asks to change values
    ("set the port to 9091", "switch the flag off"), keys removed by the edits and not put
    back mean the edit hit a key instead of its value; a target value the task names
    ("to 9091") must be the value of something after the last edit (the 1.5B set 45, then
    rewrote the file with 300 in its place and answered 45).
    """
    verbs = {_verb(clause) for clause in _CLAUSES.split(task)}
    if not verbs & _VALUE_VERBS or verbs & _KEY_VERBS:
        return []
    lost: dict[str, set[str]] = {}  # keys the file had that the edits removed
    added: dict[str, set[str]] = {}  # keys the edits added
    values: dict[tuple[str, str], str] = {}  # (file, key) -> its value after the edits
    reported = False
    for call in calls:
        if call.failed or not call.meta.get("edits_files"):
            continue
        for block in re.split(r"\n(?=\S)", call.result):
            head = _EDITED.match(block)
            if head is None:
                continue
            keys = lost.setdefault(head.group(1), set())
            made = added.setdefault(head.group(1), set())
            for line in _DATA_LINE.finditer(block):
                reported = True
                if removed := line["removed"]:
                    if removed in made:  # a key the task's own edits added may go again
                        made.discard(removed)
                    else:
                        keys.add(removed)
                    values.pop((head.group(1), removed), None)
                    continue
                if line["added"] in keys:
                    keys.discard(line["added"])
                elif line["added"]:
                    made.add(line["added"])
                key = line["added"] or line["key"] or ""
                values[(head.group(1), key)] = line["value"] or line["new"] or ""
    found = [
        f"the edit of {name} removed {', '.join(sorted(keys)[:4])}, but the task asks to "
        "change a value, not to remove or rename keys: put them back and change the value "
        "itself (see the changes listed under the edit's result)"
        for name, keys in lost.items()
        if keys
    ]
    target = _TARGET.search(task)
    if (
        reported
        and target
        and not any(
            re.search(rf"(?<![\w.]){re.escape(target.group(1))}(?![\w.])", v, re.IGNORECASE)
            for v in values.values()
        )
    ):
        found.append(
            f"the task asks to set a value to {target.group(1)}, but after the edits no value "
            f"is {target.group(1)}: edit the value the task names (see the changes listed "
            "under each edit's result)"
        )
    return found


_ABOUT_WORKSPACE = re.compile(
    r"\b(?:files?|folders?|director(?:y|ies)|workspace|project|repo(?:sitory)?|source|"
    r"codebase|logs?)\b",
    re.IGNORECASE,
)
"""Words by which a question points at the workspace's content without naming a file."""
_SEEN_LINE_CHARS = 8  # a line this long found in the evidence shows the file was seen
_SEEN_LINES = 200


def _file_not_looked_at(
    answer: str, task: str, asked: list[str], evidence: Evidence, workspace: Path
) -> list[str]:
    """A question about a workspace file answered without anything showing the file.

    No call or result of the task named the file, and no line of it is in the thread (a
    tool result of an earlier task or the attached context would hold some): the answer
    cannot rest on the file. "team.txt says who is on call. What's that person's
    extension? The extensions are in extensions.csv." was answered with a name after a
    look at extensions.csv alone: who is on call is in team.txt. A question that points
    at the workspace without naming a file ("in the source files", "in the logs") needs a
    tool result on the thread, or file content attached to it that holds the answer's
    words: the attached context may only list the files, and a name from that list
    answered "who is the TODO assigned to?". Tasks that ask for an action have their own
    rule.
    """
    if asked:
        return []
    root = workspace.resolve()
    # a call that names the file, or a result that does (read_code's header), looked at it
    called = "\n".join(f"{_strings(call.args)}\n{call.result}" for call in evidence.calls)
    unseen = []
    named = False
    for name in dict.fromkeys(FILE_NAME.findall(task)):
        path = find_file(root, name)
        if path is None:
            continue
        named = True
        text = read_head(path) if name not in called else None
        if text is None:
            continue
        lines = text.splitlines()[:_SEEN_LINES]
        shown = [line.strip() for line in lines if len(line.strip()) >= _SEEN_LINE_CHARS]
        if shown and not any(line in evidence.text for line in shown):
            unseen.append(name)
    about = _ABOUT_WORKSPACE.search(task)
    if (
        about
        and not evidence.calls
        and not named
        and not evidence.looked
        and not _in_content(answer, task, evidence)
    ):
        return [
            f"the task asks about the workspace's {about.group(0).lower()}, but no tool "
            "looked at the workspace: search or read its files with a tool, then answer from "
            "what the tool returns"
        ]
    if not unseen:
        return []
    names = ", ".join(unseen)
    if evidence.calls:
        return [
            f"the task is about {names} too, but no tool looked at it: read it with a "
            "tool, then answer from what the tools return"
        ]
    return [
        f"the task is about {names}, but nothing was looked at since the task: read it "
        "(or run it) with a tool, then answer from what the tool returns"
    ]


def _absent_from_a_narrow_look(
    answer: str, task: str, evidence: Evidence, workspace: Path
) -> list[str]:
    """An answer that something is not in the workspace, when every look was at one file.

    "Somewhere in the source files there is one TODO(name) comment" answered "there are
    no TODO comments" after a search of app/format.py alone. A call without a path, with
    a folder, or one that runs code may have looked everywhere.
    """
    about = _ABOUT_WORKSPACE.search(task)
    if not about or FILE_NAME.search(task) or not evidence.calls or not _NEGATED.search(answer):
        return []
    root = workspace.resolve()
    files: list[str] = []
    for call in evidence.calls:
        path = call.args.get("path")
        if call.meta.get("runs_code") or not isinstance(path, str) or not path.strip():
            return []
        target = (root / path).resolve()
        if not target.is_relative_to(root) or not target.is_file():
            return []  # a folder (or the workspace), or a path that is not there
        files.append(path)
    looked = ", ".join(dict.fromkeys(files))
    return [
        f"the answer says it is not there, but only {looked} was looked at, and the task "
        f"asks about the workspace's {about.group(0).lower()}: search them all (search_files "
        "without a path), then answer"
    ]


_LABELLED = re.compile(r"^\s*([A-Za-z][\w .'-]{0,40}?)\s*[:=]\s*(\S.{0,120}?)\s*$", re.MULTILINE)
"""A labelled line of a plain file: ``this week: Marta Jensen``, ``owner = dana``."""


def _value_of_another_label(answer: str, task: str, workspace: Path) -> list[str]:
    """An answer built on the value of a line whose label the task does not ask about.

    team.txt holds ``this week: Marta Jensen`` and ``next week: Olu Bakare``; "who is on
    call this week?" answered with Olu Bakare (and his extension) took the other line. A
    value counts as used when all its words are in the answer; it is the wrong line when
    its label has a word the task lacks while another line's label is all in the task.
    """
    root = workspace.resolve()
    asked = set(_words(task))
    said = set(_words(answer))
    found = []
    for name in dict.fromkeys(FILE_NAME.findall(task)):
        path = find_file(root, name)
        text = read_head(path) if path is not None else None
        if not text or path is None or path.suffix.lower() in _CODE_SUFFIXES:
            continue
        lines = []
        for label, value in _LABELLED.findall(text):
            keys = {w for w in _words(label) if w not in _FILLER}
            words = {w for w in _words(value) if w not in _FILLER}
            if keys and words and not words <= asked:  # a value the task names is no pick
                lines.append((label.strip(), value.strip(), keys <= asked, words <= said))
        used = [line for line in lines if line[3]]
        fitting = [line for line in lines if line[2] and not line[3]]
        if used and fitting and not any(line[2] for line in used):
            label, value = used[0][:2]
            right = fitting[0][0]
            found.append(
                f"the answer takes {value} from the line '{label}: {value}' of {name}, but "
                f"the task asks about '{right}' (another line of {name}): answer from that line"
            )
    return found


_CODE_SUFFIXES = frozenset({".py", ".js", ".ts", ".c", ".h", ".cpp", ".hpp", ".rs", ".go", ".java"})
"""Source files: their ``name = value`` lines are code, not labels a question picks by."""


_PATH_LINE = re.compile(r"[\w./\\-]+(?: \(\d+ lines?\))?")


def _in_content(answer: str, task: str, evidence: Evidence) -> bool:
    """Whether a word of ``answer`` that is not in the task is in content the thread shows.

    A line that is only a file's path (a listing line) is no content.
    """
    new = {w for w in _words(answer) if len(w) > 2} - set(_words(task))
    if not new:
        return False
    for line in evidence.text.splitlines():
        stripped = line.strip()
        if stripped and not _PATH_LINE.fullmatch(stripped) and new & set(_words(stripped)):
            return True
    return False


_LISTING = re.compile(r"^(\d+) files? under (.+?)(?: \(([^()]*)\))?:?$", re.MULTILINE)
"""A listing's count line: ``11 files under docs (8 .md, 2 .txt, 1 .json):``."""
_LISTING_TOTAL = re.compile(r"^\d+(?= files? under )", re.MULTILINE)
_SEARCH_HEAD = re.compile(r"^(\d+) matching lines? in (\d+) files?:\n((?:.+\n?)*)", re.MULTILINE)
"""A search's count line and its hits: ``10 matching lines in 10 files:`` then ``path:n:text``."""
_SEARCH_COUNT = re.compile(r"^(\d+) matching lines? in \d+ files?:", re.MULTILINE)
_TASK_EXT = re.compile(r"(?<![\w/.])\.([A-Za-z][A-Za-z0-9]{0,4})\b")
_KIND_WORDS = {
    "markdown": ".md",
    "python": ".py",
    "json": ".json",
    "yaml": ".yaml",
    "csv": ".csv",
    "text": ".txt",
    "log": ".log",
    "html": ".html",
    "javascript": ".js",
    "typescript": ".ts",
    "rust": ".rs",
}
_KIND_WORD = re.compile(rf"\b({'|'.join(_KIND_WORDS)})\s+files\b", re.IGNORECASE)


def _task_kinds(task: str) -> set[str]:
    """The file extensions a task's question is limited to (``.md`` for "Markdown files")."""
    kinds = {f".{ext.lower()}" for ext in _TASK_EXT.findall(task)}
    kinds |= {_KIND_WORDS[w.lower()] for w in _KIND_WORD.findall(task)}
    if ".yaml" in kinds:
        kinds.add(".yml")
    return kinds


def _task_folders(task: str, root: Path) -> list[Path]:
    """The workspace folders a task names ("the docs folder", "under src/api")."""
    folders = []
    for token in dict.fromkeys(re.findall(r"[\w][\w./-]*", task)):
        name = token.strip("./")
        if not name or name.startswith(".."):
            continue
        try:
            folder = (root / name).resolve()
        except (OSError, RuntimeError):
            continue
        if folder != root and folder.is_relative_to(root) and folder.is_dir():
            folders.append(folder)
    return folders


def _search_wider(number: float, calls: list[Call], kinds: set[str]) -> str:
    """The kinds of file a search matched, when ``number`` is its count and they are wider."""
    results = "\n\n".join(c.result for c in calls if not c.failed)
    for match in _SEARCH_HEAD.finditer(results):
        if number not in (float(match.group(1)), float(match.group(2))):
            continue
        hits = [line.split(":", 1)[0] for line in match.group(3).splitlines() if ":" in line]
        suffixes = Counter(Path(hit).suffix or "(none)" for hit in dict.fromkeys(hits))
        if set(suffixes) - kinds:
            return ", ".join(f"{n} {kind}" for kind, n in suffixes.most_common())
    return ""


def _count_wider_than_task(
    answer: str, task: str, evidence: Evidence, workspace: Path
) -> list[str]:
    """A "how many" answer given as the total of a listing wider than the question.

    ``11 files under . (8 .md, 2 .txt, 1 .json)`` counts every kind of file in every
    folder: it answers "how many Markdown files are in docs?" only when the question asks
    for all of them. A number that the evidence holds in another way (a narrower listing,
    a count per kind, a computation) is left to the other rules.
    """
    if not _AGGREGATE.search(task):
        return []
    root = workspace.resolve()
    kinds, folders = _task_kinds(task), _task_folders(task, root)
    if not kinds and not folders:
        return []
    pattern = f"*{min(kinds)}" if kinds else "*"
    text = f"{evidence.text}\n{evidence.counts}"
    elsewhere = _numbers(_LISTING_TOTAL.sub("", _SEARCH_COUNT.sub("", text)))
    found: list[str] = []
    for number in sorted(_answer_numbers(answer) - elsewhere):
        if kinds and (wider := _search_wider(number, evidence.calls, kinds)):
            found.append(
                f"{number:g} counts every file the search matched ({wider}), but the task "
                f"asks about {' '.join(sorted(kinds))} files only: list or count just those "
                f"(list_files with a pattern such as {pattern}), then answer with that count"
            )
            continue
        for match in _LISTING.finditer(text):
            if float(match.group(1)) != number:
                continue
            where, breakdown = match.group(2), match.group(3) or ""
            listed = {part.split()[-1] for part in breakdown.split(", ") if part}
            wider_kind = bool(kinds and listed - kinds)
            try:
                base = (root / where).resolve()
            except (OSError, RuntimeError):
                continue
            wider_folder = any(f != base and f.is_relative_to(base) for f in folders)
            if not (wider_kind or wider_folder):
                continue
            asked = " ".join(sorted(kinds)) + " files" if kinds else "files"
            if folders:
                asked += " under " + ", ".join(str(f.relative_to(root)) for f in folders)
            found.append(
                f"{number:g} counts every file under {where}"
                + (f" ({breakdown})" if breakdown else "")
                + f", but the task asks about {asked} only: list or count just those "
                f"(a tool call with the folder as path and a pattern such as {pattern}), "
                "then answer with that count"
            )
            break
    return found


_TAG = re.compile(r"(?<![\w.])[A-Z]{4,}(?![\w.])")
"""An all-capitals word the task quotes (``TODO``, ``FIXME``, ``WARN``)."""
_MATCH_AT = re.compile(r"^\s*[\w./\\-]+:\d+:")
"""Where a search match is (``app/parse.py:2:``): "parse" answered a TODO's owner from it."""
_FORMATS = frozenset({"JSON", "YAML", "TOML", "HTML", "HTTP", "HTTPS", "ASCII", "UTF8", "UUID"})
_SHORT_ANSWER_WORDS = 8
_BLOCK_LINES = 3
"""Lines after a quoted term's line that still belong to it (a nested block's values)."""
_FILLER = frozenset(
    {"the", "a", "an", "is", "it", "to", "of", "and", "in", "on", "by", "for", "that", "this",
     "was", "are", "be", "name", "answer", "assigned", "value", "person", "its", "as"}
)  # fmt: skip


def _answer_off_the_term(answer: str, task: str, asked: list[str], evidence: Evidence) -> list[str]:
    """A short answer taken from elsewhere than the lines about what the question quotes.

    A question that quotes an identifier or a tag (``MAX_RETRIES``, ``E4471``, ``TODO``) is
    answered by the lines that hold it: a word of a short answer must stand on such a line
    of the evidence. "Who is the TODO assigned to?" answered with ``parse`` (a word of the
    file's other lines, next to ``# TODO(priya)``) fails. Answers that name a file, say the
    thing is missing or something failed, counts and totals, and tasks that ask for an
    action are left to the other rules. When no line of the evidence holds the quoted term
    at all, a short answer other than a no rests on nothing about it (the 0.5B answered
    "parse" after a search that found nothing and a read of a file without the TODO).
    """
    if (
        asked
        or _AGGREGATE.search(task)  # a count or a total stands on no single line
        or FILE_NAME.search(answer)
        or _SAID_MISSING.search(answer)
        or _OWNED_UP.search(answer)
    ):
        return []
    said = [w for w in _words(answer) if w not in _FILLER]
    if not said or len(_words(answer)) > _SHORT_ANSWER_WORDS:
        return []
    tools = {call.name for call in evidence.calls}  # "use ask_document on ...": a tool, not a term
    terms = {t for t in _TERM.findall(task) if not FILE_NAME.fullmatch(t) and t not in tools}
    terms |= {t for t in _TAG.findall(task) if t not in _FORMATS}
    if len(terms) == 1 and set(said) <= {w for t in terms for w in _words(t)}:
        [term] = terms
        return [
            f"the answer only repeats {term}, what the question asks about: find {term} with "
            "a tool, then answer from its line (or say that it is not there)"
        ]
    text = evidence.text.splitlines()
    held = [
        i for i, line in enumerate(text)
        if any(t in line for t in terms) and line.strip() not in task  # not the task's line
    ]  # fmt: skip
    new = set(said) - set(_words(task))
    quoted = ", ".join(sorted(terms))
    if not held:
        if not terms or not new or _NEGATED.search(answer):
            return []  # nothing asked about by name, or "it is not there": other rules
        return [
            f"no tool result shows a line with {quoted}, so the answer rests on nothing "
            f"about it: find {quoted} with a tool first (search the files for it), then "
            "answer from its line, or say that it is not there"
        ]
    # the line itself, or the lines of the block it opens (`SERVICE_A:` then `port: 8080`);
    # a match line's `path:line:` says where it is, not what it says
    near = {j for i in held for j in range(i, min(i + 1 + _BLOCK_LINES, len(text)))}
    if not new or any(new & set(_words(_MATCH_AT.sub("", text[j]))) for j in near):
        return []
    return [
        f"the answer's words stand on no line of the tool results that holds {quoted}: "
        f"answer from the line with {quoted} itself"
    ]


_POINTS_TO = (
    r"\s+(?:names|lists|points to|refers to|specifies|mentions|says|tells|gives|"
    r"(?:holds|contains|has) the (?:name|path))\b"
)
_SIZE_LINE = re.compile(r"^(?P<file>\S.*?) \((?:lines \d+-\d+ )?of (?P<n>\d+)\b.*$", re.M)
"""A file's size line from ``read_code``: ``config.toml (lines 1-1 of 4)``."""


def _count_of_the_pointer(answer: str, task: str, evidence: Evidence, workspace: Path) -> list[str]:
    """A count answered with the size of the file that only names the file to count.

    "config.toml names the input file of the job. How many lines does that input file
    have?" answered ``4``, the length of config.toml that ``read_code`` showed, or that
    ``compute`` counted. The notice names the workspace files the pointer file names.
    """
    if not _AGGREGATE.search(task):
        return []
    pointers = [
        name
        for name in dict.fromkeys(FILE_NAME.findall(task))
        if re.search(re.escape(name) + _POINTS_TO, task, re.IGNORECASE)
    ]
    if not pointers:
        return []
    root = workspace.resolve()
    text = f"{evidence.text}\n{evidence.counts}"
    sizes = [
        m
        for m in _SIZE_LINE.finditer(text)
        if any(PurePosixPath(m.group("file")).name == PurePosixPath(p).name for p in pointers)
    ]
    rest = _numbers(_SIZE_LINE.sub("", text))
    found = []
    for number, name, call in _computed_on_the_pointer(answer, pointers, evidence.calls):
        named = _files_named_by(name, root)
        found.append(
            f"{number:g} was computed over {name}, the file that names the one the task asks "
            f"about: {_named_by(name, named)}compute over that file{_redone(call, name, named)}"
            ", then answer"
        )
    for number in sorted(_answer_numbers(answer) - rest):
        match = next((m for m in sizes if float(m.group("n")) == number), None)
        if match:
            name = match.group("file")
            found.append(
                f"{number:g} is the length of {name}, the file that names the one the task "
                f"asks about: {_named_by(name, _files_named_by(name, root))}count that file, "
                "then answer"
            )
    return found


def _named_by(pointer: str, named: list[str]) -> str:
    """The notice's lead to the file to count: the workspace files ``pointer`` names.

    ``config.toml names data/b.txt: ``, or a request to find them when it names none.
    """
    if not named:
        return f"find the file {pointer} names, "
    return f"{pointer} names {' and '.join(named)}: "


def _files_named_by(pointer: str, root: Path) -> list[str]:
    """Up to three workspace files whose names the file ``pointer`` holds."""
    path = find_file(root, pointer)
    text = read_head(path) if path is not None else None
    return [
        n for n in dict.fromkeys(FILE_NAME.findall(text or ""))
        if PurePosixPath(n).name != PurePosixPath(pointer).name and exists(root, n)
    ][:3]  # fmt: skip


def _redone(call: Call, pointer: str, named: list[str]) -> str:
    """The same call over the one file ``pointer`` names (``named``), as the notice's example.

    A small model told to compute over another file tends to send its call again as it
    was; the call with the quoted path replaced is the change it has to make. Empty when
    the pointer names more or less than one file, or the call does not quote its path.
    """
    quoted = [q + pointer + q for q in ("'", '"')]
    args = {
        k: v for k, v in call.args.items() if isinstance(v, str) and any(x in v for x in quoted)
    }
    if len(named) != 1 or not args:
        return ""
    for key, value in args.items():
        for q in ("'", '"'):
            value = value.replace(q + pointer + q, q + named[0] + q)
        args[key] = value
    shown = ", ".join(f"{k}={v!r}" for k, v in args.items())
    return f" (for example {call.name}({shown}))"


def _computed_on_the_pointer(
    answer: str, pointers: list[str], calls: list[Call]
) -> list[tuple[float, str, Call]]:
    """Counts computed over the file that names the one to count (and nothing else).

    ``len(open('config.toml').read().splitlines())`` answered "how many lines does the
    input file config.toml names have?".
    """
    names = {PurePosixPath(p).name for p in pointers}
    of_pointer: dict[float, tuple[str, Call]] = {}
    elsewhere: set[float] = set()
    for call in calls:
        if call.failed:
            continue
        named = {PurePosixPath(n).name for n in FILE_NAME.findall(_strings(call.args))}
        numbers = _numbers(_SIZE_LINE.sub("", call.result))
        if named and named <= names and (call.meta.get("computes") or call.meta.get("runs_code")):
            of_pointer.update(dict.fromkeys(numbers, (sorted(named)[0], call)))
        else:
            elsewhere |= numbers
    return [
        (number, *of_pointer[number])
        for number in sorted(_answer_numbers(answer) & set(of_pointer) - elsewhere)
    ]


def _count_with_part_words(answer: str, task: str, calls: list[Call]) -> list[str]:
    """A count of a search's matching lines, some holding the word only inside a longer one.

    "How many lines of service.log are ERROR entries?" answered 6: the search for ERROR
    also matched ``NOERROR`` and ``ERRORS=0``. Only a search for a plain word is judged.
    """
    if not _AGGREGATE.search(task):
        return []
    found = []
    for call in calls:
        pattern = call.args.get("pattern")
        head = _SEARCH_HEAD.search(call.result)
        if call.failed or not isinstance(pattern, str) or not re.fullmatch(r"\w+", pattern):
            continue
        if head is None or float(head.group(1)) not in _answer_numbers(answer):
            continue
        word = re.compile(rf"(?<![^\W_]){re.escape(pattern)}(?![^\W_])")
        texts = [_MATCH_AT.sub("", h) for h in head.group(3).splitlines() if _MATCH_AT.match(h)]
        parts = sorted(
            {
                m.group(0)
                for text in texts
                if not word.search(text)
                for m in re.finditer(rf"[^\W_]*{re.escape(pattern)}[^\W_]*", text)
            }
        )
        if parts:
            found.append(
                f"{head.group(1)} counts every line the search for {pattern} matched, but on "
                f"some {pattern} is only part of a longer word ({', '.join(parts[:3])}): count "
                f"the lines where {pattern} stands as a word of its own (search \\b{pattern}\\b)"
            )
    return found


_LENGTH_ASKED = re.compile(
    r"\blines? long\b|\bline count\b|\bnumber of lines (?:of|in) (?:the |that |this )?file\b"
    r"|\bhow many lines (?:does|do|has|have) (?:the |that |this )?(?:file|[\w./-]+\.\w+)"
    r"(?: \w+)? (?:have|hold|contain)\s*\??\s*$",
    re.IGNORECASE,
)
"""A question about how long a file is (not how many of its lines hold something)."""


def _match_count_as_length(answer: str, task: str, evidence: Evidence) -> list[str]:
    """A file's length answered with how many lines a search matched.

    "How many lines long is that file?" answered 6, the "6 matching lines" of a search
    for the function the first turn asked about.
    """
    if not _LENGTH_ASKED.search(task):
        return []
    matched = {float(n) for n in _SEARCH_COUNT.findall(evidence.counts)}
    other = _numbers(_SEARCH_COUNT.sub("", evidence.computed))
    return [
        f"{number:g} is how many lines a search matched, not how long the file is: read the "
        "file (read_code gives its length) or count its lines, then answer"
        for number in sorted(_answer_numbers(answer) & matched - other)
    ]
