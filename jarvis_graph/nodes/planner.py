"""Planner nodes: decide whether to split, run steps as child runs, adjust, write back.

A step runs the planner graph itself one level deeper (``depth + 1``, non-interactive), so
a child may split its own step until ``plan_max_depth``; at that depth it runs the agent
directly. Child runs share the parent's checkpointer under their own checkpoint namespace.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import uuid
from collections.abc import Callable
from typing import Any, Literal, Protocol

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.runnables import Runnable
from langgraph.errors import GraphBubbleUp
from langgraph.runtime import Runtime
from langgraph.types import Send

from jarvis_graph.context import JarvisContext
from jarvis_graph.events import Event
from jarvis_graph.messages import text_of
from jarvis_graph.nodes.start_task import SYSTEM_ID, TASK_ID_PREFIX
from jarvis_graph.planning.plan import (
    blocked_steps,
    plan_block,
    plan_problems,
    ready_steps,
    results_block,
    step_brief,
    summary_block,
)
from jarvis_graph.planning.schemas import PlanAdjustment, PlanDecision
from jarvis_graph.prompts import load_prompt
from jarvis_graph.runtime.services import context_of, services_of
from jarvis_graph.runtime.structured import ask_structured
from jarvis_graph.state import (
    CONTEXT_NAME,
    PlannerState,
    PlanStep,
    StepInput,
    StepResult,
    StepStatus,
    is_task_message,
)

logger = logging.getLogger(__name__)

MAX_STEPS = 8


def decide_plan(state: PlannerState, runtime: Runtime[JarvisContext]) -> dict[str, Any]:
    """Split the task into steps, or not (always not at the depth limit)."""
    services = services_of(runtime)
    ctx = services.context
    limit = services.settings.plan_max_depth
    task = _task_of(state)
    base: dict[str, Any] = {"task": task, "plan": [], "step_results": None}
    if ctx.depth >= limit:
        note = f"not split: depth {ctx.depth} is the limit (plan_max_depth={limit})"
        return {**base, "plan_note": note}
    prompt = load_prompt("plan_decide").format(max_steps=MAX_STEPS)
    decision, error = ask_structured(services.chat_model(), PlanDecision, prompt, task)
    if decision is None:
        why = f"the model gave no plan decision ({error})"
        logger.warning("planner: %s; the task runs without a plan", why)
        return {**base, "plan_note": f"not split: {why}"}
    steps = [_step(s.model_dump()) for s in decision.steps[:MAX_STEPS]]
    problems = plan_problems(steps)
    if not decision.split or not steps or problems:
        why = "; ".join(problems) if problems and decision.split else decision.reason
        return {**base, "plan_note": f"not split: {why or 'the model chose to do it directly'}"}
    _emit(runtime, steps, decision.reason)
    return {**base, "plan": steps, "plan_note": f"split: {decision.reason}".strip()}


def _task_of(state: PlannerState) -> str:
    if state.get("task"):
        return str(state["task"])
    for message in reversed(state.get("messages", [])):
        if is_task_message(message):
            return text_of(message)
    msg = "no task given: pass {'task': '...'} or a human message"
    raise ValueError(msg)


def _step(raw: dict[str, Any]) -> PlanStep:
    deps = [str(d) for d in raw.get("depends_on") or []]
    return {
        "id": str(raw.get("id", "")).strip(),
        "task": str(raw.get("task", "")),
        "depends_on": deps,
    }


def _emit(runtime: Runtime[JarvisContext], steps: list[PlanStep], reason: str) -> None:
    services = services_of(runtime)
    payload = {"depth": services.context.depth, "steps": steps, "reason": reason}
    services.bus.emit(Event.PLAN_UPDATED, payload)


def route_steps(
    state: PlannerState, runtime: Runtime[JarvisContext]
) -> list[Send] | Literal["write_back"]:
    """One ``Send`` per ready step (at most ``plan_concurrency``); none left -> write back."""
    plan, results = state.get("plan", []), state.get("step_results", {})
    ready = ready_steps(plan, results)[: services_of(runtime).settings.plan_concurrency]
    if not ready:
        return "write_back"
    return [
        Send(
            "run_step",
            StepInput(
                task=state.get("task", ""),
                step=step,  # type: ignore[typeddict-item]
                plan=plan,
                inputs={d: results[d] for d in step["depends_on"] if d in results},
            ),
        )
        for step in ready
    ]


def route_after_decide_plan(
    state: PlannerState, runtime: Runtime[JarvisContext]
) -> list[Send] | Literal["agent"]:
    """A plan -> run its first steps; no plan -> the agent does the task itself."""
    return route_steps(state, runtime) if state.get("plan") else "agent"  # type: ignore[return-value]


def route_after_adjust_plan(
    state: PlannerState, runtime: Runtime[JarvisContext]
) -> list[Send] | Literal["write_back"]:
    """Run the steps that became ready, or write the results back."""
    return route_steps(state, runtime)


class StepNode(Protocol):
    """The ``run_step`` node's signature (named parameters, as LangGraph calls a node)."""

    def __call__(self, state: StepInput, runtime: Runtime[JarvisContext]) -> dict[str, Any]:
        """Run one step."""
        ...


def make_run_step(child_graph: Callable[[], Runnable[Any, Any]]) -> StepNode:
    """The ``run_step`` node; ``child_graph()`` is the compiled graph a step runs.

    The graph module passes the planner graph itself, so this module never imports a graph.
    """

    def run_step(state: StepInput, runtime: Runtime[JarvisContext]) -> dict[str, Any]:
        return _run_step(state, runtime, child_graph())

    return run_step


def _run_step(
    state: StepInput, runtime: Runtime[JarvisContext], graph: Runnable[Any, Any]
) -> dict[str, Any]:
    """Run one step as a child planner run (depth + 1, non-interactive, auto-complete).

    A child that fails (an error, or its iteration cap) is recorded as ``failed`` with the
    reason; the other steps go on.
    """
    ctx = context_of(runtime)
    child = dataclasses.replace(ctx, depth=ctx.depth + 1, non_interactive=True)
    step = state["step"]
    brief = step_brief(state["task"], step, state["plan"], state["inputs"])
    status: StepStatus = "failed"
    # deferred: the session store's helpers load with a run's savers
    from jarvis_graph.checkpoint_async import nested_config

    try:
        out = graph.invoke({"task": brief}, nested_config(), context=child)
    except GraphBubbleUp:
        raise
    except Exception as exc:
        answer = f"the child run failed: {type(exc).__name__}: {exc}"
    else:
        answer = str(out.get("final_answer", ""))
        if out.get("status") == "completed":
            status = "completed"
        else:
            answer = f"the child run stopped ({out.get('status')}): {answer}"
    result = StepResult(id=step["id"], status=status, answer=answer, depth=child.depth)
    services_of(runtime).bus.emit(Event.PLAN_STEP_FINISHED, dict(result))
    return {"step_results": {step["id"]: result}}


def adjust_plan(state: PlannerState, runtime: Runtime[JarvisContext]) -> dict[str, Any]:
    """After a round of steps: let the model revise the steps not run yet; skip blocked ones."""
    services = services_of(runtime)
    ctx = services.context
    plan, results = list(state.get("plan", [])), dict(state.get("step_results", {}))
    remaining = [s for s in plan if s["id"] not in results]
    update: dict[str, Any] = {}
    if remaining and services.settings.plan_adjust:
        new, note = _revised(services.chat_model(), state, plan, results, remaining)
        if new is not None:
            plan = [s for s in plan if s["id"] in results] + new
            update.update(plan=plan, plan_note=note)
            _emit(runtime, plan, note)
    blocked = blocked_steps(plan, results, ctx.depth + 1)
    if blocked:
        update["step_results"] = blocked
    return update


def _revised(
    model: BaseChatModel,
    state: PlannerState,
    plan: list[PlanStep],
    results: dict[str, StepResult],
    remaining: list[PlanStep],
) -> tuple[list[PlanStep] | None, str]:
    request = "\n\n".join(
        [
            f"Task: {state.get('task', '')}",
            plan_block(plan),
            results_block([s for s in plan if s["id"] in results], results),
            "Steps not run yet: " + json.dumps(remaining),
        ]
    )
    decision, error = ask_structured(model, PlanAdjustment, load_prompt("plan_adjust"), request)
    if decision is None:
        why = f"the model gave no plan adjustment ({error})"
        logger.warning("planner: %s; the steps left run as planned", why)
    if decision is None or not decision.change:
        return None, ""
    new = [_step(s.model_dump()) for s in decision.steps[:MAX_STEPS]]
    if plan_problems(new, done=results):
        return None, ""  # a broken revision is ignored: the original steps stay
    return new, f"adjusted: {decision.reason}".strip()


def write_back(state: PlannerState, runtime: Runtime[JarvisContext]) -> dict[str, Any]:
    """Write ``<PLAN>``, ``<SUB_TASK_RESULTS>`` and ``<RESULT_SUMMARY>`` into the context."""
    services = services_of(runtime)
    ctx = services.context
    plan, results = state.get("plan", []), dict(state.get("step_results", {}))
    for step in plan:  # anything never reached (no ready step left) is reported as skipped
        results.setdefault(
            step["id"],
            {"id": step["id"], "status": "skipped", "answer": "not run", "depth": ctx.depth + 1},
        )
    blocks = "\n\n".join(
        [plan_block(plan), results_block(plan, results), summary_block(plan, results)]
    )
    note = (
        f"{blocks}\n\nThe plan's steps have run. Using their results, give the final answer "
        "to the task."
    )
    messages = [
        SystemMessage(content=services.system_prompt(), id=SYSTEM_ID),
        HumanMessage(content=state.get("task", ""), id=f"{TASK_ID_PREFIX}{uuid.uuid4()}"),
        HumanMessage(content=note, name=CONTEXT_NAME, id=f"jarvis-plan-{uuid.uuid4()}"),
    ]
    return {"messages": messages, "step_results": results}
