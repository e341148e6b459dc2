"""The Jarvis run loop as a StateGraph.

START -> start_task -> filter_tools (passes through when tools are few) -> call_model
call_model -> route_after_model
  tool calls         -> confirm_tools (when the user must confirm or answer) -> run_tools
  no tool call       -> review_answer (a feature reviews answers: cited answers)
                        | focus_answer (focused answers on) | check_answer (answer check
                        on) | complete_task (marker, or non-interactive) | ask_user
focus_answer -> check_answer (answer check on) | complete_task
  call written as text -> correct_call_text -> call_model (twice at most, then complete_task)
  iteration cap hit  -> complete_task
  reply cut off      -> complete_task (status "truncated": no answer, in every mode)
check_answer -> call_model (the answer is not supported by the evidence; bounded retries)
             | complete_task (passed, or no retries left: status "unverified")
review_answer -> call_model (a review found a problem; bounded retries) | complete_task
run_tools -> route_after_tools -> summarize_history (over budget) | call_model
            | focus_answer (every call of the turn refused as a repeat, focused answers on,
                            non-interactive: the model is stuck and its results are above)
summarize_history -> call_model
complete_task -> analyze_task (use_analysis, completed) | END;  analyze_task -> END
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from jarvis_graph.context import JarvisContext
from jarvis_graph.nodes.ask_user import ask_user
from jarvis_graph.nodes.call_model import call_model, route_after_model
from jarvis_graph.nodes.call_text import correct_call_text
from jarvis_graph.nodes.check_answer import check_answer, route_after_check
from jarvis_graph.nodes.complete_task import complete_task, route_after_complete_task
from jarvis_graph.nodes.confirm_tools import confirm_tools, route_after_confirm_tools
from jarvis_graph.nodes.filter_tools import filter_tools
from jarvis_graph.nodes.focus_answer import focus_answer, route_after_focus
from jarvis_graph.nodes.methodology_steps import analyze_task
from jarvis_graph.nodes.review_answer import review_answer, route_after_review
from jarvis_graph.nodes.run_tools import route_after_tools, run_tools
from jarvis_graph.nodes.start_task import start_task
from jarvis_graph.nodes.summarize_history import summarize_history
from jarvis_graph.state import AgentInput, AgentOutput, AgentState

RECURSION_LIMIT = 1000
"""Safety net only: the iteration cap in state ends runs long before this."""


def build_agent_graph() -> StateGraph[AgentState, JarvisContext, AgentInput, AgentOutput]:
    """The uncompiled agent graph (callers choose checkpointer and store)."""
    builder = StateGraph(
        AgentState,
        context_schema=JarvisContext,
        input_schema=AgentInput,
        output_schema=AgentOutput,
    )
    builder.add_node("start_task", start_task)
    builder.add_node("filter_tools", filter_tools)
    builder.add_node("call_model", call_model)
    builder.add_node("correct_call_text", correct_call_text)
    builder.add_node("confirm_tools", confirm_tools)
    builder.add_node("run_tools", run_tools)
    builder.add_node("summarize_history", summarize_history)
    builder.add_node("ask_user", ask_user, destinations=("call_model", "complete_task"))
    builder.add_node("focus_answer", focus_answer)
    builder.add_node("check_answer", check_answer)
    builder.add_node("review_answer", review_answer)
    builder.add_node("complete_task", complete_task)
    builder.add_node("analyze_task", analyze_task)
    builder.add_edge(START, "start_task")
    builder.add_edge("start_task", "filter_tools")
    builder.add_edge("filter_tools", "call_model")
    builder.add_conditional_edges("call_model", route_after_model)
    builder.add_edge("correct_call_text", "call_model")
    builder.add_conditional_edges("confirm_tools", route_after_confirm_tools)
    builder.add_conditional_edges("run_tools", route_after_tools)
    builder.add_edge("summarize_history", "call_model")
    builder.add_conditional_edges("focus_answer", route_after_focus)
    builder.add_conditional_edges("check_answer", route_after_check)
    builder.add_conditional_edges("review_answer", route_after_review)
    builder.add_conditional_edges("complete_task", route_after_complete_task)
    builder.add_edge("analyze_task", END)
    return builder


graph = build_agent_graph().compile(name="agent")
