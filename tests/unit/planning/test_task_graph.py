"""The task graph executor: parallel ready tasks, references, failure propagation, errors."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from jarvis_graph.planning.task_graph import TaskGraphError, parse_tasks, report, run_tasks


def _recording_call(fail: set[str] = frozenset(), delay: float = 0.0):  # type: ignore[assignment]
    calls: list[tuple[str, dict[str, Any]]] = []
    active = {"now": 0, "max": 0}
    lock = threading.Lock()

    def call(tool: str, args: dict[str, Any]) -> tuple[bool, str]:
        with lock:
            calls.append((tool, args))
            active["now"] += 1
            active["max"] = max(active["max"], active["now"])
        time.sleep(delay)
        with lock:
            active["now"] -= 1
        if args.get("name") in fail:
            return False, f"Error: {args['name']} exploded"
        return True, f"<{args.get('name', '')}>"

    return call, calls, active


def test_ready_tasks_run_in_parallel_and_references_are_filled_in() -> None:
    tasks = parse_tasks(
        [
            {"id": "a", "tool": "echo", "args": {"name": "A"}},
            {"id": "b", "tool": "echo", "args": {"name": "B"}},
            {"id": "c", "tool": "echo", "args": {"name": "C", "text": "${a.result}+${b.result}"}},
        ]
    )
    assert tasks[2].depends_on == ("a", "b")  # references are dependencies
    call, calls, active = _recording_call(delay=0.2)
    outcomes = run_tasks(tasks, call)
    assert active["max"] == 2  # a and b at the same time, then c
    assert calls[-1] == ("echo", {"name": "C", "text": "<A>+<B>"})
    assert {o.status for o in outcomes.values()} == {"succeeded"}
    assert report(tasks, outcomes).startswith("[a] echo: succeeded\n<A>")


def test_a_failure_propagates_to_dependants_with_the_reason() -> None:
    tasks = parse_tasks(
        [
            {"id": "a", "tool": "t", "args": {"name": "A"}},
            {"id": "b", "tool": "t", "args": {"name": "B"}, "depends_on": ["a"]},
            {"id": "c", "tool": "t", "args": {"name": "C", "x": "${b.result}"}},
            {"id": "d", "tool": "t", "args": {"name": "D"}},
        ]
    )
    call, calls, _ = _recording_call(fail={"A"})
    outcomes = run_tasks(tasks, call)
    assert outcomes["a"].status == "failed" and "A exploded" in outcomes["a"].result
    assert outcomes["b"].result == "not run: it depends on 'a', which failed"
    assert outcomes["c"].result == "not run: it depends on 'b', which skipped"
    assert outcomes["d"].status == "succeeded"
    assert sorted(args["name"] for _, args in calls) == ["A", "D"]


@pytest.mark.parametrize(
    ("tasks", "message"),
    [
        (
            [{"id": "a", "tool": "t", "args": {"p": "${task_9.result}"}}],
            "task 'a' has a bad reference ${task_9.result}",
        ),
        (
            [{"id": "a", "tool": "t"}, {"id": "b", "tool": "t", "args": {"p": "${a.output}"}}],
            "bad reference ${a.output}: write ${<task id>.result}",
        ),
        ([{"id": "a", "tool": "t", "depends_on": ["zz"]}], "depends on 'zz', which is not"),
        ([{"id": "a", "tool": "nope"}], "task 'a' calls unknown tool 'nope'; tools: t"),
        ([{"id": "a", "tool": "t"}, {"id": "a", "tool": "t"}], "task id 'a' is used twice"),
        (
            [
                {"id": "a", "tool": "t", "depends_on": ["b"]},
                {"id": "b", "tool": "t", "depends_on": ["a"]},
            ],
            "the tasks a, b depend on each other in a cycle",
        ),
    ],
)
def test_a_bad_plan_is_a_clear_error_before_anything_runs(
    tasks: list[dict[str, Any]], message: str
) -> None:
    with pytest.raises(TaskGraphError) as err:
        parse_tasks(tasks, tools={"t"})
    assert message in str(err.value)
