"""Rule ``rust-raw-deref``: a raw pointer dereferenced in a function that never null-checks it."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from jarvis_graph.security.model import Rule

if TYPE_CHECKING:
    from jarvis_graph.security.rust_text import RustFn, RustSource

RULE = Rule(
    "rust-raw-deref",
    "rust",
    "raw_pointer",
    "CWE-822",
    "high",
    "raw pointer dereferenced without a null check",
    "check the pointer (is_null / NonNull) or use a reference",
)


def on_rust_fn(rust: RustSource, fn: RustFn) -> None:
    """The first ``*p`` of each raw pointer the function does not check."""
    for var in fn.raws - fn.checked:
        for d in re.finditer(
            rf"(?<![\w)\]])\*\s*{re.escape(var)}\b(?!\s*(?:const|mut)\b)", fn.body
        ):
            rust.report(RULE.id, fn.start + d.start(), f"'{var}' may be null", fn.name)
            break
