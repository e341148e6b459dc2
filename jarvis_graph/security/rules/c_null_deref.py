"""Rule ``c-null-deref``: a pointer the walk saw set to NULL, dereferenced."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jarvis_graph.security.model import Rule

if TYPE_CHECKING:
    from jarvis_graph.security.c_facts import Var
    from jarvis_graph.security.c_source import Statement
    from jarvis_graph.security.c_walk import Walk

RULE = Rule(
    "c-null-deref",
    "c",
    "null_dereference",
    "CWE-476",
    "high",
    "pointer set to NULL is dereferenced",
    "check the pointer before dereferencing it",
)


def on_use(
    scan: Walk,
    name: str,
    var: Var,
    text: str,
    st: Statement,
    deref: bool,
    callee: bool,
    condition: bool,
) -> None:
    """A dereference of a pointer that is NULL here (not judged when a callee gets it)."""
    if var.null and deref and not callee:
        scan.report(RULE.id, st.line, f"'{name}' is NULL here", name)
