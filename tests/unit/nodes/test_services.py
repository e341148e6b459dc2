"""Services looked up from the run context: context, prompt, models, tools."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from jarvis_graph.context import JarvisContext
from jarvis_graph.platforms.registry import PlatformError
from jarvis_graph.prompts import load_prompt
from jarvis_graph.runtime.services import (
    COMPLETE_MARKER,
    context_of,
    model_for,
    system_prompt,
    tools_for,
)


def test_context_of_accepts_dataclass_dict_and_nothing() -> None:
    ctx = JarvisContext(workspace="/w")
    assert context_of(Runtime(context=ctx)) is ctx
    assert context_of(Runtime(context={"workspace": "/w"})) == ctx
    assert context_of(None) == JarvisContext()
    assert context_of(Runtime(context=None)) == JarvisContext()


def test_system_prompt_is_filled_in(workspace: Path) -> None:
    prompt = system_prompt(JarvisContext(workspace=str(workspace)))
    assert f"`{workspace.resolve()}`" in prompt
    assert (
        "Tools available: ask_user, clear_memory, execute_script, list_files, methodology, "
        "read_code, retrieve_memory, save_memory, search_episodic_memory, search_files.\nMemory: "
        in prompt
    )
    assert prompt.rstrip().endswith("No memories are saved yet.")
    assert f"end it with {COMPLETE_MARKER}" in prompt
    assert "Use ask_user when you need information" in prompt
    assert "{" not in prompt  # every placeholder was filled


def test_system_prompt_of_a_non_interactive_run(workspace: Path) -> None:
    prompt = system_prompt(JarvisContext(workspace=str(workspace), non_interactive=True))
    assert "Nobody is watching this run" in prompt
    assert "Use ask_user" not in prompt


def test_unknown_prompt_name() -> None:
    with pytest.raises(FileNotFoundError):
        load_prompt("no_such_prompt")


def test_tools_for_maps_names() -> None:
    tools = tools_for(JarvisContext())
    assert all(name == t.name for name, t in tools.items())


def test_model_for_is_cached_and_reloads_a_rewritten_script(workspace: Path) -> None:
    script = workspace / "s.yaml"
    script.write_text("- text: first\n")
    ctx = JarvisContext(workspace=str(workspace), platform="scripted", script=str(script))
    model = model_for(ctx)
    assert model_for(ctx) is model
    assert model.invoke([HumanMessage("x")]).content == "first"

    script.write_text("- text: second version\n")
    stat = script.stat()
    os.utime(script, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    reloaded = model_for(ctx)
    assert reloaded is not model
    assert reloaded.invoke([HumanMessage("x")]).content == "second version"


def test_model_for_missing_script(workspace: Path) -> None:
    ctx = JarvisContext(workspace=str(workspace), platform="scripted", script="missing.yaml")
    with pytest.raises(PlatformError, match=r"script file '.*/ws/missing.yaml' not found"):
        model_for(ctx)
