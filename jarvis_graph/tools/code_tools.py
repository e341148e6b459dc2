"""Code tools: ``edit_file`` (PATCH), ``rewrite_file``, ``write_file`` and ``search_code``.

Thin wrappers around :mod:`jarvis_graph.editing`; with ``read_code`` and
``execute_script`` they make the code agent's tool set (:data:`CODE_TOOLS`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.tools import BaseTool, tool
from pydantic import BaseModel, ConfigDict, Field, model_validator

from jarvis_graph import editing
from jarvis_graph.editing import EditError, FilePatch, apply_patch, edits_from_dicts
from jarvis_graph.editing.data_changes import report_lines
from jarvis_graph.editing.linters import suggest_linters
from jarvis_graph.tools import artifacts
from jarvis_graph.tools.artifacts import ARTIFACT_KIND, Artifact, EditArtifact
from jarvis_graph.tools.base import ToolEnv, ToolFailure, ToolInputError, current_env
from jarvis_graph.tools.builtin import search_files_result


class Diff(BaseModel):
    """One edit: SEARCH/REPLACE, or SEARCH_START/SEARCH_END/REPLACE with an optional RANGE."""

    model_config = ConfigDict(extra="forbid")
    search: str | None = Field(
        None, description="Text to replace; must occur exactly once in the file."
    )
    replace: str = Field("", description="The new text.")
    search_start: str | None = Field(None, description="Range edit: where the old text starts.")
    search_end: str | None = Field(None, description="Range edit: where the old text ends.")
    range: str | None = Field(None, description="Range edit: line window 'start-end' to look in.")

    @model_validator(mode="before")
    @classmethod
    def _lower_keys(cls, data: Any) -> Any:
        """Models often write Jarvis' upper-case keys (SEARCH, REPLACE) and a ``reason``."""
        if not isinstance(data, dict):
            return data
        return {str(k).lower(): v for k, v in data.items() if str(k).lower() != "reason"}


class FileEdits(BaseModel):
    """The edits for one file."""

    model_config = ConfigDict(extra="forbid")
    path: str = Field(description="File path relative to the workspace root.")
    diffs: list[Diff] = Field(description="Edits applied in order, all or none.")


def _safe_resolve(env: ToolEnv) -> Any:
    def resolve(path: str) -> Path:
        full = env.resolve(path)
        if ".git" in full.parts:
            msg = f"{path!r} is inside a .git folder; edit the project's files, not git's"
            raise ToolInputError(msg)
        return full

    return resolve


def lint_hint(paths: list[str]) -> str:
    """A line suggesting the installed linters for ``paths`` (empty when none fit)."""
    commands = suggest_linters(paths)
    if not commands:
        return ""
    return (
        "\nInstalled linters for these files: "
        + "; ".join(commands)
        + (" (run one with execute_script to check the change).")
    )


def edit_file_impl(env: ToolEnv, files: list[dict[str, Any]]) -> str:
    """Apply PATCH edits to one or more files: all of them or none (:func:`edit_file_result`)."""
    return edit_file_result(env, files)[0]


def edit_file_result(env: ToolEnv, files: list[dict[str, Any]]) -> tuple[str, EditArtifact]:
    """Apply PATCH edits to one or more files: all of them or none; the files written."""
    if not files:
        msg = "files is empty; give at least one {path, diffs} entry"
        raise ToolInputError(msg)
    try:
        patches = [FilePatch(f["path"], edits_from_dicts(f["diffs"])) for f in files]
    except EditError as exc:
        raise ToolInputError(str(exc)) from exc
    resolve = _safe_resolve(env)
    outcome = apply_patch(patches, resolve)
    if not outcome.ok:
        raise ToolFailure(outcome.report())
    written = [
        artifacts.edited_file(env.workspace, resolve(f.path), f.created) for f in outcome.files
    ]
    return outcome.report() + lint_hint([f.path for f in outcome.files]), artifacts.edit(written)


def rewrite_file_impl(env: ToolEnv, path: str, content: str) -> str:
    """Replace a whole file (or create it) atomically (see :func:`rewrite_file_result`)."""
    return rewrite_file_result(env, path, content)[0]


def rewrite_file_result(env: ToolEnv, path: str, content: str) -> tuple[str, EditArtifact]:
    """Replace a whole file (or create it) atomically; the file written."""
    full = _safe_resolve(env)(path)
    outcome = editing.rewrite_file(full, path, content)
    if not outcome.ok:
        raise ToolFailure(f"{path} was not changed: {outcome.message}")
    lines = content.count("\n") + (0 if content.endswith("\n") or not content else 1)
    verb = "Created" if outcome.created else "Rewrote"
    changes = report_lines(path, outcome.before, outcome.after or "")
    artifact = artifacts.edit([artifacts.edited_file(env.workspace, full, outcome.created)])
    return f"{verb} {path} ({lines} lines).{changes}" + lint_hint([path]), artifact


@tool(parse_docstring=True, response_format="content_and_artifact")
def edit_file(files: list[FileEdits]) -> tuple[str, EditArtifact]:
    """Edit files with search/replace edits; a call is applied completely or not at all.

    Each SEARCH text must occur exactly once (copy it from read_code without the line
    numbers). For a long block give SEARCH_START and SEARCH_END instead: the text from the
    start through the end is replaced; RANGE ('10-40') limits where they are looked for.
    To create a file, give one edit with an empty SEARCH and the content as REPLACE.

    Args:
        files: One entry per file: its path and its diffs.
    """
    raw = [f.model_dump() if isinstance(f, BaseModel) else f for f in files]
    return edit_file_result(current_env(), raw)


@tool(parse_docstring=True, response_format="content_and_artifact")
def rewrite_file(path: str, content: str) -> tuple[str, EditArtifact]:
    """Replace the whole content of a file, or create it (written atomically).

    Args:
        path: File path relative to the workspace root.
        content: The complete new content of the file.
    """
    return rewrite_file_result(current_env(), path, content)


@tool(parse_docstring=True, response_format="content_and_artifact")
def write_file(path: str, content: str) -> tuple[str, EditArtifact]:
    """Write a file: create it, or replace all of its content (written atomically).

    Args:
        path: File path relative to the workspace root.
        content: The complete content of the file.
    """
    return rewrite_file_result(current_env(), path, content)


@tool(parse_docstring=True, response_format="content_and_artifact")
def search_code(
    pattern: str, path: str = ".", glob: str = "*", ignore_case: bool = False
) -> tuple[str, Artifact]:
    """Search the code with a regular expression; returns file:line:text.

    Args:
        pattern: Regular expression to look for, e.g. "def load_" or "TODO".
        path: Directory or file relative to the workspace root.
        glob: Only files whose name matches this glob, e.g. "*.py".
        ignore_case: Match upper and lower case alike.
    """
    return search_files_result(
        current_env(), f"(?i){pattern}" if ignore_case else pattern, path, glob
    )


# Where each tool's arguments name the files it writes (see :mod:`.protected`).
_EDITS = {"risky": True, "edits_files": True, ARTIFACT_KIND: "edit"}
edit_file.metadata = {**_EDITS, "write_targets": ["files.*.path"]}
rewrite_file.metadata = {**_EDITS, "write_targets": ["path"]}
write_file.metadata = {**_EDITS, "write_targets": ["path"]}
search_code.metadata = {ARTIFACT_KIND: "search"}

CODE_TOOLS: list[BaseTool] = [edit_file, rewrite_file, search_code]
"""Added to the built-in tools when a run uses the code tool set."""

FILE_TOOLS: list[BaseTool] = [write_file, edit_file]
"""Added to the built-in tools of ``jarvis run`` (the agent tool set)."""
