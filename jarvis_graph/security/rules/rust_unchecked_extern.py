"""Rule ``rust-unchecked-extern``: the result of a foreign function is dropped."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from jarvis_graph.security.model import Rule

if TYPE_CHECKING:
    from jarvis_graph.security.rust_text import RustFn, RustSource

RULE = Rule(
    "rust-unchecked-extern",
    "rust",
    "unchecked_result",
    "CWE-252",
    "medium",
    "result of an extern function is ignored",
    "check the returned status code",
)


def on_rust_fn(rust: RustSource, fn: RustFn) -> None:
    """A call of a declared extern fn (returning a value) made as a whole statement."""
    for f in rust.externs:
        pattern = (
            rf"(?:^|[;{{}}]|\blet\s+_\s*=)\s*(?:unsafe\s*\{{\s*)?{re.escape(f)}\s*\([^;]*\)\s*;"
        )
        for c in re.finditer(pattern, fn.body):
            rust.report(
                RULE.id, fn.start + c.start() + c.group(0).index(f),
                f"the result of {f}() is dropped", fn.name,
            )  # fmt: skip
