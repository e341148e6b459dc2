"""Rule ``c-hardcoded-credential``: a variable named like a secret set to a string literal.

The literal may be written in place or come through an object-like macro of the file.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from jarvis_graph.security.c_facts import literal_text
from jarvis_graph.security.model import Rule

if TYPE_CHECKING:
    from jarvis_graph.security.c_source import Literal, Statement
    from jarvis_graph.security.c_walk import Walk

# read lowercased: a case-insensitive alternation costs four times as much
_SECRET_LOWER = re.compile(r"passw|pwd\b|secret|api_?key|private_?key|token|credential")

RULE = Rule(
    "c-hardcoded-credential",
    "c",
    "hardcoded_secret",
    "CWE-798",
    "high",
    "credential or key written in the source",
    "read it from a protected configuration or secret store",
)


def on_set(scan: Walk, name: str, rhs: str, literal: Literal | None, st: Statement) -> None:
    """A non-empty string literal (in place or a macro) given to a secret-named variable."""
    if _SECRET_LOWER.search(name.lower()) is None:
        return
    text = literal.text if literal is not None else literal_text(scan.src, scan.env, rhs)
    if text:
        scan.report(RULE.id, st.line, f"'{name}' is a literal", name)
