"""Tool filtering engine: rank tools against a task, let a model pick by number.

Plain functions over names, descriptions and vectors; the ``filter_tools`` node wraps them
with the run's tools, the MiniLM embedder and the ``cheap`` model.
"""

from __future__ import annotations

import fnmatch
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class ToolCard:
    """What the filter knows of a tool."""

    name: str
    description: str
    params: tuple[str, ...] = ()

    def text(self) -> str:
        """The text embedded for ranking: words of the name, description, parameter names."""
        words = re.sub(r"[_.\-]+|(?<=[a-z])(?=[A-Z])", " ", self.name)
        params = f" Parameters: {', '.join(self.params)}." if self.params else ""
        return f"{words}: {self.description.strip()}{params}"[:1000]


def card_of(tool: Any) -> ToolCard:
    """A :class:`ToolCard` for a langchain tool."""
    params = tuple(getattr(tool, "args", {}) or {})
    return ToolCard(tool.name, tool.description or "", params)


class VectorCache:
    """Embeddings of tool texts, computed once per process per text."""

    def __init__(self) -> None:
        self._vectors: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    def vectors(self, texts: Sequence[str], embed: Callable[[list[str]], Any]) -> np.ndarray:
        """Unit vectors of ``texts`` (rows), embedding only the texts not seen before."""
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if missing:
            fresh = np.asarray(embed(missing), dtype=np.float32)
            with self._lock:
                self._vectors.update(zip(missing, fresh, strict=True))
        with self._lock:
            return np.stack([self._vectors[t] for t in texts])


def rank(task_vector: Sequence[float], tool_vectors: np.ndarray) -> list[int]:
    """Indices of the tools, most similar to the task first (cosine on unit vectors)."""
    scores = tool_vectors @ np.asarray(task_vector, dtype=np.float32)
    return [int(i) for i in np.argsort(-scores, kind="stable")]


def numbered_list(cards: Sequence[ToolCard], width: int = 160) -> str:
    """``1. name: description`` lines for the picking prompt."""
    lines = []
    for n, card in enumerate(cards, 1):
        desc = " ".join(card.description.split())
        lines.append(f"{n}. {card.name}: {desc[:width]}")
    return "\n".join(lines)


class PickError(ValueError):
    """The model's answer names no valid tool number."""


def parse_picks(answer: str, count: int) -> list[int]:
    """0-based indices from an answer like ``2, 5, 7`` (1-based numbers, in range).

    Raises:
        PickError: The answer holds no number between 1 and ``count``; the message says what
            was expected, for the retry prompt.
    """
    numbers = [int(n) for n in re.findall(r"\b\d+\b", answer)]
    picks = list(dict.fromkeys(n - 1 for n in numbers if 1 <= n <= count))
    if not picks:
        msg = (
            f"the answer {answer.strip()[:200]!r} names no tool number between 1 and {count}; "
            "reply with the numbers only, separated by commas, e.g. 1, 4, 7"
        )
        raise PickError(msg)
    return picks


def always_included(names: Iterable[str], patterns: Sequence[str]) -> list[str]:
    """The tool names matching any of ``patterns`` (names or globs)."""
    return [n for n in names if any(fnmatch.fnmatchcase(n, p) for p in patterns)]


PICK_SYSTEM = "You choose the tools an agent needs for a task. Reply with numbers only."
PICK_PROMPT = """Task:
{task}

Tools:
{tools}

Which tools does the task need? Reply with their numbers{limit}, most useful first,
separated by commas (for example: 3, 1, 7). Numbers only."""


def pick_with_model(
    task: str,
    candidates: Sequence[ToolCard],
    ask: Callable[[list[tuple[str, str]]], Any],
    limit: int | None = None,
    retries: int = 1,
) -> list[str] | None:
    """Names the model picks among ``candidates``; ``None`` when it gives no usable answer.

    A malformed answer is sent back with what was expected, ``retries`` times.

    Args:
        task: The task text.
        candidates: The tools to choose from, best-ranked first.
        ask: Sends ``(role, text)`` messages to the model and returns its reply.
        limit: At most this many tools are asked for and kept.
        retries: How many times a malformed answer is retried.
    """
    room = f" (at most {limit})" if limit else ""
    prompt = PICK_PROMPT.format(task=task[:2000], tools=numbered_list(candidates), limit=room)
    messages = [("system", PICK_SYSTEM), ("human", prompt)]
    picks = pick_numbers(messages, len(candidates), ask, retries)
    return None if picks is None else [candidates[i].name for i in picks][:limit]


def pick_numbers(
    messages: list[tuple[str, str]],
    count: int,
    ask: Callable[[list[tuple[str, str]]], Any],
    retries: int = 1,
    zero_means_none: bool = False,
) -> list[int] | None:
    """0-based picks from a model asked to answer with numbers between 1 and ``count``.

    A malformed answer is sent back with what was expected, ``retries`` times; ``None``
    when no usable answer came. With ``zero_means_none``, the answer ``0`` picks nothing.
    """
    messages = list(messages)
    for _ in range(retries + 1):
        reply = ask(messages)
        answer = str(getattr(reply, "text", reply))
        if zero_means_none and re.fullmatch(r"\s*0\s*\.?\s*", answer):
            return []
        try:
            return parse_picks(answer, count)
        except PickError as exc:
            messages += [("ai", answer), ("human", f"Your answer could not be used: {exc}.")]
    return None
