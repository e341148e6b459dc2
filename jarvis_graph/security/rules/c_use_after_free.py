"""Rule ``c-use-after-free``: a freed pointer dereferenced, printed or handed on (a maybe)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jarvis_graph.security import c_text as t
from jarvis_graph.security.model import Rule

if TYPE_CHECKING:
    from jarvis_graph.security.c_facts import Var
    from jarvis_graph.security.c_source import Statement
    from jarvis_graph.security.c_walk import Walk

RULE = Rule(
    "c-use-after-free",
    "c",
    "use_after_free",
    "CWE-416",
    "high",
    "pointer used after its memory was freed",
    "do not use the pointer after free; set it to NULL when freeing",
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
    """A use of freed memory; handing it to an unknown function is only a maybe."""
    if var.freed is None or callee or name in t.released(text):
        return
    strong = deref or name in t.printed(text)
    if strong or not condition:
        scan.report(
            RULE.id, st.line, f"'{name}' was freed at line {var.freed}", name,
            confidence=None if strong else 0.35,
        )  # fmt: skip
