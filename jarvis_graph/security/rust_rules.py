"""Rust rules: unsafe code judged with the function's own context.

Comments and string literals are masked first (lines kept), then each ``fn`` body is read
for raw pointers and the checks made on them, panics inside ``extern "C"`` functions,
results of foreign functions that are dropped, and the usual unsafe escape hatches.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator

from jarvis_graph.security.model import Issue
from jarvis_graph.security.rules import make_issue

_LEX = re.compile(
    r"""//[^\n]*|/\*.*?\*/|r(\#*)".*?"\1|b?"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\\n])'""", re.S
)
# Patterns that start with a word are searched without a leading ``\b`` (which stops the
# regex engine's fast search for a literal start, about 25x slower) and checked with
# ``_at_word`` instead.
_FN = re.compile(r"fn\s+(?P<name>\w+)")
_EXTERN_BEFORE = re.compile(r'(?<!\w)extern\s+""\s+\Z')
_STATIC_MUT = re.compile(r"static\s+mut\s+(\w+)")
_TRANSMUTE = re.compile(r"(?:mem::)?transmute\s*(?:::<[^>]*>)?\s*\(")
_FORGET = re.compile(r"mem::forget\s*\(")
_UNSAFE = re.compile(r"unsafe\s*\{")
_FROM_RAW_PARTS = re.compile(r"slice::from_raw_parts(?:_mut)?\s*\(\s*(\w+)")
_RAW_HINTS = ("*const", "*mut", ".as_ptr()", ".as_mut_ptr()", "ptr::null")
_EXTERN_BLOCK = re.compile(r"extern\s+(?:\"\"\s*)?\{")
_EXTERN_FN = re.compile(r"\bfn\s+(\w+)\s*\([^)]*\)\s*->\s*([^;{]+);")
_RAW_DECL = re.compile(
    r"\blet\s+(?:mut\s+)?(\w+)\s*(?::\s*\*(?:const|mut)\b[^=;]*)?=\s*[^;]*?"
    r"(?:as\s+\*(?:const|mut)\b|\.as_(?:mut_)?ptr\(\)|ptr::null(?:_mut)?\(\))"
    r"|\blet\s+(?:mut\s+)?(\w+)\s*:\s*\*(?:const|mut)\b"
)
_RAW_PARAM = re.compile(r"(\w+)\s*:\s*\*(?:const|mut)\b")


def mask_rust(text: str) -> str:
    """Comments and literals blanked (``""`` kept for strings), newlines kept."""

    def sub(m: re.Match[str]) -> str:
        tok = m.group(0)
        nl = "\n" * tok.count("\n")
        if tok.startswith(("/", "'")):
            return " " + nl
        return '""' + nl

    return _LEX.sub(sub, text)


_BRACES = re.compile(r"[{}]")


def _at_word(pattern: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
    r"""The matches of ``pattern`` that start a word (as ``\b`` before it would allow)."""
    pos = 0
    while (m := pattern.search(text, pos)) is not None:
        start = m.start()
        if start and (text[start - 1].isalnum() or text[start - 1] == "_"):
            pos = start + 1  # inside a word: look again from the next character
            continue
        yield m
        pos = max(m.end(), start + 1)


_NEWLINE = re.compile(r"\n")


def _close(text: str, open_pos: int) -> int:
    depth = 0
    for m in _BRACES.finditer(text, open_pos):
        depth += 1 if m.group(0) == "{" else -1
        if depth == 0:
            return m.start()
    return len(text)


class _RustFile:
    def __init__(self, text: str, path: str) -> None:
        self.text, self.path = text, path
        self.lines = text.splitlines()
        self.masked = mask_rust(text)
        self._newlines: list[int] | None = None
        self.issues: list[Issue] = []
        self.externs = self._extern_fns()

    def line(self, offset: int) -> int:
        """The 1-based line of an offset of the masked text (lines are kept by masking)."""
        if self._newlines is None:
            self._newlines = [m.start() for m in _NEWLINE.finditer(self.masked)]
        return bisect_right(self._newlines, offset - 1) + 1

    def report(
        self, rule: str, offset: int, detail: str, fn: str = "", conf: float | None = None
    ) -> None:
        line = self.line(offset)
        evidence = self.lines[line - 1] if line <= len(self.lines) else ""
        self.issues.append(
            make_issue(
                rule,
                language="rust",
                file=self.path,
                line=line,
                evidence=evidence,
                detail=detail,
                function=fn,
                confidence=conf,
            )  # fmt: skip
        )

    def _extern_fns(self) -> set[str]:
        names: set[str] = set()
        for m in _EXTERN_BLOCK.finditer(self.masked):
            block = self.masked[m.end() : _close(self.masked, m.end() - 1)]
            names.update(
                f.group(1) for f in _EXTERN_FN.finditer(block) if f.group(2).strip() != "()"
            )
        return names

    def file_rules(self) -> None:
        m_text = self.masked
        for m in _at_word(_STATIC_MUT, m_text):
            self.report("rust-static-mut", m.start(), f"'{m.group(1)}'")
        for m in _at_word(_TRANSMUTE, m_text):
            if "transmute" in m_text[max(0, m.start() - 6) : m.end()]:
                self.report("rust-transmute", m.start(), "reinterprets the bits of a value")
        for m in _at_word(_FORGET, m_text):
            self.report("rust-mem-forget", m.start(), "the value's destructor never runs")
        for m in _at_word(_UNSAFE, m_text):
            line = self.line(m.start())
            above = "\n".join(self.lines[max(0, line - 4) : line])
            if "SAFETY:" not in above:
                self.report("rust-unsafe-block", m.start(), "no // SAFETY: comment", conf=0.45)

    def functions(self) -> None:
        masked = self.masked
        for m in _at_word(_FN, masked):
            brace = masked.find("{", m.end())
            semi = masked.find(";", m.end())
            if brace < 0 or (0 <= semi < brace):
                continue
            ext = _EXTERN_BEFORE.search(masked, max(0, m.start() - 200), m.start()) is not None
            header = masked[m.start() : brace]
            self._function(m.group("name"), ext, header, brace, _close(masked, brace))

    def _function(self, name: str, ext: bool, header: str, start: int, end: int) -> None:
        body = self.masked[start:end]
        raws = {p.group(1) for p in _RAW_PARAM.finditer(header)}
        if any(hint in body for hint in _RAW_HINTS):
            raws |= {d.group(1) or d.group(2) for d in _RAW_DECL.finditer(body)}
        checked: set[str] = set()
        if "is_null" in body:
            checked.update(re.findall(r"\b(\w+)\s*\.\s*is_null\s*\(\)", body))
        checked.update(re.findall(r"NonNull::new\s*\(\s*(\w+)", body))
        for var in raws - checked:
            for d in re.finditer(
                rf"(?<![\w)\]])\*\s*{re.escape(var)}\b(?!\s*(?:const|mut)\b)", body
            ):
                self.report("rust-raw-deref", start + d.start(), f"'{var}' may be null", name)
                break
        for d in _at_word(_FROM_RAW_PARTS, body):
            unchecked = d.group(1) not in checked
            self.report(
                "rust-from-raw-parts", start + d.start(),
                f"pointer '{d.group(1)}' {'is never null-checked' if unchecked else 'is checked'}",
                name, None if unchecked else 0.35,
            )  # fmt: skip
        self._ffi_results(name, ext, body, start)

    def _ffi_results(self, name: str, ext: bool, body: str, start: int) -> None:
        for u in re.finditer(r"\.\s*(unwrap|expect)\s*\(", body):
            stmt_start = max(body.rfind(";", 0, u.start()), body.rfind("{", 0, u.start()))
            stmt = body[stmt_start + 1 : u.start()]
            if ext:
                self.report(
                    "rust-ffi-unwrap", start + u.start(),
                    f"{u.group(1)} inside extern \"C\" fn '{name}' can panic across FFI", name,
                    0.8,
                )  # fmt: skip
            elif re.search(r"CStr::from_ptr|CString::from_raw", stmt) or any(
                re.search(rf"\b{re.escape(f)}\s*\(", stmt) for f in self.externs
            ):
                self.report(
                    "rust-ffi-unwrap", start + u.start(), f"{u.group(1)} on a foreign value", name
                )
        for f in self.externs:
            pattern = (
                rf"(?:^|[;{{}}]|\blet\s+_\s*=)\s*(?:unsafe\s*\{{\s*)?{re.escape(f)}\s*\([^;]*\)\s*;"
            )
            for c in re.finditer(pattern, body):
                self.report(
                    "rust-unchecked-extern", start + c.start() + c.group(0).index(f),
                    f"the result of {f}() is dropped", name,
                )  # fmt: skip


def scan_rust_text(text: str, path: str) -> list[Issue]:
    """Issues of one Rust source text."""
    rust = _RustFile(text, path)
    rust.file_rules()
    rust.functions()
    return sorted(rust.issues, key=lambda i: (i.line, i.pattern))
