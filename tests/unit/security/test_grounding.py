"""A verdict counts only when its evidence is on the lines it names and it is analysis."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jarvis_graph.security.grounding import check_verdict, code_around

SOURCE = """\
#include <stdlib.h>

void twice(void)
{
    char *p = (char *)malloc(16);
    if (p == NULL) return;
    free(p);
    free(p);
}
"""
CANDIDATE = {
    "file": "memory.c",
    "line": 8,
    "description": "p is freed twice: first at line 7",
    "evidence": "free(p);",
}
REASON = "p is freed on line 7 and again on line 8 with no assignment in between."


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "memory.c").write_text(SOURCE)
    (tmp_path / "other.c").write_text("int helper(void) { return 1; }\n")
    return tmp_path


def verdict(evidence: list[dict[str, str]], reasoning: str = REASON, decision: str = "confirmed"):
    return {"verdict": decision, "reasoning": reasoning, "suggested_fix": "", "evidence": evidence}


def test_evidence_on_the_named_lines_grounds_the_verdict(root: Path) -> None:
    cited = [{"location": "memory.c:7-8", "code": "free(p);\n    free(p);"}]
    out = check_verdict(verdict(cited), root, CANDIDATE)
    assert out["grounded"] is True and out["verdict"] == "confirmed"
    assert "claimed" not in out and "grounding_problems" not in out
    # the numbered form the verifier was shown is the same code
    shown = [{"location": "memory.c:8", "code": "    8 |     free(p);"}]
    assert check_verdict(verdict(shown), root, CANDIDATE)["grounded"] is True


@pytest.mark.parametrize(
    ("evidence", "problem"),
    [
        ([], "no evidence"),
        ([{"location": "memory.c:5", "code": "free(p);"}], "the cited code is not on memory.c:5"),
        ([{"location": "memory.c:40-42", "code": "free(p);"}], "outside the file's 9 lines"),
        ([{"location": "memory.c", "code": "free(p);"}], "is not path:start-end"),
        ([{"location": "memory.c:8", "code": ";"}], "no code cited"),
        ([{"location": "gone.c:1", "code": "free(p);"}], "not a file under the scanned root"),
        ([{"location": "../memory.c:8", "code": "free(p);"}], "not a file under the scanned root"),
        ([{"location": "other.c:1", "code": "return 1;"}], "no evidence item is in the finding"),
        (["memory.c:8"], "not an object"),
    ],
)
def test_evidence_that_does_not_check_out_makes_the_verdict_uncertain(
    root: Path, evidence: list, problem: str
) -> None:
    out = check_verdict(verdict(evidence, decision="false_positive"), root, CANDIDATE)
    assert out["verdict"] == "uncertain" and out["claimed"] == "false_positive"
    assert out["grounded"] is False
    assert any(problem in p for p in out["grounding_problems"]), out["grounding_problems"]


def test_a_symlink_out_of_the_root_is_not_evidence(root: Path, tmp_path_factory) -> None:
    outside = tmp_path_factory.mktemp("outside") / "secret.c"
    outside.write_text("free(p);\n")
    os.symlink(outside, root / "link.c")
    cited = [
        {"location": "link.c:1", "code": "free(p);"},
        {"location": "memory.c:8", "code": "free(p);"},
    ]
    out = check_verdict(verdict(cited), root, CANDIDATE)
    assert out["verdict"] == "uncertain"
    assert any(
        "link.c is not a file under the scanned root" in p for p in out["grounding_problems"]
    )


@pytest.mark.parametrize(
    ("reasoning", "problem"),
    [
        ("CWE-416", "not analysis"),
        ("", "not analysis"),
        ("unknown tool 'unknown'; use read_code, search_code or submit_verdict", "error message"),
        (
            "You verify one candidate security issue found by a static scanner in C, C++ or "
            "Rust code under the root. Read the code around it with read_code.",
            "copies the prompt",
        ),
    ],
)
def test_reasoning_that_is_not_analysis_makes_the_verdict_uncertain(
    root: Path, reasoning: str, problem: str
) -> None:
    prompt = (
        "You verify one candidate security issue found by a static scanner in C, C++ or "
        "Rust code under the root. Read the code around it with read_code and look for callers."
    )
    cited = [{"location": "memory.c:8", "code": "free(p);"}]
    out = check_verdict(verdict(cited, reasoning), root, CANDIDATE, prompt)
    assert out["verdict"] == "uncertain" and out["claimed"] == "confirmed"
    assert any(problem in p for p in out["grounding_problems"]), out["grounding_problems"]


def test_an_uncertain_verdict_stays_uncertain_without_a_claim(root: Path) -> None:
    out = check_verdict(
        verdict([], "could not tell from the code I read here", "uncertain"), root, CANDIDATE
    )
    assert out["verdict"] == "uncertain" and out["grounded"] is False and "claimed" not in out


def test_the_code_around_a_finding_is_numbered_under_its_location(root: Path) -> None:
    shown = code_around(root, CANDIDATE, radius=2)
    assert shown.splitlines()[0] == "memory.c:6-9"
    assert "    8 |     free(p);" in shown.splitlines()
    assert code_around(root, {**CANDIDATE, "file": "../x.c"}) == ""


def test_a_path_that_carries_the_shown_range_is_read_as_the_path(root: Path) -> None:
    from jarvis_graph.security.progress import normalise_verdict

    item = {"path": "memory.c:6-9", "start_line": 8, "end_line": 8, "code": "free(p);"}
    raw = {"verdict": "confirmed", "reasoning": REASON, "evidence": [item]}
    verdict = normalise_verdict(raw)
    assert verdict["evidence"] == [{"location": "memory.c:8", "code": "free(p);"}]
    assert check_verdict(verdict, root, CANDIDATE)["grounded"] is True
