"""Rule ``c-unchecked-alloc``, reported by a shared pass of the walk.

A malloc/calloc/realloc result dereferenced before any NULL check.
"""

from __future__ import annotations

from jarvis_graph.security.model import Rule

RULE = Rule(
    "c-unchecked-alloc",
    "c",
    "unchecked_result",
    "CWE-690",
    "medium",
    "allocation result used without a NULL check",
    "check the pointer against NULL before using it",
)
# reported by a shared pass of the walk, which holds the facts this rule needs
EMITTED_BY = "c_checks.uses (each use of a variable)"
