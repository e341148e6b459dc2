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
