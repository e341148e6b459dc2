"""Read-only tools of a security verification agent, rooted at the scanned tree.

``read_code`` and ``search_code`` wrap the built-in file logic (the same path checks and
output limits); ``submit_verdict`` is how the agent hands back its structured verdict.
Errors come back to the model as text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field

from jarvis_graph.tools.base import ToolEnv, ToolFailure
from jarvis_graph.tools.builtin import read_code_impl, search_files_impl

VERDICT_TOOL = "submit_verdict"


class Evidence(BaseModel):
    """Lines the verdict relies on, and the code on them."""

    path: str = Field(description="the file, as read_code takes it")
    start_line: int = Field(description="first line of the evidence")
    end_line: int = Field(description="last line of the evidence")
    code: str = Field(
        max_length=300, description="the code on those lines that shows it, copied exactly"
    )


class VerdictArgs(BaseModel):
    """The structured verdict on one candidate issue.

    The reasoning and the evidence come before the decision: a model writing the fields in
    order decides after it has said what the code shows. Lengths are bounded: a small
    model otherwise writes the prompt back into a field for hundreds of tokens.
    """

    reasoning: str = Field(
        max_length=600, description="what the code shows, in your own words, naming lines"
    )
    evidence: list[Evidence] = Field(
        min_length=1,
        max_length=4,
        description="the lines your verdict relies on (at least one in the finding's file)",
    )
    verdict: Literal["confirmed", "false_positive", "uncertain"] = Field(
        description="confirmed: the issue is real; false_positive: it is not; uncertain"
    )
    suggested_fix: str = Field(
        default="", max_length=400, description="the change that fixes it, if real"
    )


def verification_tools(root: str | Path) -> list[BaseTool]:
    """``read_code``, ``search_code`` and ``submit_verdict`` for files under ``root``."""
    base = Path(root).resolve()
    env = ToolEnv(base if base.is_dir() else base.parent)

    def read_code(path: str, start_line: int = 1, end_line: int | None = None) -> str:
        """Numbered lines start_line..end_line of a source file of the scanned tree."""
        try:
            return read_code_impl(env, path, start_line, end_line)
        except ToolFailure as exc:
            return f"read_code failed: {exc}"

    def search_code(pattern: str, glob: str = "*") -> str:
        """Lines matching a regular expression in the scanned tree (glob filters files)."""
        try:
            return search_files_impl(env, pattern, ".", glob)
        except ToolFailure as exc:
            return f"search_code failed: {exc}"

    def submit_verdict(
        reasoning: str, evidence: list[dict[str, str]], verdict: str, suggested_fix: str = ""
    ) -> str:
        """Hand back the verdict on the candidate, with the lines it relies on; call once."""
        return f"verdict recorded: {verdict}"

    return [
        StructuredTool.from_function(read_code),
        StructuredTool.from_function(search_code),
        StructuredTool.from_function(submit_verdict, name=VERDICT_TOOL, args_schema=VerdictArgs),
    ]
