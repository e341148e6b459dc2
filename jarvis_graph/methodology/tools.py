"""The ``methodology`` tool: the model adds, updates or deletes a methodology."""

from __future__ import annotations

from typing import Literal

from langchain_core.tools import BaseTool, tool

from jarvis_graph.methodology.store import MethodologyError, checked, delete, find, home_dir, save
from jarvis_graph.tools.base import ToolInputError


@tool(parse_docstring=True)
def methodology(
    action: Literal["add", "update", "delete"], problem_type: str, content: str = ""
) -> str:
    """Keep a reusable methodology: how to solve a kind of problem (steps, tools, pitfalls).

    Args:
        action: add a new methodology, update an existing one, or delete one.
        problem_type: Short name of the kind of problem, e.g. "fix a failing pytest test".
        content: The methodology, as steps (not needed to delete).
    """
    folder = home_dir()
    existing = find(folder, problem_type) if problem_type.strip() else None
    if action == "delete":
        if not delete(folder, problem_type):
            msg = f"there is no methodology {problem_type!r} to delete"
            raise ToolInputError(msg)
        return f"Deleted the methodology {problem_type!r}."
    try:
        record = checked(problem_type, content)
    except MethodologyError as exc:
        raise ToolInputError(str(exc)) from None
    if action == "add" and existing is not None:
        msg = f"a methodology {problem_type!r} exists already; use action=update to change it"
        raise ToolInputError(msg)
    if action == "update" and existing is None:
        msg = f"there is no methodology {problem_type!r} to update; use action=add"
        raise ToolInputError(msg)
    path = save(folder, record)
    return f"{'Added' if action == 'add' else 'Updated'} the methodology {problem_type!r} ({path})."


# Methodologies are chosen into the prompts of later tasks in every project (and a delete
# loses the user's own): every action is confirmed (``confirm: risky``; ``-n`` declines it).
methodology.metadata = {"risky": True}

METHODOLOGY_TOOLS: list[BaseTool] = [methodology]
