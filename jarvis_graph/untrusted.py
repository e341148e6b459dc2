"""Reading input files Jarvis did not write: regular files only, bounded, links checked.

A chain file, a tasks file, a memory export or a document may come from a cloned
repository or a download. Whatever it is, reading it must end, and soon: a name may be a
link to ``/dev/zero`` or to a FIFO nobody writes, a folder, a file of gigabytes, or a
small YAML or JSON text that expands into gigabytes when it is built. Every such read goes
through :func:`open_regular` (or :func:`read_bytes` on top of it), and every YAML text
through :class:`BoundedLoader`, so a bad input is one :class:`InputFileError` (or
``yaml.YAMLError``) saying what is wrong, never a hang, a traceback or an exhausted memory.

Plain standard library and PyYAML: no other Jarvis module is imported here.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any, BinaryIO

import yaml

YAML_MAX_NODES = 200_000
"""Nodes a YAML document may hold once its aliases are expanded (anchors reused are
counted at each use): more than any hand-written file, far less than a 'billion laughs'."""

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class InputFileError(ValueError):
    """An input file that is refused; the message says why and what to do."""


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _check_link(path: Path, within: Path | None) -> Path:
    """``path`` with its links followed, refused when a link leads outside ``within``.

    A name the user gave that is itself outside ``within`` is their choice; a link is not
    (a cloned repository can hold ``notes.md -> ~/.aws/credentials``).
    """
    lexical = Path(os.path.abspath(path))
    try:
        resolved = path.resolve(strict=True)
    except FileNotFoundError:
        msg = f"{path} not found (no such file)"
        raise InputFileError(msg) from None
    except (OSError, RuntimeError) as exc:  # a link loop
        msg = f"{path} cannot be followed: {exc}"
        raise InputFileError(msg) from None
    if within is not None and resolved != lexical:
        root = within.resolve()
        if not resolved.is_relative_to(root):
            msg = (
                f"{path} is a link to {resolved}, outside {root}; refusing to follow it "
                "(copy the file into the folder if you mean to use it)"
            )
            raise InputFileError(msg)
    return resolved


def open_regular(path: Path, *, within: Path | None = None) -> BinaryIO:
    """``path`` opened for reading in binary, if it is a regular file.

    A FIFO, a device, a socket or a folder is refused before it is opened (a FIFO would
    block the open, a device never ends); the open itself does not block (``O_NONBLOCK``)
    and the opened file is checked again, so a file swapped in between is refused too.

    Args:
        path: The file.
        within: When given, a link (anywhere in ``path``) must lead inside this folder.

    Raises:
        InputFileError: Missing, not a regular file, a link leading out, or unreadable.
    """
    target = _check_link(path, within)
    try:
        info = os.stat(target)
    except OSError as exc:
        msg = f"{path} cannot be read: {exc.strerror or exc}"
        raise InputFileError(msg) from None
    if not stat.S_ISREG(info.st_mode):
        msg = f"{path} is {_kind(info.st_mode)}, not a regular file; give a file"
        raise InputFileError(msg)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if within is not None:  # the checked name must not have become a link since
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(target, flags)
    except OSError as exc:
        msg = f"{path} cannot be read: {exc.strerror or exc}"
        raise InputFileError(msg) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        msg = f"{path} is {_kind(mode)}, not a regular file; give a file"
        raise InputFileError(msg)
    return os.fdopen(fd, "rb")


def too_large(path: Path, size: int | str, most: int, raise_it: str) -> InputFileError:
    """The error for a file over its limit: its size, the limit and how to raise it."""
    shown = f"{size:,} bytes" if isinstance(size, int) else size
    msg = f"{path} is {shown}, more than the {most:,} allowed; {raise_it}"
    return InputFileError(msg)


def read_bytes(path: Path, most: int, raise_it: str, *, within: Path | None = None) -> bytes:
    """The bytes of the regular file ``path``, at most ``most`` of them.

    Args:
        path: The file.
        most: The largest size accepted, in bytes.
        raise_it: What the error tells the user to do about the limit (the setting that
            raises it, or how to make the file smaller).
        within: When given, a link must lead inside this folder (see :func:`open_regular`).

    Raises:
        InputFileError: Not a regular file, a link leading out, or larger than ``most``
            (a file that grows while read included).
    """
    with open_regular(path, within=within) as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > most:
            raise too_large(path, size, most, raise_it)
        data = handle.read(most + 1)  # st_size can be 0 for files that still have bytes
    if len(data) > most:
        raise too_large(path, "larger than that", most, raise_it)
    return data


def read_text(path: Path, most: int, raise_it: str, *, within: Path | None = None) -> str:
    """The UTF-8 text of ``path`` (see :func:`read_bytes`).

    Raises:
        InputFileError: As :func:`read_bytes`, or the bytes are not UTF-8.
    """
    data = read_bytes(path, most, raise_it, within=within)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        msg = f"{path} is not UTF-8 text (byte {exc.start}); save it as UTF-8"
        raise InputFileError(msg) from None


def load_json(text: str | bytes, source: str) -> Any:
    """The JSON value of ``text``.

    Raises:
        InputFileError: Not JSON, or nested deeper than the parser can follow.
    """
    try:
        return json.loads(text)
    except RecursionError:
        msg = f"{source} is nested too deeply to be read as JSON; flatten it"
        raise InputFileError(msg) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        msg = f"{source} is not valid JSON: {exc}"
        raise InputFileError(msg) from None


class YamlTooLarge(yaml.YAMLError):
    """A YAML document that expands beyond :data:`YAML_MAX_NODES` or nests too deeply."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem
        self.problem_mark = None


class BoundedLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses documents which expand beyond a bound.

    PyYAML shares an anchored node between its aliases, so composing and constructing
    a 'billion laughs' is cheap; whoever walks the result (validation, ``json.dumps``,
    a template) pays for every expansion. The composed tree is measured as if every alias
    were copied, before anything is built, and refused past :data:`YAML_MAX_NODES`.
    """

    def compose_document(self) -> yaml.Node | None:
        """One document's node tree, refused when it expands too far or nests too deeply.

        Both ``yaml.load`` and ``yaml.load_all`` compose each document here.
        """
        try:
            node = super().compose_document()
        except RecursionError:
            msg = "the YAML nests too deeply to be read"
            raise YamlTooLarge(msg) from None
        if node is not None:
            _check_expansion(node)
        return node


def _check_expansion(root: yaml.Node) -> None:
    """Raise :class:`YamlTooLarge` when ``root``, aliases expanded, has too many nodes.

    Sizes are computed once per distinct node (post-order, without recursion), so the
    check costs the size of the text, not of the expansion.
    """
    size: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    open_nodes: set[int] = set()
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            open_nodes.discard(key)
            size[key] = 1 + sum(size[id(c)] for c in _children(node))
            if size[key] > YAML_MAX_NODES:
                msg = (
                    f"the YAML expands to more than {YAML_MAX_NODES:,} values (anchors and "
                    "aliases reused over and over?); write it out plainly"
                )
                raise YamlTooLarge(msg)
            continue
        if key in size:
            continue
        if key in open_nodes:  # an alias inside its own anchor: endless when expanded
            msg = "the YAML contains an alias inside its own anchor (a recursive structure)"
            raise YamlTooLarge(msg)
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((c, False) for c in _children(node) if id(c) not in size)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def load_yaml(text: str) -> Any:
    """The data of a YAML text, built with :class:`BoundedLoader` (safe tags only).

    Raises:
        yaml.YAMLError: Invalid YAML, or a document too large once expanded.
    """
    return yaml.load(text, Loader=BoundedLoader)  # noqa: S506 - a SafeLoader subclass


def load_yaml_all(text: str) -> list[Any]:
    """The data of every document of a YAML text, each bounded as in :func:`load_yaml`.

    Raises:
        yaml.YAMLError: Invalid YAML, or a document too large once expanded.
    """
    return list(yaml.load_all(text, Loader=BoundedLoader))  # noqa: S506 - a SafeLoader subclass
