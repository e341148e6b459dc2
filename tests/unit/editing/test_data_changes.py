"""An edit of a JSON, TOML or YAML file reports the data it changed, key by key."""

from __future__ import annotations

import json
from pathlib import Path

from jarvis_graph.editing import FilePatch, apply_patch
from jarvis_graph.editing.data_changes import MAX_LINES, data_changes, report_lines
from jarvis_graph.editing.model import Edit
from jarvis_graph.tools.base import ToolEnv
from jarvis_graph.tools.code_tools import edit_file_impl, rewrite_file_impl

CONFIG = '{\n  "server": {"host": "0.0.0.0", "port": 8080},\n  "debug": false\n}\n'


def patch(tmp_path: Path, name: str, search: str, replace: str) -> str:
    outcome = apply_patch(
        [FilePatch(name, (Edit(search=search, replace=replace),))], tmp_path.joinpath
    )
    assert outcome.ok, outcome.report()
    return outcome.report()


def test_a_key_hit_instead_of_its_value_shows_as_keys_removed_and_added(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(CONFIG)
    report = patch(tmp_path, "config.json", '"server"', '"9091"')  # still valid JSON
    assert report.startswith("Edited config.json: 1 edit applied.")
    assert "\n  removed server.port (was 8080)" in report
    assert "\n  added 9091.port = 8080" in report


def test_a_value_change_shows_old_and_new_value(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(CONFIG)
    report = patch(tmp_path, "config.json", '"port": 8080', '"port": 9091')
    assert report.splitlines()[1:] == ["  server.port: 8080 -> 9091"]
    assert json.loads((tmp_path / "config.json").read_text())["server"]["port"] == 9091


def test_a_type_change_is_a_change_even_when_python_calls_the_values_equal() -> None:
    changes = data_changes("f.json", '{"on": 1}', '{"on": true}')
    assert changes is not None and changes.changed == [("on", 1, True)]


def test_formatting_only_says_the_data_is_unchanged(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(CONFIG)
    report = patch(tmp_path, "config.json", '"debug": false', '"debug":   false')
    assert "The data of config.json is unchanged" in report


def test_yaml_toml_and_lists(tmp_path: Path) -> None:
    yaml_lines = report_lines("c.yaml", "a: 1\nb: [1, 2]\n", "a: 2\nb: [1]\n")
    assert yaml_lines.splitlines()[1:] == ["  a: 1 -> 2", "  removed b[1] (was 2)"]
    assert report_lines("c.toml", "[x]\na = 1\n", "[x]\na = true\n").strip() == "x.a: 1 -> true"


def test_other_files_new_files_and_unparsable_text_report_nothing() -> None:
    assert report_lines("a.py", "a = 1\n", "a = 2\n") == ""
    assert report_lines("a.json", None, "{}") == ""
    assert report_lines("a.json", "{", "{}") == ""


def test_a_long_list_of_changes_is_cut_and_counted() -> None:
    before = json.dumps({f"k{i}": i for i in range(20)})
    after = json.dumps({f"k{i}": i + 1 for i in range(20)})
    lines = report_lines("a.json", before, after).strip().splitlines()
    assert len(lines) == MAX_LINES + 1 and lines[-1].strip() == f"... and {20 - MAX_LINES} more"


def test_the_tools_show_the_changes(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(CONFIG)
    env = ToolEnv(tmp_path)
    out = edit_file_impl(
        env, [{"path": "config.json", "diffs": [{"search": "8080", "replace": "9091"}]}]
    )
    assert "server.port: 8080 -> 9091" in out
    out = rewrite_file_impl(env, "config.json", CONFIG.replace("false", "true"))
    assert out.startswith("Rewrote config.json (4 lines).\n  server.port: 9091 -> 8080\n  debug:")
