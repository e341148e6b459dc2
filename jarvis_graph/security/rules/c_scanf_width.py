"""Rule ``c-scanf-width``: a scanf-family literal format with ``%s`` or ``%[`` and no width."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from jarvis_graph.security.model import Rule

if TYPE_CHECKING:
    from jarvis_graph.security.c_source import Statement
    from jarvis_graph.security.c_walk import Walk

# name -> position of the format argument
FORMAT_AT = {"scanf": 0, "wscanf": 0, "fscanf": 1, "sscanf": 1, "fwscanf": 1, "swscanf": 1}
_STRING_CONV = re.compile(r"%(?:s|\[)")

RULE = Rule(
    "c-scanf-width",
    "c",
    "buffer_overflow",
    "CWE-120",
    "high",
    "scanf %s/%[ without a field width",
    "give a width: %99s for a 100-byte buffer",
    calls=frozenset(FORMAT_AT),
)


def on_call(scan: Walk, name: str, args: list[str], st: Statement) -> None:
    """A literal format whose string conversion has no field width."""
    if len(args) <= FORMAT_AT[name]:
        return
    lit = scan.src.literal(args[FORMAT_AT[name]])
    if lit is not None and _STRING_CONV.search(lit.text):
        scan.report(RULE.id, st.line, f"format {lit.text!r}", "scanf")
