"""The picker at the start of ``jarvis chat``: an agent definition or a predefined task.

Shown when ``jarvis chat`` starts on a terminal with no session, no ``-c`` and
``chat_picker`` on: the agents, roles and teams of ``jarvis agents list`` and the tasks of
``jarvis tasks list`` in one numbered list (through ``fzf`` when it is installed). Enter
alone keeps the Jarvis agent and lets the user type the first task. A predefined task
asks for its placeholders, then for details to add, and becomes the first message.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from rich.markup import escape

from jarvis_graph.cli.driver import console
from jarvis_graph.config import ConfigError
from jarvis_graph.multi.definitions import AgentDefinition, load_definitions
from jarvis_graph.task_presets import TaskPreset, TaskPresetError, load_presets


@dataclass(frozen=True)
class Choice:
    """What the user picked: a definition to run, and the first task (``None``: typed)."""

    definition: AgentDefinition | None = None
    task: str | None = None


def _entries(workspace: Path) -> list[tuple[str, str, str, AgentDefinition | TaskPreset]]:
    entries: list[tuple[str, str, str, AgentDefinition | TaskPreset]] = []
    try:
        for d in load_definitions(workspace).values():
            entries.append((d.name, d.kind, d.description, d))
    except ConfigError as exc:
        console.print(f"[yellow]warning:[/] {escape(str(exc))}")
    try:
        for p in sorted(load_presets(workspace).values(), key=lambda p: p.name):
            entries.append((p.name, "task", p.description, p))
    except TaskPresetError as exc:
        console.print(f"[yellow]warning:[/] {escape(str(exc))}")
    return entries


def pick_start(workspace: Path) -> Choice:
    """Ask what to start with; ``Choice()`` for the Jarvis agent and a typed task."""
    entries = _entries(workspace)
    if not entries:
        return Choice()
    picked = _with_fzf(entries) if shutil.which("fzf") else _numbered(entries)
    if picked is None:
        return Choice()
    item = entries[picked][3]
    if isinstance(item, AgentDefinition):
        console.print(f"[dim]{escape(f'{item.kind} {item.name}')}[/]")
        return Choice(None if item.name == "jarvis" else item)
    return Choice(task=_fill(item))


def _numbered(entries: list[tuple[str, str, str, AgentDefinition | TaskPreset]]) -> int | None:
    console.print("Start with (Enter: the Jarvis agent and a task you type):", markup=False)
    width = max(len(name) for name, *_ in entries)
    for number, (name, kind, description, _) in enumerate(entries, 1):
        line = f"  {number:>2}  {name:<{width}}  {kind:<14}  {description}"
        console.print(line, markup=False, highlight=False)
    while True:
        try:
            answer = console.input("number: ").strip()
        except (EOFError, KeyboardInterrupt):
            console.print()
            return None
        if not answer:
            return None
        if answer.isdigit() and 1 <= int(answer) <= len(entries):
            return int(answer) - 1
        names = [name for name, *_ in entries]
        if answer in names:
            return names.index(answer)
        console.print(f"choose 1 to {len(entries)}, a name, or Enter", markup=False)


def _with_fzf(entries: list[tuple[str, str, str, AgentDefinition | TaskPreset]]) -> int | None:
    width = max(len(name) for name, *_ in entries)
    lines = [
        f"{n}\t{name:<{width}}  {kind:<14}  {desc}"
        for n, (name, kind, desc, _) in enumerate(entries)
    ]
    try:
        done = subprocess.run(
            [
                "fzf",
                "--delimiter",
                "\t",
                "--with-nth",
                "2..",
                "--reverse",
                "--prompt",
                "start with> ",
                "--header",
                "Enter: choose · Esc: the Jarvis agent and a task you type",
            ],  # fmt: skip
            input="\n".join(lines),
            stdout=subprocess.PIPE,
            text=True,
            check=False,
        )
    except OSError:
        return _numbered(entries)
    chosen = done.stdout.strip()
    if done.returncode != 0 or not chosen:
        return None
    return int(chosen.split("\t", 1)[0])


def _fill(preset: TaskPreset) -> str | None:
    """The preset's text with each missing placeholder asked for, and details added."""
    values: dict[str, str] = {}
    try:
        for name in preset.missing({}):
            while not (value := console.input(f"{name}: ").strip()):
                console.print(f"{preset.name} needs a value for {name}", markup=False)
            values[name] = value
        task = preset.fill(values)
        console.print(task, markup=False, highlight=False)
        details = console.input("add details (Enter for none): ").strip()
    except (EOFError, KeyboardInterrupt):
        console.print()
        return None
    return f"{task}\n\n{details}" if details else task
