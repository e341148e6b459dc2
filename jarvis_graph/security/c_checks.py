"""The walk's checks of uses and conditions (run by :class:`~.c_flow.FunctionScan`).

Each check reads the facts the walk holds for the variables a statement touches (sizes,
literal or outside data, allocation kind, freed, NULL, checked) and reports only when those
facts show the problem.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jarvis_graph.security import c_text as t
from jarvis_graph.security.c_facts import (
    Var,
    base_var,
    calls,
    const_eval,
    idents,
    strip_casts,
)
from jarvis_graph.security.c_facts import touched as touched_vars
from jarvis_graph.security.c_source import Statement
from jarvis_graph.security.rules import HOOKS, run_text_hooks

if TYPE_CHECKING:
    from jarvis_graph.security.c_walk import Walk


def touched(scan: Walk, text: str) -> list[tuple[str, Var]]:
    """The variables of the walk a piece of code mentions."""
    return touched_vars(scan.env, text)


def guards(scan: Walk, cond: str, st: Statement) -> None:
    """NULL and upper-bound checks, with the rules' ``on_condition``/``on_null_check``."""
    cond = strip_casts(cond)
    run_text_hooks("on_condition", cond, scan, cond, st)
    found = touched(scan, cond)
    if not found:
        return
    checked, bounded = t.null_checked(cond), t.upper_bounded(cond)
    for name, var in found:
        if name in checked:
            for _, check in HOOKS["on_null_check"]:
                check(scan, name, var, st)
            var.null, var.alloc_unchecked, var.null_checked = False, False, True
        if name in bounded:
            var.upper_checked = True


def worth_checking(scan: Walk, text: str) -> bool:
    """Whether ``uses`` could find anything in ``text`` or in a part of it.

    ``uses`` looks only at variables that are freed, NULL, unchecked, unset, indexed, or
    pointer parameters not yet dereferenced; a statement with none of them is skipped.
    """
    arrays = t.indexed_arrays(text) if "[" in text else frozenset()
    env = scan.env
    for name in t.plain_names(text):
        var = env.get(name)
        if var is not None and _watched(scan, name, var, arrays):
            return True
    return False


def _watched(scan: Walk, name: str, var: Var, arrays: frozenset[str]) -> bool:
    """Whether a use of ``var`` can contradict what the walk knows of it."""
    return (
        var.freed is not None
        or var.null
        or var.alloc_unchecked
        or not var.init
        or name in arrays
        or (
            name in scan.param_names and var.pointer and var.derefs is None and not var.null_checked
        )
    )


def uses(
    scan: Walk, text: str, st: Statement, *, condition: bool = False, lhs: bool = False
) -> None:
    """Uses of the variables one piece of code touches, with the facts a use can contradict.

    The rules' ``on_use`` checks judge each use (freed, NULL, unchecked pointers); this pass
    itself reports reads of unset variables and accesses by index.
    """
    arrays = t.indexed_arrays(text) if "[" in text else frozenset()
    derefs: frozenset[str] | None = None
    passed: set[str] | None = None
    for name, var in touched(scan, text):
        if lhs and text.strip() == name:
            continue
        if not _watched(scan, name, var, arrays):
            continue  # nothing known about this variable that a use could contradict
        watch_deref = name in scan.param_names and var.pointer and var.derefs is None
        if derefs is None:
            derefs = t.derefs(text)
        deref = name in derefs
        if (var.freed is not None or var.null) and passed is None:
            passed = _callee_args(scan, text)  # only the rules on freed/NULL pointers ask
        callee = passed is not None and name in passed
        for _, check in HOOKS["on_use"]:
            check(scan, name, var, text, st, deref, callee, condition)
        if deref and watch_deref and not var.null_checked:
            var.derefs = st.line
        _uninit_read(scan, text, name, var, st, lhs)
        if name in arrays:
            _index_use(scan, text, name, var, st, lhs)


def _callee_args(scan: Walk, text: str) -> set[str]:
    """Variables passed straight to a function of this file (judged there)."""
    out: set[str] = set()
    if scan.callees.keys().isdisjoint(idents(text)):
        return out
    for fn, args, _ in calls(text):
        if fn in scan.callees:
            out.update(b for b in (base_var(a, scan.env) for a in args) if b is not None)
    return out


def _uninit_read(scan: Walk, text: str, name: str, var: Var, st: Statement, lhs: bool) -> None:
    if var.init:
        return
    if lhs and t.write_target(text) == name:
        var.init = True
        return
    if name in t.read_names(text):
        scan.report("c-uninitialized", st.line, f"'{name}' is read before it is set", name)
    var.init = True


def _index_use(scan: Walk, text: str, name: str, var: Var, st: Statement, lhs: bool) -> None:
    """Array accesses ``name[index]`` against the buffer's size and initialized part."""
    for array, idx in t.indexed(text) if "[" in text else ():
        if array != name:
            continue
        count = var.cap // var.elem if var.cap is not None and var.elem else None
        loop = next((lp for lp in reversed(scan.loops) if lp[0] == idx), None)
        if loop is not None:
            _loop_access(scan, name, var, loop[1], count, st, lhs)
            continue
        ivar = scan.env.get(idx)
        value = const_eval(idx, scan.env)
        if count is not None and value is not None and not 0 <= value < count:
            rule = "c-copy-overflow" if lhs else "c-read-overflow"
            scan.report(rule, st.line, f"index {value} of a {count}-element buffer", name)
        elif (
            ivar is not None
            and ivar.taint
            and not ivar.upper_checked
            and not (ivar.below is not None and count is not None and ivar.below <= count)
        ):
            scan.report(
                "c-index-unchecked", st.line,
                f"'{idx}' comes from {ivar.taint} and is not checked against the size", idx,
            )  # fmt: skip
        if not lhs and var.init_elems is not None and value is not None:
            if value >= var.init_elems:
                scan.report("c-uninitialized", st.line, f"'{name}[{value}]' is not set", name)


def _loop_access(
    scan: Walk,
    name: str,
    var: Var,
    bound: int | None,
    count: int | None,
    st: Statement,
    lhs: bool,
) -> None:
    if bound is None:
        return
    if count is not None and bound > count:
        rule = "c-copy-overflow" if lhs else "c-read-overflow"
        scan.report(rule, st.line, f"loop runs to {bound} over {count} elements", name)
    if lhs:
        if var.init_elems is not None:
            var.init_elems = max(var.init_elems, bound)
    elif var.init_elems is not None and bound > var.init_elems:
        scan.report(
            "c-uninitialized", st.line,
            f"reads {bound} elements of '{name}', {var.init_elems} were set", name,
        )  # fmt: skip
