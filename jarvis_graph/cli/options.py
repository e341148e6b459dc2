"""Options shared by the commands that run the agent."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, get_args

import typer

from jarvis_graph.cli.trust_cmd import ask_trust

Workspace = typer.Option(
    None, "--workspace", "-w", help="Project folder the agent works in (default: current dir)."
)
Platform = typer.Option(None, "--platform", help="Model platform: openai, scripted, or a plugin.")
Model = typer.Option(None, "--model", "-m", help="Model name for the platform.")
BaseUrl = typer.Option(None, "--base-url", help="OpenAI-compatible endpoint URL.")
Script = typer.Option(None, "--script", help="Script file for the scripted platform.")
Confirm = typer.Option(
    None, "--confirm", help="Ask before tools: never, risky, sandboxed or always."
)
Sandbox = typer.Option(
    None,
    "--sandbox",
    help="Where scripts run: auto, bwrap, landlock or off (default from config; "
    "`jarvis doctor` shows what works here).",
)
Yes = typer.Option(False, "--yes", "-y", help="Run risky tools without asking (confirm never).")
MaxIter = typer.Option(None, "--max-iterations", help="Cap on model calls for this run.")
Verbose = typer.Option(False, "--verbose", "-v", help="Show every event.")
Thread = typer.Option(
    None, "--thread", "-t", help="Continue this session (an id from `jarvis sessions list`)."
)
NewThread = typer.Option(
    None, "--new-thread", help="Start a new session with this id (default: a generated id)."
)
ToolGroup = typer.Option(
    None, "--tool-group", "-g", help="Only the tools of this group (tool_groups in config)."
)


def context_kwargs(
    workspace: Path | None,
    platform: str | None,
    model: str | None,
    base_url: str | None,
    script: Path | None,
    confirm: str | None,
    yes: bool,
    max_iterations: int | None,
    non_interactive: bool,
    tool_group: str | None = None,
    sandbox: str | None = None,
) -> dict[str, Any]:
    """Turn CLI options into ``JarvisContext`` fields (``None`` -> from config)."""
    check_choice("--confirm", confirm, "ConfirmMode")
    check_choice("--sandbox", sandbox, "SandboxMode")
    ws = (workspace or Path.cwd()).resolve()
    if not ws.is_dir():
        msg = f"workspace {ws} is not a directory"
        raise typer.BadParameter(msg)
    ask_trust(ws, non_interactive)  # before anything reads the project's settings
    if sandbox is not None:
        # Also for what this process starts outside the run's context: the code agent's
        # git and child processes read their settings from the variables.
        os.environ["JARVIS_SANDBOX"] = sandbox
    return {
        "workspace": str(ws),
        "platform": platform,
        "model": model,
        "base_url": base_url,
        "script": str(script.resolve()) if script else None,
        "confirm": "never" if yes else confirm,
        "max_iterations": max_iterations,
        "non_interactive": non_interactive,
        "tool_group": tool_group,
        "sandbox": sandbox,
    }


def check_choice(option: str, value: str | None, setting_type: str) -> None:
    """Refuse ``value`` unless the setting's type (in :mod:`jarvis_graph.config`) allows it."""
    if value is None:
        return
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph import config

    allowed = get_args(getattr(config, setting_type))
    if value not in allowed:
        choices = ", ".join(allowed[:-1]) + f" or {allowed[-1]}"
        msg = f"{option} must be {choices}, not {value!r}"
        raise typer.BadParameter(msg)


Definition = typer.Option(
    None,
    "--definition",
    "-c",
    help="Run this agent, role or team (`jarvis agents list`) instead of the Jarvis agent.",
)
