"""A stand-in for llama.cpp that follows a script, for tests of the local platform.

It honours what the platform asks of llama.cpp: a grammar (the next JSON object of the
script), the logits processors (the first token's decision, and whether another object
follows), the token budget. The real model runs in ``tests/integration/test_local_model.py``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

VOCAB = ["<|im_end|>", "Hello", "\n", "{", " {", "x"]
EOS = 0


class FakeLlama:
    """Stands in for llama.cpp: ``script`` maps a prompt to the reply: its JSON objects, or
    one text (the answer).

    Under a grammar it writes the next object. Without one it writes the answer, after
    asking the opening processor (when given) about the first token: a ``{`` when the
    script's reply is a call, a word otherwise; the processor may end the generation there.
    Asked whether another object follows, it prefers a newline while objects are left and
    the end of the turn after.
    """

    def __init__(self) -> None:
        self.script: Callable[[str], list[str]] = lambda p: ["Hello there."]
        self.calls: list[dict[str, Any]] = []
        self.yielded = 0  # tokens generated, in all
        self.opening: Any = None  # the first token's scores, as the processors left them
        self.first: dict[str, float] = {}  # scores of the first token, set by a test

    def tokenize(self, data: bytes, add_bos: bool = False, special: bool = True) -> list[int]:
        return list(range(len(data) // 4))

    def n_vocab(self) -> int:
        return len(VOCAB)

    def detokenize(self, ids: list[int], special: bool = True) -> bytes:
        return "".join(VOCAB[i] for i in ids).encode()

    def token_eos(self) -> int:
        return EOS

    def create_completion(self, prompt: str, **kw: Any) -> Iterator[dict]:
        self.calls.append({"prompt": prompt, **kw})
        start = prompt.rindex("<|im_start|>assistant\n") + len("<|im_start|>assistant\n")
        written, objects = prompt[start:], self.script(prompt[:start])
        done = [o for o in objects if written.startswith(o) or ("\n" + o) in written]
        processors = kw.get("logits_processor") or []
        if kw.get("grammar") is not None:
            text = objects[len(done)]
        elif written:  # after an object: another one, or the end of the turn
            scores = np.full(len(VOCAB), -5.0)
            scores[VOCAB.index("\n") if len(done) < len(objects) else EOS] = 5.0
            for processor in processors:
                scores = processor([], scores)
            return
        else:  # the reply's first token, then the answer's text
            scores = np.full(len(VOCAB), -5.0)
            scores[VOCAB.index("{" if objects[0].startswith("{") else "Hello")] = 5.0
            for token, score in self.first.items():
                scores[VOCAB.index(token)] = score
            for processor in processors:
                scores = processor([], scores)
            self.opening = scores
            if int(np.argmax(scores)) == EOS:
                return
            text = objects[0]
        for i in range(0, min(len(text), kw["max_tokens"] * 4), 4):
            self.yielded += 1
            yield {"choices": [{"text": text[i : i + 4]}]}


def use_fake_llama(monkeypatch: pytest.MonkeyPatch) -> FakeLlama:
    """Make the local platform load a :class:`FakeLlama` instead of a model file."""
    import jarvis_graph.platforms.local as local

    llama = FakeLlama()
    monkeypatch.setattr(local, "_load", lambda path, n_ctx: (llama, threading.Lock()))
    monkeypatch.setattr(local, "_grammar", lambda schema: schema)
    monkeypatch.setattr(local, "_vocab", {})
    monkeypatch.setattr(local, "_ids", {})
    return llama
