"""The run's services: built once per run from its context, composed from the features."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from jarvis_graph.context import JarvisContext
from jarvis_graph.graphs.agent import build_agent_graph
from jarvis_graph.marker import COMPLETE_MARKER
from jarvis_graph.platforms.registry import PlatformError
from jarvis_graph.prompts import CONTEXT_HEADING, load_prompt
from jarvis_graph.runtime import services as services_module
from jarvis_graph.runtime.services import RunServices, context_of


def test_context_of_accepts_dataclass_dict_and_nothing() -> None:
    ctx = JarvisContext(workspace="/w")
    assert context_of(Runtime(context=ctx)) is ctx
    assert context_of(Runtime(context={"workspace": "/w"})) == ctx
    assert context_of(None) == JarvisContext()
    # a run without a context: one default object, so its nodes share one services object
    assert context_of(Runtime(context=None)) is context_of(None)


def test_system_prompt_is_filled_in(workspace: Path) -> None:
    prompt = RunServices(JarvisContext(workspace=str(workspace))).system_prompt()
    assert f"`{workspace.resolve()}`" in prompt
    assert (
        "Tools available: ask_document, ask_user, clear_memory, compute, edit_file, "
        "execute_script, list_files, methodology, read_code, read_document, retrieve_memory, "
        "save_memory, search_episodic_memory, search_files, write_file.\n" in prompt
    )
    assert prompt.rstrip().endswith("No memories are saved yet.")
    assert prompt.index(CONTEXT_HEADING) < prompt.index("Memory: ")
    assert f"end it with {COMPLETE_MARKER}" in prompt
    assert "Use ask_user when you need information" in prompt
    assert "{" not in prompt  # every placeholder was filled


def test_what_changes_from_task_to_task_is_the_system_prompts_last_part(
    tmp_path: Path, isolated_home: Path
) -> None:
    """Two projects, one with a memory and a preference saved: their prompts differ only
    under the context heading (the part above it is one prefix a model keeps)."""
    from jarvis_graph.memory.records import new_record
    from jarvis_graph.memory.tiers import MemoryTiers

    prompts = []
    for name in ("one", "two"):
        ws = tmp_path / name
        ws.mkdir()
        if name == "two":
            MemoryTiers(ws).save([new_record("project_long_term", ["build"], "Built by make.")])
        task = f"Summarise the {name} project. I prefer short answers."
        prompts.append(RunServices(JarvisContext(workspace=str(ws))).system_prompt(task))
    stable = [p.split(CONTEXT_HEADING, 1)[0] for p in prompts]
    assert stable[0] == stable[1]
    assert str(tmp_path) not in stable[0] and "Today is" not in stable[0]
    contexts = [p.split(CONTEXT_HEADING, 1)[1] for p in prompts]
    assert f"`{(tmp_path / 'one').resolve()}`" in contexts[0]
    assert "build" in contexts[1] and "build" not in contexts[0]


def test_system_prompt_of_a_non_interactive_run(workspace: Path) -> None:
    ctx = JarvisContext(workspace=str(workspace), non_interactive=True)
    prompt = RunServices(ctx).system_prompt()
    assert "Nobody is watching this run" in prompt
    assert "Use ask_user" not in prompt


def test_unknown_prompt_name() -> None:
    with pytest.raises(FileNotFoundError):
        load_prompt("no_such_prompt")


def test_tools_are_mapped_by_name(workspace: Path) -> None:
    tools = RunServices(JarvisContext(workspace=str(workspace))).tools
    assert tools and all(name == t.name for name, t in tools.items())


def test_a_bound_model_is_built_once_and_a_rewritten_script_is_read_again(
    workspace: Path,
) -> None:
    script = workspace / "s.yaml"
    script.write_text("- text: first\n")
    ctx = JarvisContext(workspace=str(workspace), platform="scripted", script=str(script))
    services = RunServices(ctx)
    model = services.model()
    assert services.model() is model
    assert model.invoke([HumanMessage("x")]).content == "first"

    script.write_text("- text: second version\n")
    stat = script.stat()
    os.utime(script, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    reloaded = services.model()
    assert reloaded is not model
    assert reloaded.invoke([HumanMessage("x")]).content == "second version"


def test_a_missing_script_is_named(workspace: Path) -> None:
    ctx = JarvisContext(workspace=str(workspace), platform="scripted", script="missing.yaml")
    with pytest.raises(PlatformError, match=r"script file '.*/ws/missing.yaml' not found"):
        RunServices(ctx).model()


def run_counting_builds(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, turns: list[dict[str, Any]]
) -> tuple[int, dict[str, Any]]:
    """Run the agent graph on a script; count how often the run's tool list is built."""
    builds = 0
    compose = services_module.compose_tools

    def counted(*args: Any) -> Any:
        nonlocal builds
        builds += 1
        return compose(*args)

    monkeypatch.setattr(services_module, "compose_tools", counted)
    script = workspace / "script.yaml"
    script.write_text(yaml.safe_dump({"turns": turns}), encoding="utf-8")
    ctx = JarvisContext(
        workspace=str(workspace), platform="scripted", script=str(script), non_interactive=True
    )
    out = build_agent_graph().compile().invoke({"task": "list twice"}, context=ctx)
    return builds, out


def test_the_tool_list_is_built_once_per_run_whatever_the_turns(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    listing = {"tool_calls": [{"name": "list_files", "args": {}}]}
    done = {"text": f"Listed. {COMPLETE_MARKER}"}
    builds, out = run_counting_builds(workspace, monkeypatch, [listing, listing, done])
    assert out["status"] == "completed"
    assert out["messages"][-1].content == "Listed."
    turns = sum(1 for m in out["messages"] if m.type == "ai")
    assert turns == 3
    assert builds == 1  # once for the run: each of its 3 turns reuses it


def test_a_new_run_on_the_same_context_builds_its_own_services(workspace: Path) -> None:
    script = workspace / "s.yaml"
    script.write_text(yaml.safe_dump({"turns": [{"text": f"a {COMPLETE_MARKER}"}]}))
    ctx = JarvisContext(
        workspace=str(workspace), platform="scripted", script=str(script), non_interactive=True
    )
    graph = build_agent_graph().compile()
    graph.invoke({"task": "one"}, context=ctx)
    first = ctx.__dict__["_jarvis_services"][1]
    graph.invoke({"task": "two"}, context=ctx)
    assert ctx.__dict__["_jarvis_services"][1] is not first  # config read again per run
