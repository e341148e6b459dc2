"""The user's record of trusted workspaces, and the notice for an untrusted one.

A cloned repository's ``.jarvis/`` files are not the user's: what in them could run code,
lower confirmation, move a key, pass secrets or widen file access waits until the user
trusts the folder (see ``SETTING_TRUST`` in :mod:`jarvis_graph.config`). Trust is
recorded in the user's Jarvis home, ``trusted_folders.json``, by the folder's resolved
path and a SHA-256 of the files it covers; when one of them changes, the trust lapses and
the user is asked again.

Plain files and JSON only: this module knows no setting (``config`` passes in the home,
the folder and the files), so ``config`` can use it without an import cycle.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import tempfile
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from jarvis_graph.untrusted import InputFileError, read_bytes

RECORD_NAME = "trusted_folders.json"
_MAX_CODE_FILES = 2000
"""Python files of one code folder that count (a runaway folder must not stall a run)."""
_MAX_HASHED_BYTES = 16 * 1024 * 1024
"""Larger files count by their size and modification time, not their content."""

_announced: set[tuple[str, str]] = set()
_announced_lock = threading.Lock()


def record_path(home: Path) -> Path:
    """Where the trust record lives in the user's Jarvis home."""
    return home / RECORD_NAME


def fingerprint(files: list[Path], code_dirs: list[Path]) -> str:
    """SHA-256 over the contents of ``files`` and the ``*.py`` files of ``code_dirs``.

    A missing file counts as missing (creating it later changes the digest).
    """
    digest = hashlib.sha256()
    for path in files:
        _add(digest, path)
    for folder in code_dirs:
        found = sorted(folder.glob("*.py"))[:_MAX_CODE_FILES] if folder.is_dir() else []
        digest.update(f"dir {folder}\n".encode())
        for path in found:
            _add(digest, path)
    return digest.hexdigest()


def _add(digest: Any, path: Path) -> None:
    """Add ``path``'s content to ``digest``, read as an untrusted file.

    The files are the repository's: a FIFO, a link to ``/dev/zero`` or a huge file must not
    hang or exhaust the run that checks them. Such a file counts by its kind, size and
    modification time: it is no setting Jarvis loads, and a change still makes trust lapse.
    """
    digest.update(f"file {path}\n".encode())
    try:
        data = read_bytes(path, _MAX_HASHED_BYTES, "it is not read as a setting")
    except InputFileError:
        try:
            info = os.stat(path)
        except OSError:  # missing (or a dangling link): its absence is what is trusted
            digest.update(b"<none>\n")
            return
        digest.update(f"<{info.st_mode:o} {info.st_size} {info.st_mtime_ns}>\n".encode())
        return
    digest.update(f"{len(data)}\n".encode())
    digest.update(data)


def trusted_folders(home: Path) -> dict[str, dict[str, str]]:
    """The recorded folders: resolved path -> ``{"sha256": ..., "trusted_at": ...}``.

    A record that cannot be read counts as empty: nothing is trusted by accident.
    """
    try:
        data = json.loads(record_path(home).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    folders = data.get("folders") if isinstance(data, dict) else None
    if not isinstance(folders, dict):
        return {}
    return {str(k): v for k, v in folders.items() if isinstance(v, dict)}


def is_trusted(home: Path, folder: Path, digest: str) -> bool:
    """Whether the user trusted ``folder`` with exactly these file contents."""
    entry = trusted_folders(home).get(str(folder.resolve()))
    return entry is not None and entry.get("sha256") == digest


def record_trust(home: Path, folder: Path, digest: str) -> None:
    """Record that the user trusts ``folder`` as its files are now."""
    folders = trusted_folders(home)
    folders[str(folder.resolve())] = {
        "sha256": digest,
        "trusted_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    _write(home, folders)


def revoke_trust(home: Path, folder: Path) -> bool:
    """Forget ``folder``; ``False`` when it was not recorded."""
    folders = trusted_folders(home)
    if folders.pop(str(folder.resolve()), None) is None:
        return False
    _write(home, folders)
    return True


def _write(home: Path, folders: dict[str, dict[str, str]]) -> None:
    """Replace the record atomically, readable by the user alone (0600)."""
    home.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"version": 1, "folders": folders}, indent=2, sort_keys=True) + "\n"
    fd, tmp = tempfile.mkstemp(prefix=".trusted-", suffix=".tmp", dir=home)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, record_path(home))
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def announce_ignored(folder: Path, keys: list[str], out: TextIO | None = None) -> None:
    """Say once per process which project settings an untrusted folder's run ignores."""
    shown = ", ".join(keys)
    with _announced_lock:
        if (str(folder), shown) in _announced:
            return
        _announced.add((str(folder), shown))
    stream = out or sys.stderr
    print(
        f"note: {folder} is not trusted, so its .jarvis settings {shown} are ignored; "
        f"`jarvis trust {folder}` shows them and trusts the folder",
        file=stream,
        flush=True,
    )
