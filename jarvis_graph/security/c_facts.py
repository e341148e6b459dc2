"""What the C rules know about one variable at one point of a function, and how to compute it.

Sizes are in bytes. A type whose size the file does not tell (a struct, a class) counts as a
nominal 16 bytes, so that like-for-like comparisons (50 vs 100 elements of it) still hold.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from types import CodeType
from typing import TYPE_CHECKING

from jarvis_graph.security.c_text import plain_names

if TYPE_CHECKING:
    from jarvis_graph.security.c_source import CSource

TYPE_SIZES = {
    "char": 1, "signed char": 1, "unsigned char": 1, "int8_t": 1, "uint8_t": 1, "bool": 1,
    "wchar_t": 4, "short": 2, "unsigned short": 2, "int16_t": 2, "uint16_t": 2,
    "int": 4, "unsigned int": 4, "unsigned": 4, "int32_t": 4, "uint32_t": 4, "float": 4,
    "long": 8, "unsigned long": 8, "long long": 8, "int64_t": 8, "uint64_t": 8,
    "size_t": 8, "ssize_t": 8, "double": 8, "intptr_t": 8, "uintptr_t": 8,
}  # fmt: skip
NOMINAL_SIZE = 16
POINTER_SIZE = 8
INT_RANGES = {
    "char": (-(2**7), 2**7 - 1), "signed char": (-(2**7), 2**7 - 1),
    "unsigned char": (0, 2**8 - 1), "short": (-(2**15), 2**15 - 1),
    "unsigned short": (0, 2**16 - 1), "int": (-(2**31), 2**31 - 1),
    "unsigned int": (0, 2**32 - 1), "unsigned": (0, 2**32 - 1),
    "int32_t": (-(2**31), 2**31 - 1), "uint32_t": (0, 2**32 - 1),
    "long": (-(2**63), 2**63 - 1), "long long": (-(2**63), 2**63 - 1),
    "int64_t": (-(2**63), 2**63 - 1), "uint64_t": (0, 2**64 - 1), "size_t": (0, 2**64 - 1),
}  # fmt: skip
LIMITS = {
    "CHAR_MAX": 2**7 - 1, "SCHAR_MAX": 2**7 - 1, "UCHAR_MAX": 2**8 - 1,
    "SHRT_MAX": 2**15 - 1, "USHRT_MAX": 2**16 - 1, "INT_MAX": 2**31 - 1,
    "UINT_MAX": 2**32 - 1, "LONG_MAX": 2**63 - 1, "LLONG_MAX": 2**63 - 1,
    "INT64_MAX": 2**63 - 1, "ULONG_MAX": 2**64 - 1, "SIZE_MAX": 2**64 - 1,
    "CHAR_MIN": -(2**7), "SHRT_MIN": -(2**15), "INT_MIN": -(2**31),
    "LLONG_MIN": -(2**63), "INT64_MIN": -(2**63), "NULL": 0,
}  # fmt: skip
HEAP = {"malloc", "calloc", "realloc", "new", "new[]", "strdup"}
_INT_LITERAL = re.compile(r"\b(0[xX][0-9a-fA-F]+|\d+)(?:[uU]?[lL]{0,2}|[lL]{1,2}[uU]?)\b")
_CAST = re.compile(
    r"\(\s*(?:const\s+|unsigned\s+|signed\s+|struct\s+)*[A-Za-z_]\w*(?:\s+\w+)?\s*\**\s*\)"
    r"(?=\s*[\w(])"
)
_ALLOC = re.compile(
    r"^(?:(?P<fn>malloc|calloc|realloc|alloca|_alloca|strdup|wcsdup|_strdup|_wcsdup)\s*\("
    r"(?P<args>.*)\)|new\s*(?:\((?P<place>[^)]*)\)\s*)?(?P<ntype>[\w:]+(?:\s*\*)?)"
    r"\s*(?:\[(?P<count>.*)\]|\(.*\))?)$"
)
_QUALIFIER = re.compile(r"\b(?:const|volatile|struct|class|std::)\b")
_SPACES = re.compile(r"\s+")
_CXX_CAST = re.compile(r"\b(?:reinterpret|static|const)_cast\s*<[^>]*>")
_SIZEOF_PAREN = re.compile(r"\bsizeof\s*\(([^()]*)\)")
_SIZEOF_WORD = re.compile(r"\bsizeof\s+(\w+)")
_STRLEN_CALL = re.compile(r"\b(?:strlen|wcslen)\s*\(\s*(\w+)\s*\)")
_WORD = re.compile(r"\b[A-Za-z_]\w*\b")

_ARITH = re.compile(r"^[\d\s+\-*/%()]+$")
_IDENT = re.compile(r"[A-Za-z_](?<!\w.)\w*")  # \b before the first letter, tested after it
_LEAD_IDENT = re.compile(r"([A-Za-z_]\w*)")
_CALL_NAME = re.compile(r"(?<!->)(?<!\.)(?<![\w:])(?:std::|::)?([A-Za-z_]\w*+)\s*+\(")
"""A call of a function: ``free(p)``, ``std::free(p)``, ``::free(p)``. Not a member's
(``m->free(m, p)``, ``ops.free(x)``) nor another namespace's (``pool::free(p)``): those
are other functions that happen to share a libc name."""
_PAREN = re.compile(r"[()]")
_SPLIT = re.compile(r"[,()\[\]{}]")
_MACRO_REF = re.compile(r"\b([A-Za-z_]\w*)\b(\s*\(\s*\))?")


@dataclass
class Var:
    """Facts about one variable (what it points to, holds or went through)."""

    type: str = ""
    pointer: bool = False
    array: bool = False
    elem: int | None = None
    cap: int | None = None
    slen: int | None = None
    ival: int | None = None
    taint: str | None = None
    alloc: str | None = None
    alloc_line: int = 0
    freed: int | None = None
    null: bool = False
    init: bool = True
    init_elems: int | None = None
    upper_checked: bool = False
    literal: str | None = None
    """The text of the string literal the variable holds or points to (through a macro or a
    copy too: ``strcpy(pw, PASSWORD)``), when it holds one."""
    ival_from: frozenset[str] = frozenset()
    """The variables whose known values ``ival`` was computed from (``last = n - 1``: n),
    so a branch that rules out their values rules out this one too."""
    below: int | None = None
    """An exclusive upper bound the value is known to keep under, with no lower than 0
    (``rand() % 6``: below 6), when its exact value is not known."""
    null_checked: bool = False
    alloc_unchecked: bool = False
    escaped: bool = False
    param: bool = False
    derefs: int | None = None

    def copy(self) -> Var:
        """An independent copy."""
        new = Var.__new__(Var)
        new.__dict__ = self.__dict__.copy()  # quicker than __init__ or update()
        return new

    @property
    def integer(self) -> bool:
        """Whether the variable holds a plain integer."""
        return not self.pointer and not self.array and self.type in INT_RANGES

    def string_len(self) -> int | None:
        """Known or assumed string length (elements), the buffer full when unknown."""
        if self.slen is not None:
            return self.slen
        if self.cap is not None and self.elem and self.taint is None:
            return max(self.cap // self.elem - 1, 0)
        return None


def worth_passing(var: Var, sizes: bool) -> bool:
    """Whether what is known of an argument adds to a callee's own walk.

    ``sizes``: whether the callee indexes, copies or prints (where sizes and values decide).
    """
    if var.taint or var.freed or var.null or var.alloc:
        return True
    return sizes and (var.cap is not None or var.ival is not None)


@lru_cache(maxsize=4096)
def type_size(name: str) -> int:
    """Bytes of a base type; pointers count 8; unknown types a nominal 16."""
    name = _QUALIFIER.sub("", name).strip()
    if name.endswith("*"):
        return POINTER_SIZE
    return TYPE_SIZES.get(_SPACES.sub(" ", name), NOMINAL_SIZE)


def macro_names(macros: dict[str, str]) -> frozenset[str]:
    """The names ``expand`` replaces (``F`` for a zero-argument ``F()``)."""
    return frozenset(name.removesuffix("()") for name in macros)


def expand(text: str, macros: dict[str, str], names: frozenset[str] | None = None) -> str:
    """Replace object-like macros (and zero-argument function-like ones), three rounds.

    ``names`` is ``macro_names(macros)``, passed in when many texts share the macros.
    """
    if names is None:
        names = macro_names(macros)

    def sub(m: re.Match[str]) -> str:
        word = m.group(1)
        if word not in found:
            return m.group(0)
        if m.group(2) and word + "()" in macros:
            return f"({macros[word + '()']})"
        if word in macros and not m.group(2) and macros[word] != word:
            return macros[word]
        return m.group(0)

    for _ in range(3):
        found = names.intersection(_IDENT.findall(text))
        if not found:
            break
        new = _MACRO_REF.sub(sub, text)
        if new == text:
            break
        text = new
    return text


def unwrap(expr: str) -> str:
    """The expression without redundant outer parentheses."""
    e = expr.strip()
    while e.startswith("(") and e.endswith(")"):
        depth = 0
        for i, c in enumerate(e):
            depth += {"(": 1, ")": -1}.get(c, 0)
            if depth == 0 and i < len(e) - 1:
                return e
        e = e[1:-1].strip()
    return e


@lru_cache(maxsize=16384)
def strip_casts(expr: str) -> str:
    """The expression without C-style casts such as ``(char *)`` or ``(size_t)``."""
    if "_cast" in expr:
        expr = _CXX_CAST.sub("", expr)
    return _CAST.sub("", expr).strip() if "(" in expr else expr.strip()


def _c_int(m: re.Match[str]) -> str:
    """A C integer literal (decimal, hex or octal) as decimal text; ``?`` if malformed."""
    digits = m.group(1)
    try:
        if digits[:2] in ("0x", "0X"):
            return str(int(digits, 16))
        return str(int(digits, 8) if len(digits) > 1 and digits[0] == "0" else int(digits))
    except ValueError:  # 08, 09: not a C literal
        return "?"


def const_eval(expr: str, env: dict[str, Var]) -> int | None:
    """Evaluate an integer expression with sizeof, strlen and known variable values."""
    e = strip_casts(expr)
    if e.isascii() and e.isdigit() and not e.startswith("0"):
        return int(e)
    for m in _CALL_NAME.finditer(e):
        if m.group(1) not in ("sizeof", "strlen", "wcslen"):
            return None  # a call's result is not a constant

    def sizeof(m: re.Match[str]) -> str:
        arg = m.group(1).strip()
        if arg.startswith("*") and arg[1:].strip() in env:
            return str(env[arg[1:].strip()].elem or NOMINAL_SIZE)
        var = env.get(arg)
        if var is not None:
            return str(var.cap if var.array and var.cap is not None else POINTER_SIZE)
        return str(type_size(arg))

    if "sizeof" in e:  # substring tests first: a leading \b slows a regex's search
        e = _SIZEOF_PAREN.sub(sizeof, e)
        e = _SIZEOF_WORD.sub(sizeof, e)

    def strlen(m: re.Match[str]) -> str:
        var = env.get(m.group(1))
        n = var.string_len() if var else None
        return str(n) if n is not None else m.group(0)

    if "len" in e:
        e = _STRLEN_CALL.sub(strlen, e)
    for word in words(e):  # a name with no known value: not a constant (most)
        if word not in LIMITS and (word not in env or env[word].ival is None):
            return None
    e = _INT_LITERAL.sub(_c_int, e)

    def ident(m: re.Match[str]) -> str:
        word = m.group(0)
        if word in LIMITS:
            return str(LIMITS[word])
        var = env.get(word)
        return str(var.ival) if var is not None and var.ival is not None else "?"

    e = _WORD.sub(ident, e)
    if not _ARITH.match(e) or len(e) > 200 or "**" in e.replace(" ", ""):
        return None  # C has no power operator; Python's would let a file stall the scan
    code = _compiled(e.replace("/", "//"))
    if code is None:
        return None
    try:
        value = eval(code, {"__builtins__": {}}, {})  # noqa: S307
    except (ZeroDivisionError, TypeError, ValueError):
        return None
    return int(value) if isinstance(value, int) else None


@lru_cache(maxsize=4096)
def _compiled(expr: str) -> CodeType | None:
    """The compiled arithmetic (digits, operators and parentheses only), or ``None``."""
    try:
        return compile(expr, "<const>", "eval")
    except SyntaxError:
        return None


def split_args(text: str) -> list[str]:
    """Arguments of a call's argument text, split at top-level commas."""
    if "," not in text:
        return [text.strip()] if text.strip() else []
    args, depth, start = [], 0, 0
    for m in _SPLIT.finditer(text):
        c = m.group(0)
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0:
            args.append(text[start : m.start()].strip())
            start = m.end()
    if text[start:].strip():
        args.append(text[start:].strip())
    return args


@lru_cache(maxsize=16384)
def words(text: str) -> tuple[str, ...]:
    """The identifiers of a piece of code in order (``_WORD``'s matches, found by ``_IDENT``)."""
    return tuple(_IDENT.findall(text))


@lru_cache(maxsize=8192)
def idents(text: str) -> frozenset[str]:
    """The identifiers of a piece of code."""
    return frozenset(_IDENT.findall(text))


@lru_cache(maxsize=32768)
def call_names(text: str) -> frozenset[str]:
    """The names of the functions a piece of code calls (cheaper than ``calls``)."""
    return frozenset(_CALL_NAME.findall(text)) if "(" in text else frozenset()


@lru_cache(maxsize=8192)
def calls(text: str) -> tuple[tuple[str, list[str], int], ...]:
    """``(name, args, offset)`` of every call in a statement, outer calls first."""
    if "(" not in text:
        return ()
    close: dict[int, int] = {}
    stack: list[int] = []
    for m in _PAREN.finditer(text):
        if m.group(0) == "(":
            stack.append(m.start())
        elif stack:
            close[stack.pop()] = m.start()
    out = []
    for m in _CALL_NAME.finditer(text):
        end = close.get(m.end() - 1, len(text))
        out.append((m.group(1), split_args(text[m.end() : end]), m.start()))
    return tuple(out)


def base_var(expr: str, env: dict[str, Var]) -> str | None:
    """The variable an argument expression points into (``(char *)(data + n)`` -> data)."""
    name = _base_ident(expr)
    return name if name is not None and name in env else None


def touched(env: dict[str, Var], text: str) -> list[tuple[str, Var]]:
    """The variables of the walk a piece of code mentions."""
    found = plain_names(text)
    if len(found) < len(env):
        return [(n, env[n]) for n in sorted([n for n in found if n in env])]
    return [(n, v) for n, v in env.items() if n in found]


def literal_text(src: CSource, env: dict[str, Var], expr: str) -> str | None:
    """The string literal ``expr`` is or holds, if any.

    Written in place, an object-like macro of the file whose value is one, or a variable
    known to hold one.
    """
    plain = strip_casts(expr).strip().strip("()").strip()
    lit = src.literal(plain)
    if lit is None and plain in src.macros:
        lit = src.literal(strip_casts(src.macros[plain]).strip())
    if lit is not None:
        return lit.text
    var = env.get(plain.lstrip("&").strip())
    return var.literal if var is not None else None


def literal_argument(
    src: CSource, env: dict[str, Var], args: list[str], positions: tuple[int, ...]
) -> bool:
    """Whether an argument at one of ``positions`` is or holds a non-empty string literal."""
    return any(i < len(args) and literal_text(src, env, args[i]) for i in positions)


def var_of(expr: str, env: dict[str, Var]) -> tuple[str | None, Var | None]:
    """The variable an argument expression points into and the walk's facts about it."""
    name = base_var(expr, env)
    return name, (env.get(name) if name else None)


@lru_cache(maxsize=16384)
def _base_ident(expr: str) -> str | None:
    m = _LEAD_IDENT.match(strip_casts(expr).lstrip("&(* "))
    return m.group(1) if m else None


def alloc_of(rhs: str, env: dict[str, Var]) -> tuple[str, int | None, str | None] | None:
    """``(kind, bytes, placement buffer)`` when ``rhs`` allocates memory."""
    m = _ALLOC.match(unwrap(strip_casts(rhs)) if "new" not in rhs else rhs.strip())
    if not m:
        return None
    if m.group("fn"):
        fn = m.group("fn").lstrip("_")
        args = [a.strip() for a in m.group("args").split(",")]
        if fn in ("strdup", "wcsdup"):
            return "strdup", None, None
        if fn == "calloc" and len(args) == 2:
            a, b = const_eval(args[0], env), const_eval(args[1], env)
            return "calloc", (a * b if a is not None and b is not None else None), None
        size = const_eval(args[-1], env)
        return ("stack" if fn == "alloca" else fn), size, None
    elem = type_size(m.group("ntype"))
    if m.group("place"):
        return "placement", None, m.group("place").strip()
    if m.group("count") is not None:
        count = const_eval(m.group("count"), env)
        return "new[]", (count * elem if count is not None else None), None
    return "new", elem, None
