"""Routing chat messages to threads: the bench's messages with MiniLM, ties, profiles."""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from jarvis_graph.memory.embedder import default_embedder
from jarvis_graph.runtime.thread_router import (
    ThreadProfile,
    ThreadRouter,
    model_tie_break,
    profile_of,
)
from jarvis_graph.state import CONTEXT_NAME
from tests.support.bench import load_bench


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_bench("routing")


def test_the_bench_messages_are_routed_as_measured(bench: ModuleType) -> None:
    # bench/routing.py printed 14 of 20 right (words 11, staying 1) and 3 of 5 unrelated
    # messages sent to a new session: a drop below that is a regression
    router = ThreadRouter(default_embedder(), threshold=0.12)
    row = bench.run(lambda text, threads, _: router.route(text, threads).thread_id, bench.load())
    assert row["right"] >= 14 and row["unrelated_to_new_thread"] >= 3, row


class _Flat:
    """An embedder that sees every text alike: every thread ties."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [[1.0, 0.0] for _ in texts]

    def embed_query(self, text: str) -> list[float]:
        return [1.0, 0.0]


class _Model:
    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.prompts: list[str] = []

    def invoke(self, messages: Sequence[HumanMessage]) -> AIMessage:
        self.prompts.append(str(messages[0].content))
        return AIMessage(self.reply)


THREADS = [ThreadProfile("a", "fix report.py"), ThreadProfile("b", "write release notes")]


def test_a_tie_goes_to_the_model_and_only_an_exact_number_counts() -> None:
    model = _Model("2")
    route = ThreadRouter(_Flat(), tie_break=model_tie_break(model)).route("x", THREADS)  # type: ignore[arg-type]
    assert (route.thread_id, route.how) == ("b", "model")
    assert "1. fix report.py\n2. write release notes" in model.prompts[0]
    vague = ThreadRouter(_Flat(), tie_break=model_tie_break(_Model("the second one")))  # type: ignore[arg-type]
    assert vague.route("x", THREADS).how == "closest"
    far = ThreadRouter(_Flat(), threshold=1.5).route("x", THREADS)  # type: ignore[arg-type]
    assert (far.thread_id, far.how) == (None, "new")


def test_a_profile_is_the_first_task_and_the_latest_turns() -> None:
    messages = [
        HumanMessage("Fix report.py"),
        AIMessage("", tool_calls=[{"name": "read_code", "args": {}, "id": "1"}]),
        ToolMessage("1 | x", tool_call_id="1"),
        AIMessage("Fixed the total."),
        HumanMessage("contents of data.csv", name=CONTEXT_NAME),
        HumanMessage("round it too"),
        AIMessage("Rounded."),
    ]
    profile = profile_of("t1", {"task": "round it too", "messages": messages})
    assert profile.task == "Fix report.py"
    assert profile.turns == ("Rounded.", "round it too", "Fixed the total.", "Fix report.py")
