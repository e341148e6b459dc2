"""The agents YAML of a multi-agent run, validated with ``file:line`` errors.

```yaml
main_agent: lead
common_system_prompt: "You are part of a small team."
max_handoffs: 10
agents:
  - name: lead
    description: Plans the work and answers the user.
    system_prompt: "..."
    tools: [list_files, read_code]     # names or globs; omitted: every tool
    model_group: default               # omitted: the run's group
    summary_on_send: true
    clear_after_send_message: false
    auto_complete: true                # default: true for main_agent, false for the others
```
"""

from __future__ import annotations

import fnmatch
import functools
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator

from jarvis_graph.config import ConfigError, _line_of, parse_yaml

AGENT_NAME = r"^[A-Za-z][A-Za-z0-9_-]{0,47}$"
RESERVED = ("pick_expert",)
DEFAULT_AGENTS = Path(__file__).with_name("default_agents.yaml")


class AgentSpec(BaseModel):
    """One agent of a multi-agent run."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=AGENT_NAME)
    description: str = ""
    system_prompt: str = ""
    tools: list[str] | None = None
    model_group: str | None = None
    summary_on_send: bool = True
    clear_after_send_message: bool = False
    auto_complete: bool | None = None


class AgentsConfig(BaseModel):
    """The whole agents file."""

    model_config = ConfigDict(extra="forbid")

    main_agent: str
    description: str = ""
    """One line for ``jarvis agents list`` and the ``jarvis chat`` picker."""
    route: bool = False
    """Selected by name (``jarvis run -c``): one agent, picked by its description, answers."""
    common_system_prompt: str = ""
    max_handoffs: int = Field(default=10, ge=1)
    agents: list[AgentSpec] = Field(min_length=1)
    source: str = ""
    _node: Any = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _names(self) -> AgentsConfig:
        names = [a.name for a in self.agents]
        for name in names:
            if names.count(name) > 1:
                msg = f"agent name {name!r} is used twice"
                raise ValueError(msg)
            if name in RESERVED:
                msg = f"agent name {name!r} is reserved; choose another"
                raise ValueError(msg)
        return self

    def agent(self, name: str) -> AgentSpec:
        """The agent called ``name``."""
        return next(a for a in self.agents if a.name == name)

    def names(self) -> list[str]:
        """Agent names in file order."""
        return [a.name for a in self.agents]

    def completes(self, name: str) -> bool:
        """Whether ``name``'s answer (without a hand-off) ends the run."""
        flag = self.agent(name).auto_complete
        return name == self.main_agent if flag is None else flag

    def where(self, *loc: int | str) -> str:
        """``file:line`` of a key of the file (just the file when unknown)."""
        line = _line_of(self._node, loc)
        return f"{self.source}:{line}" if line else self.source


def load_agents(path: str | Path) -> AgentsConfig:
    """Read and check an agents file.

    Raises:
        ConfigError: The file is missing, not YAML, or not a valid agents file; the message
            names the file and line.
    """
    p = Path(path).expanduser().resolve()
    if not p.is_file():
        msg = f"agents file {str(path)!r} not found; see examples/agents.yaml for the format"
        raise ConfigError(msg)
    stamp = p.stat().st_mtime_ns
    return _load(str(p), stamp).model_copy()


@functools.lru_cache(maxsize=16)
def _load(path: str, _stamp: int) -> AgentsConfig:
    text = Path(path).read_text(encoding="utf-8")
    try:
        node, data = parse_yaml(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else path
        problem = getattr(exc, "problem", None) or str(exc)
        context, start = getattr(exc, "context", None), getattr(exc, "context_mark", None)
        if context and start:
            problem += f" ({context}, started at line {start.line + 1})"
        msg = f"{where}: invalid YAML: {problem}"
        raise ConfigError(msg) from exc
    if not isinstance(data, dict):
        msg = f"{path}:1: an agents file is a mapping with main_agent and agents"
        raise ConfigError(msg)
    try:
        config = AgentsConfig.model_validate({**data, "source": path})
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            line = _line_of(node, err["loc"])
            key = ".".join(str(p) for p in err["loc"]) or "file"
            problems.append(f"{path}:{line or 1}: {key}: {err['msg']}")
        raise ConfigError("invalid agents file:\n" + "\n".join(problems)) from exc
    config._node = node
    if config.main_agent not in config.names():
        msg = (
            f"{config.where('main_agent')}: main_agent {config.main_agent!r} is not one of the "
            f"agents ({', '.join(config.names())})"
        )
        raise ConfigError(msg)
    return config


def check_tools(config: AgentsConfig, known: set[str]) -> None:
    """Every tool an agent names exists (globs must match at least one tool).

    Raises:
        ConfigError: ``file:line``, the agent, the unknown name and the known tools.
    """
    for n, agent in enumerate(config.agents):
        for k, pattern in enumerate(agent.tools or []):
            if not any(fnmatch.fnmatchcase(name, pattern) for name in known):
                msg = (
                    f"{config.where('agents', n, 'tools', k)}: agent {agent.name!r} names "
                    f"unknown tool {pattern!r}; known tools: {', '.join(sorted(known))}"
                )
                raise ConfigError(msg)


def default_agents() -> AgentsConfig:
    """The agents shipped with the package (used by ``langgraph dev``)."""
    return load_agents(DEFAULT_AGENTS)
