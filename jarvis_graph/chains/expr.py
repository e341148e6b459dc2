"""References and conditions of a tool chain (plain data, no framework imports).

A reference is ``${input.NAME}`` or ``${steps.ID.FIELD}`` (``result``, ``status``, ``ok``),
optionally followed by a path into JSON (``${steps.find.result.files.0}``). An argument that
is exactly one reference keeps the value's type (a list stays a list); a reference inside
longer text is replaced by the value's text.

A condition (a step's ``if:``) is ``[not] OPERAND [OP OPERAND]`` with ``OP`` one of ``==``,
``!=``, ``contains``, ``startswith``; an operand is a reference, a quoted text or a bare
word. Without ``OP`` the operand must be true: not empty, not ``false``, ``0``, ``no`` or
``none``. Conditions are parsed by these rules only; nothing in them is evaluated as code.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

REFERENCE = re.compile(r"\$\{([^}]*)\}")
STEP_FIELDS = ("result", "status", "ok")
OPERATORS = ("==", "!=", "contains", "startswith")
FALSE_WORDS = ("", "false", "0", "no", "none", "null")


class ExpressionError(ValueError):
    """A reference or condition is not written as the rules say."""


class ChainRunError(ValueError):
    """A reference cannot be resolved with the values of this run (the step fails)."""


@dataclass(frozen=True)
class Reference:
    """One parsed ``${...}``: ``input`` or a step, the field, and a path into JSON."""

    text: str
    scope: str
    name: str
    field: str = ""
    path: tuple[str, ...] = ()

    @property
    def step(self) -> str | None:
        """The step it reads, if it reads one."""
        return self.name if self.scope == "steps" else None


def parse_reference(text: str) -> Reference:
    """Parse the inside of ``${...}``.

    Raises:
        ExpressionError: Not ``input.NAME[.path]`` or ``steps.ID.FIELD[.path]``.
    """
    parts = [p.strip() for p in text.split(".")]
    if len(parts) >= 2 and parts[0] == "input" and all(parts):
        return Reference(text, "input", parts[1], path=tuple(parts[2:]))
    if len(parts) >= 3 and parts[0] == "steps" and all(parts) and parts[2] in STEP_FIELDS:
        if parts[2] != "result" and len(parts) > 3:
            msg = f"${{{text}}}: only a step's result has fields (${{steps.ID.result.NAME}})"
            raise ExpressionError(msg)
        return Reference(text, "steps", parts[1], parts[2], tuple(parts[3:]))
    msg = (
        f"${{{text}}} is not a reference: write ${{input.NAME}} or ${{steps.ID.result}} "
        f"(or .status, .ok; a result's JSON fields as ${{steps.ID.result.NAME}})"
    )
    raise ExpressionError(msg)


def references(value: Any) -> list[Reference]:
    """Every reference in ``value`` (nested lists and mappings included)."""
    if isinstance(value, Mapping):
        return [r for v in value.values() for r in references(v)]
    if isinstance(value, list):
        return [r for v in value for r in references(v)]
    if isinstance(value, str):
        return [parse_reference(found) for found in REFERENCE.findall(value)]
    return []


def whole_reference(value: Any) -> Reference | None:
    """The reference ``value`` is made of alone (so it keeps its type), if it is one."""
    if isinstance(value, str):
        found = REFERENCE.fullmatch(value.strip())
        if found:
            return parse_reference(found.group(1))
    return None


def lookup(ref: Reference, scope: Mapping[str, Any]) -> Any:
    """The value ``ref`` names in ``scope`` (``{"input": {...}, "steps": {id: {...}}}``).

    Raises:
        ChainRunError: The value is missing, or the path does not lead into JSON.
    """
    if ref.scope == "input":
        inputs = scope.get("input") or {}
        if ref.name not in inputs:
            msg = f"${{{ref.text}}}: the chain was given no input {ref.name!r}"
            raise ChainRunError(msg)
        value = inputs[ref.name]
    else:
        step = (scope.get("steps") or {}).get(ref.name)
        if step is None:
            msg = f"${{{ref.text}}}: step {ref.name!r} has not run"
            raise ChainRunError(msg)
        if ref.field == "ok":
            return step.get("status") == "succeeded"
        value = step.get(ref.field, "")
        if ref.path:
            try:
                value = json.loads(value)
            except (TypeError, ValueError):
                msg = (
                    f"${{{ref.text}}}: the result of step {ref.name!r} is not JSON, so it has "
                    f"no field {ref.path[0]!r}; use ${{steps.{ref.name}.result}} for its text"
                )
                raise ChainRunError(msg) from None
    return _follow(value, ref)


def _follow(value: Any, ref: Reference) -> Any:
    for key in ref.path:
        if isinstance(value, Mapping) and key in value:
            value = value[key]
        elif isinstance(value, list) and key.isdigit() and int(key) < len(value):
            value = value[int(key)]
        else:
            have = list(value)[:10] if isinstance(value, Mapping) else type(value).__name__
            msg = f"${{{ref.text}}}: no {key!r} in the value (it has {have})"
            raise ChainRunError(msg)
    return value


def as_text(value: Any) -> str:
    """A value as it is written into text: strings as they are, the rest as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value, ensure_ascii=False)


def substitute(value: Any, scope: Mapping[str, Any]) -> Any:
    """``value`` with every reference replaced by what it names in ``scope``.

    Raises:
        ChainRunError: A reference cannot be resolved.
    """
    if isinstance(value, Mapping):
        return {k: substitute(v, scope) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, scope) for v in value]
    if not isinstance(value, str):
        return value
    whole = whole_reference(value)
    if whole is not None:
        return lookup(whole, scope)
    return REFERENCE.sub(lambda m: as_text(lookup(parse_reference(m.group(1)), scope)), value)


def fill(text: str, scope: Mapping[str, Any]) -> str:
    """``text`` with its references replaced; one that cannot be resolved says why instead."""

    def one(found: re.Match[str]) -> str:
        try:
            return as_text(lookup(parse_reference(found.group(1)), scope))
        except ChainRunError as exc:
            return f"({exc})"

    return REFERENCE.sub(one, text)


@dataclass(frozen=True)
class Condition:
    """A parsed ``if:``: ``negate``, a left operand, and optionally an operator and right."""

    text: str
    negate: bool
    left: str
    op: str = ""
    right: str = ""

    def references(self) -> list[Reference]:
        """The references its operands hold."""
        return references([self.left, self.right])

    def holds(self, scope: Mapping[str, Any]) -> bool:
        """Whether the condition is true for ``scope``.

        Raises:
            ChainRunError: An operand's reference cannot be resolved.
        """
        left = as_text(substitute(self.left, scope))
        if not self.op:
            result = left.strip().lower() not in FALSE_WORDS
        else:
            right = as_text(substitute(self.right, scope))
            result = {
                "==": lambda: left.strip() == right.strip(),
                "!=": lambda: left.strip() != right.strip(),
                "contains": lambda: right in left,
                "startswith": lambda: left.lstrip().startswith(right),
            }[self.op]()
        return result != self.negate


def parse_condition(text: str) -> Condition:
    """Parse a step's ``if:`` text.

    Raises:
        ExpressionError: It is not ``[not] OPERAND [OP OPERAND]``, or a reference in it is bad.
    """
    try:
        words = shlex.split(text, posix=True)
    except ValueError as exc:
        msg = f"condition {text!r}: {exc} (quote text with ' or \")"
        raise ExpressionError(msg) from None
    negate = bool(words) and words[0] == "not"
    words = words[1:] if negate else words
    if len(words) == 1:
        condition = Condition(text, negate, words[0])
    elif len(words) == 3 and words[1] in OPERATORS:
        condition = Condition(text, negate, words[0], words[1], words[2])
    else:
        msg = (
            f"condition {text!r} is not [not] VALUE [OP VALUE] with OP one of "
            f"{', '.join(OPERATORS)} (quote text that has spaces)"
        )
        raise ExpressionError(msg)
    condition.references()  # a bad reference is an error now, not when the step runs
    return condition
