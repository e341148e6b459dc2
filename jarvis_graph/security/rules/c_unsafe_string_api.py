"""Rule ``c-unsafe-string-api``, reported by a shared pass of the walk.

strcpy/strcat whose source and destination sizes the walk does not know (a maybe).
"""

from __future__ import annotations

from jarvis_graph.security.model import Rule
from jarvis_graph.security.rules.c_copy_overflow import CAT, COPY

RULE = Rule(
    "c-unsafe-string-api",
    "c",
    "unsafe_api",
    "CWE-120",
    "low",
    "unbounded string copy whose sizes the function does not show",
    "use a bounded copy (snprintf, strlcpy) with the destination size",
    calls=frozenset(COPY | CAT),
)
# reported by a shared pass of the walk, which holds the facts this rule needs
EMITTED_BY = "c_calls._copy (the copy pass)"
