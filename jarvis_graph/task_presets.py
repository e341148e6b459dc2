"""Predefined tasks: named task texts with ``{placeholders}``, kept in YAML files.

``<project>/.jarvis/tasks.yaml`` and ``~/.jarvis/tasks.yaml`` (``$JARVIS_HOME``) hold a
``tasks:`` list; each entry has a ``name``, a ``description`` and the ``task`` text, whose
``{placeholders}`` are filled from ``--set key=value`` (or asked for in ``jarvis chat``).
A project task replaces a user task of the same name. Example::

    tasks:
      - name: review
        description: Review a file for bugs
        task: Read {file} and list the bugs you find, with line numbers.
      - name: test
        description: Run the test suite and summarise failures
        task: Run `{command}` and tell me which tests fail and why.
        defaults: {command: python3 -m pytest -q}

Plain data and YAML only: no langchain or langgraph imports.
"""

from __future__ import annotations

import os
import string
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from jarvis_graph.config import jarvis_home
from jarvis_graph.untrusted import InputFileError, load_yaml, read_text

FILE_NAME = "tasks.yaml"
TASKS_MAX_BYTES = 1_000_000
"""A tasks file is a few kB; a larger one is refused unread."""
TASKS_TOO_LARGE = "a tasks file holds a few kB of task texts: check it is the file you meant"


class TaskPresetError(ValueError):
    """A tasks file that cannot be read, or a preset that cannot be filled in."""


@dataclass(frozen=True)
class TaskPreset:
    """One named task.

    Attributes:
        name: How ``--task`` and the picker name it.
        description: One line shown in ``jarvis tasks list`` and the picker.
        task: The task text, with ``{placeholder}`` fields.
        defaults: Values used for placeholders not given.
        source: The file it comes from.
    """

    name: str
    description: str
    task: str
    defaults: dict[str, str] = field(default_factory=dict)
    source: str = ""

    @property
    def placeholders(self) -> list[str]:
        """The task's placeholder names, in order of first use."""
        names: list[str] = []
        for _, name, _, _ in string.Formatter().parse(self.task):
            if name is not None and name not in names:
                names.append(name)
        return names

    def missing(self, values: dict[str, str]) -> list[str]:
        """Placeholders that neither ``values`` nor the defaults fill."""
        return [n for n in self.placeholders if n not in values and n not in self.defaults]

    def fill(self, values: dict[str, str]) -> str:
        """The task text with its placeholders filled.

        Raises:
            TaskPresetError: A placeholder has no value, or a value names no placeholder.
        """
        unknown = sorted(set(values) - set(self.placeholders))
        if unknown:
            known = ", ".join(self.placeholders) or "none"
            msg = f"task {self.name!r} has no placeholder {', '.join(unknown)} (it has: {known})"
            raise TaskPresetError(msg)
        missing = self.missing(values)
        if missing:
            sets = " ".join(f"--set {n}=..." for n in missing)
            msg = f"task {self.name!r} needs a value for {', '.join(missing)}: add {sets}"
            raise TaskPresetError(msg)
        given = {**self.defaults, **values}
        # Each placeholder is replaced by its value as it is: a format spec would let a
        # file ask for gigabytes of padding ({file:>900000000}); _entry refuses them.
        return "".join(
            literal + (given[name] if name is not None else "")
            for literal, name, _, _ in string.Formatter().parse(self.task)
        )


def preset_files(project: Path) -> list[Path]:
    """The files presets come from, user file first (a project preset replaces it)."""
    return [jarvis_home() / FILE_NAME, project / ".jarvis" / FILE_NAME]


def load_presets(project: Path) -> dict[str, TaskPreset]:
    """Every preset of the user and the project, by name (project ones win).

    Raises:
        TaskPresetError: A file is not valid YAML or does not have the expected shape;
            the message names the file and the entry.
    """
    presets: dict[str, TaskPreset] = {}
    for path in preset_files(project):
        if os.path.lexists(path):  # a folder or FIFO of that name is an error, not "no tasks"
            for preset in _read(path):
                presets[preset.name] = preset
    return presets


def get_preset(project: Path, name: str) -> TaskPreset:
    """The preset called ``name``.

    Raises:
        TaskPresetError: No preset has that name (the message lists those there are).
    """
    presets = load_presets(project)
    if name in presets:
        return presets[name]
    if presets:
        msg = f"no predefined task {name!r}; there are: {', '.join(sorted(presets))}"
    else:
        where = " or ".join(str(p) for p in preset_files(project))
        msg = f"no predefined task {name!r}: no tasks are defined (add them to {where})"
    raise TaskPresetError(msg)


def parse_sets(pairs: list[str]) -> dict[str, str]:
    """``["k=v", ...]`` as a dict.

    Raises:
        TaskPresetError: An item has no ``=`` or an empty key.
    """
    values: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            msg = f"--set {pair!r} is not KEY=VALUE"
            raise TaskPresetError(msg)
        values[key.strip()] = value
    return values


def _read(path: Path) -> list[TaskPreset]:
    try:
        data = load_yaml(read_text(path, TASKS_MAX_BYTES, TASKS_TOO_LARGE))
    except InputFileError as exc:  # a FIFO, a device, a huge file: refused before reading
        raise TaskPresetError(str(exc)) from None
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" line {where.line + 1}" if where is not None else ""
        msg = f"{path}:{line} is not valid YAML ({getattr(exc, 'problem', exc)})"
        raise TaskPresetError(msg) from None
    if data is None:
        return []
    entries = data.get("tasks") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        msg = f"{path}: expected a 'tasks:' list of entries with name, description and task"
        raise TaskPresetError(msg)
    return [_entry(path, n, entry) for n, entry in enumerate(entries, 1)]


def _entry(path: Path, number: int, entry: Any) -> TaskPreset:
    where = f"{path}: task {number}"
    if not isinstance(entry, dict):
        msg = f"{where} is not a mapping with name, description and task"
        raise TaskPresetError(msg)
    name, task = entry.get("name"), entry.get("task")
    if not isinstance(name, str) or not name.strip() or any(c.isspace() for c in name.strip()):
        msg = f"{where}: 'name' must be one word (got {name!r})"
        raise TaskPresetError(msg)
    if not isinstance(task, str) or not task.strip():
        msg = f"{where} ({name}): 'task' must be the task text"
        raise TaskPresetError(msg)
    defaults = entry.get("defaults") or {}
    if not isinstance(defaults, dict):
        msg = f"{where} ({name}): 'defaults' must map placeholder names to values"
        raise TaskPresetError(msg)
    unknown = sorted(set(entry) - {"name", "description", "task", "defaults"})
    if unknown:
        msg = f"{where} ({name}): unknown field {', '.join(unknown)}"
        raise TaskPresetError(msg)
    preset = TaskPreset(
        name=name.strip(),
        description=str(entry.get("description") or "").strip(),
        task=task.strip(),
        defaults={str(k): str(v) for k, v in defaults.items()},
        source=str(path),
    )
    try:
        names = preset.placeholders
    except ValueError as exc:  # an unmatched brace
        msg = f"{where} ({name}): the task text has a malformed placeholder ({exc})"
        raise TaskPresetError(msg) from None
    bad = [n for n in names if not n.isidentifier()]
    if bad:
        msg = f"{where} ({name}): placeholders are names such as {{file}}, not {{{bad[0]}}}"
        raise TaskPresetError(msg)
    styled = next(
        (f for f in string.Formatter().parse(preset.task) if f[1] is not None and (f[2] or f[3])),
        None,
    )
    if styled is not None:  # {file:>9} or {file!r}: padding and conversions are not plain text
        _, field_name, spec, conversion = styled
        shown = (
            f"{{{field_name}{'!' + conversion if conversion else ''}{':' + spec if spec else ''}}}"
        )
        msg = (
            f"{where} ({name}): placeholders are plain names such as {{{field_name}}}, "
            f"without a format spec or conversion; write {{{field_name}}} instead of {shown}"
        )
        raise TaskPresetError(msg)
    return preset
