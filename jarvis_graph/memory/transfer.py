"""Export and import of long-term memories as JSON, and import of Jarvis memory files.

Export format: ``{"format": "jarvis-graph-memory", "version": 1, "memories": [record...]}``.
Jarvis wrote one file per record (``<project>/.jarvis/memory/<id>.json`` and
``<data dir>/memory/global_long_term/<id>.json``) with id, type, tags, content and
timestamps; :func:`read_jarvis_files` reads such a folder.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from jarvis_graph.memory.records import LONG_TERM_TYPES, MemoryInputError, coerce_record
from jarvis_graph.memory.tiers import MemoryTiers
from jarvis_graph.untrusted import InputFileError, load_json, read_bytes

FORMAT = "jarvis-graph-memory"
IMPORT_MAX_BYTES = 100_000_000
"""The largest file ``memory import`` reads (100,000 memories of a page each)."""
IMPORT_TOO_LARGE = "export fewer memories per file (jarvis memory export --type/--tag)"
Overwrite = Literal["skip", "replace", "newer"]
"""On an id that exists: keep ours, take theirs, or take the one updated last."""


@dataclass
class ImportReport:
    """What an import did."""

    added: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def export_memories(
    tiers: MemoryTiers, path: Path, memory_types: list[str] | None, tags: list[str] | None
) -> int:
    """Write the long-term records (filtered by types and tags) to ``path``; returns the count."""
    types = memory_types or list(LONG_TERM_TYPES)
    records = tiers.records(types, tags)
    payload = {"format": FORMAT, "version": 1, "memories": records}
    path.write_text(json.dumps(payload, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return len(records)


def read_export(path: Path) -> list[dict[str, Any]]:
    """The records of an export file.

    Raises:
        MemoryInputError: The file is missing, not JSON, or not an export.
    """
    if path.is_dir():
        msg = f"{path} is a folder; give an export file (or --jarvis for Jarvis memory files)"
        raise MemoryInputError(msg)
    data = _read_json(path)
    if isinstance(data, dict) and data.get("format") == FORMAT:
        items = data.get("memories")
    elif isinstance(data, list):
        items = data
    else:
        msg = (
            f"{path} is not a memory export (expected {{'format': '{FORMAT}', 'memories': [...]}})"
        )
        raise MemoryInputError(msg)
    if not isinstance(items, list):
        msg = f"{path}: 'memories' must be a list of records"
        raise MemoryInputError(msg)
    return _unique([_coerce(item, path, n) for n, item in enumerate(items)], path)


def read_jarvis_files(folder: Path, default_type: str) -> list[dict[str, Any]]:
    """Records from a folder of Jarvis memory files (``*.json``, one record each).

    Raises:
        MemoryInputError: The folder is missing or a file is not a memory record.
    """
    if not folder.is_dir():
        msg = f"{folder} is not a folder of Jarvis memory files (*.json)"
        raise MemoryInputError(msg)
    records = []
    for file in sorted(folder.glob("*.json")):
        data = _read_json(file)
        if isinstance(data, dict) and "id" not in data:
            data = {**data, "id": file.stem}
        records.append(_coerce(data, file, None, default_type))
    return _unique(records, folder)


def chosen_records(
    records: list[dict[str, Any]],
    memory_types: list[str] | None = None,
    tags: list[str] | None = None,
) -> list[dict[str, Any]]:
    """The ``records`` an import takes: of these types, with any of these tags (``None``: all)."""
    wanted_tags = set(tags or [])
    return [
        r
        for r in records
        if (not memory_types or r["type"] in memory_types)
        and (not wanted_tags or wanted_tags & set(r["tags"]))
    ]


def import_records(
    tiers: MemoryTiers,
    records: list[dict[str, Any]],
    memory_types: list[str] | None = None,
    tags: list[str] | None = None,
    overwrite: Overwrite = "skip",
) -> ImportReport:
    """Save ``records`` (filtered by types and tags) following the overwrite policy."""
    if overwrite not in ("skip", "replace", "newer"):
        msg = f"unknown overwrite policy {overwrite!r}; use skip, replace or newer"
        raise MemoryInputError(msg)
    chosen = chosen_records(records, memory_types, tags)
    existing = {r["id"]: r for r in tiers.records(sorted({r["type"] for r in chosen}))}
    report = ImportReport()
    to_save = []
    for rec in chosen:
        old = existing.get(rec["id"])
        if old is None:
            report.added.append(rec["id"])
        elif overwrite == "replace" or (
            overwrite == "newer" and rec["updated_at"] > old.get("updated_at", "")
        ):
            report.replaced.append(rec["id"])
        else:
            report.skipped.append(rec["id"])
            continue
        to_save.append(rec)
    tiers.save(to_save)
    return report


def _read_json(path: Path) -> Any:
    """The JSON of a file to import: a regular file, bounded in size and nesting."""
    if not os.path.lexists(path):
        msg = f"file {path} does not exist"
        raise MemoryInputError(msg)
    try:
        return load_json(read_bytes(path, IMPORT_MAX_BYTES, IMPORT_TOO_LARGE), str(path))
    except InputFileError as exc:  # a FIFO, a device, a folder, too large, too deep
        raise MemoryInputError(str(exc)) from None


def _unique(records: list[dict[str, Any]], source: Path) -> list[dict[str, Any]]:
    """``records`` if no two share an id (one would silently replace the other).

    Raises:
        MemoryInputError: Ids used more than once, named.
    """
    counts = Counter(r["id"] for r in records)
    twice = sorted(i for i, n in counts.items() if n > 1)
    if twice:
        shown = ", ".join(repr(i) for i in twice[:10]) + (" ..." if len(twice) > 10 else "")
        msg = (
            f"{source}: {len(twice)} record id(s) are used more than once ({shown}); "
            "give each record its own id, or drop the 'id' field to get new ones"
        )
        raise MemoryInputError(msg)
    return records


def _coerce(
    item: Any, path: Path, n: int | None, default_type: str | None = None
) -> dict[str, Any]:
    try:
        return coerce_record(item, default_type)
    except MemoryInputError as exc:
        where = f"{path}" + (f", record {n + 1}" if n is not None else "")
        msg = f"{where}: {exc}"
        raise MemoryInputError(msg) from exc
