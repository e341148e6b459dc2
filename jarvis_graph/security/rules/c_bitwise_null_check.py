"""Rule ``c-bitwise-null-check``: ``p != NULL & p->x``, where both sides always run."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from jarvis_graph.security.model import Rule

if TYPE_CHECKING:
    from jarvis_graph.security.c_source import Statement
    from jarvis_graph.security.c_walk import Walk

_BITWISE_NULL = re.compile(r"NULL\s*\)\s*&(?!&)|&\s*\(\s*\w+\s*!=\s*NULL")

RULE = Rule(
    "c-bitwise-null-check",
    "c",
    "null_dereference",
    "CWE-476",
    "high",
    "NULL check combined with '&' (no short circuit) before a dereference",
    "use '&&' so the dereference only runs when the pointer is not NULL",
    hints=("NULL",),
)


def on_condition(scan: Walk, cond: str, st: Statement) -> None:
    """A comparison with NULL joined to the rest of the condition by a single '&'."""
    if _BITWISE_NULL.search(cond):
        scan.report(RULE.id, st.line, "both sides always run", "bitwise")
