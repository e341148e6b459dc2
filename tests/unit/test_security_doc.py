"""docs/SECURITY.md stays true to the tests it cites.

The threat model names, for each boundary, the tests that prove its guarantees. A test
renamed or removed would leave a claim without proof; this check fails then, so the page
and the suite move together.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "SECURITY.md"
CITED_TEST = re.compile(r"`(?:[\w/]+\.py::)?(test_\w+)(?:\[[^\]]*\])?`")
CITED_FILE = re.compile(r"`((?:tests/[\w/]+/)?test_\w+\.py)`")


def _test_functions() -> set[str]:
    names: set[str] = set()
    for path in (REPO / "tests").rglob("test_*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                names.add(node.name)
    return names


def test_every_test_the_threat_model_cites_exists() -> None:
    text = DOC.read_text(encoding="utf-8")
    cited = set(CITED_TEST.findall(text)) - {
        m.removesuffix(".py") for m in CITED_FILE.findall(text)
    }
    assert len(cited) > 30, "the threat model cites its proofs by test name"
    missing = sorted(cited - _test_functions())
    assert not missing, f"docs/SECURITY.md cites tests that do not exist: {missing}"


def test_every_test_file_the_threat_model_cites_exists() -> None:
    files = {Path(name).name for name in CITED_FILE.findall(DOC.read_text(encoding="utf-8"))}
    present = {path.name for path in (REPO / "tests").rglob("test_*.py")}
    assert files, "the threat model cites test files"
    assert not sorted(files - present), f"cited files missing: {sorted(files - present)}"


def test_every_boundary_of_the_threat_model_has_a_section() -> None:
    headings = re.findall(r"^## \d+\. (.+)$", DOC.read_text(encoding="utf-8"), re.MULTILINE)
    assert headings == [
        "A web page in the user's browser",
        "Another local user",
        "A cloned repository",
        "Import files and input files",
        "The model",
        "A provider",
        "An MCP server",
        "A web page the model reads",
    ]


def test_every_adversarial_boundary_file_is_cited() -> None:
    """A new ``test_boundary_*`` file is a boundary's proof: the page must name it."""
    text = DOC.read_text(encoding="utf-8")
    files = sorted(p.name for p in (REPO / "tests" / "adversarial").glob("test_boundary_*.py"))
    uncited = [name for name in files if name not in text]
    assert not uncited, f"docs/SECURITY.md does not cite {uncited}"
