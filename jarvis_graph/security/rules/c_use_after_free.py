"""Rule ``c-use-after-free``, reported by a shared pass of the walk.

A freed pointer dereferenced, printed or handed on (handing it on is a maybe).
"""

from __future__ import annotations

from jarvis_graph.security.model import Rule

RULE = Rule(
    "c-use-after-free",
    "c",
    "use_after_free",
    "CWE-416",
    "high",
    "pointer used after its memory was freed",
    "do not use the pointer after free; set it to NULL when freeing",
)
# reported by a shared pass of the walk, which holds the facts this rule needs
EMITTED_BY = "c_checks.uses (each use of a variable)"
