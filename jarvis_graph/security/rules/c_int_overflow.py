"""Rule ``c-int-overflow``, reported by a shared pass of the walk.

``x + c`` or ``x * y`` past the type's range, or on outside data never bounded.
"""

from __future__ import annotations

from jarvis_graph.security.model import Rule

RULE = Rule(
    "c-int-overflow",
    "c",
    "integer_overflow",
    "CWE-190",
    "medium",
    "integer arithmetic that can overflow its type",
    "check the operand against the type's limit before the operation",
)
# reported by a shared pass of the walk, which holds the facts this rule needs
EMITTED_BY = "c_calls.arith (the arithmetic pass)"
