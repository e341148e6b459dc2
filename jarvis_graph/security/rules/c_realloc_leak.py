"""Rule ``c-realloc-leak``: ``p = realloc(p, n)`` loses ``p``'s block when realloc fails."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from jarvis_graph.security.c_facts import HEAP, calls, strip_casts
from jarvis_graph.security.model import Rule

if TYPE_CHECKING:
    from jarvis_graph.security.c_source import Statement
    from jarvis_graph.security.c_walk import Walk

_BLANKS = re.compile(r"\s+")

RULE = Rule(
    "c-realloc-leak",
    "c",
    "memory_leak",
    "CWE-401",
    "medium",
    "realloc's result replaces the pointer it resizes: the old block leaks if it fails",
    "assign realloc's result to a temporary, check it, then replace the pointer",
    hints=("realloc",),
)


def on_assign(scan: Walk, lhs: str, rhs: str, st: Statement) -> None:
    """``p = realloc(p, n)``: when realloc fails it returns NULL and ``p``'s block is lost.

    Confident when the walk knows ``p`` holds heap memory; a maybe when ``p`` comes from
    elsewhere (a parameter, a member), since realloc of a NULL pointer only allocates.
    """
    found = calls(strip_casts(rhs))
    if not found or found[0][2] != 0 or found[0][0].lstrip("_") != "realloc" or not found[0][1]:
        return
    resized = strip_casts(found[0][1][0])
    if _BLANKS.sub("", resized) != _BLANKS.sub("", lhs):
        return
    var = scan.env.get(resized)
    if var is not None and var.null:
        return  # realloc(NULL, n) allocates: nothing to lose
    known = var is not None and var.alloc in HEAP and not var.param
    scan.report(
        RULE.id, st.line, f"'{lhs.strip()}' is lost if realloc fails", lhs,
        confidence=None if known else 0.35,
    )  # fmt: skip
