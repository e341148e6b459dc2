"""The tree of sub-runs of a session: planner steps, their agents, multi-agent turns.

A subgraph run keeps its checkpoints in the session's store under its own checkpoint
namespace (``run_step:<task id>|agent:<task id>``); the latest checkpoint of each namespace
says what that sub-run was asked and how it ended.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from jarvis_graph.cli.render import CHAIN_MARKS, clip


@dataclass(frozen=True)
class SubRun:
    """One sub-run: its namespace, nesting level and last saved values."""

    ns: str
    level: int
    node: str
    values: dict[str, Any]


def sub_runs(saver: Any, thread_id: str) -> list[SubRun]:
    """Every sub-run of ``thread_id``, parents before children, in start order."""
    latest: dict[str, Any] = {}
    first: dict[str, str] = {}
    for item in saver.list({"configurable": {"thread_id": thread_id}}):  # newest first
        ns = item.config["configurable"].get("checkpoint_ns", "")
        if not ns:
            continue
        latest.setdefault(ns, item)
        first[ns] = item.config["configurable"]["checkpoint_id"]
    runs = [
        SubRun(
            ns=ns,
            level=len(_levels(ns)),
            node=_label(_levels(ns)[-1].split(":", 1)[0]),
            values=dict(item.checkpoint.get("channel_values") or {}),
        )
        for ns, item in latest.items()
    ]

    # Order siblings by when they started; a child right after its parent.
    def key(run: SubRun) -> list[str]:
        parts = run.ns.split("|")
        return [first.get("|".join(parts[: i + 1]), "") for i in range(len(parts))]

    return sorted(runs, key=key)


NODE_LABELS = {"run_tools": "sub-agent"}
"""A run started by a tool (``sub_agent``, ``sub_code_agent``) is named for what it is."""


def _levels(ns: str) -> list[str]:
    """The nesting levels of a namespace: ``a:1|2`` (a node's second subgraph) is one."""
    levels: list[str] = []
    for part in ns.split("|"):
        if part.isdigit() and levels:
            levels[-1] += f"|{part}"
        else:
            levels.append(part)
    return levels


def _label(node: str) -> str:
    return NODE_LABELS.get(node, node)


def describe(run: SubRun, width: int = 90) -> str:
    """One line for a sub-run: node, status, what it was asked, how it answered."""
    values = run.values
    task = " ".join(str(values.get("task", "")).split())
    answer = " ".join(str(values.get("final_answer", "")).split())
    status = values.get("status", "running")
    messages = values.get("messages") or []
    calls = getattr(messages[-1], "tool_calls", None) or [] if messages else []
    sent = [c for c in calls if c.get("name") == "send_message"]
    if status == "running" and sent:  # the turn ended with a hand-off
        status = f"handed off to {sent[0].get('args', {}).get('to')}"
    line = f"{run.node} · {status}"
    if values.get("chain"):  # a tool chain's run: its steps, and what it returned
        steps = values.get("steps") or {}
        done = ", ".join(f"{sid} {r.get('status')}" for sid, r in steps.items())
        line = f"chain {values['chain']} · {status} · {done or 'no step ran'}"
        output = " ".join(str(values.get("output", "")).split())
        return line + (f" → {clip(output, width // 2)}" if output else "")
    if values.get("plan"):
        line += f" · plan of {len(values['plan'])} steps"
    if task:
        line += f" · {clip(task, width // 2)}"
    if answer:
        line += f" → {clip(answer, width // 2)}"
    return line


def chain_steps(values: dict[str, Any], width: int = 90) -> list[str]:
    """One line per step a chain run has reached: mark, id, status, what it returned."""
    lines = []
    for sid, result in (values.get("steps") or {}).items():
        status = str(result.get("status"))
        tries = f", {result['attempts']} attempts" if (result.get("attempts") or 0) > 1 else ""
        text = " ".join(str(result.get("result", "")).split())
        line = f"{CHAIN_MARKS.get(status, '?')} {sid} {status}{tries}"
        lines.append(line + (f" → {clip(text, width // 2)}" if text else ""))
    return lines
