"""Pure code-editing engine: PATCH (search/replace and range edits) and REWRITE.

Plain functions over strings, bytes and paths; no langchain or langgraph imports. The
tools in :mod:`jarvis_graph.tools.code_tools` are thin wrappers around it.
"""

from jarvis_graph.editing.apply import (
    FileOutcome,
    PatchOutcome,
    apply_patch,
    plan_patch,
    rewrite_file,
)
from jarvis_graph.editing.edits import apply_edits
from jarvis_graph.editing.errors import EditError
from jarvis_graph.editing.model import Edit, FilePatch, edits_from_dicts
from jarvis_graph.editing.patch_text import parse_patch_blocks

__all__ = [
    "Edit",
    "EditError",
    "FileOutcome",
    "FilePatch",
    "PatchOutcome",
    "apply_edits",
    "apply_patch",
    "edits_from_dicts",
    "parse_patch_blocks",
    "plan_patch",
    "rewrite_file",
]
