"""Rule ``c-double-free``: a pointer freed a second time (checked at each free/delete)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jarvis_graph.security.model import Rule

if TYPE_CHECKING:
    from jarvis_graph.security.c_facts import Var
    from jarvis_graph.security.c_source import Statement
    from jarvis_graph.security.c_walk import Walk

RULE = Rule(
    "c-double-free",
    "c",
    "double_free",
    "CWE-415",
    "high",
    "memory freed twice",
    "free once and set the pointer to NULL after freeing",
)


def on_release(scan: Walk, name: str, var: Var, kind: str, st: Statement) -> None:
    """The walk saw this pointer freed already."""
    if var.freed is not None:
        scan.report(RULE.id, st.line, f"'{name}' was freed at line {var.freed}", name)
