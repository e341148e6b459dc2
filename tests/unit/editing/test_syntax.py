"""Edits that would leave a JSON, Python, TOML or YAML file unparsable are refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jarvis_graph.editing import FilePatch, apply_patch, rewrite_file
from jarvis_graph.editing.model import Edit
from jarvis_graph.editing.syntax import broken_by_edit, syntax_error


def patch(tmp_path: Path, name: str, search: str, replace: str):
    return apply_patch(
        [FilePatch(name, (Edit(search=search, replace=replace),))], tmp_path.joinpath
    )


def test_a_key_replaced_by_its_value_breaks_json_and_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    original = '{"server": {"host": "0.0.0.0", "port": 8080}, "debug": false}\n'
    config.write_text(original)
    outcome = patch(tmp_path, "config.json", '"server"', "9091")
    assert not outcome.ok
    report = outcome.report()
    assert "No file was changed" in report and "invalid JSON" in report
    assert "line 1 column" in report
    assert config.read_text() == original  # nothing written
    fixed = patch(tmp_path, "config.json", '"port": 8080', '"port": 9091')
    assert fixed.ok
    assert json.loads(config.read_text())["server"]["port"] == 9091


def test_a_python_edit_that_breaks_the_syntax_is_refused(tmp_path: Path) -> None:
    script = tmp_path / "inventory.py"
    script.write_text("total = 3\npritn(f'total: {total}')\n")
    assert not patch(tmp_path, "inventory.py", "pritn(", "print((").ok
    assert "invalid Python" in patch(tmp_path, "inventory.py", "pritn(", "print((").report()
    assert patch(tmp_path, "inventory.py", "pritn(", "print(").ok  # the real fix goes in
    assert "print(f'total" in script.read_text()


def test_a_file_that_did_not_parse_before_may_be_edited(tmp_path: Path) -> None:
    broken = tmp_path / "data.json"
    broken.write_text('{"a": 1,, "b": 2}')
    assert patch(tmp_path, "data.json", "1,,", "1,,,").ok  # still broken: not the edit's fault
    assert patch(tmp_path, "data.json", "1,,,", "1,").ok
    assert json.loads(broken.read_text()) == {"a": 1, "b": 2}


def test_rewriting_or_creating_an_unparsable_file_is_refused(tmp_path: Path) -> None:
    out = rewrite_file(tmp_path / "new.yaml", "new.yaml", "key: [1, 2\n")
    assert not out.ok and "invalid YAML" in out.message
    assert not (tmp_path / "new.yaml").exists()
    assert rewrite_file(tmp_path / "new.yaml", "new.yaml", "key: [1, 2]\n").ok
    assert rewrite_file(tmp_path / "notes.txt", "notes.txt", "{not json").ok  # no parser


@pytest.mark.parametrize(
    ("label", "good", "bad", "says"),
    [
        ("a.json", '{"a": [1]}', '{"a": [1}', "invalid JSON"),
        ("a.py", "x = (1,\n 2)\n", "x = (1,\n", "invalid Python"),
        ("a.toml", "[s]\nk = 1\n", "[s\nk = 1\n", "invalid TOML"),
        ("a.yml", "a: 1\n", "a: [\n", "invalid YAML"),
    ],
)
def test_each_language(label: str, good: str, bad: str, says: str) -> None:
    assert syntax_error(label, good) is None
    assert says in (syntax_error(label, bad) or "")
    assert broken_by_edit(label, good, bad)
    assert broken_by_edit(label, None, bad)
    assert broken_by_edit(label, bad, bad) is None


def test_other_files_and_empty_text_are_not_checked() -> None:
    assert syntax_error("Makefile", "{{{") is None
    assert syntax_error("a.json", "  \n") is None
