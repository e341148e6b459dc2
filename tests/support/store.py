"""What a workspace's session store holds, as bytes, for tests that look for a secret in it."""

from __future__ import annotations

import zlib
from pathlib import Path


def stored_text(ws: Path) -> bytes:
    """Every byte the session store holds: the SQLite files and the (zlib) message blobs."""
    jarvis = ws / ".jarvis"
    data = b"".join(p.read_bytes() for p in jarvis.glob("sessions.sqlite*"))
    return data + b"".join(zlib.decompress(p.read_bytes()) for p in jarvis.rglob("*.z"))
