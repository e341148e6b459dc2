"""``jarvis sec``: clear errors (no traceback), report files, evaluation table."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import invoke

FIXTURES = Path(__file__).parents[2] / "fixtures" / "security"


def test_missing_path_exits_with_a_message(tmp_path: Path):
    result = invoke(["sec", "scan", str(tmp_path / "nowhere")])
    assert result.exit_code == 2
    assert "does not exist" in result.output and "Traceback" not in result.output


def test_empty_tree_exits_with_a_message(tmp_path: Path):
    (tmp_path / "readme.md").write_text("# nothing to scan")
    result = invoke(["sec", "scan", str(tmp_path)])
    assert result.exit_code == 2
    assert "no c/cpp/rust source files" in result.output


def test_bad_format_and_language_are_refused():
    assert "unknown format 'xml'" in invoke(["sec", "scan", str(FIXTURES), "-f", "xml"]).output
    result = invoke(["sec", "scan", str(FIXTURES), "--lang", "go"])
    assert result.exit_code == 2 and "unknown language(s) 'go'" in result.output


def test_sarif_report_written_to_a_file(tmp_path: Path):
    out = tmp_path / "out" / "scan.sarif"
    result = invoke(["sec", "scan", str(FIXTURES), "--format", "sarif", "-o", str(out),
                     "--lang", "rust", "--workers", "1"])  # fmt: skip
    assert result.exit_code == 0, result.output
    log = json.loads(out.read_text())
    assert log["version"] == "2.1.0"
    assert {r["ruleId"] for r in log["runs"][0]["results"]} >= {"rust-transmute"}


def test_eval_prints_figures_per_cwe_and_overall(tmp_path: Path):
    src = tmp_path / "juliet"
    (src / "t").mkdir(parents=True)
    (src / "t" / "case.c").write_text(
        'void CASE_bad()\n{\n    char *p = NULL;\n    printf("%d", *p);\n}\n\n'
        "void CASE_good()\n{\n    char c = 'a';\n    char *p = &c;\n    printf(\"%d\", *p);\n}\n"
    )
    manifest = {"testcases": {"CASE": {"cwe": 476, "files": ["t/case.c"]}}}
    (src / "manifest.json").write_text(json.dumps(manifest))
    figures = tmp_path / "figures.json"
    result = invoke(["sec", "eval", "--juliet", str(src), "--json", str(figures)])
    assert result.exit_code == 0, result.output
    assert "CWE-476" in result.output and "overall" in result.output
    assert json.loads(figures.read_text())["overall"]["j"] == 1.0


def test_eval_without_manifest_is_a_clear_error(tmp_path: Path):
    (tmp_path / "a.c").write_text("int main(void)\n{\n    return 0;\n}\n")
    result = invoke(["sec", "eval", "--juliet", str(tmp_path)])
    assert result.exit_code == 2 and "no manifest.json" in result.output
