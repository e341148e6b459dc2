"""Imports inside functions: across packages only to defer a heavy dependency, and marked.

The layering and the absence of cycles are checked by ``lint-imports`` (contracts in
pyproject.toml, run by ``make test``). This test covers what it cannot see: an import
inside a function that reaches into another package must say why it is deferred, in a
``# deferred: ...`` comment right above its block of imports (the CLI's command modules
defer every such import so that ``jarvis`` starts on typer alone, and say so).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "jarvis_graph"


def _package_of(module: str) -> str:
    """``jarvis_graph.memory.tools`` -> ``memory``; a top-level module is its own package."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _function_imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in ast.walk(fn):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                    "jarvis_graph."
                ):
                    found.append((node.lineno, node.module or ""))
    return found


def _has_reason(lines: list[str], lineno: int) -> bool:
    """Whether the block of imports holding line ``lineno`` opens with a ``# deferred`` line."""
    for text in (line.strip() for line in reversed(lines[: lineno - 1])):
        if text.startswith("# deferred"):
            return True
        in_block = text.startswith(("from ", "import ")) or text.endswith((",", "(")) or text == ")"
        if not in_block:
            return False
    return False


def unmarked_deferred_imports(root: Path = PACKAGE) -> list[str]:
    """Every cross-package import inside a function with no ``# deferred:`` reason."""
    problems = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent)
        module = ".".join(rel.with_suffix("").parts).removesuffix(".__init__")
        lines = path.read_text(encoding="utf-8").splitlines()
        for lineno, target in _function_imports(path):
            if _package_of(target) != _package_of(module) and not _has_reason(lines, lineno):
                problems.append(f"{rel}:{lineno} imports {target} inside a function")
    return problems


def test_every_cross_package_import_in_a_function_says_why_it_is_deferred() -> None:
    assert unmarked_deferred_imports() == []


def test_an_unmarked_import_in_a_function_is_reported(tmp_path: Path) -> None:
    pkg = tmp_path / "jarvis_graph" / "nodes"
    pkg.mkdir(parents=True)
    (pkg / "late.py").write_text(
        "def f():\n"
        "    from jarvis_graph.graphs.agent import graph\n"
        "\n"
        "    return graph\n"
        "\n"
        "\n"
        "def g():\n"
        "    # deferred: numpy loads only when ranking\n"
        "    from jarvis_graph.memory.embedder import default_embedder\n"
        "    from jarvis_graph.memory.store import FaissStore\n"
        "\n"
        "    return default_embedder, FaissStore\n"
    )

    problems = unmarked_deferred_imports(tmp_path / "jarvis_graph")

    assert problems == [
        "jarvis_graph/nodes/late.py:2 imports jarvis_graph.graphs.agent inside a function"
    ]
