"""Where chains come from: the built-in ones, ``~/.jarvis/chains/`` and the project's.

A later folder's chain replaces an earlier one of the same name (the project's wins).
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from jarvis_graph.chains.spec import (
    Chain,
    ChainError,
    MissingToolError,
    ToolSchema,
    check_tools,
    find_cycles,
    load_chain,
)
from jarvis_graph.config import jarvis_home

BUILTIN_DIR = Path(__file__).with_name("builtin")


def chain_dirs(project: Path) -> list[Path]:
    """The folders chains are read from, lowest precedence first."""
    return [BUILTIN_DIR, jarvis_home() / "chains", project / ".jarvis" / "chains"]


@dataclass
class Catalog:
    """The chains found, the errors of those that could not be loaded, and their origins."""

    chains: dict[str, Chain] = field(default_factory=dict)
    errors: list[ChainError] = field(default_factory=list)

    def builtin(self, name: str) -> bool:
        """Whether ``name`` is one of the chains shipped with Jarvis."""
        return name in self.chains and self.chains[name].path.parent == BUILTIN_DIR

    def usable(
        self, tools: Mapping[str, ToolSchema], quiet: Collection[str] = ()
    ) -> tuple[dict[str, Chain], list[ChainError]]:
        """The chains whose steps call the tools (or usable chains) correctly, and problems.

        A chain calling a chain that is left out is left out too. The problems are checked
        against the tools and chains that remain, so each names what a run really has.

        Args:
            tools: The run's tools by name.
            quiet: Chains left out without a problem when all they lack is a tool (the
                built-in ones in a run whose tool set or role has not got their tools).
        """
        ok = dict(self.chains)
        problems: list[ChainError] = []
        cyclic = find_cycles(ok)
        for name, error in cyclic.items():
            problems.append(error)
            del ok[name]
        left_out: list[Chain] = []
        changed = True
        while changed:  # leaving one chain out may leave out the chains that call it
            changed = False
            schemas = {**tools, **{name: chain_schema(chain) for name, chain in ok.items()}}
            for name, chain in list(ok.items()):
                if check_tools(chain, schemas):
                    left_out.append(ok.pop(name))
                    changed = True
        for chain in left_out:
            found = check_tools(chain, schemas)
            if chain.name in quiet:
                found = [p for p in found if not isinstance(p, MissingToolError)]
            problems += found
        return ok, problems


def chain_schema(chain: Chain) -> ToolSchema:
    """A chain's arguments as a tool's (for chains that call chains)."""
    schema = chain.input_schema()
    return schema["properties"], schema["required"]


def load_catalog(project: Path) -> Catalog:
    """Every chain file of the built-in, user and project folders (unreadable ones as errors)."""
    catalog = Catalog()
    for folder in chain_dirs(project):
        if not folder.is_dir():
            continue
        seen: dict[str, Path] = {}
        for path in sorted([*folder.glob("*.yaml"), *folder.glob("*.yml")]):
            loaded = _load(path)
            if isinstance(loaded, ChainError):
                catalog.errors.append(loaded)
                continue
            chain = loaded
            if chain.name in seen:
                other = seen[chain.name]
                msg = f"{chain.where('name')}: chain {chain.name!r} is also defined in {other}"
                catalog.errors.append(ChainError(msg))
                continue
            seen[chain.name] = path
            catalog.chains[chain.name] = chain
    return catalog


def _load(path: Path) -> Chain | ChainError:
    """The chain at ``path`` (or why it cannot be used), read again only when it changed.

    Every run reads the catalog; a long-lived process (``jarvis chat``, ``langgraph dev``)
    sees an edited file at its next run.
    """
    try:
        info = path.stat()
    except OSError as exc:
        return ChainError(f"{path}: cannot read it: {exc.strerror or exc}")
    return _load_stamped(path, (info.st_size, info.st_mtime_ns))


@functools.lru_cache(maxsize=256)
def _load_stamped(path: Path, _stamp: tuple[int, int]) -> Chain | ChainError:
    try:
        return load_chain(path)
    except ChainError as exc:
        return exc
