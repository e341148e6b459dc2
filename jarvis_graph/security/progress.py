"""The progress file of a verification run: one JSON line per finished candidate.

The first line names the run (id, scanned root, candidate ids). Each verdict is appended
and flushed to disk as soon as it is known, so a run killed at any point loses at most the
candidates that were being verified; a torn last line is ignored on reload.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from pathlib import Path
from typing import Any

from jarvis_graph.owned_paths import open_owned, split_owned

VERDICTS = ("confirmed", "false_positive", "uncertain")
_LOCK = threading.Lock()


def default_run_id(root: str, issue_ids: list[str]) -> str:
    """A run id that is the same for the same root and the same candidates."""
    digest = hashlib.sha256("\n".join([str(Path(root).resolve()), *sorted(issue_ids)]).encode())
    return "sec-" + digest.hexdigest()[:12]


def progress_path(directory: str | Path, run_id: str) -> Path:
    """Where the progress file of ``run_id`` lives."""
    return Path(directory) / f"{run_id}.jsonl"


def load_progress(path: str | Path) -> dict[str, dict[str, Any]]:
    """Verdicts recorded so far (candidate id -> verdict); empty when there is no file."""
    p = Path(path)
    if not p.is_file():
        return {}
    done: dict[str, dict[str, Any]] = {}
    for line in p.read_text(encoding="utf-8").splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line torn by a kill
        if isinstance(row, dict) and "id" in row and isinstance(row.get("verdict"), dict):
            done[row["id"]] = row["verdict"]
    return done


def start_progress(path: str | Path, run_id: str, root: str, issue_ids: list[str]) -> None:
    """Create the file with its header line unless the run already has one."""
    p = Path(path)
    if p.is_file() and p.stat().st_size:
        return
    _append(p, {"run_id": run_id, "root": root, "candidates": issue_ids})


def record_verdict(path: str | Path, issue_id: str, verdict: dict[str, Any]) -> None:
    """Append one verdict and make it durable before returning."""
    _append(Path(path), {"id": issue_id, "verdict": verdict})


def _append(path: Path, row: dict[str, Any]) -> None:
    data = (json.dumps(row, sort_keys=True) + "\n").encode("utf-8")
    with _LOCK:
        # Jarvis' own file (under .jarvis/security): private, through no planted link
        fd = open_owned(*split_owned(path), os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)


def normalise_verdict(raw: dict[str, Any]) -> dict[str, Any]:
    """A verdict with the expected fields and a known verdict value.

    ``evidence`` keeps the items that are objects, as ``{"location", "code"}`` strings
    (``path``, ``start_line`` and ``end_line`` become the location ``path:start-end``).
    """
    verdict = str(raw.get("verdict", "uncertain")).strip().lower().replace("-", "_")
    if verdict not in VERDICTS:
        verdict = "uncertain"
    items = raw.get("evidence")
    evidence = [
        {"location": _location(i), "code": str(i.get("code") or "")}
        for i in (items if isinstance(items, list) else [])
        if isinstance(i, dict)
    ]
    return {
        "verdict": verdict,
        "reasoning": str(raw.get("reasoning", "")).strip(),
        "suggested_fix": str(raw.get("suggested_fix", "")).strip(),
        "evidence": evidence,
    }


def _location(item: dict[str, Any]) -> str:
    """An evidence item's ``path:start-end`` (given as such, or as its three parts)."""
    if item.get("location") or not item.get("path"):
        return str(item.get("location") or "").strip()
    start, end = item.get("start_line"), item.get("end_line")
    span = f"{start}-{end}" if end not in (None, start) else f"{start}"
    # A small model copies the "path:start-end" it was shown into the path field.
    path = re.sub(r":\d+(?:-\d+)?$", "", str(item["path"]).strip())
    return f"{path}:{span}"
