"""Rule ``c-uninitialized``, reported by a shared pass of the walk.

A variable read before it is set, or an array element past the part that was set.
"""

from __future__ import annotations

from jarvis_graph.security.model import Rule

RULE = Rule(
    "c-uninitialized",
    "c",
    "uninitialized",
    "CWE-457",
    "high",
    "variable or array element read before it is initialized",
    "initialize the variable (all elements) before reading it",
)
# reported by a shared pass of the walk, which holds the facts this rule needs
EMITTED_BY = "c_checks.uses (each use of a variable)"
