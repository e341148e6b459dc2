"""What a tool call did, as data: the artifact beside the text the model reads.

Built-in tools are made with ``response_format="content_and_artifact"``: the text is for
the model, the artifact for code that decides (the answer check). A check reads these
fields and never parses the text again, so the text may change wording without a check
breaking, and a check cannot misread a count the tool already knew.

Artifacts are plain JSON-like dicts with a ``"kind"`` key, so the session store keeps them
on the :class:`~langchain_core.messages.ToolMessage` as they are (see
:mod:`jarvis_graph.checkpoint_serde`: no type of ours has to be allowed to read them back).
Paths are workspace-relative POSIX paths (absolute only for a file outside the workspace,
where the settings allow that).

Every artifact has ``ok``. ``ok: True`` means the tool did its work; what the work found
is in the other fields (a script that exits with 1 ran: ``ok`` is true, ``exit_code`` 1).
A call that failed inside the tool (a :class:`~jarvis_graph.tools.base.ToolFailure`, or
a bug) gets a :class:`Failed` artifact of its tool's kind with the error text.

A call that fails *before* the tool runs has no artifact (``None``): malformed JSON
arguments, an unknown tool, an argument the schema does not name or of the wrong type,
a call refused as a repeat, a call the user declined. Tools of users and MCP servers have
none either: their results are text only.

Pure module: no langchain import.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path, PurePosixPath
from typing import Any, Literal, TypedDict, cast

ArtifactKind = Literal["read", "listing", "search", "run", "computation", "edit", "memory"]
KINDS: frozenset[str] = frozenset(ArtifactKind.__args__)  # type: ignore[attr-defined]

ARTIFACT_KIND = "artifact_kind"
"""The key of a tool's ``metadata`` naming the kind of its artifacts (also of a failure)."""

MAX_LIST_LENGTHS = 200
"""Lists of a JSON file whose lengths a read records: a file of many lists keeps the first."""
MAX_HIT_LINES = 2_000
"""Line numbers a search records in all (its ``matching_lines`` counts every one)."""


class ReadArtifact(TypedDict):
    """``read_code`` (or ``list_files`` given a file): which lines of which file were shown."""

    kind: Literal["read"]
    ok: bool
    path: str
    first_line: int
    last_line: int
    total_lines: int | None
    """Lines of the file; ``None`` when it is too large to count (only its start was read)."""
    data_rows: int | None
    """Non-empty lines after the header of a CSV/TSV file; ``None`` for other files."""
    list_lengths: dict[str, int]
    """For a JSON file, each list's length by dotted path (``""`` the top level,
    ``"orders.0.items"``); ``{}`` for other files or JSON that does not parse."""


class ListingArtifact(TypedDict):
    """``list_files`` (or ``read_code`` given a folder): the files found, and counts."""

    kind: Literal["listing"]
    ok: bool
    folder: str
    pattern: str
    entries: list[str]
    """Paths relative to ``folder``, as many as the text shows."""
    files: int
    """Every matching file, also those past the entries shown."""
    folders: int
    """Distinct folders below ``folder`` holding the matching files (nested ones counted)."""
    extensions: dict[str, int]
    """Matching files per extension (``".md"``; ``""`` for none)."""


class SearchArtifact(TypedDict):
    """``search_files``/``search_code``: where the pattern matched."""

    kind: Literal["search"]
    ok: bool
    pattern: str
    """The regular expression searched (the corrected one when the tool read it another way)."""
    path: str
    glob: str
    hits: dict[str, list[int]]
    """Matching line numbers by file (at most :data:`MAX_HIT_LINES` in all)."""
    matching_lines: int
    word_counts: dict[str, int]
    """Per file, how often the pattern occurs as a whole word in its matching lines
    (``ERROR`` in ``ERROR:`` counts, in ``ERRORS`` not); files with none are left out."""


class RunArtifact(TypedDict):
    """``execute_script``: the command and how it ended."""

    kind: Literal["run"]
    ok: bool
    command: str
    exit_code: int | None
    """bash's exit code; ``None`` when the script was stopped (time limit, output cap)."""
    output: str
    """The output as the text shows it: cut to its head and tail when it was long."""
    output_file: str | None
    """Where the whole output was saved when it was cut."""
    timed_out: bool
    started: bool
    """Whether the script's program started: the shell ran, and did not end with 126 or
    127, bash's status when its (last) command could not be run or was not found."""


class ComputationArtifact(TypedDict):
    """``compute``: an expression and its value."""

    kind: Literal["computation"]
    ok: bool
    expression: str
    """The expression as evaluated (after the calculator's repairs)."""
    value: str
    read_as: str
    """The expression actually computed when the calculator read the given one as another
    (``sum(numbers.txt)``); ``""`` when it computed the one given."""


class EditedFile(TypedDict):
    """One file an edit tool wrote."""

    path: str
    created: bool
    bytes: int
    lines: int


class EditArtifact(TypedDict):
    """``write_file``/``rewrite_file``/``edit_file``: the files written and their size after."""

    kind: Literal["edit"]
    ok: bool
    files: list[EditedFile]


class SavedMemory(TypedDict):
    """One memory ``save_memory`` stored."""

    id: str
    tier: str
    tags: list[str]
    content: str


class MemoryArtifact(TypedDict):
    """``save_memory``: what was saved, in which tier."""

    kind: Literal["memory"]
    ok: bool
    saved: list[SavedMemory]


class Failed(TypedDict):
    """A call of a tool that failed inside the tool; ``error`` is the text the model got."""

    kind: ArtifactKind
    ok: Literal[False]
    error: str


Artifact = (
    ReadArtifact
    | ListingArtifact
    | SearchArtifact
    | RunArtifact
    | ComputationArtifact
    | EditArtifact
    | MemoryArtifact
    | Failed
)


def is_artifact(value: object) -> bool:
    """Whether ``value`` is an artifact of this module (a tool's own artifact is not kept)."""
    return isinstance(value, dict) and value.get("kind") in KINDS and "ok" in value


def failed(kind: str, error: str) -> Failed | None:
    """The artifact of a failed call of a tool whose artifacts are of ``kind`` (else ``None``)."""
    if kind not in KINDS:
        return None
    return Failed(kind=cast(ArtifactKind, kind), ok=False, error=error)


def masked(artifact: Artifact, mask: Callable[[str], str]) -> Artifact:
    """``artifact`` with ``mask`` applied to each text in it, keys too (file names are keys).

    The artifact is stored with the message, like the text: a secret masked in the one is
    masked in the other.
    """

    def each(value: Any) -> Any:
        if isinstance(value, str):
            return mask(value)
        if isinstance(value, dict):
            return {mask(k): each(v) for k, v in value.items()}
        if isinstance(value, list):
            return [each(v) for v in value]
        return value

    return each(artifact)  # type: ignore[no-any-return]


def relative(workspace: Path, full: Path) -> str:
    """``full`` as a workspace-relative POSIX path (``"."`` the root; absolute outside it)."""
    try:
        return full.relative_to(workspace.resolve()).as_posix() or "."
    except ValueError:
        return full.as_posix()


# --- read -----------------------------------------------------------------------------------


def read(
    path: str,
    first: int,
    last: int,
    total: int | None,
    data_rows: int | None = None,
    text: str | None = None,
) -> ReadArtifact:
    """A read of lines ``first..last``; ``text`` is the whole file's when it was read whole."""
    lengths = list_lengths(text) if text is not None and path.lower().endswith(".json") else {}
    return {
        "kind": "read",
        "ok": True,
        "path": path,
        "first_line": first,
        "last_line": last,
        "total_lines": total,
        "data_rows": data_rows,
        "list_lengths": lengths,
    }


def list_lengths(text: str) -> dict[str, int]:
    """The length of every list in a JSON document, by dotted path (``{}`` if it is not JSON)."""
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    found: dict[str, int] = {}
    stack: list[tuple[str, Any]] = [("", data)]
    while stack and len(found) < MAX_LIST_LENGTHS:
        where, value = stack.pop()
        if isinstance(value, list):
            found[where] = len(value)
            children: Iterable[tuple[str, Any]] = ((str(i), v) for i, v in enumerate(value))
        elif isinstance(value, dict):
            children = ((str(k), v) for k, v in value.items())
        else:
            continue
        # reversed onto the stack: the document's order comes out first
        stack += reversed([(f"{where}.{k}" if where else k, v) for k, v in children])
    return found


# --- listing --------------------------------------------------------------------------------


def listing(folder: str, pattern: str, found: list[str], shown: int) -> ListingArtifact:
    """The files ``found`` (relative to ``folder``) of which the text shows the first ``shown``."""
    parents = {str(p) for r in found for p in PurePosixPath(r).parents if str(p) != "."}
    return {
        "kind": "listing",
        "ok": True,
        "folder": folder,
        "pattern": pattern,
        "entries": found[:shown],
        "files": len(found),
        "folders": len(parents),
        "extensions": dict(Counter(PurePosixPath(r).suffix for r in found)),
    }


# --- search ---------------------------------------------------------------------------------

_HIT = re.compile(r"^(.*?):(\d+):(.*)$", re.DOTALL)
"""``file:line:text``, as ripgrep and the Python search both write a hit."""


def search(
    pattern: str, path: str, glob: str, hits: list[str], where: Callable[[str], str]
) -> SearchArtifact:
    """The hits of a search (``file:line:text`` each).

    ``where`` turns the file a hit names (as the text shows it, relative to ``path``) into
    its workspace-relative path.
    """
    lines: dict[str, list[int]] = {}
    words: Counter[str] = Counter()
    word = _whole_word(pattern)
    recorded = 0
    for hit in hits:
        match = _HIT.match(hit)
        if match is None:
            continue
        label, number, text = match.groups()
        name = where(label)
        if recorded < MAX_HIT_LINES:
            lines.setdefault(name, []).append(int(number))
            recorded += 1
        if word is not None and (count := len(word.findall(text))):
            words[name] += count
    return {
        "kind": "search",
        "ok": True,
        "pattern": pattern,
        "path": path,
        "glob": glob,
        "hits": lines,
        "matching_lines": len(hits),
        "word_counts": dict(words),
    }


def _whole_word(pattern: str) -> re.Pattern[str] | None:
    """``pattern`` matched only where no letter, digit or ``_`` touches it."""
    try:
        return re.compile(rf"(?<!\w)(?:{pattern})(?!\w)")
    except re.error:  # a pattern only ripgrep reads: no word counts
        return None


# --- run, computation, edit, memory ---------------------------------------------------------

NOT_STARTED_CODES = frozenset({126, 127})
"""bash's exit codes for a command it could not run (not executable; not found)."""


def run(
    command: str,
    exit_code: int | None,
    output: str,
    *,
    output_file: str | None,
    timed_out: bool,
    shell_started: bool,
) -> RunArtifact:
    """A script run; ``output`` as the text shows it."""
    return {
        "kind": "run",
        "ok": True,
        "command": command,
        "exit_code": exit_code,
        "output": output,
        "output_file": output_file,
        "timed_out": timed_out,
        "started": shell_started and exit_code not in NOT_STARTED_CODES,
    }


def computation(expression: str, value: str, read_as: str = "") -> ComputationArtifact:
    """An expression and its value, both as text."""
    return {
        "kind": "computation",
        "ok": True,
        "expression": expression,
        "value": value,
        "read_as": read_as,
    }


def edited_file(workspace: Path, full: Path, created: bool) -> EditedFile:
    """A written file as it is on disk now."""
    data = full.read_bytes()
    lines = data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1)
    return {
        "path": relative(workspace, full),
        "created": created,
        "bytes": len(data),
        "lines": lines,
    }


def edit(files: list[EditedFile]) -> EditArtifact:
    """The files an edit tool wrote."""
    return {"kind": "edit", "ok": True, "files": files}


def memory(records: Iterable[Mapping[str, Any]]) -> MemoryArtifact:
    """The memory records saved."""
    saved: list[SavedMemory] = [
        {
            "id": str(r["id"]),
            "tier": str(r["type"]),
            "tags": [str(t) for t in r.get("tags", [])],
            "content": str(r.get("content", "")),
        }
        for r in records
    ]
    return {"kind": "memory", "ok": True, "saved": saved}
