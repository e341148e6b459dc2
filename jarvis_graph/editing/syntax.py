"""Does a file's text still parse? JSON, Python, TOML and YAML, by the file's suffix.

An edit that turns a file which parsed into one that does not is almost always a wrong
edit (a SEARCH text matched a key instead of its value, a bracket was lost). The edit
engine refuses such an edit and says where the parser stopped, so the model can send a
corrected one; a file that did not parse before may be edited freely (the edit may be
the fix). Pure functions: the parsers of the standard library and PyYAML (aliases bounded by
:mod:`jarvis_graph.untrusted`), nothing run.
"""

from __future__ import annotations

import ast
import json
import tomllib
import warnings
from collections.abc import Callable
from pathlib import PurePosixPath

import yaml

from jarvis_graph.untrusted import load_yaml_all


def _json(text: str) -> None:
    json.loads(text)


def _python(text: str) -> None:
    with warnings.catch_warnings():  # invalid escape sequences and the like are not errors
        warnings.simplefilter("ignore")
        ast.parse(text)


def _toml(text: str) -> None:
    tomllib.loads(text)


def _yaml(text: str) -> None:
    load_yaml_all(text)  # bounded: a file's aliases must not expand into gigabytes


_PARSERS: dict[str, tuple[str, Callable[[str], None]]] = {
    ".json": ("JSON", _json),
    ".py": ("Python", _python),
    ".toml": ("TOML", _toml),
    ".yaml": ("YAML", _yaml),
    ".yml": ("YAML", _yaml),
}


def language_of(label: str) -> str | None:
    """The language checked for a file named ``label`` (``None``: not checked)."""
    found = _PARSERS.get(PurePosixPath(label).suffix.lower())
    return found[0] if found else None


def syntax_error(label: str, text: str) -> str | None:
    """Why ``text`` does not parse as the language of ``label``; ``None`` when it does.

    Files of other types (and empty files) always pass.
    """
    found = _PARSERS.get(PurePosixPath(label).suffix.lower())
    if found is None or not text.strip():
        return None
    language, parse = found
    try:
        parse(text)
    except json.JSONDecodeError as exc:
        return f"invalid {language}: {exc.msg} at line {exc.lineno} column {exc.colno}"
    except SyntaxError as exc:
        return f"invalid {language}: {exc.msg} at line {exc.lineno}"
    except tomllib.TOMLDecodeError as exc:
        return f"invalid {language}: {exc}"
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return f"invalid {language}: {problem}{where}"
    except (ValueError, RecursionError, MemoryError) as exc:  # null bytes, deep nesting
        return f"invalid {language}: {exc}"
    return None


def broken_by_edit(label: str, before: str | None, after: str) -> str | None:
    """Why an edit from ``before`` (``None``: a new file) to ``after`` must be refused.

    Refused: the new text does not parse while the old one did (or the file is new).
    """
    error = syntax_error(label, after)
    if error is None:
        return None
    if before is not None and syntax_error(label, before) is not None:
        return None  # it did not parse before either: the edit may be part of a fix
    return (
        f"the edit would leave {label} as {error}, so it was not applied and {label} is "
        "unchanged. Read the file again and send an edit whose result is valid"
    )
