"""The edits a PATCH call asks for, as plain frozen dataclasses."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from jarvis_graph.editing.errors import EditError


@dataclass(frozen=True)
class Edit:
    """One change to a file.

    A single replacement has ``search`` (which must match exactly once); a range
    replacement has ``search_start`` and ``search_end`` (the text from the start marker
    through the end marker is replaced), optionally limited to the 1-based line window
    ``range`` (``"10-40"``). ``replace`` is the new text in both forms.
    """

    search: str | None = None
    replace: str = ""
    search_start: str | None = None
    search_end: str | None = None
    range: str | None = None

    @property
    def is_range(self) -> bool:
        """Whether this is a range replacement (SEARCH_START / SEARCH_END)."""
        return self.search_start is not None or self.search_end is not None


@dataclass(frozen=True)
class FilePatch:
    """The edits for one file, applied in order, all or nothing."""

    path: str
    edits: tuple[Edit, ...] = field(default_factory=tuple)


_KEYS = {
    "search": "search",
    "replace": "replace",
    "search_start": "search_start",
    "search_end": "search_end",
    "range": "range",
}


def edit_from_dict(raw: Mapping[str, Any], index: int) -> Edit:
    """An :class:`Edit` from a mapping with Jarvis' keys (any letter case).

    Raises:
        EditError: Unknown keys, a value that is not text, or a half-formed edit.
    """
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if str(key).lower() == "reason":  # Jarvis' edits carry one; it changes nothing
            continue
        name = _KEYS.get(str(key).lower())
        if name is None:
            msg = (
                f"edit {index} has an unknown key {key!r}; use SEARCH and REPLACE, or "
                "SEARCH_START, SEARCH_END, REPLACE and optionally RANGE"
            )
            raise EditError("invalid_edit", msg)
        if value is not None and not isinstance(value, str | int):
            msg = f"edit {index}: {key} must be text, got {type(value).__name__}"
            raise EditError("invalid_edit", msg)
        values[name] = None if value is None else str(value)
    edit = Edit(
        search=values.get("search"),
        replace=values.get("replace") or "",
        search_start=values.get("search_start"),
        search_end=values.get("search_end"),
        range=values.get("range"),
    )
    _check(edit, index)
    return edit


def _check(edit: Edit, index: int) -> None:
    if edit.is_range:
        if edit.search is not None:
            msg = f"edit {index} mixes SEARCH with SEARCH_START/SEARCH_END; use one form"
            raise EditError("invalid_edit", msg)
        if not edit.search_start or not edit.search_end:
            msg = (
                f"edit {index} is a range edit but SEARCH_START or SEARCH_END is empty; give "
                "both: the first line(s) and the last line(s) of the text to replace"
            )
            raise EditError("invalid_edit", msg)
    elif edit.search is None:
        msg = (
            f"edit {index} has no SEARCH text; give SEARCH (text that occurs once) and "
            "REPLACE, or SEARCH_START and SEARCH_END for a range"
        )
        raise EditError("invalid_edit", msg)
    elif edit.search and edit.search == edit.replace:
        msg = (
            f"edit {index} replaces a text with itself, so it would change nothing; SEARCH "
            "is the text as the file has it now, REPLACE the text it should have instead"
        )
        raise EditError("invalid_edit", msg)


def edits_from_dicts(raw: list[Mapping[str, Any]]) -> tuple[Edit, ...]:
    """Edits from a list of mappings (see :func:`edit_from_dict`)."""
    return tuple(edit_from_dict(item, i) for i, item in enumerate(raw, 1))
