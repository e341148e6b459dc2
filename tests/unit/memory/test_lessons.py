"""Which sentences of a task are standing preferences."""

from __future__ import annotations

import pytest

from jarvis_graph.memory.lessons import preference_sentences


@pytest.mark.parametrize(
    ("task", "found"),
    [
        ("Always answer in Chinese. What is 2+2?", ["Always answer in Chinese"]),
        ("Use pytest, not unittest. Then add a test.", ["Use pytest, not unittest"]),
        (
            "fix the bug. from now on, run ruff before you answer",
            ["From now on, run ruff before you answer"],
        ),
        (
            "I prefer short answers with the file names",
            ["I prefer short answers with the file names"],
        ),
        ("Never push to main!", ["Never push to main"]),
        ("Always-on monitoring is failing, look at it", []),
        ("Should I always use tabs?", []),
        ("Always use tabs?", []),
        ("count the lines of notes.txt", []),
    ],
)
def test_preference_sentences(task: str, found: list[str]) -> None:
    assert preference_sentences(task) == found
