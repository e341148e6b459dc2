"""Rule ``c-mismatched-free``, reported by a shared pass of the walk.

malloc released with delete, new with free, new[] with delete.
"""

from __future__ import annotations

from jarvis_graph.security.model import Rule

RULE = Rule(
    "c-mismatched-free",
    "c",
    "allocation_mismatch",
    "CWE-762",
    "high",
    "memory released with a routine that does not match its allocation",
    "malloc pairs with free, new with delete, new[] with delete[]",
)
# reported by a shared pass of the walk, which holds the facts this rule needs
EMITTED_BY = "c_calls.release (each free/delete)"
