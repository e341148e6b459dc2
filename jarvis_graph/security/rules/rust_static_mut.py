"""Rule ``rust-static-mut``: a ``static mut``, shared mutable state without a lock."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from jarvis_graph.security.model import Rule
from jarvis_graph.security.rust_text import at_word

if TYPE_CHECKING:
    from jarvis_graph.security.rust_text import RustSource

_STATIC_MUT = re.compile(r"static\s+mut\s+(\w+)")

RULE = Rule(
    "rust-static-mut",
    "rust",
    "data_race",
    "CWE-362",
    "medium",
    "static mut is shared mutable state",
    "use an atomic, Mutex or OnceLock",
)


def on_rust_file(rust: RustSource) -> None:
    """Each ``static mut`` item."""
    for m in at_word(_STATIC_MUT, rust.masked):
        rust.report(RULE.id, m.start(), f"'{m.group(1)}'")
