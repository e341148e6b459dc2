"""Rust rules: unsafe code judged with the function's own context.

Comments and string literals are masked first (lines kept), then each ``fn`` body is read
for raw pointers and the checks made on them, panics inside ``extern "C"`` functions,
results of foreign functions that are dropped, and the usual unsafe escape hatches.
"""

from __future__ import annotations

import re

from jarvis_graph.security.model import Issue
from jarvis_graph.security.rules import make_issue

_LEX = re.compile(
    r"""//[^\n]*|/\*.*?\*/|r(\#*)".*?"\1|b?"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\\n])'""", re.S
)
_FN = re.compile(r"\b(?:pub(?:\([^)]*\))?\s+)?(?P<ext>extern\s+\"\"\s+)?fn\s+(?P<name>\w+)")
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


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _close(text: str, open_pos: int) -> int:
    depth = 0
    for m in re.finditer(r"[{}]", text[open_pos:]):
        depth += 1 if m.group(0) == "{" else -1
        if depth == 0:
            return open_pos + m.start()
    return len(text)


class _RustFile:
    def __init__(self, text: str, path: str) -> None:
        self.text, self.path = text, path
        self.lines = text.splitlines()
        self.masked = mask_rust(text)
        self.issues: list[Issue] = []
        self.externs = self._extern_fns()

    def report(
        self, rule: str, offset: int, detail: str, fn: str = "", conf: float | None = None
    ) -> None:
        line = _line(self.masked, offset)
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
        for m in re.finditer(r"\bstatic\s+mut\s+(\w+)", m_text):
            self.report("rust-static-mut", m.start(), f"'{m.group(1)}'")
        for m in re.finditer(r"\b(?:mem::)?transmute\s*(?:::<[^>]*>)?\s*\(", m_text):
            if "transmute" in m_text[max(0, m.start() - 6) : m.end()]:
                self.report("rust-transmute", m.start(), "reinterprets the bits of a value")
        for m in re.finditer(r"\bmem::forget\s*\(", m_text):
            self.report("rust-mem-forget", m.start(), "the value's destructor never runs")
        for m in re.finditer(r"\bunsafe\s*\{", m_text):
            line = _line(m_text, m.start())
            above = "\n".join(self.lines[max(0, line - 4) : line])
            if "SAFETY:" not in above:
                self.report("rust-unsafe-block", m.start(), "no // SAFETY: comment", conf=0.45)

    def functions(self) -> None:
        for m in _FN.finditer(self.masked):
            brace = self.masked.find("{", m.end())
            semi = self.masked.find(";", m.end())
            if brace < 0 or (0 <= semi < brace):
                continue
            header = self.masked[m.start() : brace]
            body_end = _close(self.masked, brace)
            self._function(m.group("name"), bool(m.group("ext")), header, brace, body_end)

    def _function(self, name: str, ext: bool, header: str, start: int, end: int) -> None:
        body = self.masked[start:end]
        raws = {p.group(1) for p in _RAW_PARAM.finditer(header)}
        raws |= {d.group(1) or d.group(2) for d in _RAW_DECL.finditer(body)}
        checked = set(re.findall(r"\b(\w+)\s*\.\s*is_null\s*\(\)", body))
        checked |= set(re.findall(r"NonNull::new\s*\(\s*(\w+)", body))
        for var in raws - checked:
            for d in re.finditer(
                rf"(?<![\w)\]])\*\s*{re.escape(var)}\b(?!\s*(?:const|mut)\b)", body
            ):
                self.report("rust-raw-deref", start + d.start(), f"'{var}' may be null", name)
                break
        for d in re.finditer(r"\bslice::from_raw_parts(?:_mut)?\s*\(\s*(\w+)", body):
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
