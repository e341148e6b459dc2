"""The ``scripted`` platform: replays model turns from a YAML or JSON script.

Script format::

    turns:
      - tool_calls:
          - name: list_files
            args: {path: "."}
      - text: "There are two files. !!!COMPLETE!!!"

The turn to play is chosen from the input (the number of AI messages already in the
conversation), not from a call counter, so a resumed thread continues the script where
the checkpoint left it, in any process.

Turns may carry ``when: <regex>``: consecutive turns with the same ``when`` form a scene,
and the first scene (in file order) whose pattern is found in the conversation's system
and human messages is played (turns without ``when`` match any conversation), counting
turns from the latest human message that is not attached context. Child runs,
parallel branches and hand-offs, which each have their own conversation, can so be
scripted in one file::

    turns:
      - when: "Decide whether the task"        # the planner's decision
        tool_calls: [{name: PlanDecision, args: {split: false}}]
      - text: "Done. !!!COMPLETE!!!"
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import yaml
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
)
from langchain_core.messages.tool import tool_call_chunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from jarvis_graph.platforms.errors import PlatformError
from jarvis_graph.state import SUMMARIZED_TURNS, is_task_message
from jarvis_graph.untrusted import load_yaml


class ScriptExhaustedError(PlatformError):
    """The model was asked for more turns than the script has."""


class ScriptedToolCall(BaseModel):
    """One tool call in a scripted turn."""

    model_config = ConfigDict(extra="forbid")
    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None


class ScriptedTurn(BaseModel):
    """One model reply: text, tool calls, or both."""

    model_config = ConfigDict(extra="forbid")
    text: str = ""
    tool_calls: list[ScriptedToolCall] = Field(default_factory=list)
    when: str | None = None
    delay: float = Field(default=0.0, ge=0)
    """Seconds to wait before replying (to imitate a slow model)."""

    @model_validator(mode="after")
    def _not_empty(self) -> ScriptedTurn:
        if not self.text and not self.tool_calls:
            msg = "a turn needs `text`, `tool_calls` or both"
            raise ValueError(msg)
        if self.when is not None:
            try:
                re.compile(self.when)
            except re.error as exc:
                msg = f"`when` {self.when!r} is not a valid regular expression: {exc}"
                raise ValueError(msg) from exc
        return self


class Script(BaseModel):
    """A whole script."""

    model_config = ConfigDict(extra="forbid")
    turns: list[ScriptedTurn] = Field(min_length=1)


def load_script(path: str | Path) -> Script:
    """Read and validate a script file.

    Raises:
        PlatformError: The file is missing, unparsable or not a valid script.
    """
    p = Path(path)
    if not str(path) or not p.is_file():
        msg = f"scripted platform: script file {str(path)!r} not found (set `script:` or --script)"
        raise PlatformError(msg)
    try:
        text = p.read_text(encoding="utf-8")
        raw = json.loads(text) if p.suffix == ".json" else load_yaml(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        kind = "JSON" if p.suffix == ".json" else "YAML"
        msg = f"scripted platform: {p} is not valid {kind}: {exc}"
        raise PlatformError(msg) from exc
    if isinstance(raw, list):
        raw = {"turns": raw}
    try:
        return Script.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(x) for x in e['loc'])}: {e['msg']}" for e in exc.errors()
        )
        msg = f"scripted platform: {p} is not a valid script: {problems}"
        raise PlatformError(msg) from exc


class ScriptedChatModel(BaseChatModel):
    """A chat model that plays back a :class:`Script`."""

    script: Script
    source: str = "<inline>"

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedChatModel:
        """Load a script file into a model."""
        return cls(script=load_script(path), source=str(path))

    @property
    def _llm_type(self) -> str:
        return "jarvis-scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:  # type: ignore[override]
        """Tools are named in the script; binding changes nothing."""
        return self

    def _turn_for(self, messages: list[BaseMessage]) -> tuple[int, ScriptedTurn]:
        turns, scene = self._scene(messages)
        if scene:  # a scene plays from the latest task message given to the model
            start = max(
                (i for i, m in enumerate(messages) if is_task_message(m)),
                default=-1,
            )
            messages = messages[start + 1 :]
        # Turns replaced by a history summary still count: the script goes on after it.
        index = sum(1 for m in messages if isinstance(m, AIMessage)) + sum(
            int(m.response_metadata.get(SUMMARIZED_TURNS, 0)) for m in messages
        )
        if index >= len(turns):
            msg = (
                f"scripted platform: script {self.source}{scene} has {len(turns)} turns and "
                f"the model was asked for turn {index + 1}; add turns or end the last one with "
                "!!!COMPLETE!!!"
            )
            raise ScriptExhaustedError(msg)
        return index, turns[index]

    def _scene(self, messages: list[BaseMessage]) -> tuple[list[ScriptedTurn], str]:
        """The turns of the first scene whose ``when`` matches the conversation."""
        turns = self.script.turns
        if all(t.when is None for t in turns):
            return turns, ""
        text = "\n".join(
            str(m.text) for m in messages if isinstance(m, (SystemMessage, HumanMessage))
        )
        scenes: list[list[ScriptedTurn]] = []
        for turn in turns:
            if scenes and scenes[-1][0].when == turn.when:
                scenes[-1].append(turn)
            else:
                scenes.append([turn])
        for scene in scenes:
            if scene[0].when is None or re.search(scene[0].when, text, re.DOTALL):
                return scene, f" (scene when={scene[0].when!r})"
        msg = f"scripted platform: no scene of script {self.source} matches the conversation"
        raise ScriptExhaustedError(msg)

    def _message(self, messages: list[BaseMessage]) -> AIMessage:
        index, turn = self._turn_for(messages)
        if turn.delay:
            time.sleep(turn.delay)
        calls = [
            {"name": c.name, "args": c.args, "id": c.id or f"call_{index}_{n}", "type": "tool_call"}
            for n, c in enumerate(turn.tool_calls)
        ]
        return AIMessage(content=turn.text, tool_calls=calls)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._message(messages))])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        full = self._message(messages)
        for piece in re.findall(r"\S+\s*|\s+", str(full.content)):
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=piece))
            if run_manager:
                run_manager.on_llm_new_token(piece, chunk=chunk)
            yield chunk
        if full.tool_calls:
            chunks = [
                tool_call_chunk(name=c["name"], args=json.dumps(c["args"]), id=c["id"], index=i)
                for i, c in enumerate(full.tool_calls)
            ]
            yield ChatGenerationChunk(message=AIMessageChunk(content="", tool_call_chunks=chunks))
