"""call_model: one model turn, plus the router that decides what follows it."""

from __future__ import annotations

import json
from typing import Any, Literal

from langchain_core.messages import AIMessage
from langgraph.errors import GraphBubbleUp
from langgraph.runtime import Runtime

from jarvis_graph import sandbox
from jarvis_graph.citations import DECLARES_TASK
from jarvis_graph.context import JarvisContext
from jarvis_graph.events import Event
from jarvis_graph.marker import has_complete_marker
from jarvis_graph.messages import pending_tool_calls, text_of
from jarvis_graph.nodes.call_text import (
    MAX_CORRECTIONS,
    call_in_text,
    corrections_in_a_row,
    tool_in_text,
)
from jarvis_graph.nodes.check_answer import answer_only, check_enabled, tools_asked_for
from jarvis_graph.nodes.focus_answer import focus_enabled
from jarvis_graph.nodes.review_answer import declared_of, next_turn, reviewers
from jarvis_graph.nodes.run_tools import refused_repeats
from jarvis_graph.platforms.arguments import RAW_TOOL_CALLS, parse_arguments
from jarvis_graph.platforms.errors import PlatformError, ProviderError
from jarvis_graph.platforms.finish import cut_off
from jarvis_graph.platforms.openai import counting_requests
from jarvis_graph.platforms.registry import resolve_platform
from jarvis_graph.runtime.services import RunServices, services_of
from jarvis_graph.secrets import redact_url, redact_urls
from jarvis_graph.state import CHECK_NAME, CORRECTION_NAME, AgentState, task_start
from jarvis_graph.tools.protected import protected_targets
from jarvis_graph.tools.registry import asks_user, is_risky


def call_model(state: AgentState, runtime: Runtime[JarvisContext]) -> dict[str, Any]:
    """Ask the model for the next turn.

    Raises:
        ProviderError: The provider failed after its retries; the thread can be resumed.
        PlatformError: The model cannot be set up (unknown platform, missing key, script).
    """
    services = services_of(runtime)
    bus = services.bus
    messages = state["messages"]
    cited = _cited_turn(state, services)
    declaring = set(services.tools_marked(DECLARES_TASK))
    # the declaration is no step of the work: its first try does not use up one of
    # max_iterations (a model that does not declare when told to still counts every turn)
    declaring_turn = cited is not None and cited[1] is not None and set(cited[1]) <= declaring
    counted = not (declaring_turn and not _replied(messages))
    iteration = state.get("iteration", 0) + int(counted)
    bus.emit(Event.BEFORE_MODEL_CALL, {"iteration": iteration, "message_count": len(messages)})
    choice: Literal["auto", "none", "required"]
    if cited is not None:
        choice, only = cited
    else:
        choice = _tool_choice(state)
        only = _asked(state, services, choice)
    # a declaration is one call: the reply ends with it
    one = bool(only) and set(only or ()) <= declaring
    response = _invoke(services, messages, state.get("selected_tools"), choice, only, one)
    settings = services.settings
    response = _refuse_unparsed_calls(_reject_truncated_calls(response))
    response = _bound_calls(
        response, settings.max_tool_calls_per_reply, settings.max_tool_argument_bytes
    )
    bus.emit(
        Event.AFTER_MODEL_CALL,
        {
            "iteration": iteration,
            "tool_calls": [c["name"] for c in response.tool_calls],
            "text_chars": len(text_of(response)),
        },
    )
    return {"messages": [response], "iteration": iteration}


def _invoke(
    services: RunServices,
    messages: list[Any],
    selected: list[str] | None,
    choice: Literal["auto", "none", "required"],
    only: list[str] | None,
    one: bool,
) -> AIMessage:
    """One request to the run's model; a provider's failure becomes a ``ProviderError``."""
    model = services.model("normal", selected, choice, only, one)
    with counting_requests() as sent:
        try:
            response = model.invoke(messages)
        except (GraphBubbleUp, PlatformError):
            raise
        except Exception as exc:
            raise ProviderError(_describe_provider_error(exc, services, sent[0])) from exc
    return response


def _cited_turn(
    state: AgentState, services: RunServices
) -> tuple[Literal["auto", "none", "required"], list[str] | None] | None:
    """What this turn may do when answers are cited (``None``: they are not).

    The task's declaration comes first (a call). Then the first step is a call too, unless
    the task was declared a question of general knowledge: a reply in words before any
    step is a plan or an answer from memory, never one from the workspace. Then the model
    calls tools or answers in words, and the review locates the answer's cites. After a
    review's notice the problem's fields decide: the tools it allows (a call is then
    required), or the answer alone. After a refused repeat the results are above: the
    turn answers.
    """
    declaring = services.tools_marked(DECLARES_TASK)
    if not declaring:
        return None
    messages = state["messages"]
    declared = declared_of(messages, declaring)
    if declared is None:
        return "required", declaring
    # declared: the declaration is not offered again (a small model repeats it)
    rest = [n for n in services.tools if n not in declaring]
    problem = next_turn(state)
    if problem is not None:
        if problem.answer_only:
            return "none", None
        return "required", list(problem.tools_allowed) if problem.tools_allowed else rest
    if refused_repeats(messages):
        return "none", None
    if declared.get("answer") != "general_knowledge" and not _stepped(messages, declaring):
        return "required", rest
    return "auto", rest


def _replied(messages: list[Any]) -> bool:
    """Whether the model replied since the latest task message."""
    start = task_start(messages)
    return any(getattr(m, "type", "") == "ai" for m in messages[start + 1 :])


def _stepped(messages: list[Any], declaring: list[str]) -> bool:
    """Whether the latest task made a call other than its declaration."""
    start = task_start(messages)
    return any(
        c["name"] not in declaring
        for m in messages[start + 1 :]
        for c in getattr(m, "tool_calls", None) or []
    )


def _asked(
    state: AgentState, services: RunServices, choice: Literal["auto", "none", "required"]
) -> list[str] | None:
    """The tools this turn may call, when the last notice decides them (else any offered).

    After the check's notice: the tools it names. On the turn that must call after a
    model wrote the same call as text twice: the tool it wrote (it wrote ``read_code``;
    made to call, a small model otherwise picks another tool at random).
    """
    selected = state.get("selected_tools")
    messages = state["messages"]
    last = getattr(messages[-1], "name", None) if messages else None
    pool = [n for n in services.tools if selected is None or n in selected]
    if last == CHECK_NAME:
        return tools_asked_for(state.get("answer_problems") or [], pool)
    if last == CORRECTION_NAME and choice == "required" and len(messages) >= 2:
        written = tool_in_text(text_of(messages[-2]), pool)
        return [written] if written else None
    return None


def _tool_choice(state: AgentState) -> Literal["auto", "none", "required"]:
    """What this turn may do.

    - ``none``: a repeat was refused. Asked again, a small model repeats it once more or
      calls something else at random; the results it needs are above, so this turn must
      answer (the answer check then holds the answer to them). Also after a notice of the
      answer check that needs no tool: a file the task names is not there, say so.
    - ``required``: the answer check just sent its notice. What it found missing is
      evidence, which only a tool gets; answered freely, a small model gives the same
      answer again. Also after a second notice that a reply wrote a tool call as text:
      the model means to call, and wrote the same prose again after the first notice.
    """
    messages = state["messages"]
    if refused_repeats(messages):
        return "none"
    last = getattr(messages[-1], "name", None) if messages else None
    if last == CHECK_NAME:
        return "none" if answer_only(state.get("answer_problems") or []) else "required"
    if last == CORRECTION_NAME and corrections_in_a_row(messages) >= 2:
        return "required"
    return "auto"


def _describe_provider_error(exc: Exception, services: RunServices, sent: int) -> str:
    """What failed, said as it happened: the requests actually sent, not the retry budget."""
    spec = services.settings.model_for("normal")
    status = getattr(exc, "status_code", None)
    where = redact_url(spec.base_url) if spec.base_url else "the provider's default endpoint"
    what = f"HTTP {status}" if status else type(exc).__name__
    rejected = status is not None and 400 <= status < 500 and status not in (408, 409, 429)
    verb = "was rejected" if rejected else "failed"
    if sent == 0:  # no request counted: not sent at all, or a platform without HTTP
        how = "failed before any request was sent" if resolve_platform(spec) == "openai" else verb
    elif sent == 1:
        how = f"{verb} after 1 request"
    else:
        retries = "1 retry" if sent == 2 else f"{sent - 1} retries"
        how = f"{verb} after {sent} requests (the first and {retries})"
    # the provider's own text may quote the URL it was given, userinfo and all
    reason = redact_urls(str(exc)).strip().rstrip(".") or "no details given"  # we add the period
    return (
        f"the model call {how} ({what} from {where}, model {spec.model!r}): {reason}. "
        "The session is saved; resume it once the problem is fixed."
    )


def _reject_truncated_calls(response: AIMessage) -> AIMessage:
    """Tool calls of a reply that was cut off must not run with repaired arguments.

    Cut off is what :func:`~jarvis_graph.platforms.finish.cut_off` says: the output-token
    limit, the provider's content filter, or a stream that ended without a finish reason.
    """
    how = cut_off(response)
    if how is None or not response.tool_calls:
        return response
    cut = f"the reply was cut off {how}; arguments are incomplete"
    invalid = [_invalid(c["name"], c["args"], c["id"], cut) for c in response.tool_calls]
    return response.model_copy(
        update={"tool_calls": [], "invalid_tool_calls": [*response.invalid_tool_calls, *invalid]}
    )


def _refuse_unparsed_calls(response: AIMessage) -> AIMessage:
    """Calls whose arguments, as received, are not exactly one JSON object become invalid.

    LangChain parses streamed arguments with a forgiving partial-JSON parser (a cut
    ``{"script": "touch x`` becomes ``{"script": "touch x"}``). The ``openai`` platform
    keeps the strings it received under ``RAW_TOOL_CALLS``; they are checked here, and
    dropped from the message (they would only double the stored history). Platforms that
    parse their own replies exactly (text protocol, scripted) send none; the local platform
    sends its unparsable replies with the reason.
    """
    extra = dict(response.additional_kwargs or {})
    raw_calls = extra.pop(RAW_TOOL_CALLS, None)
    if not isinstance(raw_calls, list):
        return response
    raw_args = {c.get("id"): c.get("arguments") for c in raw_calls if isinstance(c, dict)}
    # A platform that already knows a reply did not parse says why (the local model).
    known = {c.get("id"): c["error"] for c in raw_calls if isinstance(c, dict) and c.get("error")}
    good: list[Any] = []
    bad: list[Any] = []
    for call in response.tool_calls:
        raw = raw_args.get(call["id"])
        args, error = parse_arguments(raw) if isinstance(raw, str) else (call["args"], None)
        error = known.get(call["id"], error)
        if error is None:
            good.append({**call, "args": args})
        else:
            bad.append(_invalid(call["name"], raw, call["id"], error))
    for rejected in response.invalid_tool_calls:  # LangChain's own: say exactly why
        raw = raw_args.get(rejected["id"], rejected.get("args"))
        error = known.get(rejected["id"]) or (
            parse_arguments(raw)[1] if isinstance(raw, str) else None
        )
        bad.append(_invalid(rejected["name"], raw, rejected["id"], error or rejected["error"]))
    update = {"tool_calls": good, "invalid_tool_calls": bad, "additional_kwargs": extra}
    return response.model_copy(update=update)


def _bound_calls(response: AIMessage, max_calls: int, max_bytes: int) -> AIMessage:
    """Calls past ``max_calls`` in one reply, or with arguments over ``max_bytes``, are refused.

    A reply is untrusted input: ten thousand calls, or one call carrying megabytes, would
    otherwise all run (and their arguments travel with every later request). Refused calls
    stay in the message, answered with the reason, so the model learns what did not run;
    their arguments are kept only as a short preview.
    """
    calls = [*response.tool_calls, *response.invalid_tool_calls]
    sizes = [_size(c.get("args")) for c in calls]
    if len(calls) <= max_calls and max(sizes, default=0) <= max_bytes:
        return response
    good: list[Any] = []
    bad: list[Any] = []
    for index, (call, size) in enumerate(zip(calls, sizes, strict=True)):
        if size > max_bytes:
            error = (
                f"its arguments are {size:,} bytes, more than the {max_bytes:,} a call may "
                "carry (max_tool_argument_bytes); split the work into smaller calls"
            )
        elif index >= max_calls:
            error = (
                f"this reply holds {len(calls)} tool calls and only the first {max_calls} run "
                "(max_tool_calls_per_reply), so this one was not run; if it is still needed, "
                "make it in a later reply"
            )
        else:  # within the bounds: as it was
            (good if index < len(response.tool_calls) else bad).append(call)
            continue
        bad.append(_invalid(call["name"], _preview(call.get("args")), call["id"], error))
    return response.model_copy(update={"tool_calls": good, "invalid_tool_calls": bad})


def _size(args: Any) -> int:
    """Bytes of a call's arguments as JSON (a string as received: the raw text)."""
    text = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False, default=str)
    return len(text.encode("utf-8", errors="replace"))


PREVIEW_CHARS = 200
"""Characters of a refused call's arguments kept in the history."""


def _preview(args: Any) -> str:
    text = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False, default=str)
    if len(text) <= PREVIEW_CHARS:
        return text
    return f"{text[:PREVIEW_CHARS]}… ({len(text):,} characters, not kept)"


def _invalid(name: str | None, args: Any, call_id: str | None, error: str | None) -> dict:
    return {
        "type": "invalid_tool_call",
        "name": name,
        "args": args if isinstance(args, str) else json.dumps(args),
        "id": call_id,
        "error": error,
    }


def needs_human(call: dict[str, Any], services: RunServices) -> bool:
    """Whether a pending tool call must be confirmed, or answered, by the user.

    Confirmation follows the confirm mode even in non-interactive runs (``confirm_tools``
    then declines the call instead of asking); questions need someone to answer them. A
    write to a protected path (:mod:`jarvis_graph.tools.protected`) is confirmed in every
    mode.
    """
    if call.get("invalid"):
        return False
    tool = services.tools.get(call["name"])
    if tool is None:
        return False
    if asks_user(tool):
        return not services.context.non_interactive
    if protected_targets(tool, call.get("args"), services.workspace, services.settings):
        return True  # Jarvis' own files: asked even under ``confirm: never`` (see .protected)
    mode = services.settings.confirm
    if mode == "sandboxed":
        args = call.get("args")
        return is_risky(tool, args) and not sandbox.contains(
            tool.metadata or {}, args, services.settings
        )
    return mode == "always" or (mode == "risky" and is_risky(tool, call.get("args")))


def route_after_model(
    state: AgentState, runtime: Runtime[JarvisContext]
) -> Literal[
    "confirm_tools",
    "run_tools",
    "correct_call_text",
    "ask_user",
    "focus_answer",
    "check_answer",
    "review_answer",
    "complete_task",
]:
    """Tool calls -> confirm or run them; otherwise finish or ask for the next instruction.

    A reply that holds a tool call written as text goes back to the model with a
    correction, at most ``MAX_CORRECTIONS`` times; then ``complete_task`` says so. A final
    answer goes through ``check_answer`` first when the run checks its answers; one that
    was cut off (:func:`~jarvis_graph.platforms.finish.cut_off`) is no answer: the run
    ends ``truncated``.
    """
    services = services_of(runtime)
    messages = state["messages"]
    pending = pending_tool_calls(messages)
    capped = state.get("iteration", 0) >= state.get("max_iterations", 1 << 30)
    if pending:
        if capped:
            return "complete_task"
        return "confirm_tools" if any(needs_human(c, services) for c in pending) else "run_tools"
    if cut_off(messages[-1]):
        return "complete_task"  # no answer, and no question either: said so, in every mode
    text = text_of(messages[-1])
    if call_in_text(text, services.tools):
        more = corrections_in_a_row(messages) < MAX_CORRECTIONS
        return "correct_call_text" if more and not capped else "complete_task"
    reviewed = bool(reviewers(services))
    if services.context.non_interactive or has_complete_marker(text) or reviewed:
        # An answer given on the last allowed call is checked too (the check sends no
        # notice then: the run ends ``unverified`` when the answer has problems).
        if reviewed:
            return "review_answer"
        if focus_enabled(services) and not capped:
            return "focus_answer"
        return "check_answer" if check_enabled(services) else "complete_task"
    return "ask_user"
