"""Rule ``c-mismatched-free``: malloc released with delete, new with free, new[] with delete."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jarvis_graph.security.model import Rule

if TYPE_CHECKING:
    from jarvis_graph.security.c_facts import Var
    from jarvis_graph.security.c_source import Statement
    from jarvis_graph.security.c_walk import Walk

RULE = Rule(
    "c-mismatched-free",
    "c",
    "allocation_mismatch",
    "CWE-762",
    "high",
    "memory released with a routine that does not match its allocation",
    "malloc pairs with free, new with delete, new[] with delete[]",
)


# allocation kind -> the release that matches it
MATCHING_RELEASE = {"malloc": "free", "calloc": "free", "realloc": "free", "strdup": "free",
                    "new": "delete", "new[]": "delete[]"}  # fmt: skip


def on_release(scan: Walk, name: str, var: Var, kind: str, st: Statement) -> None:
    """The release (``free``, ``delete``, ``delete[]``) does not match the allocation."""
    if var.freed is None and var.alloc in MATCHING_RELEASE and MATCHING_RELEASE[var.alloc] != kind:
        scan.report(
            RULE.id, st.line,
            f"'{name}' comes from {var.alloc} (line {var.alloc_line}), released with {kind}", name,
        )  # fmt: skip
