"""Rule ``c-index-unchecked``, reported by a shared pass of the walk.

An array indexed by outside data that no condition bounded from above.
"""

from __future__ import annotations

from jarvis_graph.security.model import Rule

RULE = Rule(
    "c-index-unchecked",
    "c",
    "buffer_overflow",
    "CWE-129",
    "high",
    "array index from outside data without an upper-bound check",
    "check 0 <= index < number of elements before indexing",
)
# reported by a shared pass of the walk, which holds the facts this rule needs
EMITTED_BY = "c_checks._index_use (each indexed use of an array)"
