"""Lessons: what feedback and standing requests taught, shown to later runs.

The system prompt gets the lessons and patterns of earlier tasks similar to this one (from
ratings, :mod:`jarvis_graph.runtime.feedback`) and the user's saved preferences; a task
that states a standing preference ("always ...", "use pytest, not unittest") has it saved
when it starts (see :mod:`jarvis_graph.memory.lessons`).
"""

from __future__ import annotations

from typing import Any

from jarvis_graph.events import Event, Subscriber
from jarvis_graph.features.base import Feature, RunSetup
from jarvis_graph.memory.lessons import lessons_for, preferences, save_preferences
from jarvis_graph.memory.records import MemoryStoreError


class Lessons(Feature):
    """Adds the lessons section to the prompt and saves stated preferences."""

    name = "lessons"

    def context_section(self, setup: RunSetup, task: str) -> str:
        """Preferences, then lessons from similar tasks ("" when there are none)."""
        try:
            saved = preferences(setup.workspace, setup.store)
            learned = lessons_for(task, setup.workspace, setup.store) if task else []
        except MemoryStoreError:
            return ""  # the memory section says memory is unavailable
        lines = []
        if saved:
            lines.append("User preferences (keep to them):")
            lines += [f"- {p}" for p in saved]
        if learned:
            lines.append("Lessons from earlier tasks like this one:")
            lines += [f"- {lesson}" for lesson in learned]
        return "\n".join(lines) + "\n" if lines else ""

    def subscribers(self, setup: RunSetup) -> list[tuple[Event, Subscriber]]:
        """Save the preferences a task states, when it starts."""

        def on_start(_event: Event, payload: dict[str, Any]) -> None:
            task = str(payload.get("task") or "")
            if task and setup.context.depth == 0:
                save_preferences(task, setup.workspace, setup.store)

        return [(Event.TASK_STARTED, on_start)]
