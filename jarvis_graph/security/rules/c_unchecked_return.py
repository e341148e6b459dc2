"""Rule ``c-unchecked-return``: the result of a call that can fail is dropped."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jarvis_graph.security.c_api import INPUT_FILL
from jarvis_graph.security.c_facts import base_var
from jarvis_graph.security.model import Rule

if TYPE_CHECKING:
    from jarvis_graph.security.c_source import Statement
    from jarvis_graph.security.c_walk import Walk

# name -> confidence of a dropped result
CHECK_RESULT = {
    "fgets": 0.6, "fgetws": 0.6, "fread": 0.6, "fscanf": 0.6, "fwscanf": 0.6, "scanf": 0.6,
    "wscanf": 0.6, "sscanf": 0.6, "swscanf": 0.6, "remove": 0.6, "_wremove": 0.6,
    "rename": 0.6, "_wrename": 0.6, "setuid": 0.8, "setgid": 0.8, "seteuid": 0.8,
    "chdir": 0.6, "chroot": 0.8, "read": 0.6, "fwrite": 0.5, "write": 0.5, "fputs": 0.45,
    "fputws": 0.45, "fputc": 0.45, "fputwc": 0.45, "putc": 0.45, "putwc": 0.45,
    "puts": 0.45, "_putws": 0.45, "putchar": 0.45, "putwchar": 0.45,
}  # fmt: skip

RULE = Rule(
    "c-unchecked-return",
    "c",
    "unchecked_result",
    "CWE-252",
    "medium",
    "result of an I/O call is ignored",
    "check the return value and handle the failure",
    calls=frozenset(CHECK_RESULT),
)


def on_dropped_result(scan: Walk, name: str, args: list[str], st: Statement) -> None:
    """A call made as a whole statement, so nothing reads its result."""
    confidence = CHECK_RESULT[name]
    where = INPUT_FILL.get(name)
    if name.endswith("scanf") and where is not None:
        # A failed scanf leaves its targets as they were: only a risk if they were unset.
        targets = [scan.env.get(base_var(a, scan.env) or "") for a in args[abs(where) :]]
        if not any(v is not None and (not v.init or v.init_elems == 0) for v in targets):
            confidence = 0.3
    scan.report(RULE.id, st.line, f"{name}() can fail", name, confidence=confidence)
