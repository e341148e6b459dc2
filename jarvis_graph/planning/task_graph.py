"""A dependency-aware executor for tool-level plans (no framework imports).

A task names a tool, its arguments and the tasks it depends on. An argument string may
reference an earlier result as ``${<task id>.result}`` (a reference is also a dependency).
Ready tasks run in parallel; a task whose dependency did not succeed is not run and says
which dependency stopped it. Problems with the plan itself (unknown tasks, bad references,
cycles) are found before anything runs and raised as :class:`TaskGraphError`.
"""

from __future__ import annotations

import contextvars
import re
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

REFERENCE = re.compile(r"\$\{([^}]*)\}")
ID = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")

Call = Callable[[str, dict[str, Any]], tuple[bool, str]]
"""Runs one tool: ``(tool name, arguments) -> (succeeded, text)``."""


class TaskGraphError(ValueError):
    """The plan cannot run as written; the message says what to change."""


@dataclass(frozen=True)
class Task:
    """One tool call of a plan."""

    id: str
    tool: str
    args: dict[str, Any] = field(default_factory=dict)
    depends_on: tuple[str, ...] = ()


@dataclass(frozen=True)
class Outcome:
    """What became of a task: ``succeeded``, ``failed`` or ``skipped`` (with the reason)."""

    id: str
    status: str
    result: str


def parse_tasks(raw: Sequence[Mapping[str, Any]], tools: set[str] | None = None) -> list[Task]:
    """Check a plan and turn it into tasks (references become dependencies).

    Raises:
        TaskGraphError: A task has a bad id, an unknown tool or dependency, a bad
            reference, or the dependencies form a cycle.
    """
    ids = [str(item.get("id", "")) for item in raw]
    tasks = []
    for item, tid in zip(raw, ids, strict=True):
        if not ID.match(tid) or ids.count(tid) > 1:
            why = "is used twice" if ids.count(tid) > 1 else "must be a name like task_1"
            msg = f"task id {tid!r} {why}"
            raise TaskGraphError(msg)
        tool = str(item.get("tool", ""))
        if tools is not None and tool not in tools:
            msg = f"task {tid!r} calls unknown tool {tool!r}; tools: {', '.join(sorted(tools))}"
            raise TaskGraphError(msg)
        args = item.get("args") or {}
        deps = [str(d) for d in item.get("depends_on") or []]
        for dep in deps:
            if dep not in ids or dep == tid:
                known = ", ".join(ids)
                msg = f"task {tid!r} depends on {dep!r}, which is not another task; tasks: {known}"
                raise TaskGraphError(msg)
        deps += [r for r in _references(tid, args, ids) if r not in deps]
        tasks.append(Task(tid, tool, dict(args), tuple(deps)))
    _check_acyclic(tasks)
    return tasks


def _references(tid: str, value: Any, ids: list[str]) -> list[str]:
    """Task ids referenced in ``value`` (nested strings included)."""
    if isinstance(value, dict):
        return [r for v in value.values() for r in _references(tid, v, ids)]
    if isinstance(value, list):
        return [r for v in value for r in _references(tid, v, ids)]
    if not isinstance(value, str):
        return []
    found = []
    for ref in REFERENCE.findall(value):
        name, _, attr = ref.partition(".")
        if attr != "result" or name not in ids or name == tid:
            msg = (
                f"task {tid!r} has a bad reference ${{{ref}}}: write ${{<task id>.result}} with "
                f"the id of another task ({', '.join(i for i in ids if i != tid) or 'none'})"
            )
            raise TaskGraphError(msg)
        found.append(name)
    return found


def _check_acyclic(tasks: list[Task]) -> None:
    done: set[str] = set()
    pending = {t.id: set(t.depends_on) for t in tasks}
    while pending:
        free = [tid for tid, deps in pending.items() if deps <= done]
        if not free:
            msg = f"the tasks {', '.join(sorted(pending))} depend on each other in a cycle"
            raise TaskGraphError(msg)
        for tid in free:
            done.add(tid)
            del pending[tid]


def substitute(value: Any, results: Mapping[str, str]) -> Any:
    """``value`` with every ``${id.result}`` replaced by that task's result text."""
    if isinstance(value, dict):
        return {k: substitute(v, results) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, results) for v in value]
    if isinstance(value, str):
        return REFERENCE.sub(lambda m: results[m.group(1).partition(".")[0]], value)
    return value


def run_tasks(tasks: list[Task], call: Call, max_workers: int = 4) -> dict[str, Outcome]:
    """Run the tasks, ready ones in parallel; returns every task's outcome by id."""
    outcomes: dict[str, Outcome] = {}
    running: dict[Future[tuple[bool, str]], Task] = {}
    with ThreadPoolExecutor(max_workers=max_workers) as pool:
        while len(outcomes) < len(tasks):
            for task in tasks:
                if task.id in outcomes or task in running.values():
                    continue
                blocker = next(
                    (
                        d
                        for d in task.depends_on
                        if d in outcomes and outcomes[d].status != "succeeded"
                    ),
                    None,
                )
                if blocker is not None:
                    why = f"not run: it depends on {blocker!r}, which {outcomes[blocker].status}"
                    outcomes[task.id] = Outcome(task.id, "skipped", why)
                elif all(d in outcomes for d in task.depends_on):
                    results = {d: outcomes[d].result for d in task.depends_on}
                    args = substitute(task.args, results)
                    # each call sees the caller's context variables (the run it belongs to)
                    run = contextvars.copy_context().run
                    running[pool.submit(run, call, task.tool, args)] = task
            if not running:
                continue  # only skips happened this pass; look again
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                task = running.pop(future)
                ok, text = future.result()
                outcomes[task.id] = Outcome(task.id, "succeeded" if ok else "failed", text)
    return outcomes


def report(tasks: list[Task], outcomes: Mapping[str, Outcome]) -> str:
    """The outcomes as text for the model, in plan order."""
    return "\n\n".join(
        f"[{t.id}] {t.tool}: {outcomes[t.id].status}\n{outcomes[t.id].result.strip()}"
        for t in tasks
    )
