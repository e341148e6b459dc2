"""Rule ``c-format-nonliteral``: a printf-family format that holds outside input."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jarvis_graph.security.c_facts import Var, strip_casts, var_of
from jarvis_graph.security.model import Rule

if TYPE_CHECKING:
    from jarvis_graph.security.c_source import Statement
    from jarvis_graph.security.c_walk import Walk

# name -> position of the format argument
FORMAT_ARG = {
    "printf": 0, "vprintf": 0, "wprintf": 0, "vwprintf": 0, "fprintf": 1, "vfprintf": 1,
    "fwprintf": 1, "vfwprintf": 1, "sprintf": 1, "vsprintf": 1, "syslog": 1, "dprintf": 1,
    "snprintf": 2, "_snprintf": 2, "vsnprintf": 2, "_vsnprintf": 2, "swprintf": 2,
    "_snwprintf": 2, "_vsnwprintf": 2, "vswprintf": 2, "err": 1, "warn": 0,
}  # fmt: skip

RULE = Rule(
    "c-format-nonliteral",
    "c",
    "format_string",
    "CWE-134",
    "high",
    "format string comes from outside data",
    'pass the data as an argument: printf("%s", data)',
    calls=frozenset(FORMAT_ARG),
)


def format_of(scan: Walk, name: str, args: list[str]) -> tuple[str, str | None, Var | None] | None:
    """``(format, its variable's name, its facts)`` of a call whose format is no literal."""
    idx = FORMAT_ARG[name]
    if idx >= len(args):
        return None
    fmt = strip_casts(args[idx])
    if scan.src.literal(fmt) is not None or fmt.startswith("__S"):
        return None
    return fmt, *var_of(fmt, scan.env)


def on_call(scan: Walk, name: str, args: list[str], st: Statement) -> None:
    """The format is a variable the walk saw filled with outside input."""
    found = format_of(scan, name, args)
    if found is not None and found[2] is not None and found[2].taint == "outside input":
        scan.report(RULE.id, st.line, f"'{found[1]}' holds outside input", found[1] or "")
