"""Methodology records, folders, import/export, the methodology tool, selection parsing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jarvis_graph.config import Settings
from jarvis_graph.methodology.select import parse_analysis, prompt_section, select
from jarvis_graph.methodology.store import (
    Methodology,
    MethodologyError,
    export_records,
    home_dir,
    load_all,
    load_dir,
    methodology_dirs,
    read_records,
    save,
)
from jarvis_graph.methodology.tools import methodology


def test_saved_records_load_back_and_the_first_folder_wins(tmp_path: Path) -> None:
    mine, team = tmp_path / "mine", tmp_path / "team"
    save(mine, Methodology("Fix flaky test", "1. rerun with -p no:randomly"))
    save(team, Methodology("fix flaky test", "team version"))
    save(team, Methodology("Release", "tag, build, upload"))
    (team / "broken.json").write_text("{not json")

    records = load_all([mine, team])

    assert [(r.problem_type, r.content) for r in records] == [
        ("Fix flaky test", "1. rerun with -p no:randomly"),
        ("Release", "tag, build, upload"),
    ]
    assert records[0].source.startswith(str(mine))


def test_folders_come_from_home_settings_and_the_central_clone(tmp_path: Path) -> None:
    settings = Settings(methodology_dirs=[str(tmp_path / "x")], central_methodology_repo="u")
    dirs = methodology_dirs(settings)
    assert dirs[0] == home_dir() and dirs[1] == tmp_path / "x"
    assert dirs[2].name == "central_methodology_repo"


def test_export_then_import_round_trips(tmp_path: Path) -> None:
    records = [Methodology("A", "do a"), Methodology("B", "do b")]
    export_records(records, tmp_path / "out.json")
    assert read_records(tmp_path / "out.json") == records
    (tmp_path / "one.json").write_text(json.dumps({"problem_type": "C", "content": "c"}))
    assert read_records(tmp_path / "one.json") == [Methodology("C", "c")]


def test_bad_records_are_refused_with_the_reason(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"problem_type": "A", "content": "a"}, {"problem_type": ""}]))
    with pytest.raises(MethodologyError, match=r"item 1: `problem_type` must be non-empty"):
        read_records(bad)
    bad.write_text("[1")
    with pytest.raises(MethodologyError, match="cannot read methodologies"):
        read_records(bad)


def test_the_tool_adds_updates_and_deletes() -> None:
    add = {"action": "add", "problem_type": "Deploy", "content": "build then push"}
    assert "Added" in methodology.invoke(add)
    with pytest.raises(Exception, match="exists already; use action=update"):
        methodology.invoke(add)
    update = {**add, "action": "update", "content": "test, build, push"}
    assert "Updated" in methodology.invoke(update)
    assert [m.content for m in load_dir(home_dir())] == ["test, build, push"]
    assert "Deleted" in methodology.invoke({"action": "delete", "problem_type": "deploy"})
    assert load_dir(home_dir()) == []
    with pytest.raises(Exception, match="no methodology 'Deploy' to update"):
        methodology.invoke(update)


def test_selection_by_number_zero_and_retry() -> None:
    records = [Methodology("A", "a"), Methodology("B", "b")]
    assert select("t", records, lambda _m: "2") == [records[1]]
    assert select("t", records, lambda _m: "0") == []
    answers = iter(["B looks right", "2, 1"])
    assert select("t", records, lambda _m: next(answers)) == [records[1], records[0]]
    assert select("t", [], lambda _m: "1") == []
    assert "### B\nb" in prompt_section([records[1]])


def test_analysis_answers() -> None:
    assert parse_analysis("NONE") is None
    found = parse_analysis('Here: {"problem_type": "CSV totals", "content": "sum with pandas"}')
    assert found == Methodology("CSV totals", "sum with pandas")
    assert parse_analysis('{"problem_type": "", "content": "x"}') is None
