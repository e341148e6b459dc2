"""Nodes of the security verification graph: plan, verify one candidate, merge.

Each candidate gets its own branch (``Send``) running a small read-only agent: the model
reads and searches the scanned tree, then calls ``submit_verdict``. Every verdict is
appended to the run's progress file the moment it is known, and ``plan_verification``
skips the candidates the file already holds, so a killed run resumes where it stopped.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.types import Send

from jarvis_graph.context import JarvisContext, resolve_settings
from jarvis_graph.platforms.errors import ContextTooLongError
from jarvis_graph.platforms.registry import create_chat_model
from jarvis_graph.runtime.services import context_of
from jarvis_graph.security.grounding import check_verdict, code_around
from jarvis_graph.security.progress import (
    load_progress,
    normalise_verdict,
    record_verdict,
    start_progress,
)
from jarvis_graph.state import CandidateTask, SecurityScanState
from jarvis_graph.tools.security_verify import VERDICT_TOOL, verification_tools

if TYPE_CHECKING:
    from langchain_core.runnables import Runnable
    from langchain_core.tools import BaseTool
    from langgraph.runtime import Runtime

DEFAULT_MAX_STEPS = 6

SYSTEM = """You verify one candidate security issue found by a static scanner in C, C++ or \
Rust code under {root}. The code around it is given; read more with read_code and look \
for callers, checks or definitions with search_code. Decide whether the issue is real on \
some execution path. Then call submit_verdict exactly once with verdict confirmed, \
false_positive or uncertain, your reasoning in your own words, the evidence (each item: \
a file you read, the first and last line, and the code on those lines, copied exactly; \
at least one in the finding's file) and, when real, a suggested fix. You cannot change \
files. A verdict whose evidence is not on the lines it names counts as uncertain."""
NOT_RECORDED = "Verdict not recorded:"
NOT_AGAIN = "Not run again:"
UNPARSED_VERDICT = f"Your call to {VERDICT_TOOL} could not be run"
GROUNDING_RETRIES = 1
"""How often a verdict whose evidence does not check out is sent back before it counts."""
CUT_CHARS = 1500
"""What is kept of each tool result when the conversation outgrows the model's context."""


def plan_verification(state: SecurityScanState, runtime: Runtime[JarvisContext]) -> dict[str, Any]:
    """Open (or reopen) the run's progress file and load the verdicts it already has."""
    ids = [c["id"] for c in state["candidates"]]
    start_progress(state["progress_file"], state["run_id"], state["root"], ids)
    done = load_progress(state["progress_file"])
    return {"verdicts": {i: v for i, v in done.items() if i in set(ids)}}


def route_after_plan(state: SecurityScanState) -> list[Send] | Literal["merge_verdicts"]:
    """One ``verify_candidate`` branch per candidate without a verdict yet."""
    done = state.get("verdicts", {})
    todo = [c for c in state["candidates"] if c["id"] not in done]
    if not todo:
        return "merge_verdicts"
    return [
        Send(
            "verify_candidate",
            {
                "candidate": c,
                "root": state["root"],
                "progress_file": state["progress_file"],
                "max_steps": state.get("max_steps", DEFAULT_MAX_STEPS),
            },
        )
        for c in todo
    ]


def verify_candidate(task: CandidateTask, runtime: Runtime[JarvisContext]) -> dict[str, Any]:
    """Run the read-only agent on one candidate and record its verdict durably."""
    candidate = task["candidate"]
    tools = verification_tools(task["root"])
    # Every turn calls a tool: reading, searching, or the verdict (a prose reply is none).
    base = _verifier_model(context_of(runtime))
    model = base.bind_tools(tools, tool_choice="required")
    verdict_only = base.bind_tools(
        [t for t in tools if t.name == VERDICT_TOOL], tool_choice="required"
    )
    system = SYSTEM.format(root=task["root"])
    messages: list[BaseMessage] = [SystemMessage(system), HumanMessage(_describe(candidate))]
    code = code_around(task["root"], candidate)
    if code:
        messages.append(HumanMessage(f"The code around the finding:\n{code}"))

    def check(verdict: dict[str, Any]) -> dict[str, Any]:
        prompt = "\n".join(str(m.content) for m in messages[:2])
        return check_verdict(verdict, task["root"], candidate, prompt)

    steps = task.get("max_steps", DEFAULT_MAX_STEPS)
    verdict = _agent_loop((model, verdict_only), tools, messages, steps, check)
    record_verdict(task["progress_file"], candidate["id"], verdict)
    return {"verdicts": {candidate["id"]: verdict}}


def merge_verdicts(state: SecurityScanState) -> dict[str, Any]:
    """Count the verdicts (the report merges them into the issues)."""
    counts = {"confirmed": 0, "false_positive": 0, "uncertain": 0}
    for v in state.get("verdicts", {}).values():
        counts[v["verdict"]] = counts.get(v["verdict"], 0) + 1
    return {"verdict_counts": counts}


def _describe(candidate: dict[str, Any]) -> str:
    keys = ("id", "file", "line", "function", "cwe", "category", "pattern", "description",
            "evidence", "confidence")  # fmt: skip
    return "Candidate issue:\n" + json.dumps({k: candidate.get(k) for k in keys}, indent=2)


def _agent_loop(
    models: tuple[Runnable[Any, Any], Runnable[Any, Any]],
    tools: list[BaseTool],
    messages: list[BaseMessage],
    max_steps: int,
    check: Callable[[dict[str, Any]], dict[str, Any]],
) -> dict[str, Any]:
    """Steps of the verifier until a verdict; ``check`` grounds it (see ``check_verdict``).

    ``models``: the model bound to every tool, and bound to ``submit_verdict`` alone (the
    last step must give the verdict: a small model otherwise reads until the steps run out).

    A decision (confirmed or false positive) that does not check out goes back to the
    model with what was wrong, :data:`GROUNDING_RETRIES` times while steps are left; then
    it counts as it is (``check`` has made an ungrounded decision ``uncertain``).
    """
    by_name = {t.name: t for t in tools}
    retries = GROUNDING_RETRIES
    model, verdict_only = models
    made: set[str] = set()
    for step in range(max_steps):
        # The last step, and the step after a repeated read or a verdict sent back, can
        # only submit the verdict.
        last = step == max_steps - 1 or (
            isinstance(messages[-1], ToolMessage)
            and str(messages[-1].content).startswith((NOT_RECORDED, NOT_AGAIN, UNPARSED_VERDICT))
        )
        try:
            reply = (verdict_only if last else model).invoke(messages)
        except ContextTooLongError as exc:
            # What was read no longer fits: keep the head of each result and ask for the
            # verdict now; a candidate that still does not fit is uncertain, and the run
            # goes on with the next one.
            if not _cut_tool_results(messages):
                return check(_uncertain(f"not verified: {exc}"))
            try:
                reply = verdict_only.invoke(messages)
            except ContextTooLongError as again:
                return check(_uncertain(f"not verified: {again}"))
        if not isinstance(reply, AIMessage):
            reply = AIMessage(content=str(getattr(reply, "content", reply)))
        messages.append(reply)
        if not reply.tool_calls and reply.invalid_tool_calls and step < max_steps - 1:
            # A call that did not parse (cut off at the token limit, say): told, not taken
            # for an empty verdict.
            for bad in reply.invalid_tool_calls:
                why = bad.get("error") or "its arguments are not valid JSON"
                note = f"Your call to {bad.get('name') or 'a tool'} could not be run: {why}."
                messages.append(ToolMessage(note, tool_call_id=bad.get("id") or "invalid"))
            continue
        if not reply.tool_calls:
            return check(_verdict_from_text(str(reply.content)))
        for call in reply.tool_calls:
            call_id = call["id"] or call["name"]
            if call["name"] == VERDICT_TOOL:
                verdict = check(normalise_verdict(call["args"]))
                # Sent back: a decision whose evidence did not check out ("claimed").
                if "claimed" not in verdict or retries == 0 or step == max_steps - 1:
                    return verdict
                retries -= 1
                messages.append(ToolMessage(_not_grounded(verdict), tool_call_id=call_id))
                continue
            tool = by_name.get(call["name"])
            key = json.dumps([call["name"], call["args"]], sort_keys=True)
            if tool is None:
                output = f"unknown tool {call['name']!r}; use {', '.join(by_name)}"
            elif key in made:  # a small model repeats a read; the next step gives the verdict
                output = f"{NOT_AGAIN} its result is above. Now call {VERDICT_TOOL}."
            else:
                output = str(tool.invoke(call["args"]))
            made.add(key)
            messages.append(ToolMessage(output, tool_call_id=call_id))
    return check(_uncertain(f"no verdict after {max_steps} steps"))


def _uncertain(reasoning: str) -> dict[str, Any]:
    return normalise_verdict({"verdict": "uncertain", "reasoning": reasoning})


def _cut_tool_results(messages: list[BaseMessage]) -> bool:
    """Cut every tool result longer than :data:`CUT_CHARS` to its head; whether any was."""
    cut = False
    for i, message in enumerate(messages):
        text = str(message.content)
        if isinstance(message, ToolMessage) and len(text) > CUT_CHARS:
            note = (
                f"\n… (cut from {len(text)} characters: the conversation outgrew the model's "
                "context window)"
            )
            messages[i] = ToolMessage(
                text[:CUT_CHARS] + note, tool_call_id=message.tool_call_id, name=message.name
            )
            cut = True
    return cut


def _not_grounded(verdict: dict[str, Any]) -> str:
    listed = "\n".join(f"- {p}" for p in verdict.get("grounding_problems", []))
    return (
        f"{NOT_RECORDED} it does not check out against the code:\n{listed}\n"
        f"Call {VERDICT_TOOL} again with your reasoning in your own words and evidence items "
        "whose lines (path, start_line to end_line) hold the code you copy into them."
    )


def _verdict_from_text(text: str) -> dict[str, Any]:
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        try:
            return normalise_verdict(json.loads(text[start : end + 1]))
        except json.JSONDecodeError:
            pass
    return _uncertain(text.strip()[:500])


@functools.lru_cache(maxsize=8)
def _verifier_model(ctx: JarvisContext) -> Any:
    return create_chat_model(resolve_settings(ctx).model_for("normal"))
