"""The calculator that evaluates a model's Python expression: whitelist and limits."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from jarvis_graph.tools.calculator import CalculationError, check, evaluate


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("max([12, 87, 45, 230, 19])", "230"),
        ("len(['a', 'b', 'c'])", "3"),
        ("['shipped', 'new', 'shipped'].count('shipped')", "2"),
        ("sum(x * 2 for x in range(4))", "12"),
        ("sum([float(r.split(',')[1]) for r in ['a,3.5', 'b,4']])", "7.5"),  # builtins inside
        ("round(sum([1.5, 2.25]) / 2, 2)", "1.88"),
        ("sum([2.5, 1.5])", "4"),  # an integral float prints as an integer
        ("len([w for w in 'def a\\ndef b\\nx = 1'.splitlines() if w.startswith('def ')])", "2"),
        ("sorted({'b': 2, 'a': 1}.keys())", "['a', 'b']"),
    ],
)
def test_pure_expressions_are_computed(expression: str, value: str) -> None:
    assert evaluate(expression) == value


@pytest.mark.parametrize(
    ("expression", "reason"),
    [
        ("open('/etc/passwd')", "unknown name 'open'"),
        ("open('/etc/passwd').read()", "'read' is not allowed"),
        ("__import__('os')", "unknown name '__import__'"),
        ("__import__('os').system('true')", "'system' is not allowed"),
        ("().__class__", "'__class__' is not allowed"),
        ("import os", "not a Python expression"),
        ("(lambda: 1)()", "only builtins and methods may be called"),
        ("sorted([1], key=lambda v: v)", "Lambda is not allowed"),
        ("x + 1", "unknown name 'x'"),
        ("f'{1}'", "JoinedStr is not allowed"),
        ("[1][0].__reduce__()", "'__reduce__' is not allowed"),
    ],
)
def test_anything_beyond_the_whitelist_is_refused_before_it_runs(
    expression: str, reason: str
) -> None:
    with pytest.raises(CalculationError, match=reason):
        check(expression)


def test_comprehension_variables_are_the_only_free_names() -> None:
    check("[n for n in range(3) if n]")
    with pytest.raises(CalculationError, match="unknown name 'm'"):
        check("[m for n in range(3)]")


def test_runaway_calculations_are_stopped() -> None:
    with pytest.raises(CalculationError, match="MemoryError|failed|longer than"):
        evaluate("'a' * 10**10")
    with pytest.raises(CalculationError, match="longer than|failed"):
        evaluate("sum(range(10**12))", timeout=1.0)


def test_errors_of_the_expression_are_reported() -> None:
    with pytest.raises(CalculationError, match="ZeroDivisionError"):
        evaluate("1 / 0")
    with pytest.raises(CalculationError, match="longer than"):
        evaluate("1 + " * 2000 + "1")


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "numbers.txt").write_text("12\n230\n19\n\n")
    (tmp_path / "orders.csv").write_text("id,status\n1,shipped\n2,new\n3,shipped\n")
    (tmp_path / "docs" / "api").mkdir(parents=True)
    for name in ("docs/a.md", "docs/api/b.md", "docs/c.txt"):
        (tmp_path / name).write_text("x\n")
    (tmp_path / ".env").write_text("KEY=hidden\n")
    (tmp_path / "api_token.txt").write_text("tok\n")
    return tmp_path


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("max(float(n) for n in open('numbers.txt') if n.strip())", "230"),
        ("len(glob('docs/**/*.md'))", "2"),
        ("sum(1 for r in csv.DictReader(open('orders.csv')) if r['status'] == 'shipped')", "2"),
        ("len(open('numbers.txt').readlines())", "4"),
        ("len(re.findall('ship', open('orders.csv').read()))", "2"),
        ("glob('**/*.txt')", "['docs/c.txt', 'numbers.txt']"),  # private files never listed
    ],
)
def test_expressions_may_read_the_workspace(files: Path, expression: str, value: str) -> None:
    assert evaluate(expression, workspace=files, private=["*token*"]) == value


@pytest.mark.parametrize(
    ("expression", "reason"),
    [
        ("open('/etc/passwd').read()", "outside the workspace"),
        ("open('../outside.txt').read()", "outside the workspace"),
        ("open('.env').read()", "private"),
        ("open('api_token.txt').read()", "private"),
        ("open('numbers.txt', 'w')", "can only be read"),
        ("open('numbers.txt', 'a')", "can only be read"),
    ],
)
def test_workspace_reads_stay_inside_and_never_write(
    files: Path, expression: str, reason: str
) -> None:
    before = {p: p.read_bytes() for p in files.rglob("*") if p.is_file()}
    with pytest.raises(CalculationError, match=reason):
        evaluate(expression, workspace=files, private=["*token*"])
    assert {p: p.read_bytes() for p in files.rglob("*") if p.is_file()} == before


def test_file_names_are_refused_without_a_workspace() -> None:
    with pytest.raises(CalculationError, match="unknown name 'glob'"):
        check("len(glob('*'))")
    check("len(glob('*'))", files=True)
    with pytest.raises(CalculationError, match="'system' is not allowed"):
        check("re.sys.modules['os'].system('true')", files=True)


@pytest.mark.parametrize(
    ("expression", "repaired"),
    [
        (
            "sum(float(r['qty'])) for r in csv.DictReader(open('s.csv'))",
            "sum(float(r['qty']) for r in csv.DictReader(open('s.csv')))",
        ),
        ("max(int(x)) for x in [1, 2]", "max(int(x) for x in [1, 2])"),
        ("sum(x for x in [1])", "sum(x for x in [1])"),  # parses: left alone
        ("sum(x for x in [1]", "sum(x for x in [1]"),  # no generator outside a call
        ("len([1) for", "len([1) for"),
    ],
)
def test_a_generator_outside_its_call_is_put_back(expression: str, repaired: str) -> None:
    from jarvis_graph.tools.calculator import repair

    assert repair(expression) == repaired


def refusal(expression: str, workspace: Path) -> str:
    """The message ``expression`` is refused with."""
    with pytest.raises(CalculationError) as caught:
        evaluate(expression, workspace=workspace)
    return str(caught.value)


def test_a_column_name_written_as_a_variable_is_answered_with_how_to_read_the_file(
    files: Path,
) -> None:
    message = refusal("sum(qty)", files)
    assert "unknown name 'qty': an expression has no variables" in message
    hint = re.search(r"as in (.+?) for a CSV column", message)
    assert hint, message
    (files / "data.csv").write_text("qty,name\n3,a\n4,b\n")
    assert evaluate(hint.group(1), workspace=files) == "7"  # the example runs as shown
    with pytest.raises(CalculationError, match="use literal values"):
        check("qty + 1")  # no workspace: nothing to read


def test_a_file_name_written_bare_is_answered_with_how_to_open_it(files: Path) -> None:
    (files / "values.txt").write_text("4\n19\n7\n")
    message = refusal("max(values.txt) + 1", files)
    assert "values.txt is not a value: a file is read with open('values.txt')" in message
    example = re.search(r"as in (.+?) for numbers", message)
    assert example, message
    assert evaluate(example.group(1), workspace=files) == "19"
    with pytest.raises(CalculationError, match="the method 'title' is not allowed"):
        check("'a'.title()", files=True)  # a method on a value stays refused as one
    with pytest.raises(CalculationError, match="the method 'txt' is not allowed"):
        check("[x for x in 'ab'][0].txt", files=True)


def test_a_refused_expression_is_answered_with_the_one_it_meant_over_the_workspace(
    tmp_path: Path,
) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "weather.csv").write_text("day,temp_c\nmon,21.5\ntue,25.5\nwed,19\n")
    (tmp_path / "users.csv").write_text("name,email\nana,a@x\nbo,b@x\n")
    (tmp_path / "numbers.txt").write_text("4\n230\n17\n")
    cases = {
        "max(temp_c) - 1": (
            "max(float(r['temp_c']) for r in csv.DictReader(open('data/weather.csv')))"
        ),
        "len(users.csv) - 1": "len(list(csv.DictReader(open('users.csv'))))",
        "max(numbers.txt) / 2": "max(float(x) for x in open('numbers.txt').read().split())",
    }
    values = {"max(temp_c) - 1": "25.5", "len(users.csv) - 1": "2", "max(numbers.txt) / 2": "230"}
    for written, meant in cases.items():
        with pytest.raises(CalculationError) as caught:
            evaluate(written, workspace=tmp_path)
        assert str(caught.value).endswith(f"In this workspace that is: {meant}"), caught.value
        assert evaluate(meant, workspace=tmp_path) == values[written]


def test_no_hint_reads_a_private_or_linked_file(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret_cols.csv").write_text("salary,name\n1,a\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "linked.csv").symlink_to(outside / "secret_cols.csv")
    (ws / "api_token.csv").write_text("salary,x\n2,b\n")
    with pytest.raises(CalculationError) as caught:
        evaluate("sum(salary)", workspace=ws, private=["*token*"])
    assert "In this workspace" not in str(caught.value)
    assert "linked.csv" not in str(caught.value) and "api_token" not in str(caught.value)


def test_a_comprehension_variable_is_never_taken_for_a_column(tmp_path: Path) -> None:
    (tmp_path / "odd.csv").write_text("r,qty\n1,2\n")
    with pytest.raises(CalculationError) as caught:
        evaluate("sum(float(r['qty']) for r in rows)", workspace=tmp_path)
    assert "unknown name 'rows'" in str(caught.value)
    assert "In this workspace" not in str(caught.value)  # 'r' is bound, 'rows' no column


def test_an_aggregate_of_one_bare_name_is_computed_and_says_how_it_was_read(
    tmp_path: Path,
) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "weather.csv").write_text("day,temp_c\nmon,21.5\ntue,25.5\nwed,19\n")
    (tmp_path / "numbers.txt").write_text("4\n230\n17\n")
    assert evaluate("max(temp_c)", workspace=tmp_path) == (
        "25.5 (read as max(float(r['temp_c']) for r in csv.DictReader(open('data/weather.csv'))))"
    )
    assert evaluate("sum(numbers.txt)", workspace=tmp_path) == (
        "251 (read as sum(float(x) for x in open('numbers.txt').read().split()))"
    )
    # more than one reading, or more than the aggregate: refused with a suggestion
    (tmp_path / "other.csv").write_text("temp_c\n40\n")
    assert "In this workspace" not in refusal("max(temp_c)", tmp_path)  # two files have it
    (tmp_path / "table.csv").write_text("a,b\n1,2\n")
    assert "table.csv is not a value" in refusal("max(table.csv)", tmp_path)  # which column?
    assert "In this workspace that is" in refusal("min(numbers.txt) + 1", tmp_path)
    (tmp_path / "deep").mkdir()
    (tmp_path / "deep" / "numbers.txt").write_text("1\n")
    assert "numbers.txt is not a value" in refusal("max(numbers.txt)", tmp_path)  # which one?
