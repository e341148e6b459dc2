"""Whether a verification verdict rests on the code: its evidence is checked by code.

A verifier (a model) hands back a verdict, its reasoning and the evidence it relied on:
``{"location": "src/a.c:40-42", "code": "strcpy(buf, name);"}`` items. A verdict is
*grounded* when every evidence item names lines that exist under the scanned root (the
path resolved, symlinks included, inside it) and those lines contain the cited code,
at least one item is in the finding's own file, and the reasoning is analysis (words of
its own: not empty, not a copy of the prompt or of the candidate, not an error message).
A confirmed or rejected verdict that is not grounded is recorded as ``uncertain``, with
what the model claimed and why it did not check out.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

MAX_SPAN = 80
"""Most lines one evidence item may cover (a whole file is not evidence of anything)."""
MIN_CODE_CHARS = 4
"""Fewest non-blank characters of cited code (``;`` or ``}`` matches anywhere)."""
MIN_REASON_WORDS = 6
COPY_WORDS = 8
"""This many words in a row, as the prompt or the candidate has them, make a copy."""

_LOCATION = re.compile(r"^\s*(?P<path>.+?):(?P<start>\d+)(?:\s*-\s*(?P<end>\d+))?\s*$")
_NOT_ANALYSIS = re.compile(
    r"^\s*(?:CWE-\d+\.?|unknown tool\b.*|no verdict after\b.*|.*\bfailed:.*)\s*$",
    re.IGNORECASE | re.DOTALL,
)


def check_verdict(
    verdict: dict[str, Any], root: str | Path, candidate: dict[str, Any], prompt: str = ""
) -> dict[str, Any]:
    """``verdict`` with ``grounded`` set; an ungrounded decision becomes ``uncertain``.

    Args:
        verdict: ``verdict``, ``reasoning``, ``suggested_fix`` and ``evidence`` (a list
            of ``{"location": "path:start-end", "code": "..."}``).
        root: The scanned tree (a file or a folder) the locations are relative to.
        candidate: The finding (``file``, ``line``, ``description``...).
        prompt: What the verifier was told; a reasoning that copies it is no analysis.
    """
    problems = grounding_problems(verdict, root, candidate, prompt)
    out = {**verdict, "grounded": not problems}
    if problems:
        out["grounding_problems"] = problems
        if verdict.get("verdict") != "uncertain":
            out["claimed"] = verdict.get("verdict")
            out["verdict"] = "uncertain"
    return out


def grounding_problems(
    verdict: dict[str, Any], root: str | Path, candidate: dict[str, Any], prompt: str = ""
) -> list[str]:
    """Why ``verdict`` does not rest on the code (empty: it does)."""
    found = _reasoning_problems(str(verdict.get("reasoning") or ""), candidate, prompt)
    evidence = verdict.get("evidence") or []
    if not isinstance(evidence, list) or not evidence:
        return [*found, "no evidence: cite a file, its first and last line and the code on them"]
    base = Path(root).resolve()
    folder = base if base.is_dir() else base.parent
    own = _resolve(folder, str(candidate.get("file") or ""))
    cites_own = False
    for n, item in enumerate(evidence, 1):
        problem, path = _item_problem(item, folder)
        if problem:
            found.append(f"evidence {n}: {problem}")
        elif path is not None and own is not None and path == own:
            cites_own = True
    if not cites_own and not any(p.startswith("evidence") for p in found):
        found.append(f"no evidence item is in the finding's file {candidate.get('file')}")
    return found


def _reasoning_problems(reasoning: str, candidate: dict[str, Any], prompt: str) -> list[str]:
    words = re.findall(r"\w+", reasoning.lower())
    if len(words) < MIN_REASON_WORDS:
        return [f"the reasoning is not analysis ({len(words)} words)"]
    if _NOT_ANALYSIS.match(reasoning):
        return ["the reasoning is an error message, not analysis"]
    given = " ".join(
        [prompt, str(candidate.get("description") or ""), str(candidate.get("evidence") or "")]
    )
    if _copies(words, given):
        return ["the reasoning copies the prompt or the finding instead of analysing the code"]
    return []


def _copies(words: list[str], source: str) -> bool:
    """Most of ``words`` are runs of :data:`COPY_WORDS` words found as such in ``source``."""
    theirs = re.findall(r"\w+", source.lower())
    shingles = {tuple(theirs[i : i + COPY_WORDS]) for i in range(len(theirs) - COPY_WORDS + 1)}
    runs = [tuple(words[i : i + COPY_WORDS]) for i in range(len(words) - COPY_WORDS + 1)]
    if not runs or not shingles:
        return False
    copied = sum(run in shingles for run in runs)
    return copied / len(runs) > 0.5


def parse_location(location: str) -> tuple[str, int, int] | None:
    """``path:start-end`` (or ``path:line``) as path, first and last line; None if not so."""
    match = _LOCATION.match(location)
    if not match:
        return None
    start = int(match["start"])
    return match["path"].strip(), start, int(match["end"] or start)


def _item_problem(item: Any, folder: Path) -> tuple[str, Path | None]:
    if not isinstance(item, dict):
        return "not an object with location and code", None
    location, code = str(item.get("location") or ""), str(item.get("code") or "")
    parsed = parse_location(location)
    if parsed is None:
        return f"location {location!r} is not path:start-end", None
    name, start, end = parsed
    path = _resolve(folder, name)
    if path is None:
        return f"{name} is not a file under the scanned root", None
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    if not 1 <= start <= end <= len(lines):
        return f"{location} is outside the file's {len(lines)} lines", path
    if end - start >= MAX_SPAN:
        return f"{location} covers more than {MAX_SPAN} lines", path
    cited = _squash(code)
    if len(cited) < MIN_CODE_CHARS:
        return "no code cited", path
    if cited not in _squash("\n".join(lines[start - 1 : end])):
        return f"the cited code is not on {location}", path
    return "", path


def _resolve(folder: Path, name: str) -> Path | None:
    """``name`` as a file inside ``folder`` (relative, or absolute inside it), or None."""
    if not name:
        return None
    raw = Path(name)
    path = (raw if raw.is_absolute() else folder / raw).resolve()
    if not path.is_file() or not path.is_relative_to(folder):
        return None
    return path


def _squash(text: str) -> str:
    """``text`` without blanks and without a ``12 | `` line-number column."""
    text = re.sub(r"^ *\d+ \| ", "", text, flags=re.MULTILINE)
    return re.sub(r"\s+", "", text)


def code_around(root: str | Path, candidate: dict[str, Any], radius: int = 12) -> str:
    """The finding's lines and ``radius`` lines each side, numbered, under a location header.

    Empty when the file cannot be read under ``root``.
    """
    base = Path(root).resolve()
    folder = base if base.is_dir() else base.parent
    name = str(candidate.get("file") or "")
    path = _resolve(folder, name)
    if path is None:
        return ""
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    line = int(candidate.get("line") or 1)
    start, end = max(1, line - radius), min(len(lines), line + radius)
    numbered = "\n".join(f"{n:>5} | {lines[n - 1]}" for n in range(start, end + 1))
    return f"{name}:{start}-{end}\n{numbered}"
