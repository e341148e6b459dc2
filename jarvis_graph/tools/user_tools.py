"""User tool files: ``*.py`` files in tool folders, loaded into the registry.

A file may define, at module level:

- langchain tools (``@tool`` functions, ``StructuredTool`` or ``BaseTool`` instances);
- Jarvis-style tool classes: ``name``, ``description``, ``parameters`` (a JSON schema) and
  ``execute(self, args)`` returning ``{"success": bool, "stdout": str, "stderr": str}``.
  ``execute(self, args, agent)`` gets the run's :class:`ToolEnv` (workspace, settings) as
  the agent. An optional ``check()`` returning ``False`` leaves the tool out.

A file that fails to import is skipped and reported with its file and line.
"""

from __future__ import annotations

import importlib.util
import inspect
import logging
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool

from jarvis_graph.tools.base import ToolFailure, current_env

logger = logging.getLogger(__name__)


@dataclass
class Loaded:
    """Tools found in some folders, and what went wrong on the way."""

    tools: list[BaseTool] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def load_tool_dirs(dirs: list[Path], source: str = "user") -> Loaded:
    """Load every ``*.py`` file (sorted by name) of each folder in ``dirs``."""
    out = Loaded()
    for folder in (d.expanduser() for d in dirs):
        for path in sorted(folder.glob("*.py")) if folder.is_dir() else []:
            try:
                module = _import(path)
            except BaseException as exc:  # SystemExit in a user file must not end the run
                if isinstance(exc, KeyboardInterrupt):
                    raise
                out.problems.append(f"{_where(path, exc)}: {_reason(exc)}; the file was skipped")
                continue
            out.tools.extend(_tools_in(module, path, source, out.problems))
    for note in out.problems:
        logger.warning("%s", note)
    return out


def _import(path: Path) -> Any:
    name = f"jarvis_user_tool_{abs(hash(str(path.resolve())))}_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        msg = "not a loadable Python file"
        raise ImportError(msg)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pydantic look the module up by name
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _where(path: Path, exc: BaseException) -> str:
    """``file:line`` of the error: the syntax error's line, or the deepest frame in the file."""
    if isinstance(exc, SyntaxError) and exc.lineno:
        return f"{path}:{exc.lineno}"
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if Path(frame.filename).resolve() == path.resolve():
            line = frame.lineno
    return f"{path}:{line}" if line else str(path)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, SyntaxError):
        return f"SyntaxError: {exc.msg}"
    return f"{type(exc).__name__}: {exc}"


def _tools_in(module: Any, path: Path, source: str, problems: list[str]) -> list[BaseTool]:
    found: list[BaseTool] = []
    for attr, value in vars(module).items():
        if attr.startswith("_"):
            continue
        try:
            if isinstance(value, BaseTool):
                meta = {"risky": True, **(value.metadata or {}), "source": f"{source}:{path}"}
                found.append(value.model_copy(update={"metadata": meta}))
            elif _is_jarvis_class(value, module):
                tool = _from_jarvis_class(value, path, source)
                if tool is not None:
                    found.append(tool)
        except Exception as exc:
            problems.append(f"{path}: {attr}: {_reason(exc)}; this tool was skipped")
    return found


def _is_jarvis_class(value: Any, module: Any) -> bool:
    return (
        inspect.isclass(value)
        and value.__module__ == module.__name__
        and isinstance(getattr(value, "name", None), str)
        and isinstance(getattr(value, "description", None), str)
        and isinstance(getattr(value, "parameters", None), dict)
        and callable(getattr(value, "execute", None))
    )


def _from_jarvis_class(cls: type, path: Path, source: str) -> BaseTool | None:
    check = getattr(cls, "check", None)
    if callable(check) and check() is False:
        logger.info("user tool %s (%s) is unavailable: check() returned False", cls.name, path)  # type: ignore[attr-defined]
        return None
    instance = cls()
    execute = instance.execute  # type: ignore[attr-defined]
    takes_agent = len(inspect.signature(execute).parameters) >= 2

    def run(**kwargs: Any) -> str:
        result = execute(kwargs, current_env()) if takes_agent else execute(kwargs)
        return _jarvis_result(instance.name, result)  # type: ignore[attr-defined]

    return StructuredTool(
        name=instance.name,  # type: ignore[attr-defined]
        description=instance.description,  # type: ignore[attr-defined]
        args_schema=instance.parameters,  # type: ignore[attr-defined]
        func=run,
        metadata={"risky": getattr(cls, "risky", True), "source": f"{source}:{path}"},
    )


def _jarvis_result(name: str, result: Any) -> str:
    """``{success, stdout, stderr}`` as text; an unsuccessful result is a tool error."""
    if not isinstance(result, dict):
        return str(result)
    stdout, stderr = str(result.get("stdout") or ""), str(result.get("stderr") or "")
    if not result.get("success", True):
        msg = f"{name} failed: {stderr or stdout or 'no details given'}"
        raise ToolFailure(msg)
    return stdout + (f"\n[stderr]\n{stderr}" if stderr else "") or "(no output)"
