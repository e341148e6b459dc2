"""Choosing methodologies for a task, and finding new ones after a task (plain functions)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from jarvis_graph.methodology.store import Methodology, MethodologyError, checked
from jarvis_graph.tools.tool_filter import pick_numbers

MAX_OFFERED = 50
"""Problem types listed to the model (the most recent folders first)."""

SELECT_PROMPT = """Task:
{task}

Methodologies (ways of solving kinds of problems that worked before):
{listing}

Which methodologies are relevant to this task? Reply with their numbers separated by commas,
or 0 if none is relevant. Numbers only."""

ANALYSIS_PROMPT = """An agent has just finished a task. Decide whether the work shows a reusable
methodology: a way of solving this kind of problem that would help next time (steps, tools,
pitfalls). Routine one-off answers are not methodologies.
{feedback}
Reply with NONE, or with one JSON object and nothing else:
{{"problem_type": "<short name of the kind of problem>", "content": "<the methodology, as steps>"}}

The task and the conversation:
{transcript}"""


def select(
    task: str, records: Sequence[Methodology], ask: Callable[[list[tuple[str, str]]], Any]
) -> list[Methodology]:
    """The records the model picks for ``task``; none when it answers 0 or badly twice."""
    offered = list(records)[:MAX_OFFERED]
    if not offered:
        return []
    listing = "\n".join(f"{n}. {m.problem_type}" for n, m in enumerate(offered, 1))
    prompt = SELECT_PROMPT.format(task=task[:2000], listing=listing)
    messages = [("system", "You select methodologies. Reply with numbers only."), ("human", prompt)]
    picks = pick_numbers(messages, len(offered), ask, retries=1, zero_means_none=True)
    return [offered[i] for i in picks or []]


def prompt_section(selected: Sequence[Methodology]) -> str:
    """The text added to the system prompt for the selected methodologies."""
    if not selected:
        return ""
    parts = [f"### {m.problem_type}\n{m.content}" for m in selected]
    return (
        "\n\n## Methodologies\nThese worked before for similar problems; follow them where "
        "they fit:\n\n" + "\n\n".join(parts)
    )


def parse_analysis(answer: str) -> Methodology | None:
    """The methodology in an analysis answer, or ``None`` (NONE, or no valid JSON object)."""
    match = re.search(r"\{.*\}", answer, re.DOTALL)
    if match is None:
        return None
    try:
        data = json.loads(match.group(0))
        return checked(data.get("problem_type"), data.get("content"), "analysis answer")
    except (json.JSONDecodeError, AttributeError, MethodologyError):
        return None
