"""The summary cut: a property test over random histories, and the budget triggers."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.graph.message import add_messages

from jarvis_graph.history import (
    SUMMARY_NAME,
    approx_tokens,
    choose_cut,
    over_budget,
    render_transcript,
    replacement,
    rounds_since_summary,
)

text = st.integers(min_value=0, max_value=3000).map(lambda n: "x" * n)


@st.composite
def histories(draw: st.DrawFn) -> list[AnyMessage]:
    """A system prompt, then human turns, AI turns and tool rounds in any order.

    A tool round is an AI message with 1-4 calls and its answers in any order; the very
    last AI message may still have unanswered calls (the run stopped before tools ran).
    """
    counter = iter(range(10_000))
    messages: list[AnyMessage] = [SystemMessage(content=draw(text), id="sys")]
    for _ in range(draw(st.integers(min_value=0, max_value=30))):
        kind = draw(st.sampled_from(["human", "ai", "tools", "tools", "summary"]))
        n = next(counter)
        if kind == "human":
            messages.append(HumanMessage(content=draw(text), id=f"h{n}"))
        elif kind == "summary":
            messages.append(HumanMessage(content=draw(text), id=f"s{n}", name=SUMMARY_NAME))
        elif kind == "ai":
            messages.append(AIMessage(content=draw(text), id=f"a{n}"))
        else:
            ids = [f"c{n}_{i}" for i in range(draw(st.integers(min_value=1, max_value=4)))]
            calls = [{"name": "read", "args": {"p": draw(text)}, "id": i} for i in ids]
            messages.append(AIMessage(content=draw(text), tool_calls=calls, id=f"a{n}"))
            answers = [ToolMessage(content=draw(text), tool_call_id=i, id=f"t{i}") for i in ids]
            messages.extend(draw(st.permutations(answers)))
    if draw(st.booleans()):
        messages.append(
            AIMessage(content="", tool_calls=[{"name": "x", "args": {}, "id": "open"}], id="last")
        )
    return messages


def pairs(messages: list[AnyMessage]) -> tuple[set[str], set[str]]:
    calls = {c["id"] for m in messages if isinstance(m, AIMessage) for c in m.tool_calls}
    answers = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    return calls, answers


@settings(max_examples=300, deadline=None)
@given(history=histories(), keep_tokens=st.integers(min_value=0, max_value=4000))
def test_the_cut_never_separates_a_tool_call_from_its_answer(
    history: list[AnyMessage], keep_tokens: int
) -> None:
    cut = choose_cut(history, keep_tokens)
    if cut is None:
        return
    summary = HumanMessage(content="summary", id="new-summary", name=SUMMARY_NAME)
    after: list[Any] = add_messages(history, replacement(cut, summary))  # type: ignore[arg-type]
    calls, answers = pairs(after)
    before_calls, before_answers = pairs(history)
    # every tool message answers a tool call still present
    assert answers <= calls
    # every tool call keeps its answer (if it had one before)
    assert calls & before_answers <= answers
    # the system prompt stays first, the summary follows it, the latest message is kept
    assert after[0].id == "sys"
    assert after[1].id == "new-summary"
    assert after[-1].id == history[-1].id
    assert [m.id for m in after[2:]] == [m.id for m in history[len(history) - len(cut.kept) :]]
    assert cut.removed and before_calls >= calls


def test_the_cut_moves_earlier_to_keep_a_tool_round_whole() -> None:
    call = {"name": "read", "args": {}, "id": "c1"}
    history: list[AnyMessage] = [
        SystemMessage(content="s", id="sys"),
        HumanMessage(content="task " * 100, id="h"),
        AIMessage(content="", tool_calls=[call], id="a"),
        ToolMessage(content="y" * 4000, tool_call_id="c1", id="t"),
    ]
    cut = choose_cut(history, keep_tokens=10)
    assert cut is not None
    assert [m.id for m in cut.removed] == ["h"]
    assert [m.id for m in cut.kept] == ["a", "t"]


def test_nothing_to_cut_when_one_round_is_everything() -> None:
    call = {"name": "read", "args": {}, "id": "c1"}
    history: list[AnyMessage] = [
        SystemMessage(content="s"),
        AIMessage(content="", tool_calls=[call], id="a"),
        ToolMessage(content="y" * 4000, tool_call_id="c1", id="t"),
    ]
    assert choose_cut(history, keep_tokens=10) is None


def test_budget_triggers_on_tokens_and_on_rounds() -> None:
    history: list[AnyMessage] = [
        SystemMessage(content="s" * 40),
        HumanMessage(content="h" * 40),
        AIMessage(content="a" * 40),
    ]
    assert approx_tokens(history) == 30
    assert over_budget(history, max_tokens=29, max_rounds=0)
    assert not over_budget(history, max_tokens=30, max_rounds=0)
    assert over_budget(history, max_tokens=0, max_rounds=1)
    assert not over_budget(history, max_tokens=0, max_rounds=2)
    history.append(HumanMessage(content="sum", name=SUMMARY_NAME))
    assert rounds_since_summary(history) == 0


def test_the_transcript_fits_its_room_and_shows_every_message() -> None:
    history: list[AnyMessage] = [
        HumanMessage(content="the task"),
        AIMessage(content="", tool_calls=[{"name": "read", "args": {"p": "a"}, "id": "1"}]),
        ToolMessage(content="z" * 50_000, tool_call_id="1"),
        AIMessage(content="the end"),
    ]
    out = render_transcript(history, max_chars=2000)
    assert len(out) <= 2000
    assert "[human] the task" in out
    assert 'read({"p": "a"})' in out
    assert "[ai] the end" in out
