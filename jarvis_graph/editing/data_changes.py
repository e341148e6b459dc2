"""What an edit changed in a data file (JSON, TOML, YAML), key by key.

A search/replace edit of a data file is easily wrong in a way that still parses: the SEARCH
text matched a key instead of its value, so ``"server": {"port": 8080}`` became
``"9091": {"port": 8080}``. The edit report lists the data that changed (values changed,
keys added, keys removed), so the model, the user and the answer check see the effect of
the edit, not only that it applied. Pure functions over the parsers of
:mod:`jarvis_graph.editing.syntax`.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

import yaml

from jarvis_graph.untrusted import load_yaml_all

MAX_LINES = 8  # changes listed in a report; the rest are counted
VALUE_CHARS = 60


def _load(label: str, text: str) -> Any:
    suffix = PurePosixPath(label).suffix.lower()
    if suffix == ".json":
        return json.loads(text)
    if suffix == ".toml":
        return tomllib.loads(text)
    if suffix in (".yaml", ".yml"):
        documents = load_yaml_all(text)  # flattened below: aliases must be bounded
        return documents[0] if len(documents) == 1 else documents
    raise ValueError(suffix)


def _flatten(value: Any, prefix: str, out: dict[str, Any]) -> dict[str, Any]:
    """Leaf values by dotted path (``server.port``, ``hosts[1]``); empty containers are leaves."""
    if isinstance(value, dict) and value:
        for key, item in value.items():
            _flatten(item, f"{prefix}.{key}" if prefix else str(key), out)
    elif isinstance(value, list) and value:
        for index, item in enumerate(value):
            _flatten(item, f"{prefix}[{index}]", out)
    else:
        out[prefix or "(top)"] = value
    return out


@dataclass
class DataChanges:
    """The leaf paths an edit changed, added and removed."""

    changed: list[tuple[str, Any, Any]] = field(default_factory=list)
    added: list[tuple[str, Any]] = field(default_factory=list)
    removed: list[tuple[str, Any]] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.changed or self.added or self.removed)

    def lines(self) -> list[str]:
        """One line per change, at most :data:`MAX_LINES`, then how many more."""
        rows = [f"{p}: {_show(a)} -> {_show(b)}" for p, a, b in self.changed]
        rows += [f"added {p} = {_show(v)}" for p, v in self.added]
        rows += [f"removed {p} (was {_show(v)})" for p, v in self.removed]
        if len(rows) > MAX_LINES:
            rows = [*rows[:MAX_LINES], f"... and {len(rows) - MAX_LINES} more"]
        return rows


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 3] + "..."


def data_changes(label: str, before: str | None, after: str) -> DataChanges | None:
    """The data an edit changed in ``label``.

    ``None`` for a new file, a file of another type, or text that does not parse.
    """
    if before is None:
        return None
    try:
        old = _flatten(_load(label, before), "", {})
        new = _flatten(_load(label, after), "", {})
    except (ValueError, yaml.YAMLError, tomllib.TOMLDecodeError, RecursionError):
        return None
    changes = DataChanges()
    for path, value in old.items():
        if path not in new:
            changes.removed.append((path, value))
        elif new[path] != value or type(new[path]) is not type(value):
            changes.changed.append((path, value, new[path]))
    changes.added = [(p, v) for p, v in new.items() if p not in old]
    return changes


def report_lines(label: str, before: str | None, after: str) -> str:
    """The data-change lines of an edit report (empty when nothing is known)."""
    changes = data_changes(label, before, after)
    if changes is None:
        return ""
    if not changes:
        return f"\n  The data of {label} is unchanged (only formatting or comments changed)."
    return "".join(f"\n  {line}" for line in changes.lines())
