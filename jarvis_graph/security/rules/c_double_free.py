"""Rule ``c-double-free``, reported by a shared pass of the walk.

A pointer freed a second time.
"""

from __future__ import annotations

from jarvis_graph.security.model import Rule

RULE = Rule(
    "c-double-free",
    "c",
    "double_free",
    "CWE-415",
    "high",
    "memory freed twice",
    "free once and set the pointer to NULL after freeing",
)
# reported by a shared pass of the walk, which holds the facts this rule needs
EMITTED_BY = "c_calls.release (each free/delete)"
