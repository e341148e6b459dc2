"""Rule ``c-null-deref``, reported by a shared pass of the walk.

A pointer the walk saw set to NULL, dereferenced.
"""

from __future__ import annotations

from jarvis_graph.security.model import Rule

RULE = Rule(
    "c-null-deref",
    "c",
    "null_dereference",
    "CWE-476",
    "high",
    "pointer set to NULL is dereferenced",
    "check the pointer before dereferencing it",
)
# reported by a shared pass of the walk, which holds the facts this rule needs
EMITTED_BY = "c_checks.uses (each use of a variable)"
