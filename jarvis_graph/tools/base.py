"""What every tool needs: the workspace, the settings, path checks and output limits."""

from __future__ import annotations

import functools
import hashlib
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from jarvis_graph import secrets
from jarvis_graph.config import ConfigError, McpServerSpec, Settings
from jarvis_graph.context import JarvisContext, resolve_settings, running_context
from jarvis_graph.owned_paths import OwnedPathError, write_owned
from jarvis_graph.tools.mcp_config import load_mcp_json, mcp_json_paths


class ToolFailure(Exception):
    """A tool could not do its work; the text is shown to the model as the tool's answer."""


class ToolInputError(ToolFailure, ValueError):
    """A tool was called with arguments it cannot use; the text is shown to the model."""


TOOL_ENV_ATTRIBUTE = "_jarvis_tool_env"
"""Where a run's :class:`ToolEnv` is kept on its context object (not a dataclass field)."""


@dataclass(frozen=True)
class ToolEnv:
    """The environment a tool call runs in."""

    workspace: Path
    settings: Settings = field(default_factory=Settings)
    non_interactive: bool = False

    @classmethod
    def from_context(cls, context: JarvisContext | None) -> ToolEnv:
        """The environment of a run context (``None`` -> defaults, cwd).

        A run's services put the run's environment on its context, so a tool call in a run
        reuses it instead of reading the settings again.
        """
        ctx = context or JarvisContext()
        env = ctx.__dict__.get(TOOL_ENV_ATTRIBUTE)
        if isinstance(env, ToolEnv):
            return env
        return cls(ctx.workspace_path(), resolve_settings(ctx), ctx.non_interactive)

    def resolve(self, path: str) -> Path:
        """Resolve ``path`` against the workspace and refuse escapes.

        Raises:
            ToolInputError: The path leaves the workspace and that is not allowed.
        """
        raw = Path(path).expanduser()
        full = (raw if raw.is_absolute() else self.workspace / raw).resolve()
        if not self.settings.allow_outside_workspace and not full.is_relative_to(self.workspace):
            msg = (
                f"path {path!r} is outside the workspace {self.workspace}; use a path inside it "
                "(relative paths are taken from the workspace root)"
            )
            raise ToolInputError(msg)
        return full

    def outputs_dir(self) -> Path:
        """Where whole outputs of large tool results are written."""
        return self.workspace / ".jarvis" / "tool_outputs"

    def mcp_specs(self) -> list[McpServerSpec]:
        """Every MCP server configured for the workspace, disabled ones too (their secrets)."""
        specs = list(self.settings.mcp)
        # untrusted too: the secrets an untrusted file names are hidden all the same
        for path in mcp_json_paths(self.workspace, untrusted=True):
            try:
                specs += load_mcp_json(path)
            except (ConfigError, OSError):  # a broken file is reported where MCP starts
                continue
        return specs

    def script_environment(self) -> dict[str, str]:
        """The environment for a process a tool starts: this one's, without secrets."""
        return secrets.tool_environment(self.settings, self.mcp_specs())

    @functools.cached_property
    def secret_values(self) -> list[str]:
        """Values of the configured secrets, masked in everything stored (longest first)."""
        return secrets.secret_values(self.settings, self.mcp_specs())

    def mask(self, text: str) -> str:
        """``text`` with the value of every configured secret replaced by ``***``."""
        return secrets.mask_values(text, self.secret_values)


def current_env() -> ToolEnv:
    """The environment of the graph run this tool call belongs to (defaults outside a run)."""
    return ToolEnv.from_context(running_context())


def output_file_name(tool_name: str, sha256: str) -> str:
    """The name a whole output is saved under: when, which tool, and the text's sha256 (hex)."""
    safe_name = re.sub(r"[^\w.-]", "_", tool_name)[:64]  # the name may come from the model
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{safe_name}-{sha256[:12]}.txt"


def save_output(text: str, env: ToolEnv, tool_name: str) -> Path:
    """Save a whole tool output in the workspace's tool outputs folder, secrets masked."""
    text = env.mask(text)
    sha256 = hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()
    name = output_file_name(tool_name, sha256)
    # private, and never through a .jarvis or tool_outputs link a repository shipped
    return write_owned(env.workspace, env.outputs_dir().relative_to(env.workspace) / name, text)


def limit_output(text: str, env: ToolEnv, tool_name: str) -> tuple[str, str | None]:
    """Mask secrets; keep head and tail of an over-long output and save the whole to a file.

    Configured secrets (:meth:`ToolEnv.mask`) are masked first, so neither the file nor
    the message stored in the checkpoint holds them.

    Returns:
        The text to give the model, and the path of the saved file (or ``None``).
    """
    text = env.mask(text)
    limit = env.settings.tool_output_limit
    if len(text) <= limit:
        return text, None
    head, tail = text[: limit * 2 // 3], text[-(limit // 3) :]
    omitted = len(text) - len(head) - len(tail)
    try:
        path = save_output(text, env, tool_name)
    except OwnedPathError as exc:  # the model still gets the head and tail, and why no file
        note = f"\n\n[... {omitted} characters omitted; the whole output was not saved: {exc}]\n\n"
        return head + note + tail, None
    note = (
        f"\n\n[... {omitted} characters omitted. The whole output ({len(text)} characters) is "
        f"saved at {path}; read parts of it with read_code or search it with search_files.]\n\n"
    )
    return head + note + tail, str(path)
