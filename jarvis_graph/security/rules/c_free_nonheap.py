"""Rule ``c-free-nonheap``: free/delete of a stack array, a static, a literal or placement."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jarvis_graph.security.model import Rule

if TYPE_CHECKING:
    from jarvis_graph.security.c_facts import Var
    from jarvis_graph.security.c_source import Statement
    from jarvis_graph.security.c_walk import Walk

RULE = Rule(
    "c-free-nonheap",
    "c",
    "free_nonheap",
    "CWE-590",
    "high",
    "free/delete of memory that is not on the heap",
    "only free memory obtained from malloc/new",
)


NOT_HEAP = ("stack", "static", "literal", "placement")


def on_release(scan: Walk, name: str, var: Var, kind: str, st: Statement) -> None:
    """The walk knows the pointer points to memory no allocator gave."""
    if var.freed is None and var.alloc in NOT_HEAP:
        scan.report(RULE.id, st.line, f"'{name}' points to {var.alloc} memory", name)
