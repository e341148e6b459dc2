"""The walk's passes over calls and assignments: copies, frees, taint, what escapes.

The rules' checks are called from here at their hooks (``on_call``, ``on_dropped_result``,
``on_release``, ``on_set``; see :mod:`jarvis_graph.security.rules`). The copy pass reports
the copy rules itself (``c-copy-overflow``, ``c-read-overflow``, ``c-unsafe-string-api``):
it sizes each copy once and keeps the sizes and contents it writes as facts of the walk.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

from jarvis_graph.security import c_api as k
from jarvis_graph.security import c_checks
from jarvis_graph.security.c_facts import (
    HEAP,
    Var,
    alloc_of,
    base_var,
    call_names,
    calls,
    const_eval,
    literal_text,
    strip_casts,
    var_of,
    words,
    worth_passing,
)
from jarvis_graph.security.c_source import Statement
from jarvis_graph.security.rules import (
    HOOKS,
    WATCHED_CALLS,
    call_hooks,
    run_text_hooks,
    watched_by_pattern,
)
from jarvis_graph.security.rules.c_copy_overflow import CAT, COPY, MEM, NCAT, NCPY, SIZED, WIDE

if TYPE_CHECKING:
    from jarvis_graph.security.c_walk import Walk

# the calls the walk's own passes look at (frees, and the calls that fill variables with
# outside input); with the calls the rules watch, the only calls a statement is read for
_ENGINE_CALLS = frozenset({"free", "realloc", *k.INPUT_FILL})
_KNOWN = _ENGINE_CALLS | WATCHED_CALLS
_MEMBER = re.compile(r"->|\.\s*[A-Za-z_]|\[")
_ALLOC_WORD = re.compile(r"\b(?:new|\w*alloc\w*|\w*dup)\b")
_NAME_OR_ADDR = re.compile(r"&?\s*[A-Za-z_]\w*")
_ARGV = re.compile(r"\bargv\b")
_INDEXED_LHS = re.compile(r"^\s*([A-Za-z_]\w*)\s*\[\s*(.+?)\s*\]\s*(?:\.\w+|->\w+)?\s*$")


def _var(scan: Walk, expr: str) -> tuple[str | None, Var | None]:
    return var_of(expr, scan.env)


def _src_len(scan: Walk, expr: str) -> int | None:
    lit = scan.src.literal(strip_casts(expr))
    if lit is not None:
        return len(lit.text)
    _, var = _var(scan, expr)
    return var.string_len() if var else None


def call_checks(
    scan: Walk,
    text: str,
    st: Statement,
    *,
    condition: bool = False,
    in_expression: bool = False,
) -> None:
    """The passes and the rules' ``on_call``/``on_dropped_result`` checks on one statement."""
    names = call_names(text)
    if not names:
        return
    if not scan.has_heap and names.isdisjoint(_KNOWN) and not _runs_programs(names):
        # Only calls of this file's functions could matter. Without heap memory in the walk
        # what escapes through them matters to no rule, and ``follow`` walks a callee only
        # from the top level and with an argument worth passing.
        if scan.callees.keys().isdisjoint(names) or scan.depth >= 1:
            return  # (most statements)
        if not any(worth_passing(v, True) for _, v in c_checks.touched(scan, text)):
            return
    found = calls(text)
    for name, args, offset in found:
        if name not in _KNOWN and name not in scan.callees and not scan.has_heap:
            if not watched_by_pattern(name):
                continue  # no rule looks at this call and nothing could escape through it
        if name in ("free", "realloc") and args:
            if name == "free" or in_expression:
                release(scan, args[0], "free", st)
        _copy(scan, name, args, st)
        for check in call_hooks("on_call", name):
            check(scan, name, args, st)  # before _fill: a call reads its inputs first
        _fill(scan, name, args)
        if name in scan.callees:
            scan.follow(name, args, st)
        if scan.has_heap and (name in scan.callees or not k._NONCAPTURE_RE.match(name)):
            # what escapes through the call (only heap memory of the walk can leak)
            for arg in args:
                b = base_var(arg, scan.env)
                if b is not None:
                    scan.env[b].escaped = True
        if offset == 0 and not condition and not in_expression:
            dropped = call_hooks("on_dropped_result", name)
            if dropped and text.rstrip().endswith(")"):  # the call is the whole statement
                for check in dropped:
                    check(scan, name, args, st)


@lru_cache(maxsize=8192)
def _runs_programs(names: frozenset[str]) -> bool:
    """Whether a rule watches one of the called names through its name pattern."""
    return any(watched_by_pattern(name) for name in names)


def _copy(scan: Walk, name: str, args: list[str], st: Statement) -> None:
    if len(args) < 2 or not (
        name in COPY | CAT | NCPY | NCAT | MEM | SIZED or name in ("memset", "wmemset")
    ):
        return
    dname, dst = _var(scan, args[0])
    if name in ("fgets", "fgetws"):
        dname, dst = _var(scan, args[0])
        n = const_eval(args[1], scan.env)
        if dst and dst.cap is not None and dst.elem and n is not None and n * dst.elem > dst.cap:
            scan.report("c-copy-overflow", st.line, f"reads {n} into {dst.cap} bytes", dname or "")
        return
    elem = 4 if WIDE.match(name) else 1
    if dst is not None and dst.elem:
        elem = dst.elem if name not in MEM and name != "memset" else 1
    if name == "wmemset":
        elem = 4
    _, src = _var(scan, args[1])
    cap = dst.cap if dst is not None else None
    need = None
    if name in COPY:
        n = _src_len(scan, args[1])
        need = (n + 1) * elem if n is not None else None
    elif name in CAT and dst is not None:
        n, have = _src_len(scan, args[1]), dst.string_len() if dst.slen is not None else None
        need = (n + have + 1) * elem if n is not None and have is not None else None
    elif name in NCPY and len(args) > 2:
        n = const_eval(args[2], scan.env)
        need = n * elem if n is not None else None
    elif name in NCAT and len(args) > 2 and dst is not None and dst.slen is not None:
        n, have = const_eval(args[2], scan.env), dst.slen
        s = _src_len(scan, args[1])
        if n is not None and s is not None:
            need = (min(n, s) + have + 1) * elem
    elif name in MEM or name in ("memset", "wmemset"):
        need = const_eval(args[2], scan.env) if len(args) > 2 else None
        if name.startswith("wmem") and need is not None:
            need *= 4
        if name in MEM and src is not None and src.cap is not None and need is not None:
            if need > src.cap and (dst is None or dst.cap is None or need <= dst.cap):
                scan.report(
                    "c-read-overflow", st.line,
                    f"reads {need} bytes from a {src.cap}-byte buffer", args[1],
                )  # fmt: skip
    elif name in SIZED and len(args) > 2:
        n = const_eval(args[1], scan.env)
        need = n * elem if n is not None else None
    _after_copy(scan, name, args, st, dname, dst, src, cap, need)


def _after_copy(
    scan: Walk,
    name: str,
    args: list[str],
    st: Statement,
    dname: str | None,
    dst: Var | None,
    src: Var | None,
    cap: int | None,
    need: int | None,
) -> None:
    if cap is not None and need is not None and need > cap:
        scan.report(
            "c-copy-overflow", st.line, f"{name} writes {need} bytes into {cap}", dname or ""
        )
    elif (cap is None or need is None) and name in COPY | CAT:
        outside = _outside_len(src, args[1])
        if cap is not None and outside is not None and (outside[0] is None or outside[0] >= cap):
            longest = "any length" if outside[0] is None else f"up to {outside[0]} characters"
            scan.report(
                "c-copy-overflow",
                st.line,
                f"{name} copies {outside[1]} of {longest} into {cap} bytes, with no bound",
                dname or "",
            )
        elif scan.src.literal(strip_casts(args[1])) is None:
            scan.report(
                "c-unsafe-string-api", st.line, f"{name} with sizes not known here", dname or ""
            )
    if dst is None:
        return
    dst.init_elems = None
    copied = name in COPY | NCPY or (name in MEM and name != "bcopy")
    dst.literal = literal_text(scan.src, scan.env, args[1]) if copied else None
    if name in ("memset", "wmemset") and need is not None and dst.elem and dst.cap:
        dst.init_elems = need // dst.elem
    if src is not None and src.taint and name not in ("memset", "wmemset"):
        dst.taint = src.taint
    if name in COPY | NCPY:
        dst.slen = _src_len(scan, args[1])
    elif name in CAT | NCAT and dst.slen is not None:
        s = _src_len(scan, args[1])
        dst.slen = dst.slen + s if s is not None else None
    elif name in ("memset", "wmemset"):
        dst.slen = None


def _outside_len(src: Var | None, expr: str) -> tuple[int | None, str] | None:
    """The longest string outside input ``expr`` can be (``None``: any), and what it is.

    ``None`` when ``expr`` is not outside input (then nothing is known to be too long).
    """
    if src is not None and src.taint:
        longest = src.cap // src.elem - 1 if src.cap is not None and src.elem else None
        return longest, "outside input"
    if "argv" in expr and _ARGV.search(expr):
        return None, "a command-line argument"
    return None


def _fill(scan: Walk, name: str, args: list[str]) -> None:
    where = k.INPUT_FILL.get(name)
    if where is None:
        return
    targets = args[-where:] if where < 0 else args[where : where + 1]
    if where < 0:
        targets = args[(-where):]
    for arg in targets:
        b = base_var(arg, scan.env)
        if b is not None:
            var = scan.env[b]
            var.taint, var.ival, var.init, var.slen = "outside input", None, True, None
            var.init_elems, var.literal = None, None


def release(scan: Walk, expr: str, kind: str, st: Statement) -> None:
    """``free``/``delete``/``delete[]`` of an expression (the rules' ``on_release`` judge it).

    Freeing a member or an element (``p->buf``, ``s.data``, ``a[i]``) releases that
    member's memory, not the variable's: the facts of ``p`` stay as they are.
    """
    if _MEMBER.search(strip_casts(expr)):
        return
    name, var = _var(scan, expr)
    if var is None or var.null:
        return
    for _, check in HOOKS["on_release"]:
        check(scan, name or "", var, kind, st)
    var.freed = st.line


def transfer(scan: Walk, name: str, var: Var, rhs: str, st: Statement) -> None:
    """The facts of ``name`` after ``name = rhs``."""
    fresh = Var(type=var.type, pointer=var.pointer, array=var.array, elem=var.elem)
    plain = strip_casts(rhs).strip()
    fresh.upper_checked = False
    # substring tests before the patterns that need them (most right-hand sides have none)
    maybe_alloc = "new" in rhs or "alloc" in rhs or "dup" in rhs
    alloc = alloc_of(rhs, scan.env) if maybe_alloc and _ALLOC_WORD.search(rhs) else None
    lit = scan.src.literal(plain)
    if plain in ("NULL", "0", "nullptr") and var.pointer:
        fresh.null = True
    elif alloc is not None:
        kind, size, place = alloc
        fresh.alloc, fresh.cap, fresh.alloc_line = kind, size, st.line
        scan.has_heap = scan.has_heap or kind in HEAP
        fresh.alloc_unchecked = kind in ("malloc", "calloc", "realloc")
        fresh.init_elems = 0 if kind in ("malloc", "new[]", "stack") else None
        if place:
            pvar = scan.env.get(place)
            fresh.alloc = pvar.alloc if pvar and pvar.alloc in ("stack", "static") else "placement"
    elif lit is not None:
        fresh.alloc, fresh.slen = "literal", len(lit.text)
        fresh.cap = (len(lit.text) + 1) * (var.elem or 1)
    elif _NAME_OR_ADDR.fullmatch(plain) and plain.lstrip("& ") in scan.env:
        other = scan.env[plain.lstrip("& ")]
        if plain.startswith("&"):
            fresh.alloc, fresh.cap = (other.alloc or "stack"), other.cap
        else:
            _alias(fresh, other)
        other.escaped = True
    else:
        fresh.ival = const_eval(rhs, scan.env) if var.integer or not var.pointer else None
        fresh.ival_from = _known_sources(scan, rhs) if fresh.ival is not None else frozenset()
    taint_from(scan, fresh, rhs)
    if lit is not None:
        fresh.literal = lit.text
    elif plain in scan.src.macros:  # a name or an address of one: _alias copied its literal
        fresh.literal = literal_text(scan.src, scan.env, plain)
    run_text_hooks("on_set", rhs, scan, name, rhs, lit, st)
    scan.env[name] = fresh


def _alias(fresh: Var, other: Var) -> None:
    fields = ("cap", "slen", "taint", "alloc", "alloc_line", "freed", "null", "ival", "below")
    for field in (*fields, "literal"):
        setattr(fresh, field, getattr(other, field))
    fresh.init_elems, fresh.alloc_unchecked = other.init_elems, other.alloc_unchecked
    if other.array and other.alloc is None:
        fresh.alloc = "stack"


# Calls whose result is a count bounded by their own arguments, not the data itself.
_BOUNDED_RESULT = {"recv", "recvfrom", "read", "fread", "fwrite", "write", "send", "strlen",
                   "wcslen", "snprintf", "_snprintf", "sizeof"}  # fmt: skip


_TAINT_CALLS = frozenset(_BOUNDED_RESULT | k.INPUT_RETURN | k.RANDOM_RETURN)


_RANDOM_MOD = re.compile(
    r"\s*(?:\(\s*\w+\s*\)\s*)?\(?\s*(?:rand|random|lrand48)\s*\(\s*\)\s*\)?\s*%\s*(0[xX][0-9a-fA-F]+|[1-9]\d*)[uUlL]*\s*"
)


def taint_from(scan: Walk, var: Var, rhs: str) -> None:
    """Mark ``var`` as outside/random data when ``rhs`` reads such data."""
    names = call_names(rhs)
    if not names.isdisjoint(_TAINT_CALLS):
        found = calls(rhs)
        lead = len(rhs) - len(rhs.lstrip())
        if found and found[0][2] == lead and found[0][0] in _BOUNDED_RESULT:
            return
    if names & k.INPUT_RETURN or ("argv" in rhs and _ARGV.search(rhs)):
        var.taint = "outside input"
    elif names & k.RANDOM_RETURN:
        var.taint = "a random value"
        m = _RANDOM_MOD.fullmatch(rhs)
        if m:  # rand() is never negative: rand() % 6 stays in 0..5
            var.below = int(m.group(1), 0)
    for word in words(rhs):
        other = scan.env.get(word)
        if other is not None and other.taint and other is not var:
            var.taint = var.taint or other.taint
    if var.taint:
        var.ival = None


def _known_sources(scan: Walk, rhs: str) -> frozenset[str]:
    """The variables of known value ``rhs`` reads, and those their own values came from."""
    found: set[str] = set()
    for word in words(rhs):
        other = scan.env.get(word)
        if other is not None and other.ival is not None:
            found.add(word)
            found |= other.ival_from
    return frozenset(found)


def store(scan: Walk, lhs: str, rhs: str, st: Statement) -> None:
    """An assignment through a pointer, index or member (``p[i] = x``, ``s->f = p``)."""
    m = _INDEXED_LHS.match(lhs) if "[" in lhs else None
    if m and m.group(1) in scan.env:
        var, idx = scan.env[m.group(1)], const_eval(m.group(2), scan.env)
        if var.init_elems is not None and idx is not None and idx == var.init_elems:
            var.init_elems += 1
        if rhs.strip() == "0" and idx is not None and (var.cap or 0) > idx * (var.elem or 1):
            var.slen = idx  # a terminating zero inside the buffer
    if not scan.has_heap:
        return  # what escapes matters only for heap memory the walk holds
    name = strip_casts(rhs).strip()
    if name in scan.env:
        scan.env[name].escaped = True
