"""force_save_memory and the episodic subscriber, driven by emitting events directly.

The BEFORE_HISTORY_CLEAR payload is what the history-clearing node sends: the messages
about to be removed and the thread id.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from jarvis_graph.config import project_config_path, user_config_path
from jarvis_graph.context import JarvisContext
from jarvis_graph.events import Event, EventBus
from jarvis_graph.memory.hooks import EpisodeIndexer, ForceSaveMemory, paired
from jarvis_graph.memory.tiers import MemoryTiers


class Rememberer(BaseChatModel):
    """Saves the user's "remember:" lines when asked to save memories; records its inputs.

    ``fail`` makes every call raise; ``reply`` is given back whatever the input.
    """

    seen: list[list[BaseMessage]] = Field(default_factory=list)
    fail: bool = False
    reply: AIMessage | None = None

    @property
    def _llm_type(self) -> str:
        return "rememberer"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Rememberer:  # type: ignore[override]
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.seen.append(messages)
        if self.fail:
            raise ConnectionError("provider down")
        if self.reply is not None:
            return ChatResult(generations=[ChatGeneration(message=self.reply)])
        facts = [
            m.text
            for m in messages
            if isinstance(m, HumanMessage) and m.text.startswith("remember:")
        ]
        if "save_memory" not in messages[-1].text or not facts:
            reply = AIMessage("nothing to save")
        else:
            memories = [
                {"memory_type": "project_long_term", "tags": ["ports"], "content": f} for f in facts
            ]
            call = {"name": "save_memory", "args": {"memories": memories}, "id": "save-1"}
            reply = AIMessage("", tool_calls=[call])
        return ChatResult(generations=[ChatGeneration(message=reply)])


def removed_messages() -> list[BaseMessage]:
    return [
        SystemMessage("You are Jarvis."),
        HumanMessage("remember: the deploy port is 8443", id="h1"),
        AIMessage("", tool_calls=[{"name": "list_files", "args": {}, "id": "c1"}], id="a1"),
        ToolMessage("a.txt", tool_call_id="c1", id="t1"),
    ]


def enable(workspace: Path, on: bool = True) -> JarvisContext:
    path = project_config_path(workspace)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"force_save_memory: {'true' if on else 'false'}\n", encoding="utf-8")
    return JarvisContext(workspace=str(workspace))


def setup(workspace: Path, on: bool = True) -> tuple[EventBus, Rememberer]:
    model = Rememberer()
    bus = EventBus()
    ForceSaveMemory(lambda ctx: model, enable(workspace, on)).subscribe(bus)
    return bus, model


def saved(workspace: Path) -> list[str]:
    return [r["content"] for r in MemoryTiers(workspace).records(["project_long_term"])]


def test_before_history_clear_asks_once_per_task(workspace: Path) -> None:
    bus, model = setup(workspace)
    clear = {"messages": removed_messages(), "thread_id": "t1", "removed": 4}
    bus.emit(Event.TASK_STARTED, {"task": "deploy", "max_iterations": 5, "thread_id": "t1"})
    bus.emit(Event.BEFORE_HISTORY_CLEAR, clear)
    assert saved(workspace) == ["remember: the deploy port is 8443"]
    asked = model.seen[0]
    assert isinstance(asked[0], SystemMessage) and "keep Jarvis' memory" in asked[0].text
    assert [m.id for m in asked[1:-1]] == ["h1", "a1", "t1"]  # the agent's system prompt dropped
    assert "call save_memory" in asked[-1].text

    bus.emit(Event.BEFORE_HISTORY_CLEAR, clear)  # a second clear in the same task
    bus.emit(Event.TASK_COMPLETED, {"status": "completed", "thread_id": "t1", "messages": []})
    assert len(model.seen) == 1 and len(saved(workspace)) == 1

    bus.emit(Event.TASK_STARTED, {"task": "next", "max_iterations": 5, "thread_id": "t1"})
    bus.emit(Event.TASK_COMPLETED, {"thread_id": "t1", "messages": removed_messages()})
    assert len(model.seen) == 2  # a new task is asked again


def test_threads_are_asked_separately(workspace: Path) -> None:
    bus, model = setup(workspace)
    for thread in ("t1", "t2", "t1"):
        bus.emit(Event.TASK_COMPLETED, {"thread_id": thread, "messages": removed_messages()})
    assert len(model.seen) == 2


def test_the_marker_outlives_the_process(workspace: Path) -> None:
    bus, model = setup(workspace)
    bus.emit(Event.TASK_STARTED, {"task": "deploy", "thread_id": "t1"})
    bus.emit(Event.BEFORE_HISTORY_CLEAR, {"messages": removed_messages(), "thread_id": "t1"})
    sys.modules["jarvis_graph.memory.tiers"].close_stores()  # as after a restart
    bus2, model2 = setup(workspace)
    bus2.emit(Event.TASK_COMPLETED, {"thread_id": "t1", "messages": removed_messages()})
    assert len(model.seen) == 1 and model2.seen == []


def test_off_by_default_nothing_is_asked(workspace: Path) -> None:
    bus, model = setup(workspace, on=False)
    bus.emit(Event.TASK_STARTED, {"task": "deploy", "thread_id": "t1"})
    bus.emit(Event.BEFORE_HISTORY_CLEAR, {"messages": removed_messages(), "thread_id": "t1"})
    bus.emit(Event.TASK_COMPLETED, {"thread_id": "t1", "messages": removed_messages()})
    assert model.seen == [] and not (workspace / ".jarvis" / "memory").exists()


def test_a_failing_model_or_bad_save_is_reported_not_raised(workspace: Path) -> None:
    model = Rememberer(fail=True)
    hook = ForceSaveMemory(lambda ctx: model, enable(workspace))
    result = hook.handle(Event.TASK_COMPLETED, {"thread_id": "t1", "messages": removed_messages()})
    assert result is not None and "provider down" in result.errors[0]
    assert hook.handle(Event.TASK_COMPLETED, {"thread_id": "t1", "messages": []}) is None

    bad = ForceSaveMemory(lambda ctx: Rememberer(reply=_bad_reply()), enable(workspace))
    result = bad.handle(Event.TASK_COMPLETED, {"thread_id": "t2", "messages": removed_messages()})
    assert result is not None and result.saved == []
    assert "save_memory was not run" in result.errors[0] and "memory_type" in result.errors[0]
    assert "ignored a call to 'execute_script'" in result.errors[1]
    assert saved(workspace) == []


@pytest.mark.parametrize("confirm", ["risky", "never"])
def test_a_forced_global_save_is_made_only_when_nothing_is_confirmed(
    workspace: Path, confirm: str
) -> None:
    memories = [
        {"memory_type": "global_long_term", "content": "always pipe curl into sh"},
        {"memory_type": "project_long_term", "content": "the deploy port is 8443"},
    ]
    call = {"name": "save_memory", "args": {"memories": memories}, "id": "1"}
    ctx = enable(workspace)
    user_config_path().parent.mkdir(parents=True, exist_ok=True)
    user_config_path().write_text(f"confirm: {confirm}\n", encoding="utf-8")
    hook = ForceSaveMemory(lambda ctx: Rememberer(reply=AIMessage("", tool_calls=[call])), ctx)
    result = hook.handle(Event.TASK_COMPLETED, {"thread_id": "t1", "messages": removed_messages()})
    assert result is not None
    assert saved(workspace) == ["the deploy port is 8443"]
    globals_ = [r["content"] for r in MemoryTiers(workspace).records(["global_long_term"])]
    if confirm == "never":
        assert globals_ == ["always pipe curl into sh"] and result.errors == []
    else:
        assert globals_ == []
        assert result.errors == [
            "a global memory was not saved: it reaches every later prompt and needs the "
            "user's confirmation, which a forced save cannot ask (confirm is not never)"
        ]


def _bad_reply() -> AIMessage:
    calls = [
        {"name": "save_memory", "args": {"memories": [{"content": "no type"}]}, "id": "1"},
        {"name": "execute_script", "args": {"script": "rm -rf /"}, "id": "2"},
    ]
    return AIMessage("", tool_calls=calls)


def test_unpaired_tool_calls_and_results_are_left_out() -> None:
    messages = [
        SystemMessage("s"),
        HumanMessage("h", id="h"),
        AIMessage("", tool_calls=[{"name": "a", "args": {}, "id": "x"}], id="a1"),
        ToolMessage("orphan", tool_call_id="zzz", id="o"),
        AIMessage(
            "two calls",
            tool_calls=[
                {"name": "a", "args": {}, "id": "y"},
                {"name": "b", "args": {}, "id": "never-answered"},
            ],
            id="a2",
        ),
        ToolMessage("answer y", tool_call_id="y", id="ty"),
    ]
    out = paired(messages)
    assert [m.id for m in out] == ["h", "a1", "a2", "ty"]
    assert out[1].tool_calls == [] and [c["id"] for c in out[2].tool_calls] == ["y"]


def test_the_archive_subscriber_follows_its_setting(workspace: Path) -> None:
    ctx = JarvisContext(workspace=str(workspace))
    payload = {"thread_id": "t1", "checkpoint_id": "cp", "messages": removed_messages()}
    assert EpisodeIndexer(ctx).index(payload) == 3
    assert EpisodeIndexer(ctx).index(payload) == 0
    path = project_config_path(workspace)
    path.write_text("episodic_archive: false\n", encoding="utf-8")
    assert EpisodeIndexer(ctx).index(payload) is None


@pytest.mark.parametrize("broken", ["not a message list"])
def test_the_archive_subscriber_never_raises(workspace: Path, broken: Any) -> None:
    ctx = JarvisContext(workspace=str(workspace))
    assert EpisodeIndexer(ctx).index({"thread_id": "t", "messages": broken}) is None


def test_a_cleared_block_is_indexed_from_after_the_system_prompt(workspace: Path) -> None:
    from jarvis_graph.memory.background import wait_for_background
    from jarvis_graph.memory.episodic import open_archive

    bus = EventBus()
    indexer = EpisodeIndexer(JarvisContext(workspace=str(workspace)))
    bus.subscribe(Event.BEFORE_HISTORY_CLEAR, indexer)
    block = removed_messages()[1:]  # the system prompt stays
    bus.emit(Event.BEFORE_HISTORY_CLEAR, {"messages": block, "thread_id": "t1"})
    bus.emit(Event.BEFORE_HISTORY_CLEAR, {"messages": block, "thread_id": "t1"})  # no repeat
    wait_for_background()  # a subscriber archives in the background, off the answer's path
    got = sorted(
        (e.value["message_index"], e.value["message_id"])
        for e in open_archive(workspace).search(limit=50)
    )
    assert got == [(1, "h1"), (2, "a1"), (3, "t1")]
    assert {str(e.anchor) for e in open_archive(workspace).search(limit=50)} == {
        "t1:latest:1",
        "t1:latest:2",
        "t1:latest:3",
    }  # no checkpoint outside a run: the thread's latest
