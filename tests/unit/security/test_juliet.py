"""Juliet scoring: column-0 functions, labels by name, per-case TP/FP, P/R/F1/J."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jarvis_graph.security.juliet import label_functions, score
from jarvis_graph.security.model import Issue

CASE = """#include "std_testcase.h"
namespace ns
{
void bad()
{
    int x = 0;
    x++;
}

static void goodG2B()
{
    int x = 0;
}

void helper()
{
}
}
"""


def _issue(file: str, line: int) -> Issue:
    return Issue("c", "c", "rule", file, line, "", "", "", 0.9, "high", "CWE-1")


def test_label_functions():
    spans = label_functions(CASE)
    assert [(s.name, s.label, s.start, s.end) for s in spans] == [
        ("bad", "bad", 4, 8),
        ("goodG2B", "good", 10, 13),
        ("helper", "neutral", 15, 17),
    ]


@pytest.fixture
def subset(tmp_path: Path) -> Path:
    for i in range(4):
        (tmp_path / f"t{i}.cpp").write_text(CASE)
    manifest = {"testcases": {f"T{i}": {"cwe": 121 if i < 2 else 476, "files": [f"t{i}.cpp"]}
                              for i in range(4)}}  # fmt: skip
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    return tmp_path


def test_score_counts_cases_not_findings(subset: Path):
    issues = [
        _issue("t0.cpp", 6), _issue("t0.cpp", 7),  # two findings, one TP case
        _issue("t1.cpp", 11),  # FP
        _issue("t2.cpp", 6), _issue("t2.cpp", 12),  # TP and FP in the same case
        _issue("t3.cpp", 16),  # neutral: nothing
    ]  # fmt: skip
    figures = score(subset, issues)
    assert figures["per_cwe"]["CWE-121"] | {} == {
        "cases": 2, "tp": 1, "fp": 1, "precision": 0.5, "recall": 0.5, "f1": 0.5,
        "fpr": 0.5, "j": 0.0,
    }  # fmt: skip
    overall = figures["overall"]
    assert (overall["tp"], overall["fp"], overall["cases"]) == (2, 2, 4)
    assert overall["j"] == pytest.approx(0.0)


def test_flagging_everything_scores_j_zero(subset: Path):
    issues = [_issue(f"t{i}.cpp", line) for i in range(4) for line in (6, 12)]
    overall = score(subset, issues)["overall"]
    assert overall["f1"] == pytest.approx(2 / 3)
    assert overall["j"] == 0.0


def test_missing_manifest_is_a_clear_error(tmp_path: Path):
    with pytest.raises(FileNotFoundError, match="no manifest.json"):
        score(tmp_path, [])
