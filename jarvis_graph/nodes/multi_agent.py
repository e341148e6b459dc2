"""Multi-agent nodes: one node per agent, each running the agent graph on its own history.

A node runs the compiled agent graph with the agent's context (its tools plus
``send_message``, its prompt, its model group). ``send_message`` ends the agent's turn with
``Command(goto=<agent>, graph=Command.PARENT)``; the node catches that command, answers the
pending tool calls in the sender's history, adds the hand-off summary and routes to the
receiver. An answer without a hand-off ends the run (the main agent, or an agent with
``auto_complete``) or goes back to the agent that wrote last.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.config import get_config
from langgraph.errors import GraphBubbleUp, ParentCommand
from langgraph.graph import END
from langgraph.runtime import Runtime
from langgraph.types import Command
from pydantic import Field, create_model

from jarvis_graph.context import JarvisContext, resolve_settings
from jarvis_graph.events import Event, get_event_bus
from jarvis_graph.messages import pending_tool_calls, text_of
from jarvis_graph.multi.config import AgentsConfig
from jarvis_graph.multi.handoff import HANDOFF_TOOL
from jarvis_graph.platforms.registry import create_chat_model
from jarvis_graph.prompts import load_prompt
from jarvis_graph.runtime.services import context_of
from jarvis_graph.runtime.structured import ask_structured
from jarvis_graph.state import Handoff, MultiAgentState

DISCARDED = "Discarded: this turn ended with a hand-off; call again if still needed."
HANDOFF_NAME = "handoff"
"""``name`` of the human message that delivers a hand-off to its receiver."""

Node = Callable[[MultiAgentState, Runtime[JarvisContext]], Command[Any]]


def make_agent_node(
    config: AgentsConfig, name: str, agent: Any, single_query: bool = False
) -> Node:
    """The node of agent ``name``; ``agent`` is the compiled agent graph it runs."""

    def agent_turn(state: MultiAgentState, runtime: Runtime[JarvisContext]) -> Command[Any]:
        ctx = _agent_context(context_of(runtime), config, name)
        history = list((state.get("histories") or {}).get(name, []))
        incoming = _incoming(state)
        values: dict[str, Any] = {}
        try:  # the last values are what the sender's history is when a hand-off interrupts
            for chunk in agent.stream(
                {"messages": [*history, incoming]}, stream_mode="values", context=ctx
            ):
                values = chunk
        except ParentCommand as exc:
            command = exc.args[0]
            if command.graph != get_config()["configurable"].get("checkpoint_ns"):
                raise  # addressed to a graph further up
            return _hand_off(state, ctx, config, name, values.get("messages", []), command)
        messages = list(values.get("messages", []))
        answer = str(values.get("final_answer", ""))
        inbox = state.get("inbox")
        if single_query or config.completes(name) or not inbox:
            return Command(
                goto=END,
                update={
                    "histories": {name: messages},
                    "final_answer": answer,
                    "status": values.get("status", "completed"),
                    "messages": [AIMessage(content=answer, name=name)],
                    "inbox": None,
                },
            )
        reply = Command(
            goto=inbox["sender"],
            update={"inbox": {"sender": name, "to": inbox["sender"], "content": answer}},
        )
        return _hand_off(state, ctx, config, name, messages, reply)

    agent_turn.__name__ = name
    return agent_turn


def _agent_context(ctx: JarvisContext, config: AgentsConfig, name: str) -> JarvisContext:
    group = config.agent(name).model_group or ctx.model_group
    return dataclasses.replace(
        ctx, agent=name, agents_file=config.source, model_group=group, non_interactive=True
    )


def _incoming(state: MultiAgentState) -> HumanMessage:
    inbox = state.get("inbox")
    if not inbox:
        return HumanMessage(content=state.get("task", ""))
    parts = [f"Message from {inbox['sender']}:", inbox["content"]]
    if inbox.get("summary"):
        parts += ["", f"Hand-off summary from {inbox['sender']}:", inbox["summary"]]
    return HumanMessage(content="\n".join(parts), name=HANDOFF_NAME)


def _hand_off(
    state: MultiAgentState,
    ctx: JarvisContext,
    config: AgentsConfig,
    name: str,
    messages: list[AnyMessage],
    command: Command[Any],
) -> Command[Any]:
    """Route a hand-off: close the sender's turn, add its summary, guard the count."""
    inbox = dict((command.update or {}).get("inbox") or {})  # type: ignore[union-attr]
    to = str(command.goto)
    history = messages + _close_turn(messages, to)
    spec = config.agent(name)
    inbox["summary"] = _summary(ctx, history, to) if spec.summary_on_send else ""
    count = int(state.get("handoffs", 0)) + 1
    kept = [] if spec.clear_after_send_message else history
    note = AIMessage(content=f"{name} -> {to}: {inbox.get('content', '')}", name=name)
    if count > config.max_handoffs:
        answer = (
            f"Stopped: the hand-off limit (max_handoffs={config.max_handoffs}) was reached. "
            f"Last message, from {name} to {to}: {inbox.get('content', '')}"
        )
        stop: dict[str, Any] = {"histories": {name: kept}, "status": "stopped"}
        stop |= {"final_answer": answer, "messages": [note], "inbox": None}
        return Command(goto=END, update=stop)
    # The team's graph has no run loop of its own: its events go to the caller's bus.
    bus = get_event_bus(ctx.event_bus, resolve_settings(ctx).after_tool_call_cb_dirs)
    bus.emit(Event.HANDOFF, {"sender": name, "to": to, "count": count})
    handoff = Handoff(
        sender=name, to=to, content=str(inbox.get("content", "")), summary=inbox["summary"]
    )
    update: dict[str, Any] = {"histories": {name: kept}, "inbox": handoff, "handoffs": count}
    update |= {"active_agent": to, "messages": [note]}
    return Command(goto=to, update=update)


def _close_turn(messages: list[AnyMessage], to: str) -> list[ToolMessage]:
    """Tool answers for the sender's last turn: the hand-off was delivered, the rest discarded.

    Other calls of that turn ran beside the hand-off; their results are dropped, and the
    model is told so it can repeat them.
    """
    answers = []
    delivered = False
    for call in pending_tool_calls(messages):
        if call.get("name") == HANDOFF_TOOL and not delivered and call["args"].get("to") == to:
            delivered, text, status = True, f"Message delivered to {to}.", "success"
        else:
            text, status = DISCARDED, "error"
        answers.append(
            ToolMessage(
                content=text,
                tool_call_id=call["id"],
                name=call.get("name") or "unknown",
                status=status,
            )
        )
    return answers


def _summary(ctx: JarvisContext, history: list[AnyMessage], to: str) -> str:
    """The sender's hand-off summary, written by the ``cheap`` model from its history."""
    transcript = "\n".join(
        f"{m.type}: {text_of(m)[:1500]}"
        + "".join(f" [calls {c['name']} {c['args']}]" for c in getattr(m, "tool_calls", []))
        for m in history[-30:]
        if not isinstance(m, SystemMessage)
    )
    request = f"{transcript}\n\n{load_prompt('handoff_summary').format(to=to)}"
    try:
        model = create_chat_model(resolve_settings(ctx).model_for("cheap"))
        reply = model.invoke([HumanMessage(content=request)])
    except GraphBubbleUp:
        raise
    except Exception as exc:
        return f"(no summary: the model call failed: {type(exc).__name__}: {exc})"
    return text_of(reply).strip()


def make_pick_expert(config: AgentsConfig) -> Callable[..., Command[Any]]:
    """The coordinator node of expert routing: picks the agent whose description fits."""
    names = tuple(config.names())
    choice = create_model(  # type: ignore[call-overload]
        "ExpertChoice",
        __doc__="The agent best suited to answer the query.",
        agent=(str, Field(description=f"One of: {', '.join(names)}.")),
        reason=(str, Field(default="", description="Why (one sentence).")),
    )
    experts = "\n".join(f"- {a.name}: {a.description or 'no description'}" for a in config.agents)
    prompt = f"Pick the agent best suited to answer the user's query.\nAgents:\n{experts}"

    def pick_expert(state: MultiAgentState, runtime: Runtime[JarvisContext]) -> Command[Any]:
        """Route the query to one expert (the main agent when the choice is unusable)."""
        model = create_chat_model(resolve_settings(context_of(runtime)).model_for("normal"))
        picked, error = ask_structured(model, choice, prompt, state.get("task", ""))
        wanted = getattr(picked, "agent", None)
        if wanted in names:
            agent, why = wanted, f"routed to {wanted}: {getattr(picked, 'reason', '')}".strip()
        else:
            agent = config.main_agent
            problem = f"the model gave no choice ({error})" if error else ""
            why = f"routed to {agent} (the main agent): {problem or f'no agent named {wanted!r}'}"
        note = AIMessage(content=why, name="pick_expert")
        return Command(goto=agent, update={"active_agent": agent, "messages": [note]})

    return pick_expert
