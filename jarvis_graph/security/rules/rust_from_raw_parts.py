"""Rule ``rust-from-raw-parts``: a slice made from a raw pointer and a length."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from jarvis_graph.security.model import Rule
from jarvis_graph.security.rust_text import at_word

if TYPE_CHECKING:
    from jarvis_graph.security.rust_text import RustFn, RustSource

_FROM_RAW_PARTS = re.compile(r"slice::from_raw_parts(?:_mut)?\s*\(\s*(\w+)")

RULE = Rule(
    "rust-from-raw-parts",
    "rust",
    "raw_pointer",
    "CWE-119",
    "high",
    "slice built from a raw pointer and length",
    "check the pointer is non-null, aligned and the length in bounds",
)


def on_rust_fn(rust: RustSource, fn: RustFn) -> None:
    """Each from_raw_parts; a maybe when the function checks the pointer."""
    for d in at_word(_FROM_RAW_PARTS, fn.body):
        unchecked = d.group(1) not in fn.checked
        rust.report(
            RULE.id, fn.start + d.start(),
            f"pointer '{d.group(1)}' {'is never null-checked' if unchecked else 'is checked'}",
            fn.name, None if unchecked else 0.35,
        )  # fmt: skip
