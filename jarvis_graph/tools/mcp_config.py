"""Which MCP servers a run has: config.yaml's ``mcp`` list plus ``mcpServers`` JSON files.

The JSON files use the form desktop MCP clients use::

    {"mcpServers": {
        "time":   {"command": "mcp-server-time", "args": ["--local-timezone", "UTC"]},
        "remote": {"url": "http://127.0.0.1:3001/mcp", "headers": {"X-Key": "${KEY}"}},
        "old":    {"type": "sse", "url": "http://127.0.0.1:3002/sse"}
    }}

``~/.jarvis/mcp.json`` is read first, then ``<project>/.jarvis/mcp.json`` (once the user
trusts the folder); a later source
replaces a server of the same name. A broken file raises :class:`ConfigError` naming the
file, the line and the problem.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from jarvis_graph.config import (
    ConfigError,
    McpServerSpec,
    Settings,
    jarvis_home,
    project_mcp_json_path,
    project_trusted,
    read_settings_file,
)

_KNOWN_KEYS = {"command", "args", "env", "cwd", "url", "headers", "type", "transport", "timeout"}
_IGNORED_KEYS = {"disabled", "autoApprove", "alwaysAllow", "description", "name"}
_TRANSPORTS = {
    "stdio": "stdio",
    "sse": "sse",
    "http": "streamable",
    "streamable": "streamable",
    "streamable-http": "streamable",
    "streamable_http": "streamable",
    "streamableHttp": "streamable",
}
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def mcp_json_paths(workspace: Path, untrusted: bool = False) -> list[Path]:
    """The ``mcpServers`` files read for a workspace, user file first.

    The project's file counts only once the user trusts the folder (``jarvis trust``): its
    servers are commands Jarvis would start. ``untrusted`` includes it anyway, for uses
    that only make Jarvis more careful (the ``${VAR}`` secrets it names are hidden).
    """
    paths = [jarvis_home() / "mcp.json"]
    project = project_mcp_json_path(workspace)
    if project.resolve() != paths[0].resolve() and (untrusted or project_trusted(workspace)):
        paths.append(project)
    return paths


def mcp_servers(settings: Settings, workspace: Path) -> list[McpServerSpec]:
    """Enabled servers from config and the JSON files; later sources win by name.

    Raises:
        ConfigError: A JSON file is not valid JSON or describes a server badly.
    """
    servers = {spec.name: spec for spec in settings.mcp}
    for path in mcp_json_paths(workspace):
        for spec in load_mcp_json(path):
            servers.pop(spec.name, None)
            servers[spec.name] = spec
    return [spec for spec in servers.values() if spec.enable]


def load_mcp_json(path: Path) -> list[McpServerSpec]:
    """The servers of one ``mcpServers`` file (none when the file does not exist)."""
    text = read_settings_file(path)
    if text is None:
        return []
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        where = f"{path}:{exc.lineno}:{exc.colno}"
        msg = f"{where}: invalid JSON: {exc.msg}. Fix the file or remove it."
        raise ConfigError(msg) from exc
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        msg = f'{path}:1: expected an object {{"mcpServers": {{"<name>": {{...}}}}}}'
        raise ConfigError(msg)
    return [_spec_from_json(path, text, name, entry) for name, entry in servers.items()]


def _spec_from_json(path: Path, text: str, name: str, entry: Any) -> McpServerSpec:
    where = f"{path}:{_line_of_key(text, name)}"
    if not isinstance(entry, dict):
        msg = f"{where}: server {name!r} must be an object, got {type(entry).__name__}"
        raise ConfigError(msg)
    unknown = sorted(set(entry) - _KNOWN_KEYS - _IGNORED_KEYS)
    if unknown:
        msg = f"{where}: server {name!r} has unknown keys {unknown}; known: {sorted(_KNOWN_KEYS)}"
        raise ConfigError(msg)
    kind = str(entry.get("type") or entry.get("transport") or "")
    url = entry.get("url")
    if not kind:
        kind = "stdio" if "command" in entry else "sse" if str(url).endswith("/sse") else "http"
    if kind not in _TRANSPORTS:
        msg = f"{where}: server {name!r} has type {kind!r}; use one of {sorted(_TRANSPORTS)}"
        raise ConfigError(msg)
    fields = {
        "name": name,
        "type": _TRANSPORTS[kind],
        "command": entry.get("command"),
        "args": entry.get("args", []),
        "env": entry.get("env", {}),
        "cwd": entry.get("cwd"),
        "base_url": url,
        "headers": entry.get("headers", {}),
        "enable": not entry.get("disabled", False),
        "timeout": entry.get("timeout"),
    }
    try:
        return McpServerSpec.model_validate(fields)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'server'}: {err['msg']}"
            for err in exc.errors()
        )
        msg = f"{where}: server {name!r} is invalid: {problems}"
        raise ConfigError(msg) from exc


def _line_of_key(text: str, key: str) -> int:
    """1-based line of the first ``"key":`` in ``text`` (1 when not found)."""
    match = re.search(rf'"{re.escape(key)}"\s*:', text)
    return text.count("\n", 0, match.start()) + 1 if match else 1


def expand_vars(value: str, env: dict[str, str] | None = None) -> str:
    """Replace ``${VAR}`` with the variable's value, so secrets can stay out of files.

    Unknown variables are left as written.
    """
    source = os.environ if env is None else env
    return _VAR.sub(lambda m: source.get(m.group(1), m.group(0)), value)
