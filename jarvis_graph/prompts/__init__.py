"""Prompt texts live here as ``*.md`` files and are loaded by name."""

from __future__ import annotations

import functools
from importlib import resources


@functools.cache
def load_prompt(name: str) -> str:
    """The text of ``prompts/<name>.md``.

    Raises:
        FileNotFoundError: No prompt file of that name ships with the package.
    """
    return resources.files(__name__).joinpath(f"{name}.md").read_text(encoding="utf-8")


CONTEXT_HEADING = "# This task's context"
"""Heads the last part of the system prompt: what changes from task to task (the workspace,
the date, memories, lessons). Everything above it is the same for every task of a
configuration, so a model that keeps the state of a prompt's beginning (the local model's
saved prompt states, a provider's prompt cache) processes it once; the local model puts
the part under this heading after its tool list, before its reply rules."""


TOOL_USE = {
    "native": (
        "- Call tools through the tool-calling interface (function calls), never by writing "
        "a call out as text; several independent calls may go in one turn."
    ),
    "text": (
        "- Call a tool by writing a <TOOL_CALL> block in your reply, as the Tools section "
        "below shows; a call written any other way (JSON, code blocks) is not run."
    ),
    "local": (
        "- Call tools by replying with the JSON object the rules below describe: its `tool` "
        "and `arguments`."
    ),
}
"""How the model calls tools, by mode: the system prompt describes the mode in use."""


def tool_use_line(platform: str, tool_protocol: str) -> str:
    """The system-prompt line on calling tools for a model on ``platform``."""
    if platform == "local":
        return TOOL_USE["local"]
    return TOOL_USE["text" if tool_protocol == "text" else "native"]
