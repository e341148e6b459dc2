"""Features: what each declares is true, and a new one is added without touching another."""

from __future__ import annotations

import gc
import importlib
import pkgutil
import tomllib
import typing
import weakref
from pathlib import Path
from typing import Any

import pytest
import yaml
from langchain_core.messages import SystemMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ValidationError

import jarvis_graph.features as features_package
from jarvis_graph.config import Settings
from jarvis_graph.context import JarvisContext
from jarvis_graph.events import Event, Subscriber
from jarvis_graph.features.base import Feature, RunSetup, run_tool
from jarvis_graph.graphs.agent import build_agent_graph
from jarvis_graph.marker import COMPLETE_MARKER
from jarvis_graph.runtime import services as services_module
from jarvis_graph.runtime.services import FEATURES, RunServices
from jarvis_graph.state import AgentState, MultiAgentState, PlannerState

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "FEATURES.md"


def feature_modules() -> list[str]:
    return sorted(
        f"jarvis_graph.features.{m.name}"
        for m in pkgutil.iter_modules(features_package.__path__)
        if m.name != "base"
    )


def test_every_feature_module_is_composed_and_kept_apart() -> None:
    modules = feature_modules()
    composed = sorted(type(f).__module__ for f in FEATURES)
    assert composed == modules  # one feature per module, each in FEATURES once
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contracts = pyproject["tool"]["importlinter"]["contracts"]
    (contract,) = [c for c in contracts if c["id"] == "features"]
    assert sorted(contract["modules"]) == modules
    assert len({f.name for f in FEATURES}) == len(FEATURES) and all(f.name for f in FEATURES)
    for module in modules:  # and each one says what it is
        assert importlib.import_module(module).__doc__


def test_declared_settings_and_state_keys_exist() -> None:
    states = set()
    for schema in (AgentState, PlannerState, MultiAgentState):
        states |= set(typing.get_type_hints(schema, include_extras=True))
    for feature in FEATURES:
        assert set(feature.settings) <= set(Settings.model_fields), feature.name
        assert set(feature.state_keys) <= states, feature.name


def test_the_worked_example_is_true(workspace: Path) -> None:
    text = DOC.read_text()
    section = text.split("## How to add a feature", 1)[1].split("\n## ", 1)[0]
    assert len(section.strip().splitlines()) < 15
    example = "jarvis_graph/features/task_graph.py"
    assert example in section and (ROOT / example).is_file()
    for hook in ("enabled", "tools", "problems", "select_tools", "prompt_section", "subscribers"):
        assert f"`{hook}`" in section and hasattr(Feature, hook)
    assert "run_task_graph" not in RunServices(JarvisContext(workspace=str(workspace))).tools
    (workspace / ".jarvis").mkdir()
    (workspace / ".jarvis" / "config.yaml").write_text("task_graph_tool: true\n")
    assert "run_task_graph" in RunServices(JarvisContext(workspace=str(workspace))).tools


@tool
def stamp(text: str) -> str:
    """Stamp a text.

    Args:
        text: The text.
    """
    return f"[stamped] {text}"


class Stamping(Feature):
    """A feature written for this test: a tool, a prompt line and a subscriber."""

    name = "stamping"
    seen: typing.ClassVar[list[str]] = []

    def tools(self, setup: RunSetup) -> list[BaseTool]:
        return [stamp]

    def prompt_section(self, setup: RunSetup, task: str) -> str:
        return f"Stamp what you write (task: {task})."

    def subscribers(self, setup: RunSetup) -> list[tuple[Event, Subscriber]]:
        def completed(_event: Event, payload: dict[str, Any]) -> None:
            self.seen.append(str(payload.get("status")))

        return [(Event.TASK_COMPLETED, completed)]


def test_a_new_feature_joins_a_run_without_touching_another(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(services_module, "FEATURES", (*FEATURES, Stamping()))
    script = workspace / "script.yaml"
    turns = [
        {"tool_calls": [{"name": "stamp", "args": {"text": "hello"}}]},
        {"text": f"Stamped. {COMPLETE_MARKER}"},
    ]
    script.write_text(yaml.safe_dump({"turns": turns}))
    ctx = JarvisContext(
        workspace=str(workspace), platform="scripted", script=str(script), non_interactive=True
    )
    out = build_agent_graph().compile().invoke({"task": "stamp hello"}, context=ctx)
    assert out["status"] == "completed"
    system = next(m for m in out["messages"] if isinstance(m, SystemMessage))
    assert "Stamp what you write (task: stamp hello)." in str(system.content)
    assert "stamp" in str(system.content).split("Tools available:", 1)[1].splitlines()[0]
    (result,) = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert result.content == "[stamped] hello"
    assert Stamping.seen == ["completed"]


def test_run_tool_builds_a_schema_once_and_each_run_calls_its_own_function() -> None:
    def made_for(run: str) -> BaseTool:
        def greet(name: str, punctuation: str = "!") -> str:
            """Greet someone.

            Args:
                name: Who to greet.
                punctuation: What ends the greeting.
            """
            return f"{run}: hello {name}{punctuation}"

        return run_tool(greet, parse_docstring=True)

    first, second = made_for("run 1"), made_for("run 2")
    assert first is not second
    assert first.invoke({"name": "Ada"}) == "run 1: hello Ada!"
    assert second.invoke({"name": "Ada", "punctuation": "?"}) == "run 2: hello Ada?"
    # one schema for both, with the docstring's descriptions, shown to the model alike
    assert first.args_schema is second.args_schema
    shown = convert_to_openai_tool(second)["function"]
    assert shown == convert_to_openai_tool(first)["function"]
    assert shown["parameters"]["properties"]["name"]["description"] == "Who to greet."
    assert shown["parameters"]["required"] == ["name"]
    with pytest.raises(ValidationError):  # the copy still checks its arguments
        second.invoke({"punctuation": "?"})


def test_run_tool_keeps_no_run_alive_and_tells_other_definitions_apart() -> None:
    class Run:
        pass

    def made_for(run: Run, default: str) -> BaseTool:
        def count(text: str, unit: str = default) -> str:
            """Count a text's letters.

            Args:
                text: The text.
                unit: The unit to name.
            """
            return f"{len(text)} {unit} ({type(run).__name__})"

        return run_tool(count, parse_docstring=True)

    run = Run()
    gone = weakref.ref(run)
    tool_of_run = made_for(run, "letters")
    assert tool_of_run.invoke({"text": "abc"}) == "3 letters (Run)"
    del run, tool_of_run
    gc.collect()
    assert gone() is None  # the kept prototype holds no run's function
    # the same code with another default is another schema
    other = made_for(Run(), "chars")
    assert other.invoke({"text": "ab"}) == "2 chars (Run)"
    assert (
        convert_to_openai_tool(other)["function"]["parameters"]["properties"]["unit"]["default"]
        == "chars"
    )
    # options that cannot be a key (a dict) still make a working tool
    plain = run_tool(lambda text: text.upper(), name="shout", description="Shout.",
                     metadata={"risky": False})  # fmt: skip
    assert plain.invoke({"text": "hi"}) == "HI" and plain.metadata == {"risky": False}
