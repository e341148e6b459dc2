"""Rule ``rust-mem-forget``: ``mem::forget`` leaks the value (its destructor never runs)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from jarvis_graph.security.model import Rule
from jarvis_graph.security.rust_text import at_word

if TYPE_CHECKING:
    from jarvis_graph.security.rust_text import RustSource

_FORGET = re.compile(r"mem::forget\s*\(")

RULE = Rule(
    "rust-mem-forget",
    "rust",
    "memory_leak",
    "CWE-401",
    "medium",
    "mem::forget leaks the value",
    "use ManuallyDrop or into_raw with a matching from_raw",
)


def on_rust_file(rust: RustSource) -> None:
    """Each call of mem::forget."""
    for m in at_word(_FORGET, rust.masked):
        rust.report(RULE.id, m.start(), "the value's destructor never runs")
