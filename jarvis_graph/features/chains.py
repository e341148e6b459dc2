"""Tool chains as tools: each usable chain is offered to the model as one tool.

The chains come from :mod:`jarvis_graph.chains.catalog`; a chain with a problem (its
file, an unknown tool, an argument of the wrong name or type, a cycle) is not offered,
and the problem is shown with ``file:line`` before the run; a built-in chain whose tools
the run has not got is left out without a word. Calling a chain's tool runs
the chain's graph as a subgraph of the run (its steps checkpointed in the run's session);
each step is confirmed like a direct call of its tool. ``chains``: ``auto`` offers the
user's and the project's chains, and the built-in ones to models other than the local
platform's; ``on`` all; ``off`` none (``jarvis chains run`` still runs them).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool
from langgraph.errors import GraphBubbleUp

from jarvis_graph.chains.catalog import Catalog, load_catalog
from jarvis_graph.chains.spec import Chain, ToolSchema
from jarvis_graph.features.base import Feature, RunSetup
from jarvis_graph.graph_registry import graph_named
from jarvis_graph.tools.base import ToolFailure, ToolInputError
from jarvis_graph.tools.registry import group_patterns, in_group
from jarvis_graph.tools.sub_runs import note_sub_run

PROBLEMS = "_jarvis_chain_problems"
"""Where the chains' problems of a run are kept on its setup (found when tools are chosen)."""


class Chains(Feature):
    """Adds one tool per usable chain, after every other feature's tools are known."""

    name = "chains"
    settings = ("chains",)

    def enabled(self, setup: RunSetup) -> bool:
        """Unless ``chains: off``."""
        return setup.settings.chains != "off"

    def select_tools(self, tools: dict[str, BaseTool], setup: RunSetup) -> dict[str, BaseTool]:
        """The run's tools plus the chains whose steps call them correctly.

        A chain the tool group or role leaves out is not checked; a built-in chain whose
        tools the run has not got (``jarvis code`` has no ``write_file``) is left out
        without a word. A user's chain that cannot run is named with its problem.
        """
        catalog = load_catalog(setup.workspace)
        offered = Catalog(
            {n: c for n, c in catalog.chains.items() if self._offers(n, catalog, setup)}
        )
        builtin = {name for name in offered.chains if catalog.builtin(name)}
        schemas = {name: tool_schema(t) for name, t in tools.items()}
        usable, problems = offered.usable(schemas, quiet=builtin)
        notes = [str(error) for error in [*catalog.errors, *problems]]
        out = dict(tools)
        for name, chain in usable.items():
            if name in out:
                notes.append(
                    f"{chain.where('name')}: chain {name!r} not offered: a tool has that name"
                )
                continue
            out[name] = chain_tool(chain, setup)
        object.__setattr__(setup, PROBLEMS, notes)
        return out

    def problems(self, setup: RunSetup) -> list[str]:
        """The chains left out, each with ``file:line`` and why."""
        return list(getattr(setup, PROBLEMS, []))

    def _offers(self, name: str, catalog: Catalog, setup: RunSetup) -> bool:
        only = setup.context.only_tools
        if not in_group(name, group_patterns(setup.settings)) or (
            only is not None and not in_group(name, only.split(","))
        ):
            return False  # the tool group or the agent's role leaves it out, as any tool
        if setup.settings.chains == "on" or not catalog.builtin(name):
            return True
        # deferred: resolving the platform reads the model spec only, no provider import
        from jarvis_graph.platforms.registry import resolve_platform

        return resolve_platform(setup.settings.model_for("normal")) != "local"


def tool_schema(tool: BaseTool) -> ToolSchema:
    """A tool's argument properties and required names, from its call schema."""
    schema: Any = tool.tool_call_schema
    data = schema if isinstance(schema, dict) else schema.model_json_schema()
    return data.get("properties") or {}, list(data.get("required") or [])


def chain_tool(chain: Chain, setup: RunSetup) -> BaseTool:
    """The tool that runs ``chain`` in the run ``setup`` belongs to."""

    def run(**given: Any) -> str:
        return run_chain(chain, given, setup)

    steps = ", ".join(f"{s.id} ({s.tool})" for s in chain.steps)
    return StructuredTool.from_function(
        run,
        name=chain.name,
        description=f"{chain.description} [tool chain: {steps}]",
        args_schema=chain.input_schema(),
        metadata={"source": f"chain {chain.path}", "chain": chain.name},
    )


def run_chain(chain: Chain, given: Mapping[str, Any], setup: RunSetup) -> str:
    """Run ``chain`` as a subgraph of the current run; its report.

    Raises:
        ToolInputError: The arguments do not fit the chain's inputs.
        ToolFailure: The chain's graph raised.
    """
    try:
        args = chain.arguments(given)
    except ValueError as exc:
        raise ToolInputError(str(exc)) from None
    try:
        graph = graph_named("chain")(chain)
    except LookupError as exc:  # called outside a graph run, where no graph module is loaded
        msg = f"the chain {chain.name} can only run inside a Jarvis run: {exc}"
        raise ToolFailure(msg) from None
    try:
        # deferred: the session store's helpers load with a run's savers
        from jarvis_graph.checkpoint_async import nested_config

        out = graph.invoke(
            {"chain": chain.name, "input": args, "status": "running"},
            # one step a superstep, then finish
            nested_config({"recursion_limit": len(chain.steps) + 10}),
            context=setup.context,
        )
    except GraphBubbleUp:  # a step asks for confirmation: the run pauses here
        raise
    except Exception as exc:
        msg = f"the chain {chain.name} failed: {type(exc).__name__}: {exc}"
        raise ToolFailure(msg) from exc
    steps = {sid: r.get("status") for sid, r in (out.get("steps") or {}).items()}
    note_sub_run({"kind": "chain", "name": chain.name, "status": out.get("status"), "steps": steps})
    report = str(out.get("output") or f"Chain {chain.name} ended without output.")
    if out.get("status") != "completed":
        raise ToolFailure(report)
    return report
