"""Rule ``c-leak``: heap memory neither freed, returned, stored nor handed on.

Confident when the memory is freed on the main path but not before an early return; weak
when it is never released (ownership may be elsewhere by design).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jarvis_graph.security.c_facts import HEAP
from jarvis_graph.security.model import Rule

if TYPE_CHECKING:
    from jarvis_graph.security.c_facts import Var
    from jarvis_graph.security.c_source import Statement
    from jarvis_graph.security.c_walk import Walk

RULE = Rule(
    "c-leak",
    "c",
    "memory_leak",
    "CWE-401",
    "medium",
    "allocated memory is neither freed, returned nor stored",
    "free the memory on every path out of the function",
)


def _owned(scan: Walk) -> list[tuple[str, Var]]:
    """Heap memory allocated in this function and still held by it."""
    return [
        (name, var)
        for name, var in scan.env.items()
        if var.alloc in HEAP
        and var.alloc_line
        and var.freed is None
        and not var.escaped
        and name not in scan.param_names
    ]


def on_return(scan: Walk, returned: str, st: Statement, null_here: frozenset[str]) -> None:
    """Note what a ``return`` leaves allocated (judged at the end of the walk)."""
    for name, _ in _owned(scan):
        if name != returned and name not in null_here:
            scan.returns.append((name, st.line))


def on_function_end(scan: Walk) -> None:
    """Memory freed later but not on an early return; memory never released."""
    for name, line in scan.returns:
        var = scan.env.get(name)
        if var is not None and var.freed is not None:
            scan.report(
                RULE.id, line, f"'{name}' is freed at line {var.freed} but not on this return",
                f"{name}@{line}", confidence=0.7,
            )  # fmt: skip
    for name, var in _owned(scan):
        scan.report(
            RULE.id, var.alloc_line, f"'{name}' ({var.alloc}) is never released", name,
            confidence=0.35,
        )  # fmt: skip
