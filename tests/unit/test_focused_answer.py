"""The focused answer's facts and prompt (the node runs in the graph with the local model)."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from jarvis_graph.features.focused_answer import FACTS_CHARS, answer_messages, facts_of
from jarvis_graph.state import CHECK_NAME, CONTEXT_NAME


def test_facts_are_earlier_turns_context_and_every_result_but_not_the_question() -> None:
    messages = [
        SystemMessage("You are Jarvis."),
        HumanMessage("My port is 9000."),
        AIMessage("Noted."),
        HumanMessage("Which port did I give, and what does b.txt say?"),
        HumanMessage("The workspace holds b.txt", name=CONTEXT_NAME),
        AIMessage("", tool_calls=[{"name": "read_code", "args": {"path": "b.txt"}, "id": "1"}]),
        ToolMessage("   1 | beta", tool_call_id="1", name="read_code"),
        AIMessage("", tool_calls=[{"name": "execute_script", "args": {}, "id": "2"}]),
        ToolMessage("exit code: 1\nboom", tool_call_id="2", name="execute_script", status="error"),
        AIMessage("It says 7."),
        HumanMessage("the number 7 appears in no tool result", name=CHECK_NAME),
        AIMessage("It says beta."),
    ]
    assert facts_of(messages) == [
        "The user said:\nMy port is 9000.",
        "You answered:\nNoted.",
        "Context:\nThe workspace holds b.txt",
        "Result of read_code:\nbeta",
        "Result of execute_script:\nexit code: 1\nboom",  # a failed result is a fact too
    ]  # this task's own answers, "It says 7." (sent back by the check) included, are not


def test_the_prompt_asks_the_question_around_the_latest_facts() -> None:
    facts = [f"Result of read_code:\n{'x' * 5000} {i}" for i in range(5)]
    system, human = answer_messages("What is it, and how many are there?", facts)
    assert "give each of them" in str(system.content)
    text = str(human.content)
    assert text.startswith("Question: What is it") and text.endswith("how many are there?")
    assert "x 4" in text and "x 0" not in text  # the latest facts, within the budget
    assert len(text) < FACTS_CHARS + 6000
