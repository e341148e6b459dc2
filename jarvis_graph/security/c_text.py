"""What a piece of C code says about the names in it, computed once per distinct text.

The rules ask "is ``p`` dereferenced here?", "is ``n`` bounded above here?" for many
names; answering with one generic pattern per question (cached by text) instead of one
compiled pattern per name keeps the scan linear in the size of the code.
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import chain

_ID = r"[A-Za-z_]\w*+"  # possessive: an identifier is never given back in part
# identifiers not after a word character, "." or ">"; the test looks back from the first
# letter (a pattern that starts with a character class lets the engine skip to candidates)
_PLAIN = re.compile(r"([A-Za-z_](?<![\w.>].)\w*+)")
_DEREF = re.compile(rf"(?:^|[^\w)\]\s]|\breturn)\s*\*\s*({_ID})|\b({_ID})\s*(?:->|\[)")
_MEMCALL = re.compile(r"\b(?:str|wcs|mem)\w*\s*\(([^;]*)")
_PRINTCALL = re.compile(r"\bprint\w*\s*\(([^;]*)")
_FREED = re.compile(rf"(?<!->)(?<!\.)(?<![\w:])(?:std::)?(?:free|delete)\b[\s(\[\]]*({_ID})")
_NULL_CHECK = re.compile(
    rf"\b({_ID})\s*[!=]=\s*(?:NULL|0|nullptr)\b|\b(?:NULL|nullptr)\s*[!=]=\s*({_ID})\b"
    rf"|!\s*({_ID})\b|^\s*\(?\s*({_ID})\s*\)?\s*$|\b({_ID})\s*&&|&&\s*({_ID})\s*\)?\s*$"
)
_BARE_NAME = re.compile(rf"\s*\(?\s*({_ID})\s*\)?\s*")
_UPPER = re.compile(
    rf"\b({_ID})\b[\s)]*<=?\s*(?!0\b)[\w(-]|[\w)]\s*>=?[\s(]*(?:abs\s*\()?\s*\b({_ID})\b"
    rf"|abs\s*\(\s*({_ID})\s*\)\s*<"
)
_INDEX = re.compile(rf"(?<![\w.>])({_ID})\s*\[([^\[\]]+)\]")
# not reads: an address, a sizeof, the target of a plain assignment (``(r = f())``)
_SIZEOF_OPERAND = rf"\*?\s*{_ID}(?:\s*(?:->|\.)\s*\w+|\s*\[[^\]]*\])*"
"""What ``sizeof`` measures without evaluating it: ``p``, ``*p``, ``p->x``, ``p[0].y``."""
_NOT_READ = re.compile(
    rf"&\s*{_ID}\b|\bsizeof\s*\(\s*{_SIZEOF_OPERAND}\s*\)|\bsizeof\s+{_SIZEOF_OPERAND}"
    rf"|(?<![\w.>])\b{_ID}\s*=(?!=)"
)
_TARGET = re.compile(rf"\s*({_ID})\s*(?:\.\w+\s*)?")
_INC = re.compile(rf"\b({_ID})\s*\+\+|\+\+\s*({_ID})\b")
_BINOP = re.compile(r"\b(\w+)\s*([+*])(?![+=])=?\s*(\w+)")
_NONE: frozenset[str] = frozenset()
_COMPOUND = re.compile(rf"\b({_ID})\s*([+*])=\s*(\w+)")


def _names(pattern: re.Pattern[str], text: str) -> frozenset[str]:
    """The non-empty groups of every match."""
    found = pattern.findall(text)
    if not found:
        return _NONE
    if pattern.groups == 1:
        return frozenset(found).difference(("",))
    return frozenset(chain.from_iterable(found)).difference(("",))


@lru_cache(maxsize=32768)  # a big file has more distinct statements than 8192
def plain_names(text: str) -> frozenset[str]:
    """Identifiers used as variables (not after ``.`` or ``->``)."""
    return frozenset(_PLAIN.findall(text))


@lru_cache(maxsize=8192)
def derefs(text: str) -> frozenset[str]:
    """Names dereferenced (``*p``, ``p->``, ``p[``) or passed to str*/mem* functions."""
    # substring tests first: each pattern needs one of these to match
    out = set(_names(_DEREF, text)) if "*" in text or "->" in text or "[" in text else set()
    if "str" in text or "wcs" in text or "mem" in text:
        for m in _MEMCALL.finditer(text):
            out.update(_PLAIN.findall(m.group(1)))
    return frozenset(out)


@lru_cache(maxsize=8192)
def printed(text: str) -> frozenset[str]:
    """Names passed to a print* function."""
    out: set[str] = set()
    for m in _PRINTCALL.finditer(text) if "print" in text else ():
        out.update(_PLAIN.findall(m.group(1)))
    return frozenset(out)


@lru_cache(maxsize=8192)
def released(text: str) -> frozenset[str]:
    """Names given to free or delete."""
    return _names(_FREED, text) if "free" in text or "delete" in text else _NONE


@lru_cache(maxsize=8192)
def null_checked(cond: str) -> frozenset[str]:
    """Names a condition compares with NULL (or tests for truth)."""
    if "=" in cond or "!" in cond or "&" in cond:
        return _names(_NULL_CHECK, cond)
    bare = _BARE_NAME.fullmatch(cond)  # the one pattern that needs none of them
    return frozenset((bare.group(1),)) if bare else _NONE


@lru_cache(maxsize=8192)
def upper_bounded(cond: str) -> frozenset[str]:
    """Names a condition bounds from above (``n < 10``, ``10 > n``, ``abs(n) <= m``)."""
    return _names(_UPPER, cond) if "<" in cond or ">" in cond else _NONE


@lru_cache(maxsize=8192)
def indexed(text: str) -> tuple[tuple[str, str], ...]:
    """``(array, index expression)`` of every ``a[i]`` in the text."""
    return tuple((m.group(1), m.group(2).strip()) for m in _INDEX.finditer(text))


@lru_cache(maxsize=8192)
def indexed_arrays(text: str) -> frozenset[str]:
    """The names indexed in the text (``a`` of ``a[i]``)."""
    return frozenset(a for a, _ in indexed(text))


@lru_cache(maxsize=8192)
def read_names(text: str) -> frozenset[str]:
    """Names read by the text (address-of, sizeof and being assigned do not read)."""
    if "&" in text or "=" in text or "sizeof" in text:  # what _NOT_READ needs
        text = _NOT_READ.sub("", text)
    return plain_names(text)


def write_target(text: str) -> str | None:
    """The variable a left-hand side ``x`` or ``x.field`` writes to."""
    m = _TARGET.fullmatch(text)
    return m.group(1) if m else None


@lru_cache(maxsize=8192)
def arithmetic(text: str) -> tuple[tuple[str, str, str], ...]:
    """``(variable, op, other operand)`` for ``x++``, ``++x``, ``x + y``, ``x * y``, ``y * x``."""
    if "+" not in text and "*" not in text:
        return ()
    found: list[tuple[int, tuple[str, str, str]]] = []
    for m in _INC.finditer(text) if "++" in text else ():
        found.append((m.start(), (m.group(1) or m.group(2), "+", "1")))
    for m in _COMPOUND.finditer(text) if "+=" in text or "*=" in text else ():
        found.append((m.start(), (m.group(1), m.group(2), m.group(3))))
    for m in _BINOP.finditer(text):
        a, op, b = m.groups()
        found.append((m.start(), (a, op, b)))
        if op == "*":
            found.append((m.start(), (b, op, a)))
    return tuple(x for _, x in sorted(found, key=lambda f: f[0]))
