"""Protected paths: the files Jarvis itself reads as settings, tools or code in later sessions.

``<workspace>/.jarvis/`` holds the project's ``config.yaml`` (MCP commands, ``confirm``),
``mcp.json``, tools and memories; the Jarvis home (``$JARVIS_HOME`` or ``~/.jarvis``) holds
the user's; ``tool_load_dirs`` and ``methodology_dirs`` are loaded into every run; a git
folder's hooks and config run code on the next git command. A write there by one session's
model reaches every later session, so the agent's file tools never write there on the
strength of ``confirm: never``/``--yes`` alone: such a call always goes to the user, who must
allow the named path separately, and a run that cannot ask declines it.

A file tool names the arguments that hold the files it writes in its ``write_targets``
metadata: dotted argument paths, ``*`` for every item of a list (``["path"]``,
``["files.*.path"]``), so the check needs no code of the tool's own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.tools import BaseTool

from jarvis_graph.config import Settings, jarvis_home


def protected_roots(workspace: Path, settings: Settings) -> list[Path]:
    """The folders whose files the agent's file tools may not write unasked (resolved)."""
    roots = [workspace / ".jarvis", workspace / ".git", jarvis_home()]
    for folder in [*settings.tool_load_dirs, *settings.methodology_dirs]:
        path = Path(folder).expanduser()
        roots.append(path if path.is_absolute() else workspace / path)
    return [_resolved(root) for root in roots]


OUTPUT_DIRS = ("reports", "tool_outputs")
"""Folders of ``<workspace>/.jarvis`` that hold what runs write for the user to read
(``todo_report``'s report, whole tool outputs): nothing there is read as settings or put in
a later prompt, so the file tools write them like any workspace file."""


def is_protected_path(path: str | Path, workspace: Path, settings: Settings) -> bool:
    """Whether writing ``path`` could change Jarvis' settings, tools or code of later runs.

    Symbolic links are resolved first: a link in the workspace that points into
    ``.jarvis`` or ``~/.jarvis`` is protected, and so is every file under a protected
    folder, even one that does not exist yet. The output folders (:data:`OUTPUT_DIRS`) are
    not resolved, so a link there cannot lend its exemption to the folder it points to.
    """
    raw = Path(path).expanduser()
    full = _resolved(raw if raw.is_absolute() else workspace / raw)
    if any(full.is_relative_to(out) for out in _output_dirs(workspace)):
        return False
    return any(full.is_relative_to(root) for root in protected_roots(workspace, settings))


def _output_dirs(workspace: Path) -> list[Path]:
    jarvis_dir = _resolved(workspace) / ".jarvis"
    if jarvis_dir.is_symlink():  # not the workspace's own folder: no exemption below it
        return []
    return [jarvis_dir / name for name in OUTPUT_DIRS if not (jarvis_dir / name).is_symlink()]


def protected_targets(
    tool: BaseTool | None, args: Any, workspace: Path, settings: Settings
) -> list[str]:
    """The paths a call of ``tool`` with ``args`` would write that are protected (as given)."""
    targets = write_targets(tool, args)
    return [t for t in targets if is_protected_path(t, workspace, settings)]


def write_targets(tool: BaseTool | None, args: Any) -> list[str]:
    """The paths a call of ``tool`` with ``args`` writes, from its ``write_targets`` metadata."""
    specs = (tool.metadata or {}).get("write_targets") if tool is not None else None
    found: list[str] = []
    for spec in specs or []:
        found += [v for v in arg_values(args, str(spec)) if isinstance(v, str) and v.strip()]
    return found


def arg_values(args: Any, spec: str) -> list[Any]:
    """The values at the dotted argument path ``spec`` (``*``: each item of a list)."""
    return _walk(args, spec.split("."))


def _walk(value: Any, keys: list[str]) -> list[Any]:
    if not keys:
        return [value]
    key, rest = keys[0], keys[1:]
    if key == "*":
        items = value if isinstance(value, list) else []
        return [found for item in items for found in _walk(item, rest)]
    if isinstance(value, dict) and key in value:
        return _walk(value[key], rest)
    return []


def _resolved(path: Path) -> Path:
    # strict=False resolves every link along the part of the path that exists, so a file
    # not yet created below a linked folder still resolves to where it would be written
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # a symlink loop: compare the absolute path as written
        return path.absolute()
