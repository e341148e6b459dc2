"""Walk one C/C++ function's statements in order, keeping facts about its variables.

The walk is linear (branches are read in source order, which is how the safe and unsafe
versions of a function usually differ: an assignment or check before the use, or not). Calls
to functions of the same file are followed with the caller's facts about the arguments, so a
sink is judged by what its callers pass to it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from jarvis_graph.security import c_calls, c_checks
from jarvis_graph.security.c_facts import (
    HEAP,
    TYPE_SIZES,
    Var,
    base_var,
    const_eval,
    expand,
    macro_names,
    strip_casts,
    type_size,
    worth_passing,
)
from jarvis_graph.security.c_source import CSource, Function, Statement
from jarvis_graph.security.model import Issue
from jarvis_graph.security.rules import HOOKS, make_issue, run_text_hooks

Emit = Callable[[Issue], None]
_KEYWORDS = {
    "return", "delete", "goto", "case", "else", "new", "throw", "typedef", "using", "do",
    "if", "while", "for", "switch", "break", "continue", "default", "sizeof", "namespace",
}  # fmt: skip
_DECL = re.compile(
    r"^(?P<quals>(?:(?:static|const|volatile|register|auto|struct|class|unsigned|signed)\s+)*)"
    r"(?P<type>[A-Za-z_][\w:]*+(?:<[^<>]*>)?(?:\s+(?:int|long|char|short|double))*)"
    r"(?P<ptr>\s*(?:[*&]\s*)+|\s+)(?P<name>[A-Za-z_]\w*+)\s*(?P<arr>\[[^\]]*\])?\s*"
    r"(?:=\s*(?P<init>.*))?$"
)
_SPACES = re.compile(r"\s+")
_LOOP_INIT = re.compile(r"\s*(?:[\w\s]+\s)?(\w+)\s*=\s*0\s*$")
_LOOP_COND = re.compile(r"\s*(\w+)\s*(<=?)\s*(.+)$")
_DELETE = re.compile(r"delete\s*(\[\s*\])?\s*(.+)$")
_TYPE_LIKE = re.compile(r"[A-Z]|\w+_t$|std::")
_NAME = re.compile(r"([A-Za-z_]\w*)")
_SIZES_MATTER = re.compile(r"\[|\b(?:str|wcs|mem|wmem)\w*\s*\(|printf\s*\(")

_CONTROL = re.compile(r"^(?:else\s+)?(if|while|for|switch)\s*\((.*)\)\s*(.*)$")
_CONTROL_WORDS = ("if", "while", "for", "switch", "else")
_LABEL = re.compile(r"^(?:case\s[^:]*|default|[A-Za-z_]\w*)\s*:(?!:)\s*(.*)$")


class FunctionScan:
    """Facts and findings for one function under one calling context."""

    def __init__(
        self,
        src: CSource,
        fn: Function,
        macros: dict[str, str],
        emit: Emit,
        language: str,
        callees: dict[str, Function],
        context: dict[int, Var] | None = None,
        depth: int = 0,
    ) -> None:
        self.src, self.fn, self.macros, self.emit = src, fn, macros, emit
        self.language, self.callees, self.depth = language, callees, depth
        self.env: dict[str, Var] = {}
        self.loops: list[tuple[str, int | None, int]] = []
        self.context = context or {}
        self.flagged: set[tuple[str, str]] = set()
        self.param_names: set[str] = set()
        # (name, line) of heap memory a return left held: c-leak judges them at the end
        self.returns: list[tuple[str, int]] = []
        self.has_heap = False
        # statement text -> text with macros expanded, shared by every walk of the file
        self.expanded: dict[str, str] = src.expanded
        if src.macro_names is None:
            src.macro_names = macro_names(macros)
        self.macro_names = src.macro_names
        # names the last control header found NULL (a return right under it frees nothing)
        self.guard: tuple[frozenset[str], int] = (frozenset(), -1)

    # -- reporting -----------------------------------------------------------------------
    def report(
        self, rule: str, line: int, detail: str, key: str = "", confidence: float | None = None
    ) -> None:
        """Emit one finding (once per rule and key within this walk)."""
        if key and (rule, key) in self.flagged:
            return
        self.flagged.add((rule, key))
        evidence = self.src.lines[line - 1] if 0 < line <= len(self.src.lines) else ""
        self.emit(
            make_issue(
                rule,
                language=self.language,
                file=self.src.path,
                line=line,
                evidence=evidence,
                detail=detail,
                function=self.fn.name,
                confidence=confidence,
            )
        )

    # -- the walk ------------------------------------------------------------------------
    def run(self) -> None:
        """Walk the function body and report what the rules find."""
        self._params()
        expanded = self.expanded
        used = self.fn.macros_used(self.macro_names)
        exits, else_next = _shape(self.fn)
        # (depth of an exiting block's header, the facts before the block)
        saved: list[tuple[int, dict[str, Var]]] = []
        chains: list[_Chain] = []  # the if/else chains being walked, innermost last
        for index, st in enumerate(self.fn.statements):
            while saved and st.depth <= saved[-1][0]:
                self.env = saved.pop()[1]  # the block returned: its facts end with it
            while chains and st.depth <= chains[-1].depth:
                chain = chains[-1]
                chain.ends.append(self.env)
                if st.depth == chain.depth and st.text.startswith("else"):
                    assert chain.before is not None  # noqa: S101 (_shape: else_next)
                    self.env = _copy_env(chain.before)  # an arm starts where the if did
                    # the arms before did not run: a value that makes one's condition hold
                    # cannot be the value here
                    _forget(self.env, {n for c in chain.conds for n in _decided(c, self.env, True)})
                    break
                chains.pop()
                self.env = _join(chain.before, chain.ends) if chain.before is not None else self.env
            if self.loops:
                self.loops = [lp for lp in self.loops if st.depth > lp[2]]
            text = st.text
            for name in used:  # a substring test first (a loop: no generator per statement)
                if name in text:
                    done = expanded.get(text)
                    if done is None:
                        done = expanded[text] = expand(text, self.macros, self.macro_names)
                    text = done
                    break
            if ":" in text:
                label = _LABEL.match(text)  # `case 6:`, `default:`, `cleanup:` before a statement
                if label:
                    text = label.group(1)
            head = _control(text) if text.startswith(_CONTROL_WORDS) else None
            if head:
                cond = head[1]
                if head[0] == "for" and cond.count(";") == 2:
                    init, cond, step = cond.split(";")
                    if init.strip():
                        self.simple(init.strip(), st)
                    cond = f"{cond};{step}"
                c_checks.guards(self, cond, st)
                if c_checks.worth_checking(self, cond):
                    c_checks.uses(self, cond, st, condition=True)
                c_calls.call_checks(self, cond, st, condition=True)
                if head[0] == "for":
                    self._loop(head[1], st)
                self.guard = (_null_branch(cond), st.depth)
                if head[0] == "if" and not text.startswith("else"):
                    # the facts before it matter only to the arms of an else after it
                    before = _copy_env(self.env) if index in else_next else None
                    chains.append(_Chain(st.depth, before))
                if head[0] == "if" and chains and chains[-1].depth == st.depth:
                    # the arm runs when its condition holds: a known value it excludes
                    # (data is 10; if (data < 10)) is not the value in the arm
                    _forget(self.env, _decided(cond, self.env, False))
                    chains[-1].conds.append(cond)
                if head[2]:
                    self.simple(head[2], st)
            elif text not in ("", "else", "do", "try"):
                if text.startswith("else ") or text.startswith("else{"):
                    text = text[4:].strip()  # `else row = level`: the arm's statement
                self.simple(text, st)
            if index in exits:  # an if/else whose block returns: keep the facts before it
                saved.append((st.depth, _copy_env(self.env)))
            if not head:
                self.guard = (frozenset(), -1)
        for _, check in HOOKS["on_function_end"]:
            check(self)

    def _params(self) -> None:
        for i, (name, template) in enumerate(_parameters(self.fn.params)):
            if template is None:
                continue
            var = template.copy()
            if i in self.context:
                ctx = self.context[i].copy()
                ctx.type, ctx.pointer, ctx.elem = var.type, var.pointer, var.elem
                ctx.param, ctx.alloc_line = False, 0
                var = ctx
                self.has_heap = self.has_heap or ctx.alloc in HEAP
            self.env[name] = var
            self.param_names.add(name)

    def _loop(self, header: str, st: Statement) -> None:
        parts = header.split(";")
        if len(parts) != 3:
            return
        m = _LOOP_INIT.match(parts[0])
        cond = _LOOP_COND.match(parts[1])
        if not m or not cond or cond.group(1) != m.group(1):
            return
        bound = const_eval(cond.group(3), self.env)
        if bound is not None and cond.group(2) == "<=":
            bound += 1
        self.loops.append((m.group(1), bound, st.depth))

    def simple(self, text: str, st: Statement) -> None:
        """One plain statement: declaration, assignment, delete, return or call."""
        if text.startswith("return"):
            if c_checks.worth_checking(self, text[6:]):
                c_checks.uses(self, text[6:], st)
            c_calls.call_checks(self, text[6:], st, in_expression=True)
            name = strip_casts(text[6:]).strip("() ")
            null_here = self.guard[0] if st.depth >= self.guard[1] >= 0 else frozenset()
            for _, check in HOOKS["on_return"]:
                check(self, name, st, null_here)
            if name in self.env:
                self.env[name].escaped = True
            return
        if text.startswith("delete"):
            m = _DELETE.match(text)
            if m:
                c_calls.release(self, m.group(2), "delete[]" if m.group(1) else "delete", st)
            return
        decl = _DECL.match(text)
        if decl and decl.group("type").split()[0] not in _KEYWORDS and self._is_decl(decl):
            self._declare(decl, st)
            return
        assign = split_assign(text)
        watch = c_checks.worth_checking(self, text)  # for both sides: uses only clear facts
        if watch:
            c_checks.uses(self, assign[2] if assign else text, st)
        if assign:
            lhs, op, rhs = assign
            if watch:
                c_checks.uses(self, lhs, st, lhs=True)
            c_calls.call_checks(self, rhs, st, in_expression=True)
            run_text_hooks("on_arith", text, self, text, st)
            self.assign(lhs.strip(), rhs.strip(), st, op)
        else:
            c_calls.call_checks(self, text, st)
            run_text_hooks("on_arith", text, self, text, st)

    def _is_decl(self, m: re.Match[str]) -> bool:
        first = m.group("type").split()[0]
        if first in self.env or first in self.callees:
            return False
        return bool(
            m.group("quals")
            or m.group("ptr")
            or m.group("arr")
            or first in TYPE_SIZES
            or _TYPE_LIKE.match(first)
            or m.group("init") is None
        )

    def _declare(self, m: re.Match[str], st: Statement) -> None:
        var = _new_var(m)
        name, init = m.group("name"), m.group("init")
        static = "static" in (m.group("quals") or "")
        if var.array:
            count = const_eval(m.group("arr")[1:-1], self.env) if m.group("arr") != "[]" else None
            var.alloc, var.init = ("static" if static else "stack"), True
            if count is not None and var.elem:
                var.cap = count * var.elem
            var.init_elems = None if init or static else 0
            self.env[name] = var
            if init:
                lit = self.src.literal(init)
                if lit is not None:
                    var.slen, var.literal = len(lit.text), lit.text
                    if var.cap is None and var.elem:
                        var.cap = (len(lit.text) + 1) * var.elem
                elif init.strip() in ("{0}", "{ 0 }", "{}", "0"):
                    var.slen = 0
                else:
                    c_calls.taint_from(self, var, init)
            return
        var.init = bool(init) or static or not (var.pointer or var.integer or var.type == "float")
        if not var.init and m.group("type") in ("double", "float"):
            var.init = False
        self.env[name] = var
        if init:
            reference = "&" in (m.group("ptr") or "")  # binding a C++ reference reads nothing
            c_checks_uses(self, init, st, reads=not reference)
            run_text_hooks("on_arith", init, self, init, st)
            self.assign(name, init, st, "")

    def assign(self, lhs: str, rhs: str, st: Statement, op: str) -> None:
        """Apply ``lhs op= rhs`` to the facts."""
        if not op:
            run_text_hooks("on_assign", rhs, self, lhs, rhs, st)
        target = _NAME.fullmatch(lhs)
        if not target or target.group(1) not in self.env:
            c_calls.store(self, lhs, rhs, st)
            return
        var = self.env[target.group(1)]
        if op:
            var.ival = None
            return
        c_calls.transfer(self, target.group(1), var, rhs, st)

    def follow(self, name: str, args: list[str], st: Statement) -> None:
        """Walk a same-file callee with the facts of the arguments passed to it."""
        callee = self.callees.get(name)
        if callee is None or self.depth >= 1 or callee is self.fn:
            return
        known: dict[int, Var] = {}
        for i, arg in enumerate(args):
            b = base_var(arg, self.env)
            if b is not None and not arg.lstrip().startswith("&"):
                known[i] = self.env[b]
        if not known:
            return
        sizes = _sizes_matter(callee)
        if not any(worth_passing(v, sizes) for v in known.values()):
            return  # nothing the caller knows adds to the callee's own walk
        ctx = {i: v.copy() for i, v in known.items()}
        key = (name, tuple(sorted((i, _fact_key(v)) for i, v in ctx.items())))
        freed = self.src.followed.get(key)
        if freed is None:
            # The same callee under the same facts gives the same findings (already
            # emitted) and frees the same parameters: walk it once per file.
            sub = FunctionScan(
                self.src, callee, self.macros, self.emit, self.language, self.callees, ctx,
                self.depth + 1,
            )  # fmt: skip
            sub.run()
            freed = self.src.followed[key] = frozenset(i for i in ctx if sub.param_freed(i))
        for i, arg in enumerate(args):
            b = base_var(arg, self.env)
            if b is not None:
                self.env[b].init_elems = None
            if b is not None and i in freed:
                self.env[b].freed = st.line

    def param_freed(self, index: int) -> bool:
        """Whether the walk freed the memory of parameter ``index``."""
        params = [p.strip() for p in self.fn.params.split(",")]
        if index >= len(params):
            return False
        m = _DECL.match(params[index])
        var = self.env.get(m.group("name")) if m else None
        return bool(var and var.freed)


@lru_cache(maxsize=4096)
def _parameters(params: str) -> tuple[tuple[str, Var | None], ...]:
    """``(name, facts)`` of each parameter of a parameter list (``None``: not a variable)."""
    out: list[tuple[str, Var | None]] = []
    for param in (p.strip() for p in params.split(",")):
        m = _DECL.match(param)
        if not m or param in ("void", "..."):
            out.append(("", None))
            continue
        var = _new_var(m)
        var.param = True
        out.append((m.group("name"), var))
    return tuple(out)


def _new_var(m: re.Match[str]) -> Var:
    """The facts of a freshly declared variable (``_DECL`` match)."""
    base = _SPACES.sub(" ", m.group("type")).strip()
    if m.group("quals") and "unsigned" in m.group("quals"):
        base = "unsigned " + base
    pointer = "*" in (m.group("ptr") or "")
    array = m.group("arr") is not None
    stars = (m.group("ptr") or "").count("*")
    elem = type_size(base + (" *" if stars > 1 or (array and stars) else ""))
    return Var(type=base, pointer=pointer, array=array, elem=elem if pointer or array else None)


_COMPOUND_OPS = frozenset("+-*/%&|^")


@lru_cache(maxsize=8192)
def _control(text: str) -> tuple[str, str, str] | None:
    """``(keyword, condition, inline body)`` of an ``if``/``while``/``for``/``switch`` header.

    The condition ends at the parenthesis that closes it: in ``if (c) free(p)`` the body
    is ``free(p)``, not part of the condition.
    """
    m = _CONTROL.match(text)
    if m is None:
        return None
    start = m.start(2) - 1  # the opening parenthesis
    level = 0
    for i in range(start, len(text)):
        ch = text[i]
        if ch == "(":
            level += 1
        elif ch == ")":
            level -= 1
            if level == 0:
                return m.group(1), text[start + 1 : i], text[i + 1 :].strip()
    return m.group(1), m.group(2), m.group(3)


class _Chain:
    """An ``if`` / ``else if`` / ``else`` chain: each arm starts from the facts before it.

    After the chain, a variable has what the last arm that changed it left (an arm that
    returns changes nothing after it), as a walk through the arms in turn would have, but
    no arm sees what another did: ``if (c) free(p); else free(p);`` frees ``p`` once.
    """

    __slots__ = ("before", "conds", "depth", "ends")

    def __init__(self, depth: int, before: dict[str, Var] | None) -> None:
        self.depth = depth
        self.before = before
        self.ends: list[dict[str, Var]] = []
        self.conds: list[str] = []


_COMPARISON = re.compile(r"^\s*([A-Za-z_]\w*)\s*(<=|>=|==|!=|<|>)\s*(.+?)\s*$")
_FLIP = {"<": ">", ">": "<", "<=": ">=", ">=": "<=", "==": "==", "!=": "!="}
_HOLDS: dict[str, Callable[[int, int], bool]] = {
    "<": lambda a, b: a < b,
    ">": lambda a, b: a > b,
    "<=": lambda a, b: a <= b,
    ">=": lambda a, b: a >= b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
}


def _decided(cond: str, env: dict[str, Var], holds: bool) -> set[str]:
    """Variables whose known values decide ``cond`` to be ``holds``.

    ``cond`` is a comparison or several joined with ``&&``: false when one of them is
    false (its variable is named), true when all are (all are named).
    """
    if "||" in cond:
        return set()
    names: set[str] = set()
    parts = [p.strip().strip("()") for p in cond.split("&&")]
    results: list[bool | None] = []
    for part in parts:
        m = _COMPARISON.match(part)
        left, op, right = (m.group(1), m.group(2), m.group(3)) if m else (None, "", "")
        if left is not None and (left not in env or env[left].ival is None):
            flipped = _COMPARISON.match(f"{right} {_FLIP.get(op, op)} {left}") if m else None
            if flipped and flipped.group(1) in env:
                left, op, right = flipped.group(1), flipped.group(2), flipped.group(3)
        var = env.get(left) if left else None
        other = const_eval(right, env) if var is not None and var.ival is not None else None
        if var is None or var.ival is None or other is None:
            results.append(None)
            continue
        result = _HOLDS[op](var.ival, other)
        results.append(result)
        if result == holds and left:
            names.add(left)
    if holds:
        return names if results and all(r is True for r in results) else set()
    return names


def _forget(env: dict[str, Var], names: set[str]) -> None:
    """The values of ``names`` are not known here, nor the values computed from them.

    Used in a branch that their known values rule out: after ``last = n - 1``, in
    ``if (n > 0)`` with n known to be 0, last is not known to be -1 either.
    """
    if not names:
        return
    derived = {name for name, var in env.items() if var.ival_from & names}
    for name in names | derived:
        var = env.get(name)
        if var is not None and var.ival is not None:
            var = env[name] = var.copy()
            var.ival = None


def _copy_env(env: dict[str, Var]) -> dict[str, Var]:
    return {name: var.copy() for name, var in env.items()}


_MAY = ("taint", "freed")
"""Facts that hold after a chain if they hold at the end of any arm: outside data in one
arm, or a free in one arm, is a path the code can take."""


def _join(before: dict[str, Var], ends: list[dict[str, Var]]) -> dict[str, Var]:
    if len(ends) == 1:
        return ends[0]
    joined = dict(before)
    for end in ends:  # what the last arm that changed a variable left
        for name, var in end.items():
            old = before.get(name)
            if old is None or var.__dict__ != old.__dict__:
                joined[name] = var
    for name, var in list(joined.items()):
        for field in _MAY:
            if getattr(var, field) is None:
                found = next(
                    (
                        e[name]
                        for e in reversed(ends)
                        if name in e and getattr(e[name], field) is not None
                    ),
                    None,
                )
                if found is not None:
                    var = joined[name] = var.copy()
                    setattr(var, field, getattr(found, field))
        if var.below is not None:  # a bound holds after the arms only if it held in each
            arms = [e.get(name) for e in ends]
            bounds = [a.below for a in arms if a is not None and a.below is not None]
            below = max(bounds) if len(bounds) == len(arms) else None
            if below != var.below:
                var = joined[name] = var.copy()
                var.below = below
    return joined


def _shape(fn: Function) -> tuple[frozenset[int], frozenset[int]]:
    """``(exiting, else_next)``: indexes of the function's statements, found in one pass.

    - ``exiting``: the ``if``/``else`` headers whose braced block ends with ``return`` or
      ``goto``. The walk reads branches in source order; what such a block does (a free
      before an error return) does not reach the statements after it, so the walk puts the
      facts back as they were before the block.
    - ``else_next``: the statements whose next statement at their depth or above (the one
      after a header's block) is an ``else`` at their depth. Only an ``if`` among them needs
      the facts before it kept for its other arms.
    """
    if fn.shape is not None:
        return fn.shape
    sts = fn.statements
    exiting: set[int] = set()
    else_next: set[int] = set()
    open_: list[int] = []  # statements whose block (or next statement) is still being read
    last_at: dict[int, int] = {}  # depth -> index of the latest statement at that depth
    for j in range(len(sts) + 1):
        depth = sts[j].depth if j < len(sts) else None
        while open_ and (depth is None or sts[open_[-1]].depth >= depth):
            i = open_.pop()
            d = sts[i].depth
            if depth == d and sts[j].text.startswith("else"):
                else_next.add(i)
            if i + 1 < j and sts[i + 1].depth == d + 1 and _block_header(sts[i].text):
                last = last_at.get(d + 1, -1)  # after i: inside i's braced block
                if last > i and sts[last].text.startswith(("return", "goto ")):
                    exiting.add(i)
        if depth is not None:
            open_.append(j)
            last_at[depth] = j
    fn.shape = (frozenset(exiting), frozenset(else_next))
    return fn.shape


def _block_header(text: str) -> bool:
    """Whether a statement is ``else`` or an ``if``/``else if`` header with no inline body."""
    if text == "else":
        return True
    head = _control(text) if text.startswith(("if", "else")) else None
    return head is not None and head[0] == "if" and not head[2]


def split_assign(text: str) -> tuple[str, str, str] | None:
    """``(lhs, op, rhs)`` of ``lhs op= rhs`` (``op`` empty for ``=``), or ``None``.

    The left side holds no ``=``, ``<``, ``>`` (except in ``->``) or ``!``, so the first
    ``=`` decides; a comparison (``==``, ``<=``, ``!=``) is not an assignment.
    """
    pos = text.find("=")
    if pos <= 0 or text[pos + 1 : pos + 2] == "=":
        return None
    head = text[:pos]
    op = ""
    if head.endswith(("<<", ">>")):
        op = head[-2:]
    elif head[-1] in _COMPOUND_OPS:
        op = head[-1]
    lhs = head[: len(head) - len(op)]
    if not lhs:
        op, lhs = "", head
    if "!" in lhs or "<" in lhs or ">" in lhs.replace("->", ""):
        return None
    rhs = text[pos + 1 :]
    if not rhs:
        return None
    return lhs.rstrip() or lhs[:1], op, rhs.lstrip() or rhs[-1:]


_NULL_BRANCH = re.compile(r"\b(\w+)\s*==\s*(?:NULL|0|nullptr)\b|!\s*(\w+)\b")


@lru_cache(maxsize=8192)
def _null_branch(cond: str) -> frozenset[str]:
    """Names a condition is true for when they are NULL (``p == NULL``, ``!p``)."""
    if "=" not in cond and "!" not in cond:  # what both of its patterns need
        return frozenset()
    return frozenset(a or b for a, b in _NULL_BRANCH.findall(cond))


# what a callee's walk takes from the caller's facts about an argument: ``_params`` puts the
# callee's own type, pointer and element size in place and clears ``param`` and
# ``alloc_line``; ``escaped`` matters only for memory the walk itself allocated
_CONTEXT_FACTS = tuple(
    f for f in Var.__dataclass_fields__
    if f not in ("type", "pointer", "elem", "param", "alloc_line", "escaped")
)  # fmt: skip


def _fact_key(v: Var) -> tuple[Any, ...]:
    return tuple(getattr(v, f) for f in _CONTEXT_FACTS)


def _sizes_matter(fn: Function) -> bool:
    """Whether a function indexes, copies or loops (where buffer sizes decide)."""
    if fn.sizes_matter is None:
        body = fn.body  # no need to split it; substring tests first (most bodies have none)
        fn.sizes_matter = "[" in body or (
            ("str" in body or "wcs" in body or "mem" in body or "printf" in body)
            and _SIZES_MATTER.search(body) is not None
        )
    return fn.sizes_matter


def c_checks_uses(scan: FunctionScan, text: str, st: Statement, *, reads: bool = True) -> None:
    """Check the uses in a declaration's initializer."""
    if reads and c_checks.worth_checking(scan, text):
        c_checks.uses(scan, text, st)
    c_calls.call_checks(scan, text, st, in_expression=True)


__all__ = ["HEAP", "FunctionScan"]
