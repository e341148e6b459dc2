"""References and conditions: resolved from the run's values, never evaluated as code."""

from __future__ import annotations

from pathlib import Path

import pytest

from jarvis_graph.chains.expr import (
    ChainRunError,
    ExpressionError,
    fill,
    parse_condition,
    parse_reference,
    substitute,
)

SCOPE = {
    "input": {"path": "src", "n": 3},
    "steps": {
        "find": {"status": "succeeded", "result": '{"files": ["a.py", "b.py"], "count": 2}'},
        "text": {"status": "succeeded", "result": "no matches for 'TODO' under ."},
        "bad": {"status": "failed", "result": "Error: boom"},
    },
}


def test_a_whole_reference_keeps_its_type_and_text_gets_text() -> None:
    assert substitute("${input.n}", SCOPE) == 3
    assert substitute("${steps.find.result.files}", SCOPE) == ["a.py", "b.py"]
    assert substitute("${steps.find.result.files.1}", SCOPE) == "b.py"
    assert substitute("n=${input.n} in ${input.path}", SCOPE) == "n=3 in src"
    assert substitute("files: ${steps.find.result.files}", SCOPE) == 'files: ["a.py", "b.py"]'
    assert substitute({"a": ["${steps.bad.ok}"]}, SCOPE) == {"a": [False]}
    assert substitute("${steps.find.status}", SCOPE) == "succeeded"


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("${steps.text.result.files}", "is not JSON, so it has no field 'files'"),
        ("${steps.find.result.nope}", "no 'nope' in the value (it has ['files', 'count'])"),
        ("${steps.find.result.files.7}", "no '7' in the value"),
        ("${steps.later.result}", "step 'later' has not run"),
        ("${input.missing}", "the chain was given no input 'missing'"),
    ],
)
def test_what_cannot_be_resolved_is_an_error_that_says_why(value: str, says: str) -> None:
    with pytest.raises(ChainRunError, match=None) as caught:
        substitute(value, SCOPE)
    assert says in str(caught.value)


def test_fill_writes_why_instead_of_a_value_it_cannot_find() -> None:
    assert fill("ok=${steps.find.ok}; ${steps.later.result}", SCOPE) == (
        "ok=true; (${steps.later.result}: step 'later' has not run)"
    )


@pytest.mark.parametrize(
    "text", ["${x.y}", "${steps.find}", "${steps.find.ok.more}", "${input.}", "${steps.a.output}"]
)
def test_bad_references_are_refused(text: str) -> None:
    with pytest.raises(ExpressionError):
        parse_reference(text[2:-1])


@pytest.mark.parametrize(
    ("condition", "holds"),
    [
        ("${steps.find.ok}", True),
        ("${steps.bad.ok}", False),
        ("not ${steps.bad.ok}", True),
        ("${steps.find.result.count} == 2", True),
        ("${steps.find.result.count} != 2", False),
        ("${steps.text.result} startswith 'no matches'", True),
        ("not ${steps.text.result} startswith 'no matches'", False),
        ("${steps.bad.result} contains boom", True),
        ("'${input.path}' == src", True),
        ("${steps.find.result.files} contains b.py", True),
        ("''", False),
        ("0", False),
        ("none", False),
    ],
)
def test_conditions(condition: str, holds: bool) -> None:
    assert parse_condition(condition).holds(SCOPE) is holds


@pytest.mark.parametrize(
    "condition",
    [
        "${steps.find.ok} and ${steps.bad.ok}",
        "${steps.find.ok} == ",
        "'unclosed",
        "${bad} == 1",
    ],
)
def test_conditions_outside_the_rules_are_refused_not_run(condition: str) -> None:
    with pytest.raises(ExpressionError):
        parse_condition(condition)


def test_code_in_a_condition_is_only_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    condition = parse_condition("__import__('os').system('touch pwned')")

    assert condition.holds(SCOPE) is True  # a non-empty word: true, and nothing ran
    assert not (tmp_path / "pwned").exists()
