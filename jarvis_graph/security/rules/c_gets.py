"""Rule ``c-gets``: any call of ``gets``, which cannot bound what it reads."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jarvis_graph.security.model import Rule

if TYPE_CHECKING:
    from jarvis_graph.security.c_source import Statement
    from jarvis_graph.security.c_walk import Walk

RULE = Rule(
    "c-gets",
    "c",
    "unsafe_api",
    "CWE-242",
    "high",
    "gets() cannot bound its input",
    "use fgets(buf, sizeof buf, stdin)",
    calls=frozenset({"gets"}),
)


def on_call(scan: Walk, name: str, args: list[str], st: Statement) -> None:
    """Every call of gets (the one rule an API name alone decides)."""
    scan.report(RULE.id, st.line, "no bound on the input", "gets")
