"""Scan one C/C++ file: model it, then walk every function (and its same-file callees)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from jarvis_graph.security.c_facts import macro_names
from jarvis_graph.security.c_flow import FunctionScan
from jarvis_graph.security.c_source import CSource, Function, header_macros, parse_c
from jarvis_graph.security.files import Tree
from jarvis_graph.security.model import Issue


def scan_c_text(
    text: str,
    path: str,
    language: str = "c",
    tree: Tree | None = None,
    real_path: Path | None = None,
    part: tuple[int, int] = (0, 1),
) -> list[Issue]:
    """Issues of one C/C++ source text.

    Args:
        text: the source.
        path: the name to report.
        language: ``c`` or ``cpp``.
        tree: the scanned tree, for the macros of the local headers the file includes
            (without it, only headers beside the file are read).
        real_path: where the file is on disk (headers beside it are found first).
        part: ``(k, n)``: walk only every n-th function starting at k.
    """
    return walk_c(prepare_c(text, path, tree, real_path), language, part)


def prepare_c(
    text: str,
    path: str,
    tree: Tree | None = None,
    real_path: Path | None = None,
) -> tuple[CSource, dict[str, str]]:
    """The file's model and the macros its statements expand with (its own and its headers').

    A big file is prepared once and walked in parts by several workers (``walk_c``).
    """
    src = parse_c(text, path)
    src.masked = ""  # not read after parsing; keeps the model small to hand to a worker
    macros = header_macros(real_path or Path(path), src.includes, tree)
    macros.update(src.macros)
    src.macro_names = macro_names(macros)
    return src, macros


def walk_c(
    prepared: tuple[CSource, dict[str, str]], language: str = "c", part: tuple[int, int] = (0, 1)
) -> list[Issue]:
    """Walk part k of n of a prepared file's functions (``part == (k, n)``)."""
    src, macros = prepared
    if src.callees is None:  # once per file and process: the parts of a file share it
        src.callees = {fn.name.split("::")[-1]: fn for fn in src.functions}
    callees = src.callees
    emitted: list[Issue] = []
    for fn in _share(src.functions, *part):
        FunctionScan(src, fn, macros, emitted.append, language, callees).run()
    return strongest(emitted)


def strongest(issues: Iterable[Issue]) -> list[Issue]:
    """One issue per id, the most confident (the first of equals), ordered by line and rule."""
    kept: dict[str, Issue] = {}
    for issue in issues:
        old = kept.get(issue.id)
        if old is None or old.confidence < issue.confidence:
            kept[issue.id] = issue
    return sorted(kept.values(), key=lambda i: (i.line, i.pattern))


def _share(functions: list[Function], k: int, n: int) -> list[Function]:
    """Part ``k`` of ``n`` runs of neighbouring functions with about the same amount of code.

    Neighbours stay together: a helper is usually defined near its callers, so the walks of
    one part follow callees that the same part splits and walks anyway.
    """
    if n == 1:
        return functions
    weights = [len(fn.body) + 200 for fn in functions]  # a walk has a fixed cost too
    total, run = sum(weights), 0
    mine: list[Function] = []
    for fn, weight in zip(functions, weights, strict=True):
        if min(run * n // total, n - 1) == k:
            mine.append(fn)
        run += weight
    return mine
