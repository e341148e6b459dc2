"""Per-repository statistics of the code agent, kept in ``<repo>/.jarvis/code_stats.json``."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from jarvis_graph.editing.textfile import write_atomic


@dataclass
class CodeStats:
    """Totals over every ``jarvis code`` run in one repository."""

    edits: int = 0
    commits: int = 0
    lines_added: int = 0
    lines_removed: int = 0

    @classmethod
    def path(cls, root: Path) -> Path:
        """Where the statistics of repository ``root`` live."""
        return root / ".jarvis" / "code_stats.json"

    @classmethod
    def load(cls, root: Path) -> CodeStats:
        """The saved statistics (zeros when none, or when the file is unreadable)."""
        try:
            data = json.loads(cls.path(root).read_text(encoding="utf-8"))
            return cls(**{k: int(data.get(k, 0)) for k in asdict(cls())})
        except (OSError, ValueError, TypeError):
            return cls()

    def save(self, root: Path) -> None:
        """Write the statistics atomically."""
        write_atomic(self.path(root), (json.dumps(asdict(self), indent=2) + "\n").encode())

    def summary(self) -> str:
        """One line for people."""
        return (
            f"{self.edits} edits, {self.commits} commits, "
            f"+{self.lines_added} -{self.lines_removed} lines"
        )
