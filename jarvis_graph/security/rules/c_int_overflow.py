"""Rule ``c-int-overflow``: ``x + c`` or ``x * y`` past the type's range, or on unbounded input."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jarvis_graph.security import c_text as t
from jarvis_graph.security.c_facts import INT_RANGES, const_eval, touched
from jarvis_graph.security.model import Rule

if TYPE_CHECKING:
    from jarvis_graph.security.c_source import Statement
    from jarvis_graph.security.c_walk import Walk

RULE = Rule(
    "c-int-overflow",
    "c",
    "integer_overflow",
    "CWE-190",
    "medium",
    "integer arithmetic that can overflow its type",
    "check the operand against the type's limit before the operation",
    hints=("+", "*"),
)


def on_arith(scan: Walk, text: str, st: Statement) -> None:
    """Integer overflow: ``x++``, ``x + c``, ``x * y`` on a value that can reach the limit."""
    candidates = [
        (name, var)
        for name, var in touched(scan.env, text)
        if var.integer and (var.ival is not None or (var.taint and not var.upper_checked))
    ]
    ops = t.arithmetic(text) if candidates else ()
    for name, var in candidates:
        found = next((o for o in ops if o[0] == name), None)
        if found is None:
            continue
        _, op, other = found
        lo, hi = INT_RANGES[var.type]
        if var.ival is not None:
            rhs = var.ival if other == name else const_eval(other, scan.env)
            if rhs is None:
                continue
            result = var.ival + rhs if op == "+" else var.ival * rhs
            if not lo <= result <= hi:
                scan.report(RULE.id, st.line, f"{var.ival} {op} {rhs} exceeds {var.type}", name)
        elif var.taint and not var.upper_checked:
            scan.report(RULE.id, st.line, f"'{name}' comes from {var.taint} unchecked", name)
