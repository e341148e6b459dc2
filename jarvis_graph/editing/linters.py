"""Which installed linters fit the edited files (suggested to the model and the user)."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable
from pathlib import PurePosixPath

LINTERS: dict[str, tuple[tuple[str, str], ...]] = {
    ".py": (
        ("ruff", "ruff check {files}"),
        ("mypy", "mypy {files}"),
        ("flake8", "flake8 {files}"),
        ("pylint", "pylint {files}"),
    ),
    ".js": (("eslint", "eslint {files}"),),
    ".ts": (("eslint", "eslint {files}"), ("tsc", "tsc --noEmit")),
    ".sh": (("shellcheck", "shellcheck {files}"), ("bash", "bash -n {files}")),
    ".go": (("gofmt", "gofmt -l {files}"), ("go", "go vet ./...")),
    ".rs": (("cargo", "cargo clippy"),),
    ".c": (("clang-tidy", "clang-tidy {files}"), ("cppcheck", "cppcheck {files}")),
    ".cpp": (("clang-tidy", "clang-tidy {files}"), ("cppcheck", "cppcheck {files}")),
    ".h": (("clang-tidy", "clang-tidy {files}"), ("cppcheck", "cppcheck {files}")),
    ".rb": (("rubocop", "rubocop {files}"),),
    ".yaml": (("yamllint", "yamllint {files}"),),
    ".yml": (("yamllint", "yamllint {files}"),),
    ".json": (("python3", "python3 -m json.tool {files}"),),
}


def suggest_linters(
    paths: Iterable[str], which: Callable[[str], str | None] = shutil.which
) -> list[str]:
    """Commands of installed linters for the file types of ``paths`` (first-seen order)."""
    by_suffix: dict[str, list[str]] = {}
    for path in paths:
        suffix = PurePosixPath(path).suffix.lower()
        if suffix in LINTERS:
            by_suffix.setdefault(suffix, []).append(path)
    commands: list[str] = []
    for suffix, files in by_suffix.items():
        for program, template in LINTERS[suffix]:
            command = template.format(files=" ".join(files))
            if which(program) and command not in commands:
                commands.append(command)
    return commands
