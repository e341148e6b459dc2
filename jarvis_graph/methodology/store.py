"""Methodology records ``{problem_type, content}`` as JSON files in folders.

Folders, first wins for a problem type: ``~/.jarvis/methodologies`` (where new records
go), the ``methodology_dirs`` setting (``JARVIS_METHODOLOGY_DIRS``), then the clone of the
central repository when one is configured.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jarvis_graph.config import Settings, jarvis_home

logger = logging.getLogger(__name__)

MAX_PROBLEM_TYPE = 200


class MethodologyError(ValueError):
    """A methodology or methodology file is invalid; the message says what and how to fix."""


@dataclass(frozen=True)
class Methodology:
    """One methodology, and the file it came from (empty when not saved yet)."""

    problem_type: str
    content: str
    source: str = ""

    def to_json(self) -> dict[str, str]:
        """The record as stored."""
        return {"problem_type": self.problem_type, "content": self.content}


def home_dir() -> Path:
    """Where new methodologies are saved."""
    return jarvis_home() / "methodologies"


def central_dir() -> Path:
    """Where the central methodology repository is cloned."""
    return jarvis_home() / "central_methodology_repo"


def methodology_dirs(settings: Settings) -> list[Path]:
    """The folders methodologies are read from, in precedence order."""
    dirs = [home_dir(), *(Path(d).expanduser() for d in settings.methodology_dirs)]
    if settings.central_methodology_repo:
        dirs.append(central_dir())
    return dirs


def checked(problem_type: Any, content: Any, where: str = "methodology") -> Methodology:
    """A validated record.

    Raises:
        MethodologyError: A field is missing, empty, not text, or the type is too long.
    """
    for field, value in (("problem_type", problem_type), ("content", content)):
        if not isinstance(value, str) or not value.strip():
            msg = f"{where}: `{field}` must be non-empty text, got {value!r}"
            raise MethodologyError(msg)
    if len(problem_type.strip()) > MAX_PROBLEM_TYPE:
        msg = (
            f"{where}: `problem_type` is {len(problem_type)} characters; keep it under "
            f"{MAX_PROBLEM_TYPE} (a short name for the kind of problem)"
        )
        raise MethodologyError(msg)
    return Methodology(problem_type.strip(), content.strip())


def file_name(problem_type: str) -> str:
    """A stable file name for a problem type: a readable slug plus a short hash."""
    slug = re.sub(r"[^a-z0-9]+", "-", problem_type.lower()).strip("-")[:48] or "methodology"
    digest = hashlib.sha256(problem_type.encode("utf-8")).hexdigest()[:8]
    return f"{slug}-{digest}.json"


def load_dir(folder: Path) -> list[Methodology]:
    """The records of one folder; broken files are logged and skipped."""
    found = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            record = checked(data.get("problem_type"), data.get("content"), str(path))
        except (OSError, ValueError, AttributeError) as exc:
            logger.warning("methodology file %s was skipped: %s", path, exc)
            continue
        found.append(Methodology(record.problem_type, record.content, str(path)))
    return found


def load_all(dirs: Iterable[Path]) -> list[Methodology]:
    """Records of all folders; the first folder holding a problem type wins."""
    seen: dict[str, Methodology] = {}
    for folder in dirs:
        for record in load_dir(folder):
            seen.setdefault(record.problem_type.lower(), record)
    return list(seen.values())


def save(folder: Path, record: Methodology) -> Path:
    """Write ``record`` into ``folder`` (replacing the same problem type); atomic."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / file_name(record.problem_type)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".json")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(record.to_json(), handle, ensure_ascii=False, indent=2)
        handle.write("\n")
    os.replace(tmp, path)
    return path


def find(folder: Path, problem_type: str) -> Methodology | None:
    """The record of ``problem_type`` in ``folder`` (case-insensitive), if any."""
    wanted = problem_type.strip().lower()
    return next((m for m in load_dir(folder) if m.problem_type.lower() == wanted), None)


def delete(folder: Path, problem_type: str) -> bool:
    """Delete the record of ``problem_type`` from ``folder``; ``False`` if there is none."""
    record = find(folder, problem_type)
    if record is None:
        return False
    Path(record.source).unlink()
    return True


def export_records(records: Iterable[Methodology], path: Path) -> int:
    """Write records to one JSON file ``{"methodologies": [...]}``; returns how many."""
    items = [r.to_json() for r in records]
    path.write_text(json.dumps({"methodologies": items}, ensure_ascii=False, indent=2) + "\n")
    return len(items)


def read_records(path: Path) -> list[Methodology]:
    """Records from a file written by :func:`export_records`, one record, a list, or a folder.

    Raises:
        MethodologyError: The file is not JSON or holds an invalid record (nothing is read).
    """
    if path.is_dir():
        return [Methodology(m.problem_type, m.content) for m in load_dir(path)]
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        msg = f"cannot read methodologies from {path}: {exc}"
        raise MethodologyError(msg) from exc
    if isinstance(data, dict) and "methodologies" in data:
        data = data["methodologies"]
    items = data if isinstance(data, list) else [data]
    out = []
    for n, item in enumerate(items):
        if not isinstance(item, dict):
            msg = f"{path}: item {n} is {type(item).__name__}, expected an object"
            raise MethodologyError(msg)
        out.append(checked(item.get("problem_type"), item.get("content"), f"{path} item {n}"))
    return out
