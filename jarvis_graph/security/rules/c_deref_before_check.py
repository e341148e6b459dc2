"""Rule ``c-deref-before-check``, reported by a shared pass of the walk.

A pointer parameter dereferenced and only later compared with NULL.
"""

from __future__ import annotations

from jarvis_graph.security.model import Rule

RULE = Rule(
    "c-deref-before-check",
    "c",
    "null_dereference",
    "CWE-476",
    "medium",
    "pointer dereferenced before it is checked against NULL",
    "move the NULL check before the first dereference",
)
# reported by a shared pass of the walk, which holds the facts this rule needs
EMITTED_BY = "c_checks.guards (each condition)"
