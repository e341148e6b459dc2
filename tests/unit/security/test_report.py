"""Reports: SARIF 2.1.0 structure code-scanning tools read, JSON and Markdown contents."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jarvis_graph.security import render, scan_path

FIXTURES = Path(__file__).parents[2] / "fixtures" / "security"


@pytest.fixture(scope="module")
def result():
    return scan_path(FIXTURES, workers=1)


def test_sarif_has_the_2_1_0_structure(result):
    log = json.loads(render(result, "sarif"))
    assert log["version"] == "2.1.0"
    assert log["$schema"].endswith("sarif-2.1.0.json")
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "jarvis-sec"
    rule_ids = [r["id"] for r in driver["rules"]]
    assert len(rule_ids) == len(set(rule_ids)) and rule_ids
    assert all(r["shortDescription"]["text"] for r in driver["rules"])
    assert len(run["results"]) == len(result.issues)
    for row, issue in zip(run["results"], result.issues, strict=True):
        assert row["ruleId"] == issue.pattern
        assert rule_ids[row["ruleIndex"]] == row["ruleId"]
        assert row["message"]["text"]
        assert row["level"] in ("error", "warning", "note")
        location = row["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uri"] == issue.file
        assert location["region"]["startLine"] == issue.line >= 1


def test_sarif_uris_are_relative_to_a_declared_root(result):
    run = json.loads(render(result, "sarif"))["runs"][0]
    base = run["originalUriBaseIds"]["SRCROOT"]["uri"]
    assert base.startswith("file://") and base.endswith("/")
    first = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert first["uriBaseId"] == "SRCROOT"
    assert (FIXTURES / first["uri"]).is_file()


def test_json_report_has_issues_summary_and_verdicts(result):
    issue = result.issues[0]
    verdicts = {issue.id: {"verdict": "confirmed", "reasoning": "r", "suggested_fix": "f"}}
    data = json.loads(render(result, "json", verdicts))
    assert data["summary"]["total"] == len(result.issues)
    assert set(data["summary"]) >= {"by_language", "by_category", "top_risk_files", "skipped"}
    first = data["issues"][0]
    assert set(first) >= {"language", "category", "pattern", "file", "line", "evidence",
                          "description", "suggestion", "confidence", "severity", "cwe"}  # fmt: skip
    assert first["verification"]["verdict"] == "confirmed"
    assert data["verification"] == {"confirmed": 1, "false_positive": 0, "uncertain": 0}


def test_markdown_lists_every_issue(result):
    text = render(result, "md")
    assert text.startswith("# Security scan")
    for issue in result.issues:
        assert f"`{issue.file}:{issue.line}`" in text


def test_unknown_format_is_refused(result):
    with pytest.raises(ValueError, match="use one of json, md, sarif"):
        render(result, "xml")
