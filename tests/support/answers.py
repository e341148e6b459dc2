"""A task's ``state_task`` declaration as a scripted model calls it (cited answers)."""

from __future__ import annotations

from typing import Any


def declare(answer: str = "value", call_id: str | None = None, **needs: bool) -> dict[str, Any]:
    """The declaration call: the kind of answer asked, and what the task needs done.

    ``needs`` sets any of ``asks_to_run_a_program``, ``asks_to_change_files`` and
    ``asks_to_remember`` (all false otherwise).
    """
    args = {
        "answer": answer,
        "asks_to_run_a_program": False,
        "asks_to_change_files": False,
        "asks_to_remember": False,
        **needs,
    }
    call: dict[str, Any] = {"name": "state_task", "args": args}
    if call_id is not None:
        call["id"] = call_id
    return call
