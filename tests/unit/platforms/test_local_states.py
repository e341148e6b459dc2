"""The saved context states of the local model (no model file: llama-cpp-python's classes)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("llama_cpp", reason="the `local` extra")  # installed by `make test`

from llama_cpp.llama import LlamaState  # noqa: E402

from jarvis_graph.platforms.local_states import PromptStates  # noqa: E402


def state(tokens: tuple[int, ...], size: int = 10) -> LlamaState:
    return LlamaState(
        input_ids=np.array(tokens, dtype=np.intc),
        scores=np.zeros((1, 4), dtype=np.single),
        n_tokens=len(tokens),
        llama_state=b"k" * size,
        llama_state_size=size,
        seed=0,
    )


def test_a_longer_state_of_the_same_conversation_replaces_the_shorter() -> None:
    states = PromptStates(capacity_bytes=1000)
    states[(1, 2, 3)] = state((1, 2, 3))
    states[(7, 8)] = state((7, 8))  # a helper's prompt: another conversation
    states[(1, 2, 3, 4, 5)] = state((1, 2, 3, 4, 5))

    assert sorted(states.cache_state) == [(1, 2, 3, 4, 5), (7, 8)]
    assert states[(1, 2, 3, 4, 5, 6)].n_tokens == 5  # the longest shared prefix
    assert states[(7, 8, 9)].n_tokens == 2
    with pytest.raises(KeyError):
        states[(5, 5)]


def test_a_state_that_only_shares_a_prefix_is_kept() -> None:
    states = PromptStates(capacity_bytes=1000)
    states[(1, 2, 3)] = state((1, 2, 3))
    states[(1, 2, 9, 9)] = state((1, 2, 9, 9))  # the tool list changed after token 2
    assert sorted(states.cache_state) == [(1, 2, 3), (1, 2, 9, 9)]


def test_states_beyond_the_capacity_go_least_recently_used_first() -> None:
    states = PromptStates(capacity_bytes=25)
    states[(1,)] = state((1,))
    states[(2,)] = state((2,))
    assert states[(1, 5)].n_tokens == 1  # used: (2,) is now the oldest
    states[(3,)] = state((3,))
    assert sorted(states.cache_state) == [(1,), (3,)]
