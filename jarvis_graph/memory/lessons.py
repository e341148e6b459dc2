"""Lessons, patterns and preferences: what earlier feedback and requests teach later runs.

- A **lesson** (``tags: [lesson, <kind>]``, project memory) is written when a task was
  rated low: what went wrong and what to do instead.
- A **pattern** (``tags: [pattern, <kind>]``, project memory) is written when a task was
  rated high: the approach and tool sequence that worked.
- A **preference** (``tags: [preference]``, global memory) is a standing request the user
  made in a task ("always answer in Chinese", "use pytest, not unittest").

:func:`lessons_for` finds the lessons and patterns of tasks like a new one (by the
embedder's similarity to the task they came from); :func:`preferences` lists the saved
preferences. Both are shown in the system prompt; ``jarvis memory list --tag lesson``
(``pattern``, ``preference``) shows them and ``jarvis memory clear --tag ...`` removes them.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from langgraph.store.base import BaseStore

from jarvis_graph.memory.records import new_record
from jarvis_graph.memory.tiers import MemoryTiers

LESSON_TAGS = ("lesson", "pattern")
MIN_SIMILARITY = 0.45
"""Cosine (MiniLM) between a new task and a lesson's task above which the lesson is shown."""
MAX_LESSONS = 3
MAX_PREFERENCES = 10

_PREFERENCE = re.compile(
    r"(?:^|(?<=[.!?;\n]))\s*(?P<text>(?:(?:please\s+)?(?:always|never|from now on),?\s"
    r"|i\s+(?:always\s+)?(?:prefer|want you to|like you to)\b"
    r"|(?:please\s+)?use\s+[\w+#-]+(?:\.[\w+#-]+)*(?:\s+\w+)?\s*,?\s+not\s+"
    r"[\w+#-]+(?:\.[\w+#-]+)*)[^.!?\n]*)",
    re.IGNORECASE,
)
"""A sentence of standing request: "always ...", "never ...", "from now on ...", "I prefer
...", "use X, not Y"."""


def preference_sentences(task: str) -> list[str]:
    """The sentences of ``task`` that state a standing preference."""
    found = []
    for match in _PREFERENCE.finditer(task):
        if task[match.end() : match.end() + 1] == "?":
            continue  # a question, not a request
        text = " ".join(match.group("text").split()).rstrip(",;: ")
        if 8 <= len(text) <= 300:
            found.append(text[0].upper() + text[1:])
    return found


def save_preferences(task: str, workspace: Path, store: BaseStore | None = None) -> list[str]:
    """Save the preferences ``task`` states (not already saved); the new ones."""
    sentences = preference_sentences(task)
    if not sentences:
        return []
    tiers = MemoryTiers(workspace, store=store)
    known = {r["content"].lower() for r in tiers.records(["global_long_term"], ["preference"])}
    new = [s for s in dict.fromkeys(sentences) if s.lower() not in known]
    if new:
        tiers.save([new_record("global_long_term", ["preference"], s) for s in new])
    return new


def preferences(workspace: Path, store: BaseStore | None = None) -> list[str]:
    """The saved preferences, newest first."""
    records = MemoryTiers(workspace, store=store).records(["global_long_term"], ["preference"])
    return [r["content"] for r in records[:MAX_PREFERENCES]]


def lesson_record(kind: str, task: str, text: str, lesson: bool) -> dict[str, Any]:
    """A lesson (``lesson=True``) or pattern record for the project's memory."""
    label = "Lesson" if lesson else "What worked"
    content = f"{label} from the task {task!r}: {text.strip()}"
    tags = ["lesson" if lesson else "pattern", kind]
    record = new_record("project_long_term", tags, content)
    record["from_task"] = task
    return record


def lessons_for(
    task: str, workspace: Path, store: BaseStore | None = None, limit: int = MAX_LESSONS
) -> list[str]:
    """The lessons and patterns of earlier tasks similar to ``task``, closest first."""
    tiers = MemoryTiers(workspace, store=store)
    if not tiers.records(["project_long_term"], list(LESSON_TAGS)):
        return []  # nothing learned yet: no need to embed the task
    namespace = tiers.namespace("project_long_term")
    found = []
    for item in tiers.store.search(namespace, query=task, limit=50):
        tags = set(item.value.get("tags", []))
        if tags & set(LESSON_TAGS) and (item.score or 0.0) >= MIN_SIMILARITY:
            found.append((item.score or 0.0, str(item.value.get("content", ""))))
    found.sort(key=lambda pair: -pair[0])
    return [content for _, content in found[:limit]]
