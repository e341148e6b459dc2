"""The Rust engine: unsafe code judged with the function's own context.

Comments and string literals are masked first (lines kept); the file's rules run on the
masked text (``on_rust_file``), then each ``fn`` body is read once for the raw pointers it
declares and the null checks it makes, and handed to the function rules (``on_rust_fn``).
"""

from __future__ import annotations

import re
from bisect import bisect_right

from jarvis_graph.security.model import Issue
from jarvis_graph.security.rules import HOOKS, make_issue
from jarvis_graph.security.rust_text import RustFn, at_word, close_brace, mask_rust

# Patterns that start with a word are searched without a leading ``\b`` (which stops the
# regex engine's fast search for a literal start, about 25x slower) and checked with
# ``at_word`` instead.
_FN = re.compile(r"fn\s+(?P<name>\w+)")
_EXTERN_BEFORE = re.compile(r'(?<!\w)extern\s+""\s+\Z')
_RAW_HINTS = ("*const", "*mut", ".as_ptr()", ".as_mut_ptr()", "ptr::null")
_EXTERN_BLOCK = re.compile(r"extern\s+(?:\"\"\s*)?\{")
_EXTERN_FN = re.compile(r"\bfn\s+(\w+)\s*\([^)]*\)\s*->\s*([^;{]+);")
_RAW_DECL = re.compile(
    r"\blet\s+(?:mut\s+)?(\w+)\s*(?::\s*\*(?:const|mut)\b[^=;]*)?=\s*[^;]*?"
    r"(?:as\s+\*(?:const|mut)\b|\.as_(?:mut_)?ptr\(\)|ptr::null(?:_mut)?\(\))"
    r"|\blet\s+(?:mut\s+)?(\w+)\s*:\s*\*(?:const|mut)\b"
)
_RAW_PARAM = re.compile(r"(\w+)\s*:\s*\*(?:const|mut)\b")
_NEWLINE = re.compile(r"\n")

__all__ = ["RustFile", "RustFn", "mask_rust", "scan_rust_text"]


class RustFile:
    """One Rust file: its text, masked text, foreign functions, and the issues found."""

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
        """Record one finding of ``rule`` at an offset of the masked text."""
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
            block = self.masked[m.end() : close_brace(self.masked, m.end() - 1)]
            names.update(
                f.group(1) for f in _EXTERN_FN.finditer(block) if f.group(2).strip() != "()"
            )
        return names

    def functions(self) -> None:
        """Hand each ``fn`` with a body to the function rules."""
        masked = self.masked
        for m in at_word(_FN, masked):
            brace = masked.find("{", m.end())
            semi = masked.find(";", m.end())
            if brace < 0 or (0 <= semi < brace):
                continue
            ext = _EXTERN_BEFORE.search(masked, max(0, m.start() - 200), m.start()) is not None
            header = masked[m.start() : brace]
            body = masked[brace : close_brace(masked, brace)]
            fn = _function(m.group("name"), ext, header, body, brace)
            for _, check in HOOKS["on_rust_fn"]:
                check(self, fn)


def _function(name: str, ext: bool, header: str, body: str, start: int) -> RustFn:
    """The raw pointers a function takes or declares and the ones it checks."""
    raws = {p.group(1) for p in _RAW_PARAM.finditer(header)}
    if any(hint in body for hint in _RAW_HINTS):
        raws |= {d.group(1) or d.group(2) for d in _RAW_DECL.finditer(body)}
    checked: set[str] = set()
    if "is_null" in body:
        checked.update(re.findall(r"\b(\w+)\s*\.\s*is_null\s*\(\)", body))
    checked.update(re.findall(r"NonNull::new\s*\(\s*(\w+)", body))
    return RustFn(name, ext, body, start, raws, checked)


def scan_rust_text(text: str, path: str) -> list[Issue]:
    """Issues of one Rust source text."""
    rust = RustFile(text, path)
    for _, check in HOOKS["on_rust_file"]:
        check(rust)
    rust.functions()
    return sorted(rust.issues, key=lambda i: (i.line, i.pattern))
