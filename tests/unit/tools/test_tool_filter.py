"""Tool filtering engine: ranking, numbered picks, retries, always-include."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from jarvis_graph.memory.embedder import HashingEmbedder
from jarvis_graph.tools.tool_filter import (
    PickError,
    ToolCard,
    VectorCache,
    always_included,
    numbered_list,
    parse_picks,
    pick_with_model,
    rank,
)

CARDS = [
    ToolCard("weather_forecast", "Get the weather forecast for a city", ("city",)),
    ToolCard("git_commit", "Commit staged changes to the git repository", ("message",)),
    ToolCard("send_email", "Send an email message to a recipient", ("to", "body")),
]


def test_ranking_puts_the_closest_tool_first() -> None:
    embed = HashingEmbedder(dims=256)
    cache = VectorCache()
    vectors = cache.vectors([c.text() for c in CARDS], embed.embed_documents)
    order = rank(embed.embed_query("what is the weather forecast in Paris"), vectors)
    assert CARDS[order[0]].name == "weather_forecast"
    assert CARDS[rank(embed.embed_query("commit to git"), vectors)[0]].name == "git_commit"


def test_vectors_are_computed_once_per_text() -> None:
    calls: list[list[str]] = []

    def embed(texts: list[str]) -> list[list[float]]:
        calls.append(texts)
        return [[float(len(t)), 1.0] for t in texts]

    cache = VectorCache()
    cache.vectors(["a", "bb"], embed)
    out = cache.vectors(["bb", "a", "ccc"], embed)
    assert calls == [["a", "bb"], ["ccc"]]
    assert np.allclose(out[:, 0], [2, 1, 3])


def test_card_text_splits_names_into_words() -> None:
    assert ToolCard("getUser_profile.v2", "Profile.", ("id",)).text() == (
        "get User profile v2: Profile. Parameters: id."
    )


def test_parse_picks_keeps_valid_numbers_in_order() -> None:
    assert parse_picks("3, 1, 3, 9", 3) == [2, 0]
    assert parse_picks("Tools: 2 and 1.", 3) == [1, 0]
    with pytest.raises(PickError, match="between 1 and 3"):
        parse_picks("none of them", 3)


def test_a_malformed_answer_is_retried_then_given_up() -> None:
    seen: list[list[tuple[str, str]]] = []
    replies = iter(["I would use the weather tool.", "1"])

    def ask(messages: list[tuple[str, str]]) -> str:
        seen.append(list(messages))
        return next(replies)

    assert pick_with_model("weather?", CARDS, ask) == ["weather_forecast"]
    assert len(seen) == 2
    assert seen[1][-1][0] == "human" and "numbers only" in seen[1][-1][1]
    assert pick_with_model("x", CARDS, lambda _m: "no idea", retries=1) is None


def test_limit_and_listing() -> None:
    def ask(_messages: Any) -> str:
        return "3, 2, 1"

    assert pick_with_model("t", CARDS, ask, limit=2) == ["send_email", "git_commit"]
    assert numbered_list(CARDS).splitlines()[1] == (
        "2. git_commit: Commit staged changes to the git repository"
    )


def test_always_included_takes_names_and_globs() -> None:
    names = ["read_code", "time__now", "time__zone", "git_commit"]
    assert always_included(names, ["read_code", "time__*"]) == [
        "read_code",
        "time__now",
        "time__zone",
    ]
