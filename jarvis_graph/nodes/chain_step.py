"""The nodes of a tool chain's graph: one per step, and ``finish``.

A step checks its condition, fills in its references, asks the user first when its tool
needs confirmation (the same interrupt as ``confirm_tools``, so every front end answers
it the same way; a non-interactive run declines), runs the tool through the same path as
the model's calls (workspace rules, error text, secrets masked), and applies its error
policy. Each step is its own node, so its result is checkpointed before the next starts:
a chain killed mid-way resumes at the step that did not finish.
"""

from __future__ import annotations

import hashlib
from typing import Any, Literal, Protocol

from langgraph.config import get_config
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from jarvis_graph.chains.expr import ChainRunError, fill, references, substitute
from jarvis_graph.chains.spec import Chain, Step
from jarvis_graph.context import JarvisContext
from jarvis_graph.events import Event
from jarvis_graph.messages import shorten
from jarvis_graph.nodes.call_model import needs_human
from jarvis_graph.nodes.confirm_tools import (
    confirm_request,
    consented,
    nobody_asked,
    normalise_decisions,
)
from jarvis_graph.runtime.services import RunServices, services_of
from jarvis_graph.state import ChainState, ChainStepResult
from jarvis_graph.tools.artifacts import Artifact
from jarvis_graph.tools.builtin import EXIT_LINE
from jarvis_graph.tools.invoke import invoke_tool
from jarvis_graph.tools.sub_runs import take_output_file


class StepNode(Protocol):
    """A node of a chain's graph."""

    def __call__(self, state: ChainState, runtime: Runtime[JarvisContext]) -> dict[str, Any]:
        """Run the node."""
        ...


def chain_step(chain: Chain, step: Step) -> StepNode:
    """The node that runs ``step`` of ``chain``."""

    def run_step(state: ChainState, runtime: Runtime[JarvisContext]) -> dict[str, Any]:
        services = services_of(runtime)
        update = _step(state, services)
        result = update["steps"][step.id]
        services.bus.emit(
            Event.CHAIN_STEP_FINISHED,
            {
                "chain": chain.name,
                "step": step.id,
                "tool": step.tool,
                "status": result["status"],
                "attempts": result["attempts"],
                "result": shorten(result["result"], 300),
            },
        )
        return update

    def _step(state: ChainState, services: RunServices) -> dict[str, Any]:
        scope = {"input": state.get("input") or {}, "steps": state.get("steps") or {}}
        try:
            if step.condition is not None and not step.condition.holds(scope):
                why = f"not run: its condition {step.condition.text!r} is false"
                return _record(step, "skipped", why, 0)
            blocker = _unfinished_source(step, scope["steps"])
            if blocker:
                status = scope["steps"][blocker]["status"]
                return _record(
                    step, "skipped", f"not run: it reads step {blocker!r}, which {status}", 0
                )
            args = substitute(step.args, scope)
        except ChainRunError as exc:
            return _failed(step, f"Error: {exc}", 0)
        tool = services.tools.get(step.tool)
        if tool is None:
            return _failed(step, f"Error: tool {step.tool!r} is not available in this run", 0)
        call_id = _call_id(chain, step)
        decision = _decision(chain, step, call_id, args, services)
        asked_nobody = services.context.non_interactive
        if decision.get("action") == "reject":
            reason = decision.get("reason") or "no reason given"
            text = f"not run: {reason}" if asked_nobody else f"declined by the user ({reason})"
            return _record(step, "declined", text, 0, stops=step.on_error != "skip")
        if decision.get("action") == "edit" and isinstance(decision.get("args"), dict):
            args = decision["args"]
        return _run(step, tool, args, call_id, services)

    run_step.__name__ = step.id
    return run_step


def _call_id(chain: Chain, step: Step) -> str:
    """An id for the step's tool call, the same when a resumed run runs the step again.

    Its checkpoint namespace names this run of the step (a chain called twice in a session
    runs under two), and is the same when the step is resumed.
    """
    ns = str(get_config().get("configurable", {}).get("checkpoint_ns", ""))
    digest = hashlib.sha256(ns.encode()).hexdigest()[:8]
    return f"chain-{chain.name}-{step.id}-{digest}"


def _unfinished_source(step: Step, results: dict[str, ChainStepResult]) -> str | None:
    """A step whose result ``step`` reads but which did not succeed."""
    for ref in references(step.args):
        if ref.step and ref.field == "result" and results[ref.step]["status"] != "succeeded":
            return ref.step
    return None


def _decision(
    chain: Chain, step: Step, call_id: str, args: dict[str, Any], services: RunServices
) -> dict[str, Any]:
    """The user's decision on running the step (``approve`` when none is needed).

    Asked exactly when the model's own call of the tool would be, with the same request.
    """
    call = {"id": call_id, "name": step.tool, "args": args}
    if not needs_human(call, services):
        return {"action": "approve"}
    request = confirm_request(call, services)
    request |= {"chain": chain.name, "step": step.id}
    if services.context.non_interactive:
        return {"action": "reject", "reason": nobody_asked(request)}
    reply = interrupt({"type": "confirm_tools", "requests": [request]})
    decision = normalise_decisions(reply, [request]).get(call_id) or {"action": "approve"}
    return consented(call, decision, services)


def _run(
    step: Step, tool: Any, args: dict[str, Any], call_id: str, services: RunServices
) -> dict[str, Any]:
    """Call the tool, again after a failure while the step's retries last."""
    bus, config = services.bus, get_config()
    attempts, text = 0, ""
    for attempts in range(1, step.retries + 2):  # noqa: B007 - ``attempts`` is reported
        bus.emit(Event.BEFORE_TOOL_CALL, {"name": step.tool, "args": args, "tool_call_id": call_id})
        text, status, artifact = invoke_tool(tool, args, config, call_id)
        text = services.env.mask(_as_output(text, artifact))  # stored in the checkpoint
        failed = status == "error" or text.startswith("Error")
        bus.emit(
            Event.AFTER_TOOL_CALL,
            {
                "name": step.tool,
                "args": args,
                "tool_call_id": call_id,
                "status": "error" if failed else "success",
                "output": text,
                "output_path": take_output_file(call_id),  # a file the tool saved itself
            },
        )
        if not failed:
            return _record(step, "succeeded", text, attempts)
        if step.on_error != "retry":
            break
    return _failed(step, text, attempts)


def _as_output(text: str, artifact: Artifact | None) -> str:
    """A script that exited 0 gives its output: the step's status already says it worked.

    Another exit code stays in the result (a test command's 1 is news to the reader).
    """
    if artifact and artifact.get("kind") == "run" and artifact.get("exit_code") == 0:
        return text.replace(EXIT_LINE.format(0), "", 1)
    return text


def _failed(step: Step, text: str, attempts: int) -> dict[str, Any]:
    return _record(step, "failed", text, attempts, stops=step.on_error != "skip")


def _record(
    step: Step, status: str, text: str, attempts: int, *, stops: bool = False
) -> dict[str, Any]:
    result: ChainStepResult = {"status": status, "result": text, "attempts": attempts}
    update: dict[str, Any] = {"steps": {step.id: result}}
    if stops:
        update["status"] = "failed" if status == "failed" else "stopped"
    return update


def route_after_step(state: ChainState) -> Literal["next", "finish"]:
    """On to the next step, or to ``finish`` once a step stopped the chain."""
    return "finish" if state.get("status") in ("failed", "stopped") else "next"


def chain_finish(chain: Chain) -> StepNode:
    """The ``finish`` node: the chain's status and what its caller gets back."""

    def finish(state: ChainState, runtime: Runtime[JarvisContext]) -> dict[str, Any]:
        results = state.get("steps") or {}
        status = state.get("status") or "running"
        status = "completed" if status == "running" else status
        done = ", ".join(f"{sid} {r['status']}" for sid, r in results.items())
        lines = [f"Chain {chain.name} {status}: {done or 'no step ran'}."]
        stopped_at = next(
            (sid for sid, r in results.items() if r["status"] in ("failed", "declined")), None
        )
        if status != "completed" and stopped_at:
            step = next(s for s in chain.steps if s.id == stopped_at)
            lines.append(
                f"Stopped at step {stopped_at} ({step.tool}): {results[stopped_at]['result']}"
            )
        lines.append(_output(chain, state, results))
        return {"status": status, "output": "\n".join(line for line in lines if line).strip()}

    return finish


def _output(chain: Chain, state: ChainState, results: dict[str, ChainStepResult]) -> str:
    """The chain's ``output:`` filled in, or every step's result when it has none."""
    if chain.output is None:
        return "\n\n".join(
            f"[{sid}] {r['status']}\n{shorten(r['result'], 4000)}" for sid, r in results.items()
        )
    return fill(chain.output, {"input": state.get("input") or {}, "steps": results})
