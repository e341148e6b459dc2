"""The hand-off tool ``send_message`` and the prompt text that tells an agent about its team.

``send_message(to, content)`` returns ``Command(goto=to, graph=Command.PARENT)`` carrying
``{sender, to, content}`` in ``inbox``; the multi-agent node adds the hand-off summary. An
unknown target is answered as a normal tool result that lists the agents, so the model can
correct the call.
"""

from __future__ import annotations

import fnmatch
import functools
from pathlib import Path

from langchain_core.tools import BaseTool, StructuredTool
from langgraph.types import Command

from jarvis_graph.multi.config import AgentsConfig, load_agents

HANDOFF_TOOL = "send_message"


def make_send_message(config: AgentsConfig, sender: str) -> BaseTool:
    """The hand-off tool of agent ``sender``; its destinations are the other agents."""
    others = [a for a in config.names() if a != sender]

    def send_message(to: str, content: str) -> str | Command:
        if to not in others:
            known = ", ".join(
                f"{a} ({config.agent(a).description or 'no description'})" for a in others
            )
            return (
                f"Error: there is no agent named {to!r} to send to. Available agents: {known}. "
                "Call send_message again with one of these names."
            )
        inbox = {"sender": sender, "to": to, "content": content, "summary": ""}
        return Command(goto=to, graph=Command.PARENT, update={"inbox": inbox})

    return StructuredTool.from_function(
        send_message,
        name=HANDOFF_TOOL,
        description=(
            "Hand the work to another agent of the team: `to` is its name, `content` says "
            "exactly what it should do or what you need back. Your turn ends with the "
            f"message; make it the only call of your reply. Agents: {', '.join(others)}."
        ),
        metadata={"handoff": True, "destinations": others},
    )


@functools.lru_cache(maxsize=64)
def _handoff_tool(agents_file: str, sender: str, _stamp: int) -> BaseTool:
    return make_send_message(load_agents(agents_file), sender)


def agent_tools(agents_file: str, agent: str, tools: dict[str, BaseTool]) -> dict[str, BaseTool]:
    """The tools of ``agent``: its patterns over the run's tools, plus ``send_message``."""
    config = load_agents(agents_file)
    patterns = config.agent(agent).tools
    chosen = {
        name: tool
        for name, tool in tools.items()
        if patterns is None or any(fnmatch.fnmatchcase(name, p) for p in patterns)
    }
    stamp = Path(config.source).stat().st_mtime_ns
    chosen[HANDOFF_TOOL] = _handoff_tool(agents_file, agent, stamp)
    return chosen


def agent_prompt(agents_file: str, agent: str) -> str:
    """The part of an agent's system prompt about its role and its team."""
    config = load_agents(agents_file)
    spec = config.agent(agent)
    team = "\n".join(
        f"- {a.name}: {a.description or 'no description'}" for a in config.agents if a.name != agent
    )
    ending = (
        "When the task is done, give the final answer."
        if config.completes(agent)
        else "Your answer without send_message goes back to the agent that wrote to you."
    )
    parts = [
        config.common_system_prompt.strip(),
        f"You are the agent {agent!r}. {spec.system_prompt.strip()}".strip(),
        f"Your team (use send_message to hand work over, one hand-off per reply):\n{team}",
        ending,
    ]
    return "\n\n".join(p for p in parts if p)
