"""Tiny fake chat models that decide each reply from the input (not from a call counter).

Register one as a platform with :func:`use_fake` and select it through the run context
(``platform="fake"``); parallel branches and child runs each get the reply their own
input calls for.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from jarvis_graph.platforms.registry import register_platform

Brain = Callable[[list[BaseMessage]], AIMessage]


class RuleModel(BaseChatModel):
    """A chat model whose reply is ``brain(messages)``; every input is recorded."""

    brain: Brain
    seen: Any  # the caller's list (``Any``: pydantic would copy a typed list)
    lock: Any

    @property
    def _llm_type(self) -> str:
        return "fake-rules"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> RuleModel:  # type: ignore[override]
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        with self.lock:
            self.seen.append(list(messages))
        return ChatResult(generations=[ChatGeneration(message=self.brain(messages))])


def use_fake(brain: Brain) -> list[list[BaseMessage]]:
    """Register platform ``fake`` answering with ``brain``; returns the list of inputs seen."""
    seen: list[list[BaseMessage]] = []
    lock = threading.Lock()
    register_platform(
        "fake", lambda spec: RuleModel(brain=brain, seen=seen, lock=lock), source="test"
    )
    return seen


def answer(text: str) -> AIMessage:
    return AIMessage(content=text)


def call(name: str, **args: Any) -> AIMessage:
    """A reply with one tool call (structured outputs are tool calls named after the schema)."""
    tool_call = {"name": name, "args": args, "id": f"call_{uuid.uuid4().hex[:8]}"}
    return AIMessage(content="", tool_calls=[tool_call])


def system_text(messages: list[BaseMessage]) -> str:
    return "\n".join(str(m.content) for m in messages if isinstance(m, SystemMessage))


def human_text(messages: list[BaseMessage]) -> str:
    return "\n".join(str(m.content) for m in messages if isinstance(m, HumanMessage))


def last_human(messages: list[BaseMessage]) -> str:
    humans = [m for m in messages if isinstance(m, HumanMessage)]
    return str(humans[-1].content) if humans else ""


def is_plan_decision(messages: list[BaseMessage]) -> bool:
    return "Decide whether the task below is worth" in system_text(messages)


def is_plan_adjustment(messages: list[BaseMessage]) -> bool:
    return "Some steps of the plan below have run" in system_text(messages)


def slow(seconds: float, reply: AIMessage) -> AIMessage:
    time.sleep(seconds)
    return reply
