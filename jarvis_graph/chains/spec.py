"""Tool chains as written in YAML: load, check, and the schema a chain offers as a tool.

A chain file (``.jarvis/chains/*.yaml``, ``~/.jarvis/chains/``)::

    description: Find TODO comments and write them to a report.
    input:
      pattern: {type: string, default: "TODO|FIXME", description: What to look for}
    steps:
      - id: find
        tool: search_files
        args: {pattern: "${input.pattern}"}
      - id: report
        tool: write_file
        if: "not ${steps.find.result} startswith 'no matches'"
        args: {path: todo.md, content: "${steps.find.result}"}
        on_error: retry 2          # stop (default), skip, or retry N then stop
    output: "${steps.find.result}"   # optional: what the caller gets back

Every problem is a :class:`ChainError` naming ``file:line``; a chain with one is not
offered. Checks that need the run's tools (unknown tool, argument names and types) are in
:func:`check_tools`; calls between chains that form a cycle in :func:`find_cycles`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from jarvis_graph.chains.expr import (
    Condition,
    ExpressionError,
    Reference,
    parse_condition,
    references,
    whole_reference,
)
from jarvis_graph.config import _line_of, parse_yaml
from jarvis_graph.untrusted import InputFileError, read_text

NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
TYPES = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}
RESERVED_STEPS = ("finish", "chain", "input", "steps", "status", "output")
"""Step ids the chain's graph uses for its own node and state keys."""
NOT_IN_CHAINS = ("ask_user", "send_message", "run_task_graph")
"""Tools a step may not call: nothing that pauses for the user or hands the turn over."""
TOP_KEYS = ("name", "description", "input", "steps", "output")
STEP_KEYS = ("id", "tool", "args", "if", "on_error")
PARAM_KEYS = ("type", "description", "default", "required")
MAX_RETRIES = 10
CHAIN_MAX_BYTES = 1_000_000
"""A chain file is a few kB; a larger one is refused unread (it may be no chain at all)."""
CHAIN_TOO_LARGE = "a chain file is a few kB: split it into chains that call each other"


class ChainError(ValueError):
    """A chain file cannot be used as written; the message starts with ``file:line``."""


class MissingToolError(ChainError):
    """A step calls a tool the run does not have (``tool``: its name)."""

    def __init__(self, message: str, tool: str) -> None:
        super().__init__(message)
        self.tool = tool


@dataclass(frozen=True)
class Param:
    """One input of a chain."""

    name: str
    type: str
    description: str = ""
    default: Any = None
    required: bool = True


@dataclass(frozen=True)
class Step:
    """One tool call of a chain."""

    id: str
    tool: str
    args: dict[str, Any] = field(default_factory=dict)
    condition: Condition | None = None
    on_error: str = "stop"
    """``stop``, ``skip`` or ``retry`` (then ``retries`` more attempts, then stop)."""
    retries: int = 0


@dataclass(frozen=True)
class Chain:
    """A loaded chain; ``where(loc)`` gives ``file:line`` of a part of its file."""

    name: str
    description: str
    inputs: tuple[Param, ...]
    steps: tuple[Step, ...]
    output: str | None
    path: Path
    node: yaml.Node | None = field(default=None, compare=False, repr=False)

    def where(self, *loc: int | str) -> str:
        """``file:line`` of the part of the file at ``loc`` (``"steps", 0, "tool"``)."""
        line = _line_of(self.node, loc) if self.node is not None else None
        return f"{self.path}:{line or 1}"

    def tools_used(self) -> set[str]:
        """The tools (and chains) its steps call."""
        return {step.tool for step in self.steps}

    def input_schema(self) -> dict[str, Any]:
        """The JSON schema of its input (what the model fills in to call it)."""
        props: dict[str, Any] = {}
        for param in self.inputs:
            prop: dict[str, Any] = {"type": param.type}
            if param.description:
                prop["description"] = param.description
            if not param.required:
                prop["default"] = param.default
            props[param.name] = prop
        required = [p.name for p in self.inputs if p.required]
        return {"type": "object", "properties": props, "required": required}

    def arguments(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """``given`` checked against the inputs, defaults filled in.

        Raises:
            ValueError: An unknown, missing or wrongly typed input (said for people).
        """
        known = {p.name: p for p in self.inputs}
        unknown = [name for name in given if name not in known]
        if unknown:
            msg = (
                f"chain {self.name} has no input {', '.join(map(repr, unknown))}; its inputs: "
                f"{', '.join(known) or 'none'}"
            )
            raise ValueError(msg)
        out: dict[str, Any] = {}
        for param in self.inputs:
            if param.name in given:
                value = given[param.name]
                if not type_ok(value, param.type):
                    msg = (
                        f"chain {self.name}: input {param.name!r} must be {param.type}, "
                        f"got {value!r}"
                    )
                    raise ValueError(msg)
                out[param.name] = value
            elif param.required:
                msg = f"chain {self.name} needs input {param.name!r} ({param.type})"
                raise ValueError(msg)
            else:
                out[param.name] = param.default
        return out


def type_ok(value: Any, type_name: str) -> bool:
    """Whether ``value`` is of the JSON schema type ``type_name`` (bools are not numbers)."""
    kinds = TYPES.get(type_name)
    if kinds is None:
        return True
    if isinstance(value, bool) and type_name != "boolean":
        return False
    return isinstance(value, kinds)


def load_chain(path: Path) -> Chain:
    """Read and check one chain file (everything that needs no tools).

    Raises:
        ChainError: Invalid YAML, an unknown or wrongly typed key, a bad reference or
            condition, or a reference to a later step.
    """
    try:
        node, data = parse_yaml(read_text(path, CHAIN_MAX_BYTES, CHAIN_TOO_LARGE))
    except InputFileError as exc:  # a FIFO, a device, a huge file: refused before reading
        raise ChainError(str(exc)) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else f"{path}:1"
        msg = f"{where}: invalid YAML: {getattr(exc, 'problem', None) or exc}"
        raise ChainError(msg) from exc
    return _Reader(path, node).chain(data)


class _Reader:
    """Turns a chain file's data into a :class:`Chain`, naming ``file:line`` on errors."""

    def __init__(self, path: Path, node: yaml.Node | None) -> None:
        self.path, self.node = path, node

    def fail(self, loc: Sequence[int | str], problem: str) -> ChainError:
        line = _line_of(self.node, tuple(loc)) if self.node is not None else None
        return ChainError(f"{self.path}:{line or 1}: {problem}")

    def chain(self, data: Any) -> Chain:
        if not isinstance(data, dict):
            raise self.fail((), "a chain file is a mapping with `steps:` (and `input:`)")
        self._known_keys(data, TOP_KEYS, ())
        name = str(data.get("name") or self.path.stem)
        if not NAME.match(name):
            why = f"chain name {name!r} must be letters, digits and _ (it is a tool name)"
            raise self.fail(("name",), why)
        inputs = self._inputs(data.get("input") or {})
        steps = self._steps(data.get("steps"), {p.name for p in inputs})
        output = data.get("output")
        if output is not None:
            if not isinstance(output, str):
                raise self.fail(("output",), "`output:` is a text (it may hold references)")
            self._check_refs(("output",), output, {p.name for p in inputs}, [s.id for s in steps])
        description = str(data.get("description") or f"Run the tool chain {name}.")
        return Chain(name, description, inputs, steps, output, self.path, self.node)

    def _known_keys(self, data: dict[str, Any], keys: Iterable[str], loc: tuple[Any, ...]) -> None:
        for key in data:
            if key not in keys:
                known = ", ".join(keys)
                raise self.fail((*loc, key), f"unknown key {key!r} (known: {known})")

    def _inputs(self, raw: Any) -> tuple[Param, ...]:
        if not isinstance(raw, dict):
            raise self.fail(("input",), "`input:` maps each input's name to {type: ...}")
        params = []
        for name, spec in raw.items():
            loc = ("input", name)
            if not NAME.match(str(name)):
                raise self.fail(loc, f"input name {name!r} must be letters, digits and _")
            spec = {"type": spec} if isinstance(spec, str) else spec
            if not isinstance(spec, dict):
                raise self.fail(loc, f"input {name!r} is {{type: string|integer|...}}")
            self._known_keys(spec, PARAM_KEYS, loc)
            kind = spec.get("type", "string")
            if kind not in TYPES:
                why = f"input {name!r} has type {kind!r}; types: {', '.join(TYPES)}"
                raise self.fail((*loc, "type"), why)
            has_default = "default" in spec
            if has_default and not type_ok(spec["default"], kind):
                why = f"the default of {name!r} ({spec['default']!r}) is not a {kind}"
                raise self.fail((*loc, "default"), why)
            required = bool(spec.get("required", not has_default))
            desc = str(spec.get("description") or "")
            params.append(Param(str(name), kind, desc, spec.get("default"), required))
        return tuple(params)

    def _steps(self, raw: Any, inputs: set[str]) -> tuple[Step, ...]:
        if not isinstance(raw, list) or not raw:
            raise self.fail(("steps",), "`steps:` is a list of tool calls, at least one")
        ids = [str(item.get("id", "")) if isinstance(item, dict) else "" for item in raw]
        steps: list[Step] = []
        for index, item in enumerate(raw):
            loc = ("steps", index)
            if not isinstance(item, dict):
                raise self.fail(loc, "a step is a mapping with id, tool and args")
            self._known_keys(item, STEP_KEYS, loc)
            sid = ids[index]
            if not NAME.match(sid) or sid in RESERVED_STEPS:
                why = "is reserved" if sid in RESERVED_STEPS else "must be letters, digits and _"
                raise self.fail((*loc, "id") if sid else loc, f"step id {sid!r} {why}")
            if sid in ids[:index]:
                raise self.fail((*loc, "id"), f"step id {sid!r} is used twice")
            tool = item.get("tool")
            if not isinstance(tool, str) or not tool:
                raise self.fail(loc, f"step {sid!r} names no `tool:`")
            args = item.get("args") or {}
            if not isinstance(args, dict):
                raise self.fail((*loc, "args"), f"the args of step {sid!r} are a mapping")
            for key, value in args.items():
                self._check_refs((*loc, "args", key), value, inputs, ids, index)
            condition = None
            if "if" in item:
                condition = self._condition((*loc, "if"), item["if"], inputs, ids, index)
            policy, retries = self._policy((*loc, "on_error"), item.get("on_error", "stop"))
            steps.append(Step(sid, tool, dict(args), condition, policy, retries))
        return tuple(steps)

    def _condition(
        self, loc: tuple[Any, ...], raw: Any, inputs: set[str], ids: list[str], index: int
    ) -> Condition:
        if not isinstance(raw, str):
            raise self.fail(loc, '`if:` is a text such as "${steps.find.ok}"')
        try:
            condition = parse_condition(raw)
        except ExpressionError as exc:
            raise self.fail(loc, str(exc)) from None
        for ref in condition.references():
            self._check_ref(loc, ref, inputs, ids, index)
        return condition

    def _policy(self, loc: tuple[Any, ...], raw: Any) -> tuple[str, int]:
        text = str(raw).strip().lower()
        if text in ("stop", "skip"):
            return text, 0
        found = re.fullmatch(r"retry\s+(\d+)", text)
        if found and 1 <= int(found.group(1)) <= MAX_RETRIES:
            return "retry", int(found.group(1))
        why = f"on_error {raw!r}: write stop, skip, or retry N (N from 1 to {MAX_RETRIES})"
        raise self.fail(loc, why)

    def _check_refs(
        self,
        loc: tuple[Any, ...],
        value: Any,
        inputs: set[str],
        ids: list[str],
        index: int | None = None,
    ) -> None:
        try:
            found = references(value)
        except ExpressionError as exc:
            raise self.fail(loc, str(exc)) from None
        for ref in found:
            self._check_ref(loc, ref, inputs, ids, index)

    def _check_ref(
        self,
        loc: tuple[Any, ...],
        ref: Reference,
        inputs: set[str],
        ids: list[str],
        index: int | None,
    ) -> None:
        if ref.scope == "input" and ref.name not in inputs:
            why = f"${{{ref.text}}}: there is no input {ref.name!r} (inputs: "
            raise self.fail(loc, why + f"{', '.join(sorted(inputs)) or 'none'})")
        if ref.scope != "steps":
            return
        if ref.name not in ids:
            why = f"${{{ref.text}}}: there is no step {ref.name!r} (steps: {', '.join(ids)})"
            raise self.fail(loc, why)
        before = ids if index is None else ids[:index]
        if ref.name not in before:
            where = "itself" if index is not None and ids[index] == ref.name else "a later step"
            why = (
                f"${{{ref.text}}} refers to {where}: that would be a cycle (steps run in "
                "order; a step reads only the steps before it)"
            )
            raise self.fail(loc, why)


ToolSchema = tuple[Mapping[str, Any], Sequence[str]]
"""A tool's argument schema: JSON schema properties by name, and the required names."""


def check_tools(chain: Chain, tools: Mapping[str, ToolSchema]) -> list[ChainError]:
    """Problems with the tools ``chain`` calls (``tools``: the run's tools and chains).

    Unknown tools, tools a chain may not call, and unknown, missing or wrongly typed
    arguments.
    """
    problems = []
    inputs = {p.name: p for p in chain.inputs}
    for index, step in enumerate(chain.steps):
        loc: tuple[Any, ...] = ("steps", index)
        if step.tool in NOT_IN_CHAINS or step.tool == chain.name:
            why = "calls the chain itself" if step.tool == chain.name else "pauses or hands over"
            problems.append(ChainError(f"{chain.where(*loc, 'tool')}: {step.tool} {why}"))
            continue
        if step.tool not in tools:
            known = ", ".join(sorted(tools))
            why = f"step {step.id!r} calls unknown tool {step.tool!r} (tools: {known})"
            problems.append(MissingToolError(f"{chain.where(*loc, 'tool')}: {why}", step.tool))
            continue
        props, required = tools[step.tool]
        for name in step.args:
            if name not in props:
                why = f"{step.tool} has no argument {name!r} (its arguments: {', '.join(props)})"
                problems.append(ChainError(f"{chain.where(*loc, 'args', name)}: {why}"))
                continue
            problem = _arg_problem(step.args[name], props[name], inputs)
            if problem:
                why = f"argument {name!r} of {step.tool}: {problem}"
                problems.append(ChainError(f"{chain.where(*loc, 'args', name)}: {why}"))
        missing = [name for name in required if name not in step.args]
        if missing:
            why = f"step {step.id!r} does not give {step.tool}'s {', '.join(missing)}"
            problems.append(ChainError(f"{chain.where(*loc)}: {why}"))
    return problems


def _arg_problem(value: Any, schema: Mapping[str, Any], inputs: Mapping[str, Param]) -> str:
    """Why ``value`` cannot be this argument ("" when it can, or cannot be known yet)."""
    wanted = _schema_types(schema)
    if not wanted:
        return ""
    ref = whole_reference(value)
    if ref is not None:
        if ref.scope == "input" and not ref.path:
            kind = inputs[ref.name].type
            if kind not in wanted and not (kind == "integer" and "number" in wanted):
                return f"input {ref.name!r} is {kind}, the argument takes {' or '.join(wanted)}"
        return ""  # a step's value is known only when it runs
    if isinstance(value, str) and references(value):
        kind = "string"  # text with references in it
        return "" if kind in wanted else f"text, but it takes {' or '.join(wanted)}"
    if any(type_ok(value, kind) for kind in wanted) or (value is None and "null" in wanted):
        return ""
    return f"{value!r} is not {' or '.join(wanted)}"


def _schema_types(schema: Mapping[str, Any]) -> list[str]:
    """The JSON types a property accepts (``[]``: any)."""
    if "anyOf" in schema or "oneOf" in schema:
        found = [
            t for sub in schema.get("anyOf", schema.get("oneOf", [])) for t in _schema_types(sub)
        ]
        return [] if not found else found
    kind = schema.get("type")
    if isinstance(kind, list):
        return [str(k) for k in kind]
    return [str(kind)] if kind else []


def find_cycles(chains: Mapping[str, Chain]) -> dict[str, ChainError]:
    """Chains that call each other in a cycle (through their steps), each with its error."""
    cyclic: dict[str, ChainError] = {}
    for start in chains:
        path = _cycle_from(start, chains)
        if path:
            first = chains[start].steps
            index = next(i for i, s in enumerate(first) if s.tool == path[1])
            where = chains[start].where("steps", index, "tool")
            cyclic[start] = ChainError(
                f"{where}: chains call each other in a cycle: {' -> '.join(path)}"
            )
    return cyclic


def _cycle_from(start: str, chains: Mapping[str, Chain]) -> list[str]:
    stack: list[tuple[str, list[str]]] = [(start, [start])]
    seen: set[str] = set()
    while stack:
        name, path = stack.pop()
        for tool in sorted(chains[name].tools_used()):
            if tool == start:
                return [*path, tool]
            if tool in chains and tool not in seen:
                seen.add(tool)
                stack.append((tool, [*path, tool]))
    return []
