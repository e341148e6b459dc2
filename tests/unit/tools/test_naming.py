from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from jarvis_graph.tools.naming import NAME_PATTERN, assign_names


def test_plain_names_are_server__tool() -> None:
    names = assign_names([("time", "get_current_time"), ("fs", "read-file")], set())
    assert names.names() == ["fs__read-file", "time__get_current_time"]
    assert names.origin("time__get_current_time") == ("time", "get_current_time")


def test_invalid_characters_become_underscores() -> None:
    names = assign_names([("my server", "get.weather")], set())
    assert names.names() == ["my_server__get_weather"]
    assert names.origin("my_server__get_weather") == ("my server", "get.weather")


def test_clashes_are_hashed_whatever_the_order() -> None:
    pairs = [("s", "a.b"), ("s", "a_b")]
    first, second = assign_names(pairs, set()), assign_names(pairs[::-1], set())
    assert first.names() == second.names()
    assert len(first.names()) == 2
    assert all(n.startswith("s__a_b-") for n in first.names())
    assert {first.origin(n) for n in first.names()} == set(pairs)


def test_a_taken_name_is_not_handed_out() -> None:
    names = assign_names([("x", "y")], {"x__y"})
    (name,) = names.names()
    assert name != "x__y" and name.startswith("x__y-")


def test_long_names_are_cut_with_a_hash() -> None:
    names = assign_names([("server", "t" * 100), ("server", "t" * 99)], set())
    assert len(set(names.names())) == 2
    assert all(len(n) <= 64 for n in names.names())


@given(st.lists(st.tuples(st.text(min_size=1, max_size=80), st.text(min_size=1, max_size=80))))
def test_every_name_is_valid_unique_and_reversible(pairs: list[tuple[str, str]]) -> None:
    names = assign_names(pairs, set())
    assert len(names.names()) == len(set(pairs))
    for name in names.names():
        assert NAME_PATTERN.match(name)
        origin = names.origin(name)
        assert origin is not None and names.name_of(*origin) == name
