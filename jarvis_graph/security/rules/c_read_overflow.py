"""Rule ``c-read-overflow``, reported by a shared pass of the walk.

Reads past a buffer: a memcpy/memmove larger than its source, or a read by a constant
index or a loop bound past the end.
"""

from __future__ import annotations

from jarvis_graph.security.model import Rule
from jarvis_graph.security.rules.c_copy_overflow import MEM

RULE = Rule(
    "c-read-overflow",
    "c",
    "buffer_overread",
    "CWE-126",
    "high",
    "read past the end of the source buffer",
    "bound the read by the source's size, not the destination's",
    calls=frozenset(MEM),
)
# reported by a shared pass of the walk, which holds the facts this rule needs
EMITTED_BY = "c_calls._copy (the copy pass) and c_checks._index_use (reads by index)"
