"""Rule ``rust-transmute``: ``mem::transmute`` reinterprets the bits of a value."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from jarvis_graph.security.model import Rule
from jarvis_graph.security.rust_text import at_word

if TYPE_CHECKING:
    from jarvis_graph.security.rust_text import RustSource

_TRANSMUTE = re.compile(r"(?:mem::)?transmute\s*(?:::<[^>]*>)?\s*\(")

RULE = Rule(
    "rust-transmute",
    "rust",
    "unsafe_cast",
    "CWE-843",
    "high",
    "mem::transmute reinterprets memory",
    "use from_ne_bytes, as casts or TryFrom",
)


def on_rust_file(rust: RustSource) -> None:
    """Each call of transmute."""
    text = rust.masked
    for m in at_word(_TRANSMUTE, text):
        if "transmute" in text[max(0, m.start() - 6) : m.end()]:
            rust.report(RULE.id, m.start(), "reinterprets the bits of a value")
