"""Rule ``c-free-nonheap``, reported by a shared pass of the walk.

free/delete of a stack array, a static, a literal or placement-new memory.
"""

from __future__ import annotations

from jarvis_graph.security.model import Rule

RULE = Rule(
    "c-free-nonheap",
    "c",
    "free_nonheap",
    "CWE-590",
    "high",
    "free/delete of memory that is not on the heap",
    "only free memory obtained from malloc/new",
)
# reported by a shared pass of the walk, which holds the facts this rule needs
EMITTED_BY = "c_calls.release (each free/delete)"
