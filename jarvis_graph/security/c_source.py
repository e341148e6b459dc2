"""A light C/C++ source model: comments and literals masked, macros, functions, statements.

Not a compiler front end: it is enough to follow one function's statements in order with
the literal strings, numbers and object-like macros of its file, which is what the rules
need to tell a safe call from an unsafe one.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jarvis_graph.security.files import Tree, read_regular

# comments, strings and chars (told apart by their first character); every alternative
# starts with a literal character, which lets the engine skip to the next candidate
_LEX = re.compile(
    r"""//[^\n]*|/\*[^*]*\*+(?:[^/*][^*]*\*+)*/"""
    r"""|"[^"\\\n]*(?:\\.[^"\\\n]*)*"|'(?:\\.|[^'\\\n])+'""",
    re.S,
)
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]+|[0-7]{1,3}|.)")
_ESCAPES = {"n": 10, "t": 9, "r": 13, "0": 0, "\\": 92, "'": 39, '"': 34, "a": 7, "b": 8}
_DEFINE = re.compile(r"^\s*#\s*define\s+(\w+)(\([^)]*\))?[ \t]*(.*)$")
_INCLUDE = re.compile(r"^\s*#\s*include\s+__S(\d+)__")
# possessive: searched at every offset of a header, so no giving back inside a name
_FUNC_NAME = re.compile(r"((?:~?[A-Za-z_]\w*+\s*+::\s*+)*+~?[A-Za-z_]\w*+|operator\s*+\S++)\s*+$")
_CONTAINER = re.compile(r"^\s*(?:namespace\b[\w\s:]*|extern\s+__S\d+__\s*)$")
_CLASS = re.compile(r"^\s*(?:template\s*<[^{]*>\s*)?(?:class|struct)\s+\w+[^(){};=]*$")
_LITERAL_TOKEN = re.compile(r"\s*__S(\d+)__\s*")
# every ASCII character that cannot be in an identifier -> a space: ``split()`` then gives
# the identifiers (and numbers) of a text, several times faster than a regex
_WORDS_APART = {i: " " for i in range(128) if not (chr(i).isalnum() or chr(i) == "_")}
_BYTES_APART = bytes(32 if i in _WORDS_APART else i for i in range(256))
_CONTROL = {"if", "for", "while", "switch", "catch", "sizeof", "return", "do", "else"}


@dataclass(frozen=True)
class Literal:
    """A string literal of the file."""

    text: str
    wide: bool


@dataclass(slots=True)
class Statement:
    """One statement (or control header) of a function body, masked."""

    text: str
    line: int
    depth: int = 0


@dataclass
class Function:
    """One function definition; its statements are split from the body when first read."""

    name: str
    params: str
    start_line: int
    end_line: int
    body: str = ""
    body_line: int = 0
    _statements: list[Statement] | None = field(default=None, repr=False)
    _macros: frozenset[str] | None = field(default=None, repr=False)
    # set by the walk, once: headers of the blocks that end with return/goto, and the
    # statements an else follows (c_flow._shape); whether the body indexes, copies or
    # prints (where what a caller knows of sizes matters)
    shape: tuple[frozenset[int], frozenset[int]] | None = field(default=None, repr=False)
    sizes_matter: bool | None = field(default=None, repr=False)

    def macros_used(self, names: frozenset[str]) -> frozenset[str]:
        """The file's macros (``names``) that the body names.

        A statement that names none of them needs no expansion.
        """
        if self._macros is None:
            if not names:
                self._macros = names
            elif self.body.isascii():  # the same words, split by a byte table (faster)
                words = set(self.body.encode("ascii").translate(_BYTES_APART).split())
                self._macros = names.intersection(b" ".join(words).decode("ascii").split())
            else:
                self._macros = names.intersection(self.body.translate(_WORDS_APART).split())
        return self._macros

    @property
    def statements(self) -> list[Statement]:
        """The statements and control headers in source order (split once, on first use).

        A big file is walked in parts by several workers; each splits only the functions
        it walks (and their callees).
        """
        if self._statements is None:
            self._statements = split_statements(self.body, self.body_line)
        return self._statements


@dataclass
class CSource:
    """A masked C/C++ file: literals table, macros, functions and the original text."""

    path: str
    masked: str
    text: str
    literals: list[Literal]
    macros: dict[str, str]
    functions: list[Function]
    includes: list[str]
    expanded: dict[str, str] = field(default_factory=dict)
    macro_names: frozenset[str] | None = None
    # (callee, facts of its arguments) -> parameters the callee's walk freed
    followed: dict[Any, frozenset[int]] = field(default_factory=dict)
    # function name (last part) -> function, for the walks that follow callees
    callees: dict[str, Function] | None = None
    _lines: list[str] | None = field(default=None, repr=False)

    @property
    def lines(self) -> list[str]:
        """The original lines (split on first use: only a finding needs them)."""
        if self._lines is None:
            self._lines = self.text.splitlines()
        return self._lines

    def literal(self, token: str) -> Literal | None:
        """The literal behind a ``__S<n>__`` token, if it is one."""
        m = _LITERAL_TOKEN.fullmatch(token) if "__S" in token else None
        return self.literals[int(m.group(1))] if m else None


def _char_value(text: str) -> int:
    body = text[1:-1]
    if body.startswith("\\"):
        if body[1:2] == "x":
            return int(body[2:], 16)
        if body[1:].isdigit():
            return int(body[1:], 8)
        return _ESCAPES.get(body[1:2], ord(body[1:2] or "\\"))
    return ord(body[0])


def _unescape_len(text: str) -> str:
    """The literal's characters with escapes folded to one character each."""
    return _ESCAPE.sub("?", text) if "\\" in text else text


def mask(text: str) -> tuple[str, list[Literal]]:
    """Comments to spaces, strings to ``__S<n>__`` tokens, chars to their value (lines kept)."""
    literals: list[Literal] = []
    out: list[str] = []
    pos = 0
    for m in _LEX.finditer(text):
        tok, start = m.group(0), m.start()
        prefix = 0
        kind = tok[0]  # / comment, " string, ' char
        if kind != "/":
            before = text[max(start - 2, 0) : start]
            prefix = 2 if before == "u8" else int(before[-1:] in ("L", "u", "U"))
        out.append(text[pos : start - prefix])
        nl = "\n" * tok.count("\n")
        if kind == "/":
            out.append(" " + nl)
        elif kind == '"':
            literals.append(Literal(_unescape_len(tok[1:-1]), prefix == 1))
            out.append(f" __S{len(literals) - 1}__")
        else:
            out.append(f" {_char_value(tok)} ")
        pos = m.end()
    out.append(text[pos:])
    return "".join(out), literals


# a directive's line: the newline before it (a literal start: the engine skips to it)
_DIRECTIVE_LINE = re.compile(r"\n[^\S\n]*#")
_FIRST_DIRECTIVE = re.compile(r"[^\S\n]*#")
_DIRECTIVE_WORD = re.compile(r"\s*#\s*(\w+)")
_CONDITIONALS = frozenset(("if", "ifdef", "ifndef", "elif", "else", "endif"))
_CONDITIONAL = re.compile(r"^\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b\s*(.*)$")


def _preprocess(
    masked: str, literals: list[Literal] | None = None
) -> tuple[str, dict[str, str], list[str]]:
    """Collect object-like macros and includes; blank the directive lines.

    Code under ``#if``/``#elif``/``#else`` is kept in every branch unless the branches do
    not balance their braces (``if (a) {`` in one branch, ``{`` in the other): then only
    the first branch is kept, so that one function does not swallow the rest of the file.
    An ``#if 0`` branch is always dropped. Macros are collected from every branch.
    """
    macros: dict[str, str] = {}
    includes: list[str] = []
    lines = masked.split("\n")
    # open conditionals: [condition of the first branch, line where each branch starts]
    groups: list[tuple[str, list[int]]] = []
    line, offset, done = 0, 0, -1
    starts = [found.start() + 1 for found in _DIRECTIVE_LINE.finditer(masked)]
    if _FIRST_DIRECTIVE.match(masked):
        starts.insert(0, 0)
    for at in starts:
        line += masked.count("\n", offset, at)
        offset = at
        if line <= done:
            continue  # a continuation line of the directive before
        start = i = line
        while lines[i].rstrip().endswith("\\") and i + 1 < len(lines):
            i += 1
        done = i
        if i == start:
            directive = lines[start]
        else:
            directive = " ".join(x.rstrip("\\") for x in lines[start : i + 1])
        for j in range(start, i + 1):
            lines[j] = ""
        word = _DIRECTIVE_WORD.match(directive)
        kind = word.group(1) if word else ""
        if kind == "define":
            m = _DEFINE.match(directive)
            if m and not m.group(2):
                macros[m.group(1)] = m.group(3).strip()
            elif m and re.fullmatch(r"\(\s*\)", m.group(2)):
                macros[m.group(1) + "()"] = m.group(3).strip()
        elif kind == "include":
            inc = _INCLUDE.match(directive)
            if inc and literals is not None:
                includes.append(literals[int(inc.group(1))].text)
        elif kind in _CONDITIONALS:
            cond = _CONDITIONAL.match(directive)
            if cond:
                _conditional(lines, groups, cond.group(1), cond.group(2).strip(), start, i)
    return "\n".join(lines), macros, includes


def _brace_balance(lines: list[str], branch: range) -> int:
    text = "\n".join(lines[branch.start : branch.stop])
    return text.count("{") - text.count("}")


def _conditional(
    lines: list[str], groups: list[tuple[str, list[int]]], kind: str, arg: str, at: int, end: int
) -> None:
    """Track one conditional directive; at ``#endif`` drop branches as ``_preprocess`` says."""
    if kind in ("if", "ifdef", "ifndef"):
        groups.append((arg if kind == "if" else "", [at]))
    elif not groups:
        return  # an #else or #endif without its #if: leave the code alone
    elif kind in ("elif", "else"):
        groups[-1][1].append(at)
    else:
        first, starts = groups.pop()
        bounds = [*starts, at]
        branches = [range(bounds[b] + 1, bounds[b + 1]) for b in range(len(starts))]
        drop: list[range] = []
        if first == "0":
            drop = branches[:1]
        elif len(branches) > 1 and any(_brace_balance(lines, b) for b in branches):
            drop = branches[1:]
        for branch in drop:
            for j in branch:
                lines[j] = ""


_PARENS = re.compile(r"[()]")
_BLANKS = re.compile(r"\s+")
_INITIALIZERS = re.compile(r"\)\s*:[^{]*$")
_QUALIFIERS = re.compile(r"\)\s*(?:const|override|final|noexcept|throw\s*\([^)]*\)|\s)*$")
_BLOCK_EDGE = re.compile(r"[{};]")


def _match_close(text: str, open_pos: int) -> int:
    """Offset of the ``}`` closing the ``{`` at ``open_pos`` (the last offset if none)."""
    depth, pos = 1, open_pos + 1
    while True:
        close = text.find("}", pos)
        if close < 0:
            return len(text) - 1
        depth += text.count("{", pos, close) - 1
        if depth == 0:
            return close
        pos = close + 1


def _function_header(header: str) -> tuple[str, str] | None:
    """``(name, params)`` when a block header is a function definition header."""
    h = _BLANKS.sub(" ", header.strip())  # strip first: a header starts after comments
    if "(" not in h or "=" in h.split("(")[0]:
        return None
    h = _INITIALIZERS.sub(")", h)  # constructor initializer list
    h = _QUALIFIERS.sub(")", h)
    if not h.endswith(")"):
        return None
    first = h.index("(")
    m = _FUNC_NAME.search(h[:first])
    if not m or m.group(1).split("::")[-1].strip() in _CONTROL:
        return None
    depth, end = 0, len(h) - 1
    for paren in _PARENS.finditer(h, first):
        depth += 1 if paren.group() == "(" else -1
        if depth == 0:
            end = paren.start()
            break
    return _BLANKS.sub("", m.group(1)), h[first + 1 : end]


def split_statements(body: str, first_line: int) -> list[Statement]:
    """Statements and control headers of a body, split at ``;``, ``{`` and ``}``.

    Only where no parenthesis is open: ``for (i = 0; i < n; i++)`` is one header. A
    statement's line is the line of its first character; an initializer list
    (``= { ... }``) stays inside its statement.
    """
    stmts: list[Statement] = []
    depth = braces = start = counted = 0
    line, skip, seen = first_line, -1, 0  # seen: parentheses counted up to here
    for edge in _BLOCK_EDGE.finditer(body):
        i = edge.start()
        if i < skip:
            continue
        depth = _paren_depth(body, seen, i, depth)
        seen = i + 1
        c = body[i]
        if c == "{" and body[start:i].rstrip().endswith("="):
            skip = seen = _match_close(body, i) + 1
        elif depth == 0:
            raw = body[start:i]
            text = raw.strip()
            if text:
                lead = i - len(raw.lstrip())
                line += body.count("\n", counted, lead)
                counted = lead
                stmts.append(Statement(" ".join(text.split()), line, braces))
            braces += 1 if c == "{" else -1 if c == "}" else 0
            start = i + 1
    return stmts


def _paren_depth(text: str, lo: int, hi: int, depth: int) -> int:
    """The parentheses open after ``text[lo:hi]``, ``depth`` open before it.

    An unmatched ``)`` closes nothing.
    """
    closes = text.count(")", lo, hi)
    if closes <= depth:  # none can close more than is open: the counts tell
        return depth + text.count("(", lo, hi) - closes
    for paren in _PARENS.finditer(text, lo, hi):
        depth = depth + 1 if paren.group() == "(" else max(0, depth - 1)
    return depth


def _blocks(text: str, base: int, functions: list[Function], line_of: _LineIndex) -> None:
    pos, boundary = 0, 0
    while True:
        nxt = _BLOCK_EDGE.search(text, pos)
        if not nxt:
            return
        if nxt.group(0) != "{":
            pos = boundary = nxt.end()
            continue
        close = _match_close(text, nxt.start())
        header = text[boundary : nxt.start()]
        head = _function_header(header)
        if head:
            hdr_off = boundary + len(header) - len(header.lstrip())
            first, body_line = line_of[base + hdr_off], line_of[base + nxt.start()]
            fn = Function(
                head[0], head[1], first, line_of[base + close],
                text[nxt.start() + 1 : close], body_line,
            )  # fmt: skip
            functions.append(fn)
        elif _CONTAINER.match(header) or _CLASS.match(header):
            _blocks(text[nxt.start() + 1 : close], base + nxt.start() + 1, functions, line_of)
        pos = boundary = close + 1


class _LineIndex:
    """Offset -> 1-based line number, counting newlines from the offset asked before.

    ``_blocks`` asks in increasing order, so the text is counted once overall.
    """

    def __init__(self, text: str) -> None:
        self.text, self.offset, self.line = text, 0, 1

    def __getitem__(self, offset: int) -> int:
        if offset < self.offset:
            self.offset, self.line = 0, 1
        self.line += self.text.count("\n", self.offset, offset)
        self.offset = offset
        return self.line


def parse_c(text: str, path: str = "") -> CSource:
    """Model one C/C++ file."""
    masked, literals = mask(text)
    masked, macros, includes = _preprocess(masked, literals)
    line_of = _LineIndex(masked)
    functions: list[Function] = []
    _blocks(masked, 0, functions, line_of)
    return CSource(path, masked, text, literals, macros, functions, includes)


def header_macros(path: Path, includes: list[str], tree: Tree | None = None) -> dict[str, str]:
    """Object-like macros of the local headers a file includes (one level).

    A header is looked up beside the file, then by name among the scanned tree's headers
    (:meth:`Tree.header`); without a tree, only beside the file, inside its folder.
    """
    tree = tree or Tree(os.path.realpath(path.parent))
    macros: dict[str, str] = {}
    for name in includes:
        found = tree.header(path, name)
        if found:
            macros.update(_cached_header(found))
    return macros


_HEADER_CACHE: dict[str, dict[str, str]] = {}


def _cached_header(path: str) -> dict[str, str]:
    if path not in _HEADER_CACHE:
        data, _ = read_regular(path)  # not a FIFO or a device named like a header
        masked, _ = mask(data.decode("utf-8", errors="replace"))
        macros = _preprocess(masked)[1]
        _HEADER_CACHE[path] = {k: v for k, v in macros.items() if "__S" not in v}
    return _HEADER_CACHE[path]
