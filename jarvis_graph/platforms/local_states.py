"""Saved llama.cpp context states: a conversation's prompt is processed once, not every turn.

llama.cpp keeps one context: the tokens of the last completion, which the next completion
reuses as far as its prompt starts with them. An agent turn of the local model is followed
by helper completions on the same model (the focused answer, the answer check's model, a
tool filter's pick), each with a prompt of its own; the next turn then shared only a few
tokens with the context and processed its whole prompt again: about 10 s per 1000 tokens
for the 0.5B model on two cores, most of a task's time.

:class:`StatefulLlama` ends every completion by saving the context's state in
:class:`PromptStates` (in memory, least recently used out first), and a completion starts
from the saved state that shares the longest prefix with its prompt (llama-cpp-python's own
cache protocol, ``Llama.set_cache``). A turn then processes only what came after its
previous turn. A saved state is the KV cache of its tokens (llama.cpp's state data) and the
tokens; llama-cpp-python's state also copies a logits table of the whole batch (311 MB for
Qwen2.5's vocabulary), which sampling inside llama.cpp never reads: it is left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_cpp import Llama, LlamaRAMCache
from llama_cpp.llama import LlamaState

STATE_BYTES = 384 << 20
"""What the saved states may take together (a 0.5B state of 3000 tokens is about 37 MB, a
1.5B one about 86 MB)."""


class PromptStates(LlamaRAMCache):
    """States by their tokens; a state whose tokens begin another's is dropped for it.

    The longer state serves every prompt the shorter one did at least as well (the prompt's
    common prefix with it is as long or longer), so a conversation keeps one state however
    many turns it had.
    """

    def __setitem__(self, key: Sequence[int], value: LlamaState) -> None:
        new = tuple(key)
        for old in [k for k in self.cache_state if len(k) <= len(new) and new[: len(k)] == k]:
            del self.cache_state[old]
        super().__setitem__(new, value)


class StatefulLlama(Llama):  # type: ignore[misc]
    """A llama.cpp model whose completions start from the best saved state (``PromptStates``)."""

    def __init__(self, *args: Any, state_bytes: int = STATE_BYTES, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.set_cache(PromptStates(capacity_bytes=state_bytes))

    def save_state(self) -> LlamaState:
        """The context's state without the batch's logits (see the module docstring).

        One row is kept in their place: restoring fills the table's rows from it, which
        only a model made with ``logits_all`` (for logprobs, never used here) reads.
        """
        scores = self.scores
        self.scores = scores[:1]
        try:
            return super().save_state()
        finally:
            self.scores = scores

    def start_from_saved(self, tokens: Sequence[int], model_path: str) -> None:
        """Have the context hold ``tokens`` (a prompt's system turn) before a completion.

        Nothing to do when the context or a state in memory holds them already. Else the
        saved file sharing most of them (:mod:`local_prefix`) is restored, only the rest is
        evaluated, and the state of the whole turn is kept in memory and in a file for the
        next process.
        """
        from jarvis_graph.platforms import local_prefix

        tokens = list(tokens)
        held = local_prefix.shared_prefix(self._input_ids.tolist(), tokens)
        if held == len(tokens):
            return
        if self.cache is not None:
            try:
                kept = self.cache[tokens]
            except KeyError:
                kept = None
            if kept is not None and local_prefix.shared_prefix(
                kept.input_ids[: kept.n_tokens].tolist(), tokens
            ) == len(tokens):
                return  # the completion restores it
        found = local_prefix.best_state(model_path, self.n_ctx(), tokens)
        if found is not None and found[1] > held:
            state = local_prefix.load_state(found[0], self.n_vocab(), self.n_ctx(), self._seed)
            if state is not None:
                try:
                    self.load_state(state)
                    held = found[1]
                except RuntimeError as exc:  # llama.cpp refused its bytes
                    local_prefix.logger.warning(
                        "prompt state %s ignored: %s", found[0].path.name, exc
                    )
                    self.reset()
                    held = 0
        self.n_tokens = min(held, self.n_tokens)  # eval cuts the context back to here
        if held < len(tokens):
            self.eval(tokens[held:])
        state = self.save_state()
        if self.cache is not None:
            self.cache[tokens] = state
        if found is None or found[1] < len(tokens):
            local_prefix.save_state(model_path, self.n_ctx(), tokens, state)


__all__ = ["STATE_BYTES", "PromptStates", "StatefulLlama"]
