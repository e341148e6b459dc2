"""Rule ``c-format-param``: a non-literal format of unknown origin (a parameter, a member)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jarvis_graph.security.model import Rule
from jarvis_graph.security.rules.c_format_nonliteral import FORMAT_ARG, format_of

if TYPE_CHECKING:
    from jarvis_graph.security.c_source import Statement
    from jarvis_graph.security.c_walk import Walk

RULE = Rule(
    "c-format-param",
    "c",
    "format_string",
    "CWE-134",
    "low",
    "non-literal format string of unknown origin",
    "use a literal format string and pass the text as an argument",
    calls=frozenset(FORMAT_ARG),
)


def on_call(scan: Walk, name: str, args: list[str], st: Statement) -> None:
    """The format is a parameter or an expression the walk knows nothing of."""
    found = format_of(scan, name, args)
    if found is None:
        return
    fmt, _, var = found
    if var is not None and var.taint == "outside input":
        return  # c-format-nonliteral's finding
    if var is None or var.param:
        scan.report(RULE.id, st.line, f"format '{fmt}'", fmt)
