"""Helpers for driving the ``jarvis`` CLI in tests: scripts, in-process and subprocess runs."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from jarvis_graph.cli.app import app


def write_script(path: Path, turns: list[dict[str, Any]]) -> Path:
    """Write a scripted-platform file with ``turns``."""
    path.write_text(yaml.safe_dump({"turns": turns}), encoding="utf-8")
    return path


def invoke(args: list[str], input: str | None = None) -> Any:
    """Run the CLI in process and return click's result (exit_code, output)."""
    return CliRunner().invoke(app, args, input=input, catch_exceptions=False)


def jarvis_cmd() -> list[str]:
    """The command line that starts the CLI in a new process."""
    return [sys.executable, "-m", "jarvis_graph.cli"]


def run_process(
    args: list[str], cwd: Path, input: str = "", timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run the CLI as a separate process (environment inherited: HOME is the test's)."""
    return run_limited([*jarvis_cmd(), *args], cwd, timeout=timeout, input=input)


def run_limited(
    args: list[str], cwd: Path, timeout: float = 90, memory: int | None = None, input: str = ""
) -> subprocess.CompletedProcess[str]:
    """A command in a new process, under a timeout and (optionally) an address-space limit."""

    def limit() -> None:
        if memory is not None:
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    return subprocess.run(
        args,
        cwd=cwd,
        input=input,
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=limit if memory is not None else None,
        env={**os.environ, "COLUMNS": "200"},
    )
