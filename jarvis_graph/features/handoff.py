"""Multi-agent hand-offs: an agent's own tools and ``send_message``, and its role in the prompt."""

from __future__ import annotations

from langchain_core.tools import BaseTool

from jarvis_graph.features.base import Feature, RunSetup
from jarvis_graph.multi.handoff import agent_prompt, agent_tools


class Handoff(Feature):
    """In a multi-agent run: the agent's tool patterns, ``send_message`` and its team."""

    name = "handoff"
    state_keys = ("histories", "inbox", "active_agent", "handoffs")

    def enabled(self, setup: RunSetup) -> bool:
        """On when the run acts as an agent of an agents file."""
        return bool(setup.context.agent and setup.context.agents_file)

    def select_tools(self, tools: dict[str, BaseTool], setup: RunSetup) -> dict[str, BaseTool]:
        """The agent's patterns over the run's tools, plus ``send_message``."""
        ctx = setup.context
        assert ctx.agents_file and ctx.agent  # enabled() said so
        return agent_tools(ctx.agents_file, ctx.agent, tools)

    def prompt_section(self, setup: RunSetup, task: str) -> str:
        """The agent's role and its team."""
        ctx = setup.context
        assert ctx.agents_file and ctx.agent
        return agent_prompt(ctx.agents_file, ctx.agent)
