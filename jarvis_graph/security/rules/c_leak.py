"""Rule ``c-leak``, reported by a shared pass of the walk.

Heap memory that is neither freed, returned, stored nor handed on; confident when it
is freed on the main path but not before an early return.
"""

from __future__ import annotations

from jarvis_graph.security.model import Rule

RULE = Rule(
    "c-leak",
    "c",
    "memory_leak",
    "CWE-401",
    "medium",
    "allocated memory is neither freed, returned nor stored",
    "free the memory on every path out of the function",
)
# reported by a shared pass of the walk, which holds the facts this rule needs
EMITTED_BY = "c_calls.at_end (the end of the walk)"
