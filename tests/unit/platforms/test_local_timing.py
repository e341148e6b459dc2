"""The timing a local reply reports matches its token counts (every generation of the reply)."""

from __future__ import annotations

from jarvis_graph.platforms.local import _Generation, _timing


def generation(n_out: int, prompt_s: float, decode_s: float) -> _Generation:
    run = _Generation("prompt")
    run.n_out = n_out
    run.timing = {"prompt_seconds": prompt_s, "decode_seconds": decode_s}
    return run


def test_the_rate_is_decoded_tokens_over_decode_time_of_all_generations() -> None:
    # a reply that chose to answer (11 tokens), then the focused answer (31 tokens)
    runs = [generation(11, 0.5, 1.0), generation(31, 2.0, 1.5)]
    assert _timing(runs) == {
        "prompt_seconds": 2.5,  # reading prompts is not decoding
        "decode_seconds": 2.5,
        "tokens_per_second": 16.0,  # (10 + 30) tokens after each first one / 2.5 s
    }


def test_a_reply_of_one_token_has_no_rate() -> None:
    assert _timing([generation(1, 0.2, 0.0)])["tokens_per_second"] == 0.0
