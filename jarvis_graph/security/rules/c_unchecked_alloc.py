"""Rule ``c-unchecked-alloc``: a malloc/calloc/realloc result dereferenced before a NULL check."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jarvis_graph.security.model import Rule

if TYPE_CHECKING:
    from jarvis_graph.security.c_facts import Var
    from jarvis_graph.security.c_source import Statement
    from jarvis_graph.security.c_walk import Walk

RULE = Rule(
    "c-unchecked-alloc",
    "c",
    "unchecked_result",
    "CWE-690",
    "medium",
    "allocation result used without a NULL check",
    "check the pointer against NULL before using it",
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
    """The first dereference of an allocation no condition has checked yet."""
    if var.alloc_unchecked and deref:
        scan.report(RULE.id, st.line, f"'{name}' from line {var.alloc_line} may be NULL", name)
        var.alloc_unchecked = False  # once per allocation
