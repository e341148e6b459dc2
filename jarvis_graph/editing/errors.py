"""Why an edit could not be applied, in words written for the model."""

from __future__ import annotations

from typing import Literal

ErrorKind = Literal["not_found", "ambiguous", "invalid_range", "invalid_edit", "file"]


class EditError(ValueError):
    """An edit that cannot be applied; ``str(error)`` tells the model how to fix the call.

    Attributes:
        kind: ``not_found``, ``ambiguous``, ``invalid_range``, ``invalid_edit`` or ``file``.
        lines: Line numbers the message points at (the matches, or the similar lines).
    """

    def __init__(self, kind: ErrorKind, message: str, lines: tuple[int, ...] = ()) -> None:
        super().__init__(message)
        self.kind = kind
        self.lines = lines
