"""Each scanner rule against its own case file (semgrep-style rule tests).

Beside every rule module of ``jarvis_graph/security/rules/`` lies a C, C++ or Rust file of
the same name whose lines are marked ``// fire`` (the rule must report that line) or
``// no-fire`` (it must not). The scan runs as a user runs it, on the file itself, with every
confidence kept, so a "maybe" finding counts too.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from jarvis_graph.security import LANGUAGES, rules, scan_path
from jarvis_graph.security.rules import HOOK_NAMES, MODULES, RULES

RULES_DIR = Path(rules.__file__).parent
CASE_SUFFIXES = (".c", ".cpp", ".rs")
_MARK = re.compile(r"//\s*(fire|no-fire)\s*$")
DOC = Path(__file__).parents[3] / "docs" / "FEATURES.md"


def case_file(rule_id: str) -> Path:
    """The one case file of a rule (``c-gets`` -> ``rules/c_gets.c``)."""
    stem = rule_id.replace("-", "_")
    found = [p for p in (RULES_DIR / f"{stem}{s}" for s in CASE_SUFFIXES) if p.is_file()]
    assert len(found) == 1, f"{rule_id}: want one of {stem}{{.c,.cpp,.rs}} in {RULES_DIR}"
    return found[0]


def marked_lines(path: Path) -> tuple[list[int], list[int]]:
    """The 1-based ``// fire`` lines and ``// no-fire`` lines of a case file."""
    fire: list[int] = []
    no_fire: list[int] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        m = _MARK.search(line)
        if m:
            (fire if m.group(1) == "fire" else no_fire).append(number)
    return fire, no_fire


def lines_reported(rule_id: str, path: Path) -> list[int]:
    """The lines the scan reports ``rule_id`` on, scanning ``path`` as a user would."""
    result = scan_path(path, LANGUAGES, workers=1, min_confidence=0.0)
    return sorted({issue.line for issue in result.issues if issue.pattern == rule_id})


def check_rule_cases(rule_id: str) -> None:
    """The rule fires exactly on its case file's fire lines (at least two, and two no-fire)."""
    path = case_file(rule_id)
    fire, no_fire = marked_lines(path)
    assert len(fire) >= 2 and len(no_fire) >= 2, f"{path.name}: {fire=} {no_fire=}"
    found = lines_reported(rule_id, path)
    assert not set(found) & set(no_fire), f"{path.name}: fired on no-fire lines"
    assert found == fire, f"{path.name}: reported on {found}, marked fire {fire}"


@pytest.mark.parametrize("rule_id", sorted(RULES))
def test_rule_fires_exactly_on_its_fire_lines(rule_id: str):
    check_rule_cases(rule_id)


def test_every_rule_module_has_a_check_or_names_its_pass():
    for rule_id, module in MODULES.items():
        hooks = [h for h in HOOK_NAMES if hasattr(module, h)]
        assert hooks or getattr(module, "EMITTED_BY", ""), f"{rule_id}: no hook, no EMITTED_BY"


def test_every_case_file_belongs_to_a_rule():
    stems = {rid.replace("-", "_") for rid in RULES}
    strays = [p.name for p in RULES_DIR.iterdir() if p.suffix in CASE_SUFFIXES]
    assert [name for name in strays if Path(name).stem not in stems] == []


def test_the_worked_example_of_the_docs_holds():
    text = DOC.read_text(encoding="utf-8")
    named = re.findall(r"jarvis_graph/security/rules/(\w+)\.(py|c|cpp|rs)", text)
    assert {ext for _, ext in named} >= {"py", "c"}
    root = DOC.parents[1]
    for stem, ext in named:
        assert (root / "jarvis_graph" / "security" / "rules" / f"{stem}.{ext}").is_file()
    for stem in {stem for stem, _ in named}:
        check_rule_cases(stem.replace("_", "-"))
