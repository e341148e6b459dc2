"""Rule ``c-unsafe-string-api``, reported by a shared pass of the walk.

strcpy/strcat whose source and destination sizes the walk does not know (a maybe). What the
code proves is the use of a dangerous function (CWE-676), not an overflow (CWE-120): the
confidence stays low, below the default threshold (shown with ``--min-confidence 0.3``); at
medium it put 14 more findings on juliet-dev's good functions for 13 on bad ones.
"""

from __future__ import annotations

from jarvis_graph.security.model import Rule
from jarvis_graph.security.rules.c_copy_overflow import CAT, COPY

RULE = Rule(
    "c-unsafe-string-api",
    "c",
    "unsafe_api",
    "CWE-676",
    "low",
    "unbounded string copy whose sizes the function does not show",
    "use a bounded copy (snprintf, strlcpy) with the destination size",
    calls=frozenset(COPY | CAT),
)
# reported by a shared pass of the walk, which holds the facts this rule needs
EMITTED_BY = "c_calls._copy (the copy pass)"
