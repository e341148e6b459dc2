"""Scan one C/C++ file: model it, then walk every function (and its same-file callees)."""

from __future__ import annotations

from pathlib import Path

from jarvis_graph.security.c_facts import macro_names
from jarvis_graph.security.c_flow import FunctionScan
from jarvis_graph.security.c_source import header_macros, parse_c
from jarvis_graph.security.model import Issue


def scan_c_text(
    text: str,
    path: str,
    language: str = "c",
    headers: dict[str, str] | None = None,
    real_path: Path | None = None,
    part: tuple[int, int] = (0, 1),
) -> list[Issue]:
    """Issues of one C/C++ source text.

    Args:
        text: the source.
        path: the name to report.
        language: ``c`` or ``cpp``.
        headers: header file name -> path, for the macros of included local headers.
        real_path: where the file is on disk (headers beside it are found first).
        part: ``(k, n)``: walk only every n-th function starting at k (a big file is
            split across workers this way).
    """
    src = parse_c(text, path)
    macros = header_macros(real_path or Path(path), src.includes, headers or {})
    macros.update(src.macros)
    src.macro_names = macro_names(macros)
    callees = {fn.name.split("::")[-1]: fn for fn in src.functions}
    found: dict[str, Issue] = {}

    def emit(issue: Issue) -> None:
        old = found.get(issue.id)
        if old is None or old.confidence < issue.confidence:
            found[issue.id] = issue

    k, n = part
    for fn in src.functions[k::n]:
        FunctionScan(src, fn, macros, emit, language, callees).run()
    return sorted(found.values(), key=lambda i: (i.line, i.pattern))
