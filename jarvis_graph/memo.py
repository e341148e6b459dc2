"""Values computed from an object, remembered while the object lives and is unchanged.

Work repeated over the whole history at every step (its size in characters, its stored
form in a checkpoint) is done once per message. An entry is found only for the same
object whose watched fields are still the same objects, and goes when the object does.
"""

from __future__ import annotations

import operator
import weakref
from typing import Generic, TypeVar

V = TypeVar("V")


class ObjectMemo(Generic[V]):
    """``object -> value``, keyed by identity (the object need not be hashable)."""

    def __init__(self) -> None:
        # id(obj) -> (weak reference to obj, the watched fields when computed, value). The
        # fields are held, so a replaced field cannot be mistaken for a new one at its address.
        self._entries: dict[int, tuple[weakref.ref[object], tuple[object, ...], V]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, obj: object, *fields: object) -> V | None:
        """The value remembered for ``obj`` while its watched fields were ``fields``."""
        entry = self._entries.get(id(obj))
        if (
            entry is not None
            and entry[0]() is obj
            and len(entry[1]) == len(fields)
            and all(map(operator.is_, entry[1], fields))
        ):
            return entry[2]
        return None

    def put(self, obj: object, value: V, *fields: object) -> None:
        """Remember ``value`` for ``obj``, computed while its watched fields were ``fields``."""
        key, entries = id(obj), self._entries

        def forget(_ref: object) -> None:
            entries.pop(key, None)

        entries[key] = (weakref.ref(obj, forget), fields, value)
