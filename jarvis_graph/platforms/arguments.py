"""Exact parsing of tool-call arguments: a JSON object, or a reason written for the model.

Providers send a call's arguments as a JSON string. LangChain repairs strings that do not
parse (a partial-JSON parser closes cut strings and braces), so a cut-off
``{"script": "touch x`` would run as ``touch x``. Nothing a model writes is run unless it
parsed exactly: this module is the one check every platform's raw arguments go through.
"""

from __future__ import annotations

import json
from typing import Any

RAW_TOOL_CALLS = "jarvis_raw_tool_calls"
"""``additional_kwargs`` key where a platform leaves the calls' arguments as received:
``[{"id", "name", "arguments"}]`` (see :mod:`jarvis_graph.platforms.openai_raw`)."""

_KINDS = {list: "a JSON array", str: "a JSON string", bool: "a JSON boolean", type(None): "null"}


class _Duplicate(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise _Duplicate(key)
        seen[key] = value
    return seen


def _no_constants(name: str) -> Any:
    msg = f"{name} is not a JSON value"
    raise ValueError(msg)


def parse_arguments(raw: str) -> tuple[dict[str, Any] | None, str | None]:
    """The arguments ``raw`` holds, or ``None`` and what is wrong with them.

    Accepted is exactly one JSON object (RFC 8259: no NaN or Infinity, no control
    characters inside strings, no text after it), each key once.
    """
    if not raw.strip():
        return None, (
            "the arguments are empty: send a JSON object, `{}` when the tool takes no parameters"
        )
    try:
        value = json.loads(raw, object_pairs_hook=_no_duplicates, parse_constant=_no_constants)
    except _Duplicate as exc:
        return None, (
            f"the key {exc.args[0]!r} appears more than once, so which value is meant is "
            "unclear: send each parameter once"
        )
    except json.JSONDecodeError as exc:
        return None, _describe_decode_error(raw, exc)
    except ValueError as exc:  # NaN, Infinity
        return None, f"the arguments are not valid JSON: {exc}; use a number or a string"
    if not isinstance(value, dict):
        kind = _KINDS.get(type(value), "a JSON number")
        return None, (
            f"the arguments must be a JSON object mapping parameter names to values, not {kind}"
        )
    return value, None


def _describe_decode_error(raw: str, exc: json.JSONDecodeError) -> str:
    where = f"line {exc.lineno}, column {exc.colno}"
    if exc.msg == "Extra data":
        return f"the arguments are not valid JSON: text follows the JSON object at {where}"
    if exc.pos >= len(raw.rstrip()) or exc.msg.startswith("Unterminated string"):
        return (
            f"the arguments are not valid JSON: they end before the JSON is complete "
            f"({exc.msg} at {where}); the call may have been cut off. Send it again, whole"
        )
    return f"the arguments are not valid JSON: {exc.msg} at {where}"
