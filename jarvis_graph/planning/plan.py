"""Plans of sub-tasks: checks, readiness, failure propagation and the blocks written back.

Plain functions over plain dicts (``{"id", "task", "depends_on"}`` steps and
``{"id", "status", "answer", "depth"}`` results); no framework imports.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

Step = Mapping[str, Any]
Result = Mapping[str, Any]


def plan_problems(steps: Sequence[Step], done: Iterable[str] = ()) -> list[str]:
    """What is wrong with ``steps``: empty or repeated ids, unknown dependencies, cycles.

    Args:
        steps: The steps to check.
        done: Ids of steps that already ran (a dependency on them is fine).
    """
    known = set(done)
    problems: list[str] = []
    ids = [str(s.get("id") or "").strip() for s in steps]
    for sid in ids:
        if not sid:
            problems.append("a step has an empty id")
        elif ids.count(sid) > 1 or sid in known:
            problems.append(f"step id {sid!r} is used twice")
    all_ids = known | set(ids)
    for step in steps:
        if not str(step.get("task") or "").strip():
            problems.append(f"step {step.get('id')!r} has no task text")
        for dep in step.get("depends_on") or []:
            if dep not in all_ids:
                problems.append(f"step {step.get('id')!r} depends on unknown step {dep!r}")
    if not problems and _has_cycle(steps):
        problems.append("the steps' dependencies form a cycle")
    return problems


def _has_cycle(steps: Sequence[Step]) -> bool:
    ids = {str(s["id"]) for s in steps}
    deps = {str(s["id"]): set(s.get("depends_on") or []) & ids for s in steps}
    resolved: set[str] = set()
    while True:
        free = {sid for sid, d in deps.items() if sid not in resolved and d <= resolved}
        if not free:
            return len(resolved) < len(deps)
        resolved |= free


def ready_steps(steps: Sequence[Step], results: Mapping[str, Result]) -> list[Step]:
    """Steps not run yet whose dependencies all completed, in plan order."""
    return [
        s
        for s in steps
        if s["id"] not in results
        and all(results.get(d, {}).get("status") == "completed" for d in s.get("depends_on") or [])
    ]


def blocked_steps(
    steps: Sequence[Step], results: Mapping[str, Result], depth: int
) -> dict[str, dict[str, Any]]:
    """``skipped`` results for steps that can never run because a dependency did not complete.

    Propagates along chains: a step after a skipped step is skipped too, each naming the
    dependency that stopped it.
    """
    out: dict[str, dict[str, Any]] = {}
    changed = True
    while changed:
        changed = False
        for step in steps:
            sid = step["id"]
            if sid in results or sid in out:
                continue
            for dep in step.get("depends_on") or []:
                dep_result = out.get(dep) or results.get(dep)
                if dep_result and dep_result.get("status") != "completed":
                    reason = (
                        f"not run: it depends on step {dep!r}, which {dep_result['status']}"
                        f" ({_first_line(dep_result.get('answer', ''))})"
                    )
                    out[sid] = {"id": sid, "status": "skipped", "answer": reason, "depth": depth}
                    changed = True
                    break
    return out


def _first_line(text: str, limit: int = 160) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else "no details"
    return line if len(line) <= limit else line[: limit - 1] + "…"


def plan_block(steps: Sequence[Step]) -> str:
    """The ``<PLAN>`` block."""
    lines = [
        f"{n}. [{s['id']}] {s['task']}"
        + (f" (after {', '.join(s['depends_on'])})" if s.get("depends_on") else "")
        for n, s in enumerate(steps, 1)
    ]
    return "<PLAN>\n" + "\n".join(lines) + "\n</PLAN>"


def results_block(steps: Sequence[Step], results: Mapping[str, Result]) -> str:
    """The ``<SUB_TASK_RESULTS>`` block: each step's status and answer, in plan order."""
    parts = []
    for step in steps:
        result = results.get(step["id"]) or {"status": "skipped", "answer": "not run"}
        parts.append(f"[{step['id']}] {result['status']}\n{str(result['answer']).strip()}")
    return "<SUB_TASK_RESULTS>\n" + "\n\n".join(parts) + "\n</SUB_TASK_RESULTS>"


def summary_block(steps: Sequence[Step], results: Mapping[str, Result]) -> str:
    """The ``<RESULT_SUMMARY>`` block: counts, and what did not complete and why."""
    status = {s["id"]: (results.get(s["id"]) or {}).get("status", "skipped") for s in steps}
    done = sum(1 for v in status.values() if v == "completed")
    lines = [f"{done} of {len(steps)} steps completed."]
    for step in steps:
        if status[step["id"]] != "completed":
            answer = (results.get(step["id"]) or {}).get("answer", "not run")
            lines.append(f"- {step['id']} {status[step['id']]}: {_first_line(answer)}")
    if done < len(steps):
        lines.append("Say in the answer which parts could not be done.")
    return "<RESULT_SUMMARY>\n" + "\n".join(lines) + "\n</RESULT_SUMMARY>"


def step_brief(task: str, step: Step, plan: Sequence[Step], inputs: Mapping[str, Result]) -> str:
    """The task text a child run gets: its step, the overall task, its inputs."""
    lines = [
        str(step["task"]),
        "",
        f"This is step {step['id']} of a plan for the task: {task}",
        "Do only this step and answer with its result.",
    ]
    if inputs:
        lines += ["", "Results of the steps it builds on:"]
        lines += [f"[{sid}] {str(r['answer']).strip()}" for sid, r in inputs.items()]
    return "\n".join(lines)
