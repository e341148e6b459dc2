"""Snapshot checks: ``UPDATE_SNAPSHOTS=1`` rewrites the stored file instead of comparing."""

from __future__ import annotations

import os
from pathlib import Path


def check_snapshot(path: Path, text: str) -> None:
    """Compare ``text`` with the snapshot at ``path`` (or store it when updating)."""
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")
