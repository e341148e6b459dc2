"""Prompt states on disk: a new process starts from the system turn an earlier one evaluated.

Every ``jarvis run`` is a new process, and :mod:`local_states` keeps states in memory only,
so each run evaluated its whole system turn (the system prompt, the tool list and the reply
rules: a thousand tokens and more, about ten seconds of the 1.5B model on two cores) before
its first token. Here the state of a prompt's system turn is kept in a file under the
models' cache folder; a later process restores the file that shares the longest prefix with
its own system turn and evaluates only the rest (llama.cpp's state is the KV cache of those
tokens, cut back to the shared part).

A file is restored only when it is exactly what this process would have made: written by
this module (its header), for this model file (name, size, modification time), by this
llama.cpp (its version), with the tokens it names and the bytes it announces (a SHA-256 of
its state). Anything else (another model, another llama.cpp, a cut or altered file) is
left alone with one notice: a state of another model would crash llama.cpp or silently
corrupt the context, and nothing here is ever unpickled. The folder is capped in size, the
least recently used files out first; ``jarvis models cache`` lists and clears it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

logger = logging.getLogger(__name__)

FORMAT = 1
MAGIC = b"JARVIS-PROMPT-STATE\n"
SUFFIX = ".state"
CAP_BYTES = 1 << 30
"""What the folder may hold (a 1.5B state of 1,500 tokens is about 45 MB)."""
MIN_SHARED = 32
"""Fewer shared tokens than this are evaluated again rather than restored from a file."""
CAP_ENV = "JARVIS_PROMPT_CACHE_BYTES"


def states_dir() -> Path:
    """The folder of saved states: ``prompt-states`` beside the model files."""
    from jarvis_graph.platforms.local_models import models_dir

    return models_dir() / "prompt-states"


def cap_bytes() -> int:
    """The folder's size cap (``JARVIS_PROMPT_CACHE_BYTES``; 0 keeps no file)."""
    raw = os.environ.get(CAP_ENV, "")
    try:
        return int(raw) if raw else CAP_BYTES
    except ValueError:
        logger.warning("%s=%r is not a number of bytes; using %d", CAP_ENV, raw, CAP_BYTES)
        return CAP_BYTES


def model_identity(model_path: str, n_ctx: int) -> dict[str, Any]:
    """What a state belongs to: the model file as it is now, the llama.cpp reading it.

    And the context's size: a state holds buffers sized by it.
    """
    import llama_cpp

    stat = Path(model_path).stat()
    return {
        "model": Path(model_path).name,
        "size": stat.st_size,
        "mtime_ns": stat.st_mtime_ns,
        "llama_cpp": llama_cpp.__version__,
        "n_ctx": n_ctx,
    }


@dataclass(frozen=True)
class Saved:
    """One file's header: what it holds, and whether it fits this process's model."""

    path: Path
    header: dict[str, Any]
    tokens: tuple[int, ...]

    @property
    def size(self) -> int:
        """The file's size in bytes."""
        return self.path.stat().st_size


def _read_header(path: Path) -> Saved:
    """The header and tokens of ``path`` (its state is read only when restored).

    Raises:
        ValueError: Not a state file of this module, or cut short.
    """
    with path.open("rb") as handle:
        if handle.read(len(MAGIC)) != MAGIC:
            raise ValueError("not a prompt state of Jarvis")
        header = json.loads(handle.readline())
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            raise ValueError(f"format {header.get('format')!r}, not {FORMAT}")
        count = int(header["n_tokens"])
        raw = handle.read(4 * count)
        if len(raw) != 4 * count:
            raise ValueError("cut short in its tokens")
    tokens = tuple(int(t) for t in np.frombuffer(raw, dtype="<i4"))
    return Saved(path, header, tokens)


def saved_states() -> list[Saved | tuple[Path, str]]:
    """Every file of the folder: its header, or the file and why it cannot be read."""
    folder = states_dir()
    found: list[Saved | tuple[Path, str]] = []
    for path in sorted(folder.glob(f"*{SUFFIX}")) if folder.is_dir() else []:
        try:
            found.append(_read_header(path))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            found.append((path, str(exc)))
    return found


def shared_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """How many tokens ``a`` and ``b`` share from their start."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def best_state(model_path: str, n_ctx: int, tokens: Sequence[int]) -> tuple[Saved, int] | None:
    """The file of this model sharing the longest prefix with ``tokens``, and that length.

    An unreadable file, or one of this model name made by another file of it, another
    llama.cpp or another context size (stale), is passed over with a notice; the files of
    other models (the folder is shared by all) are theirs, passed over quietly.
    """
    identity = model_identity(model_path, n_ctx)
    best: tuple[Saved, int] | None = None
    for entry in saved_states():
        if not isinstance(entry, Saved):
            path, why = entry
            logger.warning("prompt state %s ignored: %s", path.name, why)
            continue
        theirs = entry.header.get("identity")
        if theirs != identity:
            if isinstance(theirs, dict) and theirs.get("model") == identity["model"]:
                changed = {
                    "model file" if k in ("size", "mtime_ns") else k
                    for k in identity
                    if theirs.get(k) != identity[k]
                }
                logger.warning(
                    "prompt state %s ignored: made with another %s",
                    entry.path.name,
                    " and ".join(sorted(changed)),
                )
            continue
        shared = shared_prefix(entry.tokens, tokens)
        if shared >= MIN_SHARED and (best is None or shared > best[1]):
            best = (entry, shared)
    return best


def load_state(entry: Saved, n_vocab: int, n_ctx: int, seed: int) -> Any | None:
    """The llama.cpp state of ``entry``, or None (with a notice) when its bytes are not whole.

    The logits table is one row of zeros, as :class:`local_states.StatefulLlama` saves it.
    """
    from llama_cpp.llama import LlamaState

    size, digest = int(entry.header["state_bytes"]), str(entry.header["state_sha256"])
    offset = len(MAGIC) + len(_header_line(entry.header)) + 4 * len(entry.tokens)
    try:
        with entry.path.open("rb") as handle:
            handle.seek(offset)
            data = handle.read(size + 1)
    except OSError as exc:
        logger.warning("prompt state %s ignored: %s", entry.path.name, exc)
        return None
    if len(data) != size or hashlib.sha256(data).hexdigest() != digest:
        logger.warning(
            "prompt state %s ignored: its state is cut short or altered", entry.path.name
        )
        return None
    _touch(entry.path)
    input_ids = np.zeros(n_ctx, dtype=np.intc)  # llama-cpp-python's buffer: the whole context
    input_ids[: len(entry.tokens)] = entry.tokens
    return LlamaState(
        input_ids=input_ids,
        scores=np.zeros((1, n_vocab), dtype=np.single),
        n_tokens=len(entry.tokens),
        llama_state=data,
        llama_state_size=size,
        seed=seed,
    )


def _header_line(header: dict[str, Any]) -> bytes:
    return json.dumps(header, sort_keys=True).encode() + b"\n"


def save_state(model_path: str, n_ctx: int, tokens: Sequence[int], state: Any) -> Path | None:
    """Write ``state`` (of ``tokens``) to the folder, then keep the folder under its cap.

    Written to a temporary file and renamed, so a reader never sees half a file. A write
    that fails (a full disk, a read-only folder) is a notice: the run goes on.
    """
    cap = cap_bytes()
    data = bytes(state.llama_state)
    if cap <= 0 or len(data) > cap:
        return None
    header = {
        "format": FORMAT,
        "identity": model_identity(model_path, n_ctx),
        "n_tokens": len(tokens),
        "state_bytes": len(data),
        "state_sha256": hashlib.sha256(data).hexdigest(),
    }
    name = hashlib.sha256(json.dumps([header["identity"], list(tokens)]).encode()).hexdigest()
    folder = states_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, suffix=".part", delete=False) as out:
            out.write(MAGIC + _header_line(header))
            out.write(np.asarray(tokens, dtype="<i4").tobytes())
            out.write(data)
        target = folder / f"{name[:32]}{SUFFIX}"
        os.replace(out.name, target)
    except OSError as exc:
        logger.warning("prompt state not saved in %s: %s", folder, exc)
        return None
    trim(cap, keep=target)
    return target


def _touch(path: Path) -> None:
    try:
        os.utime(path)  # the folder is trimmed least recently used first
    except OSError:
        pass


def trim(cap: int, keep: Path | None = None) -> int:
    """Remove the least recently used files until the folder holds at most ``cap`` bytes.

    Returns the bytes freed. Leftovers of interrupted writes go first.
    """
    folder = states_dir()
    if not folder.is_dir():
        return 0
    freed = 0
    for part in folder.glob("*.part"):
        freed += _remove(part)
    files = sorted(folder.glob(f"*{SUFFIX}"), key=lambda p: p.stat().st_mtime)
    total = sum(p.stat().st_size for p in files)
    for path in files:
        if total <= cap:
            break
        if path == keep:
            continue
        size = _remove(path)
        total -= size
        freed += size
    return freed


def _remove(path: Path) -> int:
    try:
        size = path.stat().st_size
        path.unlink()
    except OSError:
        return 0
    return size


def clear() -> tuple[int, int]:
    """Remove every saved state: the number of files and the bytes freed."""
    folder = states_dir()
    files = [*folder.glob(f"*{SUFFIX}"), *folder.glob("*.part")] if folder.is_dir() else []
    return len(files), sum(_remove(p) for p in files)
