"""Rule ``c-deref-before-check``: a pointer parameter dereferenced, later compared with NULL."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jarvis_graph.security.model import Rule

if TYPE_CHECKING:
    from jarvis_graph.security.c_facts import Var
    from jarvis_graph.security.c_source import Statement
    from jarvis_graph.security.c_walk import Walk

RULE = Rule(
    "c-deref-before-check",
    "c",
    "null_dereference",
    "CWE-476",
    "medium",
    "pointer dereferenced before it is checked against NULL",
    "move the NULL check before the first dereference",
)


def on_null_check(scan: Walk, name: str, var: Var, st: Statement) -> None:
    """A condition checks ``name`` against NULL after the walk saw it dereferenced."""
    if var.derefs is not None and not var.null_checked and var.pointer:
        scan.report(RULE.id, st.line, f"'{name}' was dereferenced at line {var.derefs}", name)
