"""Agent definitions: the built-in and the user's agents, roles and teams, by name.

``jarvis agents list`` shows them and ``jarvis run -c NAME`` / the ``jarvis chat`` picker
runs one. They come from ``*.yaml`` files in three folders, a later one replacing a
definition of the same name: the package's (:data:`BUILTIN_DIR`, plus the ``jarvis`` and
``planner`` agents and the ``team`` of ``default_agents.yaml``), ``~/.jarvis/agents/``
and ``<project>/.jarvis/agents/``. A file is one of:

- **a team**: an agents file (``main_agent``, ``agents``; see :mod:`.config`), named by
  the file's stem; ``route: true`` makes it expert routing;
- **roles**: ``roles:`` a list of agents;
- **an agent**: one mapping with ``name`` (default: the file's stem), ``description``,
  ``system_prompt`` (added to Jarvis' own), ``tools`` (names or globs), ``model_group``
  and ``plan`` (the planner splits big tasks first).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from jarvis_graph.config import ConfigError, jarvis_home
from jarvis_graph.multi.config import AGENT_NAME, DEFAULT_AGENTS, load_agents
from jarvis_graph.untrusted import InputFileError, load_yaml, read_text

DEFINITION_MAX_BYTES = 1_000_000
DEFINITION_TOO_LARGE = "an agent definition is a few kB: check it is the file you meant"

BUILTIN_DIR = Path(__file__).with_name("builtin")
Kind = Literal["agent", "role", "multi-agent", "expert routing"]


@dataclass(frozen=True)
class AgentDefinition:
    """One selectable definition."""

    name: str
    kind: Kind
    description: str
    source: str
    """``built-in`` or the file it comes from."""
    system_prompt: str = ""
    tools: tuple[str, ...] | None = None
    model_group: str | None = None
    plan: bool = False
    agents_file: str | None = None
    """Teams: the agents file to run."""

    @property
    def graph_kind(self) -> str:
        """The graph that runs it: ``agent``, ``planner``, ``multi_agent``, ``expert_router``."""
        if self.kind == "multi-agent":
            return "multi_agent"
        if self.kind == "expert routing":
            return "expert_router"
        return "planner" if self.plan else "agent"


class _AgentEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=AGENT_NAME)
    description: str = ""
    system_prompt: str = ""
    tools: list[str] | None = None
    model_group: str | None = None
    plan: bool = False


BUILTIN: tuple[AgentDefinition, ...] = (
    AgentDefinition(
        "jarvis", "agent", "The Jarvis agent with every tool (what `jarvis run` runs).", "built-in"
    ),
    AgentDefinition(
        "planner",
        "agent",
        "The Jarvis agent that first splits a big task into sub-tasks run by child agents.",
        "built-in",
        plan=True,
    ),
)


def definition_dirs(project: Path) -> list[Path]:
    """The folders definitions come from, built-in first (a later one wins)."""
    return [BUILTIN_DIR, jarvis_home() / "agents", project / ".jarvis" / "agents"]


def load_definitions(project: Path) -> dict[str, AgentDefinition]:
    """Every definition by name, in the order they are listed.

    Raises:
        ConfigError: A file is not valid (the message names the file and the entry).
    """
    found: dict[str, AgentDefinition] = {d.name: d for d in BUILTIN}
    found.update((d.name, d) for d in _read_team(DEFAULT_AGENTS, "team", "built-in"))
    for folder in definition_dirs(project):
        if not folder.is_dir():
            continue
        builtin = folder == BUILTIN_DIR
        for path in sorted([*folder.glob("*.yaml"), *folder.glob("*.yml")]):
            for definition in _read(path, "built-in" if builtin else str(path)):
                found[definition.name] = definition
    return found


def get_definition(project: Path, name: str) -> AgentDefinition:
    """The definition called ``name``.

    Raises:
        ConfigError: None has that name (the message lists those there are), or a file
            is not valid.
    """
    found = load_definitions(project)
    if name not in found:
        msg = f"no agent definition {name!r}; there are: {', '.join(found)} (`jarvis agents list`)"
        raise ConfigError(msg)
    return found[name]


def _read(path: Path, source: str) -> list[AgentDefinition]:
    try:  # a project's file: a FIFO, a device or a huge file is an error, not a hang
        data = load_yaml(read_text(path, DEFINITION_MAX_BYTES, DEFINITION_TOO_LARGE))
    except InputFileError as exc:
        raise ConfigError(str(exc)) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else str(path)
        msg = f"{where}: invalid YAML: {getattr(exc, 'problem', None) or exc}"
        raise ConfigError(msg) from None
    if not isinstance(data, dict):
        msg = f"{path}: an agent definition is a mapping (a team, `roles:`, or one agent)"
        raise ConfigError(msg)
    if "agents" in data or "main_agent" in data:
        return _read_team(path, path.stem, source)
    if "roles" in data:
        roles = data["roles"]
        if not isinstance(roles, list) or set(data) != {"roles"}:
            msg = f"{path}: a roles file holds one key, `roles:`, a list of agents"
            raise ConfigError(msg)
        return [_entry(path, f"role {n}", role, "role", source) for n, role in enumerate(roles, 1)]
    return [_entry(path, "agent", {"name": path.stem, **data}, "agent", source)]


def _entry(path: Path, where: str, data: Any, kind: Kind, source: str) -> AgentDefinition:
    if not isinstance(data, dict):
        msg = f"{path}: {where} is not a mapping with name, description, system_prompt"
        raise ConfigError(msg)
    try:
        entry = _AgentEntry.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'entry'}: {e['msg']}" for e in exc.errors()
        )
        msg = f"{path}: {where} ({data.get('name', '?')}): {problems}"
        raise ConfigError(msg) from None
    return AgentDefinition(
        entry.name,
        kind,
        entry.description.strip(),
        source,
        entry.system_prompt.strip(),
        tuple(entry.tools) if entry.tools is not None else None,
        entry.model_group,
        entry.plan,
    )


def _read_team(path: Path, name: str, source: str) -> list[AgentDefinition]:
    team = load_agents(path)  # raises ConfigError with file:line
    kind: Kind = "expert routing" if team.route else "multi-agent"
    names = ", ".join(team.names())
    description = team.description.strip() or f"A team of {names}."
    return [AgentDefinition(name, kind, description, source, agents_file=str(path))]
