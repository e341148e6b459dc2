"""Rule ``rust-unsafe-block``: an ``unsafe`` block with no ``// SAFETY:`` comment above it."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from jarvis_graph.security.model import Rule
from jarvis_graph.security.rust_text import at_word

if TYPE_CHECKING:
    from jarvis_graph.security.rust_text import RustSource

_UNSAFE = re.compile(r"unsafe\s*\{")

RULE = Rule(
    "rust-unsafe-block",
    "rust",
    "unsafe_code",
    "CWE-242",
    "low",
    "unsafe block without a SAFETY comment",
    "keep unsafe minimal and document the invariant in a // SAFETY: comment",
)


def on_rust_file(rust: RustSource) -> None:
    """Each unsafe block without SAFETY: on its line or the three lines above."""
    for m in at_word(_UNSAFE, rust.masked):
        line = rust.line(m.start())
        above = "\n".join(rust.lines[max(0, line - 4) : line])
        if "SAFETY:" not in above:
            rust.report(RULE.id, m.start(), "no // SAFETY: comment", conf=0.45)
