"""Predefined tasks: read from the user's and the project's tasks.yaml, filled from --set."""

from __future__ import annotations

from pathlib import Path

import pytest

from jarvis_graph.task_presets import TaskPresetError, get_preset, load_presets, parse_sets

PROJECT = """\
tasks:
  - name: review
    description: Review a file
    task: Read {file} and list its bugs; focus on {topic}.
    defaults: {topic: error handling}
  - name: hello
    description: the project's hello
    task: Say hello to the project.
"""


@pytest.fixture
def project(tmp_path: Path, isolated_home: Path) -> Path:
    (tmp_path / ".jarvis").mkdir()
    (tmp_path / ".jarvis" / "tasks.yaml").write_text(PROJECT)
    user = isolated_home / ".jarvis"
    user.mkdir(exist_ok=True)
    (user / "tasks.yaml").write_text(
        "tasks:\n  - {name: hello, description: mine, task: Say hello to me.}\n"
        "  - {name: standup, description: notes, task: Summarise git log since yesterday.}\n"
    )
    return tmp_path


def test_project_tasks_replace_user_tasks_of_the_same_name(project: Path) -> None:
    presets = load_presets(project)
    assert sorted(presets) == ["hello", "review", "standup"]
    assert presets["hello"].task == "Say hello to the project."
    assert presets["standup"].source.endswith(".jarvis/tasks.yaml")


def test_placeholders_are_filled_from_values_then_defaults(project: Path) -> None:
    review = get_preset(project, "review")
    assert review.placeholders == ["file", "topic"]
    assert review.fill({"file": "a.c"}) == "Read a.c and list its bugs; focus on error handling."
    assert review.fill({"file": "a.c", "topic": "leaks"}).endswith("focus on leaks.")
    with pytest.raises(TaskPresetError, match=r"needs a value for file: add --set file=\.\.\."):
        review.fill({})
    with pytest.raises(TaskPresetError, match=r"has no placeholder fiel \(it has: file, topic\)"):
        review.fill({"fiel": "a.c"})


def test_an_unknown_name_lists_the_tasks_there_are(project: Path) -> None:
    with pytest.raises(TaskPresetError, match="no predefined task 'revew'; there are: hello, "):
        get_preset(project, "revew")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("tasks: [\n", "line 2 is not valid YAML"),
        ("- name: x\n", "expected a 'tasks:' list"),
        ("tasks:\n  - {name: two words, task: t}\n", "task 1: 'name' must be one word"),
        ("tasks:\n  - {name: x}\n", "task 1 (x): 'task' must be the task text"),
        ("tasks:\n  - {name: x, task: t, when: now}\n", "task 1 (x): unknown field when"),
        ("tasks:\n  - {name: x, task: 'Read {file'}\n", "malformed placeholder"),
        ("tasks:\n  - {name: x, task: 'Read {0}'}\n", "placeholders are names such as {file}"),
    ],
)
def test_a_broken_tasks_file_is_a_clear_error_naming_the_file(
    tmp_path: Path, text: str, message: str
) -> None:
    (tmp_path / ".jarvis").mkdir()
    path = tmp_path / ".jarvis" / "tasks.yaml"
    path.write_text(text)
    with pytest.raises(TaskPresetError) as caught:
        load_presets(tmp_path)
    assert str(caught.value).startswith(str(path)) and message in str(caught.value)


def test_set_pairs_must_be_key_value() -> None:
    assert parse_sets(["file=a=b.c", "topic="]) == {"file": "a=b.c", "topic": ""}
    with pytest.raises(TaskPresetError, match="--set 'file' is not KEY=VALUE"):
        parse_sets(["file"])
