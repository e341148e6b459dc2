"""Rule ``rust-ffi-unwrap``: unwrap/expect inside an ``extern "C"`` fn or on a foreign value."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from jarvis_graph.security.model import Rule

if TYPE_CHECKING:
    from jarvis_graph.security.rust_text import RustFn, RustSource

_UNWRAP = re.compile(r"\.\s*(unwrap|expect)\s*\(")
_FOREIGN = re.compile(r"CStr::from_ptr|CString::from_raw")

RULE = Rule(
    "rust-ffi-unwrap",
    "rust",
    "unchecked_result",
    "CWE-252",
    "medium",
    "unwrap/expect on a value from FFI",
    "handle the error instead of panicking across FFI",
)


def on_rust_fn(rust: RustSource, fn: RustFn) -> None:
    """A panic that can cross the FFI boundary, or unwrap of what C handed over."""
    body = fn.body
    for u in _UNWRAP.finditer(body):
        stmt_start = max(body.rfind(";", 0, u.start()), body.rfind("{", 0, u.start()))
        stmt = body[stmt_start + 1 : u.start()]
        if fn.ext:
            rust.report(
                RULE.id, fn.start + u.start(),
                f"{u.group(1)} inside extern \"C\" fn '{fn.name}' can panic across FFI", fn.name,
                0.8,
            )  # fmt: skip
        elif _FOREIGN.search(stmt) or any(
            re.search(rf"\b{re.escape(f)}\s*\(", stmt) for f in rust.externs
        ):
            rust.report(RULE.id, fn.start + u.start(), f"{u.group(1)} on a foreign value", fn.name)
