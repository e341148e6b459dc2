"""Settings: defaults < ~/.jarvis/config.yaml < <project>/.jarvis/config.yaml < JARVIS_* env.

The files are validated with pydantic; a broken file or an unknown key raises
:class:`ConfigError` naming the file, the line and the key. A project's settings that
need trust (:data:`SETTING_TRUST`) apply only once the user trusts the folder.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)

from jarvis_graph.untrusted import BoundedLoader, InputFileError, read_text
from jarvis_graph.workspace_trust import announce_ignored, fingerprint, is_trusted, record_trust

ConfirmMode = Literal["never", "risky", "sandboxed", "always"]
SandboxMode = Literal["auto", "bwrap", "landlock", "off"]
ROLES = ("normal", "cheap")


class ConfigError(ValueError):
    """A configuration file or variable is invalid; the message says where and why."""


class ModelSpec(BaseModel):
    """One model: which platform serves it and how to reach it.

    The API key itself never lives in config: ``api_key_env`` names the environment
    variable that holds it.
    """

    model_config = ConfigDict(extra="forbid")

    platform: str = "auto"
    model: str = ""
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float | None = None
    max_tokens: int | None = None
    timeout: float = 120.0
    """``openai``: seconds each step of a request may wait (connecting, the next bytes)."""
    reply_timeout: float = Field(default=600.0, gt=0)
    """``openai``: seconds one model call may take in all, retries included. ``timeout``
    bounds each wait; this bounds a reply that keeps dripping bytes and never ends."""
    max_retries: int = 3
    script: str | None = None
    tool_protocol: Literal["native", "text"] = "native"
    """``text``: tools are described in the prompt and called with <TOOL_CALL> blocks."""
    single_tool_per_turn: bool = False
    stream: bool = True
    """``openai``: stream replies; ``false`` asks for whole replies (endpoints that cannot
    stream tool calls)."""
    n_ctx: int = Field(default=8192, ge=512)
    """Context window of the local model, in tokens."""
    n_threads: int | None = Field(default=None, ge=1)
    """Local model: decoding threads; unset, the cores not busy when each reply starts."""
    max_repeats: int = Field(default=1, ge=1)
    """Times the same call (same tool, same arguments) runs for one task; a repeat past it
    is not run again: the model is told its result is already above."""
    computed_answers: bool = True
    """Local model: offer the ``compute`` tool (checked Python expressions, read-only)."""
    memory_tools_on_mention: bool = True
    """Local model: offer the memory tools only to tasks that speak of remembering."""
    vision: bool | None = None
    """Whether the model takes images (``None``: known from its name, see
    :meth:`takes_images`)."""

    def takes_images(self) -> bool:
        """Whether images may be sent to this model: ``vision`` if set, else by its name.

        Models of the ``local`` and ``scripted`` platforms never do; for others a name of a
        known vision family (GPT-4o, GPT-4.1, GPT-5, o1/o3/o4, Claude 3+, Gemini, LLaVA,
        Qwen-VL, Llama 3.2 Vision, Pixtral, Gemma 3, MiniCPM-V, Moondream) says yes.
        """
        if self.vision is not None:
            return self.vision
        if self.platform in ("local", "scripted"):
            return False
        return bool(VISION_MODELS.search(self.model.lower()))


VISION_MODELS = re.compile(
    r"gpt-4o|gpt-4\.1|gpt-4-turbo|gpt-5|(^|[/:])o[134](-|$)|claude-(3|sonnet|opus|haiku)"
    r"|gemini|llava|bakllava|qwen[\d.]*-?vl|llama3\.2-vision|llama-3\.2-\d+b-vision|pixtral"
    r"|gemma-?3|minicpm-v|moondream|vision"
)
"""Model names of families that take images (lower case)."""

McpTransport = Literal["stdio", "sse", "streamable"]
MCP_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,47}$"


class McpServerSpec(BaseModel):
    """One MCP server, in Jarvis' form.

    ``env`` and ``headers`` values are secrets: they are kept as ``SecretStr`` so that
    printing, logging or dumping the settings shows ``**********``.
    """

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=MCP_NAME_PATTERN)
    type: McpTransport = "stdio"
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, SecretStr] = Field(default_factory=dict)
    cwd: str | None = None
    base_url: str | None = None
    headers: dict[str, SecretStr] = Field(default_factory=dict)
    enable: bool = True
    timeout: float | None = Field(default=None, gt=0)
    """Seconds one call may take (``None``: ``mcp_timeout``)."""

    @model_validator(mode="after")
    def _reachable(self) -> McpServerSpec:
        if self.type == "stdio" and not self.command:
            msg = f"MCP server {self.name!r} has type stdio but no `command` to start it"
            raise ValueError(msg)
        if self.type != "stdio" and not self.base_url:
            msg = f"MCP server {self.name!r} has type {self.type} but no `base_url` to reach it"
            raise ValueError(msg)
        return self


WebBackend = Literal["searxng", "tavily", "brave"]
WEB_DEFAULT_URLS: dict[str, str] = {
    "tavily": "https://api.tavily.com",
    "brave": "https://api.search.brave.com",
}
WEB_DEFAULT_KEY_ENVS: dict[str, str] = {"tavily": "TAVILY_API_KEY", "brave": "BRAVE_API_KEY"}


class WebSettings(BaseModel):
    """``search_web`` and ``read_webpage``: off until a search backend is chosen.

    The backend's URL is the user's (a self-hosted SearxNG on loopback is fine); a URL a
    model gives ``read_webpage`` never reaches a private or loopback address unless
    ``allow_private`` is on.
    """

    model_config = ConfigDict(extra="forbid")

    search: WebBackend | None = None
    """The search backend; unset: both web tools are off (unless ``read_pages``)."""
    url: str | None = None
    """Base URL of the backend (SearxNG: required; Tavily, Brave: their public API)."""
    api_key_env: str | None = None
    """The NAME of the variable holding the backend's key (Tavily, Brave; default
    ``TAVILY_API_KEY`` / ``BRAVE_API_KEY``). Tools never see it."""
    read_pages: bool = False
    """Offer ``read_webpage`` even with no search backend."""
    confirm_reads: bool = True
    """``read_webpage`` counts as a risky tool (``confirm: risky`` asks before each page):
    a model's URL can carry what it read out of the workspace."""
    allow_private: bool = False
    """Let ``read_webpage`` reach loopback, private, link-local and reserved addresses."""
    allow_hosts: list[str] = Field(default_factory=list)
    """Host names ``read_webpage`` may reach on a private address (an intranet wiki); the
    name must match exactly, after every redirect too."""
    ca_file: str | None = None
    """A CA bundle (PEM) to verify HTTPS pages with, e.g. a company's root; default: the
    certifi bundle."""
    timeout: float = Field(default=20.0, gt=0)
    """Seconds for one request, all of it (connect, redirects, body)."""
    max_page_bytes: int = Field(default=3_000_000, ge=1024)
    """Pages larger than this are refused."""
    max_redirects: int = Field(default=5, ge=0)

    @model_validator(mode="after")
    def _complete(self) -> WebSettings:
        if self.search == "searxng" and not self.url:
            msg = "web.search is searxng but web.url (the SearxNG base URL) is not set"
            raise ValueError(msg)
        return self

    def base_url(self) -> str:
        """The search backend's base URL."""
        return (self.url or WEB_DEFAULT_URLS.get(self.search or "", "")).rstrip("/")

    def key_env(self) -> str | None:
        """The variable holding the backend's key (``None`` for SearxNG)."""
        if self.search in WEB_DEFAULT_KEY_ENVS:
            return self.api_key_env or WEB_DEFAULT_KEY_ENVS[self.search]
        return self.api_key_env


class SandboxLimits(BaseModel):
    """Resource limits of one sandboxed command."""

    model_config = ConfigDict(extra="forbid")

    cpu_seconds: int = Field(default=600, ge=1)
    """CPU time of each process (the wall-clock limit is ``execute_timeout``)."""
    memory_mb: int = Field(default=4096, ge=64)
    """Data memory of each process (heap and private mappings)."""
    processes: int = Field(default=512, ge=8)
    """Processes and threads alive at once, all of the command's together."""
    file_mb: int = Field(default=2048, ge=1)
    """Largest file a process may write."""


class Settings(BaseModel):
    """All Jarvis settings after merging files and environment."""

    model_config = ConfigDict(extra="forbid")

    model_group: str = "default"
    model_groups: dict[str, dict[str, ModelSpec]] = Field(
        default_factory=lambda: {"default": {"normal": ModelSpec(), "cheap": ModelSpec()}}
    )
    confirm: ConfirmMode = "risky"
    answer_check: Literal["auto", "cited", "rules", "off"] = "auto"
    """Check each final answer against the tool results (see README): ``auto`` for models
    of the local platform, ``rules`` for every model, ``cited`` for every model with cited
    answers (the task declared first, the answer citing its sources), ``off`` never."""
    focused_answers: Literal["auto", "on", "off"] = "auto"
    """Write the final answer again from the task's facts (``focus_answer`` node): ``auto``
    for models of the local platform."""
    answer_check_retries: int = Field(default=2, ge=0)
    """Times a failed answer goes back to the model before the run ends ``unverified``."""

    @field_validator(
        "answer_check",
        "focused_answers",
        "sub_agents",
        "code_agent_switch",
        "chains",
        "sandbox",
        mode="before",
    )
    @classmethod
    def _yaml_switch(cls, value: Any, info: Any) -> Any:
        """YAML reads ``off``/``on`` as booleans: ``off``, and ``rules``, ``ask`` or ``on``."""
        if isinstance(value, bool):
            on = {"answer_check": "rules", "code_agent_switch": "ask", "sandbox": "auto"}.get(
                info.field_name, "on"
            )
            return on if value else "off"
        return value

    max_iterations: int = Field(default=40, ge=1)
    tool_output_limit: int = Field(default=20_000, ge=200)
    max_tool_calls_per_reply: int = Field(default=32, ge=1)
    """Tool calls of one model reply that run; the rest are answered "not run"."""
    max_tool_argument_bytes: int = Field(default=1_000_000, ge=1024)
    """A call whose arguments (as JSON, in bytes) are larger is refused, not run."""
    execute_timeout: float = Field(default=120.0, gt=0)
    allow_outside_workspace: bool = False
    sandbox: SandboxMode = "auto"
    """Where processes the model starts run (see README, Sandbox): ``auto`` takes the
    strongest level that works here (``bwrap``, then ``landlock``); ``off`` none."""
    sandbox_network: Literal["none", "allow"] = "none"
    """Network of a sandboxed process: ``none`` (no sockets to anything outside it) or
    ``allow`` (the machine's network)."""
    sandbox_writable: list[str] = Field(default_factory=list)
    """Paths outside the workspace a sandboxed process may change (``~`` expands)."""
    sandbox_readable: list[str] = Field(default_factory=list)
    """Paths in hidden folders (the home folder) a sandboxed process may read."""
    sandbox_limits: SandboxLimits = Field(default_factory=lambda: SandboxLimits())
    script_env_passthrough: list[str] = Field(default_factory=list)
    """Variables (names or globs) scripts get although they look secret; see README."""
    checkpoint_url: str | None = None
    after_tool_call_cb_dirs: list[str] = Field(default_factory=list)
    # Workspace context attached to each new task (0 turns a part off): the text files the
    # task names (at most attach_max_lines lines each) and the file list of a workspace that
    # has at most attach_listing files.
    attach_named_files: int = Field(default=3, ge=0)
    attach_max_lines: int = Field(default=200, ge=1)
    attach_listing: int = Field(default=40, ge=0)
    tool_load_dirs: list[str] = Field(default_factory=list)
    """Folders of user tool files, after ``~/.jarvis/tools``."""
    tool_groups: dict[str, list[str]] = Field(default_factory=dict)
    """Named subsets of tools: tool names or globs (``time__*``)."""
    tool_group: str | None = None
    central_tool_repo: str | None = None
    """Git URL of a shared tool repository, cloned into ``~/.jarvis/central_tool_repo``."""
    mcp: list[McpServerSpec] = Field(default_factory=list)
    mcp_timeout: float = Field(default=60.0, gt=0)
    mcp_start_timeout: float = Field(default=30.0, gt=0)
    web: WebSettings = Field(default_factory=WebSettings)
    """Web search and page reading (``search_web``, ``read_webpage``)."""
    force_save_memory: bool = False
    """Ask the model once per task, before the history is cleared or when the task
    completes, to save what is worth remembering (Jarvis' ``force_save_memory``)."""
    episodic_archive: bool = True
    """Index each completed task's messages in the project's episodic archive."""
    # Planner: child runs nest at most plan_max_depth levels below the task; at most
    # plan_concurrency ready steps run at once; plan_adjust re-plans the remaining steps.
    plan_max_depth: int = Field(default=2, ge=0)
    plan_concurrency: int = Field(default=4, ge=1)
    plan_adjust: bool = True
    code_agent_switch: Literal["ask", "auto", "off"] = "ask"
    """``jarvis run``/``chat`` in a git repository: offer the code agent (``ask``, on a
    terminal), switch without asking (``auto``), or never (``off``)."""
    thread_routing: bool = False
    """``jarvis chat``: send each new message to the open session it belongs to (asked with
    one key); see the README for how often it is right."""
    thread_routing_hours: float = Field(default=12.0, gt=0)
    """Sessions with a checkpoint this recent are open."""
    thread_routing_threshold: float = Field(default=0.03, ge=0, le=1)
    """Below this score (the mean cosine, MiniLM, of the message with a session's task and
    latest turns) a message starts a new session."""
    docs_max_bytes: int = Field(default=100_000_000, ge=1024)
    """Documents larger than this are refused (``jarvis docs add``, ``ask_document``)."""
    docs_max_pages: int = Field(default=2000, ge=1)
    docs_max_rows: int = Field(default=20_000, ge=1)
    """Rows read per spreadsheet sheet (the rest is left out, and said so)."""
    image_max_side: int = Field(default=1568, ge=64)
    """Images sent to a model are scaled down to at most this many pixels a side."""
    image_max_bytes: int = Field(default=20_000_000, ge=1024)
    """Image files larger than this are refused."""
    chat_picker: bool = True
    """A new ``jarvis chat`` on a terminal first offers the agent definitions and the
    predefined tasks."""
    sub_agents: Literal["auto", "on", "off"] = "auto"
    """Offer ``sub_agent`` and ``sub_code_agent``: ``auto`` for models other than the local
    platform's (a small model does better with fewer tools)."""
    sub_agent_max_iterations: int = Field(default=20, ge=1)
    """Model calls a ``sub_agent`` / ``sub_code_agent`` run may make (its own cap)."""
    chains: Literal["auto", "on", "off"] = "auto"
    """Offer the tool chains as tools: ``auto`` the user's and project's, and the built-in
    ones to models other than the local platform's; ``on`` all; ``off`` none."""
    task_graph_tool: bool = False
    """Offer ``run_task_graph``: several tool calls with dependencies as one parallel plan."""
    # jarvis code: every successful edit is committed as "<prefix> <summary> <suffix>".
    code_commit_prefix: str = "jarvis:"
    code_commit_suffix: str = ""
    # Author of those commits when git has no identity of its own (user.name/user.email);
    # without both, jarvis code refuses to start in such a repository.
    code_git_name: str | None = None
    code_git_email: str | None = None
    # Context management: summaries, tool filtering, methodologies.
    max_input_tokens: int = Field(default=32_000, ge=0)
    """Approximate tokens of a request above which older messages are summarized (0: off)."""
    auto_summary_rounds: int = Field(default=0, ge=0)
    """Summarize after this many model turns since the last summary (0: off)."""
    tool_filter_threshold: int = Field(default=30, ge=0)
    """Filter the tools offered to the model when there are more than this many (0: off)."""
    tool_filter_candidates: int = Field(default=20, ge=1)
    """Best-ranked tools the ``cheap`` model chooses from."""
    tool_filter_fallback: int = Field(default=10, ge=1)
    """Best-ranked tools kept when the ``cheap`` model gives no usable answer."""
    tool_filter_always_include: list[str] = Field(default_factory=list)
    """Tools (names or globs) offered whatever the filter selects."""
    use_methodology: bool = True
    """Select relevant methodologies at task start and add them to the prompt."""
    use_analysis: bool = False
    """After a completed task, ask whether a reusable methodology emerged and save it."""
    methodology_dirs: list[str] = Field(default_factory=list)
    """Folders of methodologies besides ``~/.jarvis/methodologies``."""
    central_methodology_repo: str | None = None
    """Git URL of the shared methodology repository (cloned under ``~/.jarvis``)."""

    def model_for(self, role: str = "normal") -> ModelSpec:
        """Return the model spec for ``role`` in the active group.

        A group without the role falls back to its ``normal`` model.
        """
        group = self.model_groups.get(self.model_group)
        if group is None:
            known = ", ".join(sorted(self.model_groups)) or "none"
            msg = f"model group {self.model_group!r} is not defined (known groups: {known})"
            raise ConfigError(msg)
        spec = group.get(role) or group.get("normal")
        if spec is None:
            msg = f"model group {self.model_group!r} has no {role!r} or 'normal' model"
            raise ConfigError(msg)
        return spec


TrustClass = Literal["safe", "needs_trust", "per_model"]
"""How a setting from a project's ``.jarvis/config.yaml`` is treated before the user trusts
that folder (``jarvis trust``): ``safe`` applies, ``needs_trust`` is ignored, ``per_model``
decides field by field with :data:`MODEL_SPEC_TRUST`. The user's own file, ``JARVIS_*``
variables and command-line options are the user's and always apply."""

# Every setting is classified here, beside its declaration, so a new one cannot be
# forgotten (tests/unit/test_settings_trust.py checks the tables cover both models; a key
# missing from them is treated as needs_trust). A setting needs trust when a cloned
# repository could use it to run code, lower confirmation, choose where a key or the
# conversation goes, hand secrets to scripts or widen what the tools may read.
SETTING_TRUST: dict[str, TrustClass] = {
    "model_group": "safe",  # picks one of the user's groups by name
    "model_groups": "per_model",
    "confirm": "needs_trust",  # lowers confirmation
    "answer_check": "safe",
    "focused_answers": "safe",
    "answer_check_retries": "safe",
    "max_iterations": "safe",
    "tool_output_limit": "safe",
    "max_tool_calls_per_reply": "safe",
    "max_tool_argument_bytes": "safe",
    "execute_timeout": "safe",
    "allow_outside_workspace": "needs_trust",  # widens file access
    "sandbox": "needs_trust",  # turns the sandbox off
    "sandbox_network": "needs_trust",  # opens the network to scripts
    "sandbox_writable": "needs_trust",  # widens what scripts may change
    "sandbox_readable": "needs_trust",  # widens what scripts may read
    "sandbox_limits": "needs_trust",  # raising them lets a fork bomb through
    "script_env_passthrough": "needs_trust",  # hands secrets to scripts
    "checkpoint_url": "needs_trust",  # every message is written where it points
    "after_tool_call_cb_dirs": "needs_trust",  # imports Python files
    "attach_named_files": "safe",
    "attach_max_lines": "safe",
    "attach_listing": "safe",
    "tool_load_dirs": "needs_trust",  # imports Python files
    "tool_groups": "safe",
    "tool_group": "safe",
    "central_tool_repo": "needs_trust",  # clones and imports Python files
    "mcp": "needs_trust",  # starts commands, sends headers
    "mcp_timeout": "safe",
    "mcp_start_timeout": "safe",
    "web": "needs_trust",  # search URL, key variable, private addresses, confirm_reads
    "force_save_memory": "safe",
    "episodic_archive": "safe",
    "plan_max_depth": "safe",
    "plan_concurrency": "safe",
    "plan_adjust": "safe",
    "code_agent_switch": "safe",  # which agent runs; its edits confirm as usual
    "thread_routing": "safe",
    "thread_routing_hours": "safe",
    "thread_routing_threshold": "safe",
    "docs_max_bytes": "safe",
    "docs_max_pages": "safe",
    "docs_max_rows": "safe",
    "image_max_side": "safe",
    "image_max_bytes": "safe",
    "chat_picker": "safe",
    "sub_agents": "safe",
    "sub_agent_max_iterations": "safe",
    "chains": "safe",  # chains call tools, which confirm as usual
    "task_graph_tool": "safe",
    "code_commit_prefix": "safe",
    "code_commit_suffix": "safe",
    "code_git_name": "safe",
    "code_git_email": "safe",
    "max_input_tokens": "safe",
    "auto_summary_rounds": "safe",
    "tool_filter_threshold": "safe",
    "tool_filter_candidates": "safe",
    "tool_filter_fallback": "safe",
    "tool_filter_always_include": "safe",
    "use_methodology": "safe",
    "use_analysis": "needs_trust",  # saves model-written methodologies every later run reads
    "methodology_dirs": "needs_trust",  # their text goes to the model: widens reading
    "central_methodology_repo": "needs_trust",  # fetched from the URL it names
}
MODEL_SPEC_TRUST: dict[str, TrustClass] = {
    "platform": "needs_trust",  # a cloud platform gets the task and the key
    "model": "safe",
    "base_url": "needs_trust",  # receives the key
    "api_key_env": "needs_trust",  # which secret is sent
    "temperature": "safe",
    "max_tokens": "safe",
    "timeout": "safe",
    "reply_timeout": "safe",
    "max_retries": "safe",
    "script": "safe",
    "tool_protocol": "safe",
    "single_tool_per_turn": "safe",
    "stream": "safe",
    "n_ctx": "safe",
    "n_threads": "safe",
    "max_repeats": "safe",
    "computed_answers": "safe",
    "memory_tools_on_mention": "safe",
    "vision": "safe",
}


def split_by_trust(data: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split a project file's settings into those that apply untrusted and those that wait.

    Returns:
        ``(kept, held)``: ``held`` maps the dotted key of each setting that needs trust
        (``mcp``, ``model_groups.fast.normal.base_url``) to its value.
    """
    kept: dict[str, Any] = {}
    held: dict[str, Any] = {}
    for key, value in data.items():
        kind = SETTING_TRUST.get(key, "needs_trust")
        if kind == "per_model" and isinstance(value, dict):
            kept[key] = _split_groups(key, value, held)
        elif kind == "safe":
            kept[key] = value
        else:
            held[key] = value
    return kept, held


def _split_groups(key: str, groups: dict[str, Any], held: dict[str, Any]) -> dict[str, Any]:
    kept: dict[str, Any] = {}
    for group, roles in groups.items():
        if not isinstance(roles, dict):
            kept[group] = roles  # left for validation to report
            continue
        kept[group] = {}
        for role, spec in roles.items():
            if not isinstance(spec, dict):
                kept[group][role] = spec
                continue
            kept[group][role] = {}
            for field, value in spec.items():
                if MODEL_SPEC_TRUST.get(field, "needs_trust") == "safe":
                    kept[group][role][field] = value
                else:
                    held[f"{key}.{group}.{role}.{field}"] = value
    return kept


def jarvis_home() -> Path:
    """The user-level data folder: ``$JARVIS_HOME`` or ``~/.jarvis``."""
    return Path(os.environ.get("JARVIS_HOME") or Path.home() / ".jarvis")


def user_config_path() -> Path:
    """Path of the user-level config file."""
    return jarvis_home() / "config.yaml"


def project_config_path(project: Path) -> Path:
    """Path of the project-level config file."""
    return project / ".jarvis" / "config.yaml"


def project_mcp_json_path(project: Path) -> Path:
    """Path of the project's ``mcpServers`` file."""
    return project / ".jarvis" / "mcp.json"


CODE_DIR_SETTINGS = ("tool_load_dirs", "after_tool_call_cb_dirs")
"""Settings naming folders of Python files Jarvis imports: trust covers their contents."""


def _is_users_file(project: Path) -> bool:
    """Whether the project's config file is the user's own (Jarvis run in the home)."""
    path = project_config_path(project)
    return path.resolve() == user_config_path().resolve()


def project_trust_digest(project: Path) -> str:
    """The digest trust in ``project`` is recorded with: its ``.jarvis`` files and code."""
    project = project.resolve()  # the same digest whichever spelling of the path is given
    try:
        data, _node = _load_yaml(project_config_path(project))
    except ConfigError:
        data = {}  # a broken file is hashed as it is; load_settings reports it
    named = [d for key in CODE_DIR_SETTINGS for d in data.get(key) or [] if isinstance(d, str)]
    dirs = [(project / Path(d).expanduser()).resolve() for d in named]
    return fingerprint([project_config_path(project), project_mcp_json_path(project)], dirs)


def project_trusted(project: Path) -> bool:
    """Whether the user trusts ``project``'s settings as they are now (``jarvis trust``)."""
    if _is_users_file(project):
        return True
    return is_trusted(jarvis_home(), project, project_trust_digest(project))


def trust_project(project: Path) -> None:
    """Record that the user trusts ``project``'s settings as they are now."""
    record_trust(jarvis_home(), project, project_trust_digest(project))


def held_settings(project: Path) -> dict[str, Any]:
    """What ``project``'s files would enable only once trusted: dotted key -> value.

    The MCP servers of ``.jarvis/mcp.json`` are listed under ``.jarvis/mcp.json``.
    Empty when the folder is the user's own or nothing in it needs trust.

    Raises:
        ConfigError: The project's config file is not valid YAML.
    """
    if _is_users_file(project):
        return {}
    data, _node = _load_yaml(project_config_path(project))
    return split_by_trust(data)[1] | _held_mcp_json(project)


def _held_mcp_json(project: Path) -> dict[str, Any]:
    """``{".jarvis/mcp.json": servers}`` when the project has that file (all wait for trust)."""
    mcp_json = project_mcp_json_path(project)
    if not mcp_json.is_file():
        return {}
    try:
        servers = json.loads(read_settings_file(mcp_json) or "").get("mcpServers")
    except (ValueError, AttributeError):  # ConfigError included
        servers = None  # reported when the servers are loaded
    return {".jarvis/mcp.json": servers if isinstance(servers, dict) else {}}


SETTINGS_FILE_MAX_BYTES = 1_000_000
"""Largest ``config.yaml`` or ``mcp.json`` read: settings, not data (a cloned repository's
file of gigabytes must not be read whole at every start)."""


def read_settings_file(path: Path) -> str | None:
    """The text of a settings file, ``None`` when there is none; bounded, a regular file.

    Raises:
        ConfigError: Larger than :data:`SETTINGS_FILE_MAX_BYTES`, unreadable or not UTF-8.
    """
    if not path.is_file():
        return None
    try:
        return read_text(path, SETTINGS_FILE_MAX_BYTES, "a settings file is far smaller; trim it")
    except InputFileError as exc:
        raise ConfigError(str(exc)) from None


def _load_yaml(path: Path) -> tuple[dict[str, Any], yaml.Node | None]:
    """Read a YAML mapping and its node tree (for line numbers); missing file -> empty."""
    text = read_settings_file(path)
    if text is None:
        return {}, None
    try:
        node, data = parse_yaml(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else str(path)
        problem = getattr(exc, "problem", None) or str(exc)
        msg = f"{where}: invalid YAML: {problem}. Fix the file or remove it."
        raise ConfigError(msg) from exc
    if data is None:
        return {}, None
    if not isinstance(data, dict):
        msg = f"{path}:1: the config must be a mapping of keys to values, got {type(data).__name__}"
        raise ConfigError(msg)
    return data, node


def parse_yaml(text: str) -> tuple[yaml.Node | None, Any]:
    """The YAML node tree of ``text`` (for line numbers) and the data built from it.

    One parse: ``yaml.compose`` then ``yaml.safe_load`` would read the text twice.

    Raises:
        yaml.YAMLError: The text is not valid YAML.
    """
    loader = BoundedLoader(text)  # aliases cannot expand a small file into gigabytes
    try:
        node = loader.get_single_node()
        return node, (loader.construct_document(node) if node is not None else None)
    finally:
        loader.dispose()


def _line_of(node: yaml.Node | None, loc: tuple[int | str, ...]) -> int | None:
    """Follow ``loc`` through a composed YAML tree and return the 1-based line."""
    line = None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if key.value == str(part):
                    line, node = key.start_mark.line + 1, value
                    break
            else:
                return line
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if part >= len(node.value):
                return line
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            return line
    return line


def _deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        elif key == "mcp" and isinstance(value, list) and isinstance(merged.get(key), list):
            merged[key] = _merge_by_name(merged[key], value)
        else:
            merged[key] = value
    return merged


def _merge_by_name(base: list[Any], over: list[Any]) -> list[Any]:
    """MCP servers of both files; a server the later file names again replaces the earlier."""
    names = {item.get("name") for item in over if isinstance(item, dict)}
    kept = [item for item in base if not (isinstance(item, dict) and item.get("name") in names)]
    return [*kept, *over]


def _validate_file(path: Path, data: dict[str, Any], node: yaml.Node | None) -> None:
    """Validate one file on its own so errors name the file that holds them."""
    try:
        Settings.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_describe(exc, str(path), node)) from exc


def _describe(exc: ValidationError, source: str, node: yaml.Node | None) -> str:
    lines = []
    for err in exc.errors():
        loc = tuple(err["loc"])
        key = ".".join(str(p) for p in loc)
        line = _line_of(node, loc)
        where = f"{source}:{line}" if line else source
        if err["type"] == "extra_forbidden":
            lines.append(f"{where}: unknown key {key!r}")
        else:
            got = _shown_input(loc, err.get("input"))
            lines.append(f"{where}: {key}: {err['msg']} (got {got})")
    return "invalid configuration:\n  " + "\n  ".join(lines)


def _shown_input(loc: tuple[int | str, ...], value: Any) -> str:
    """The offending value for an error message, without MCP secrets."""
    if any(part in ("env", "headers") for part in loc):
        return "a value that is not shown (env and headers may hold secrets)"
    if isinstance(value, dict):
        return f"a mapping with keys {sorted(map(str, value))}"
    return repr(value)


_SCALAR_ENV = {
    "JARVIS_MODEL_GROUP": "model_group",
    "JARVIS_CONFIRM": "confirm",
    "JARVIS_MAX_ITERATIONS": "max_iterations",
    "JARVIS_TOOL_OUTPUT_LIMIT": "tool_output_limit",
    "JARVIS_EXECUTE_TIMEOUT": "execute_timeout",
    "JARVIS_ALLOW_OUTSIDE_WORKSPACE": "allow_outside_workspace",
    "JARVIS_SANDBOX": "sandbox",
    "JARVIS_SANDBOX_NETWORK": "sandbox_network",
    "JARVIS_CHECKPOINT_URL": "checkpoint_url",
    "JARVIS_TOOL_GROUP": "tool_group",
    "JARVIS_CENTRAL_TOOL_REPO": "central_tool_repo",
    "JARVIS_FORCE_SAVE_MEMORY": "force_save_memory",
    "JARVIS_EPISODIC_ARCHIVE": "episodic_archive",
    "JARVIS_PLAN_MAX_DEPTH": "plan_max_depth",
    "JARVIS_PLAN_CONCURRENCY": "plan_concurrency",
    "JARVIS_MAX_INPUT_TOKENS": "max_input_tokens",
    "JARVIS_AUTO_SUMMARY_ROUNDS": "auto_summary_rounds",
    "JARVIS_CENTRAL_METHODOLOGY_REPO": "central_methodology_repo",
    "JARVIS_GIT_NAME": "code_git_name",
    "JARVIS_GIT_EMAIL": "code_git_email",
}
_LIST_ENV = {
    "JARVIS_AFTER_TOOL_CALL_CB_DIRS": "after_tool_call_cb_dirs",
    "JARVIS_TOOL_LOAD_DIRS": "tool_load_dirs",
    "JARVIS_METHODOLOGY_DIRS": "methodology_dirs",
    "JARVIS_SCRIPT_ENV_PASSTHROUGH": "script_env_passthrough",
}
_MODEL_ENV = {
    "JARVIS_PLATFORM": "platform",
    "JARVIS_MODEL": "model",
    "JARVIS_BASE_URL": "base_url",
    "JARVIS_API_KEY_ENV": "api_key_env",
    "JARVIS_SCRIPT": "script",
    "JARVIS_TOOL_PROTOCOL": "tool_protocol",
}


def _env_overrides(env: dict[str, str], group: str) -> dict[str, Any]:
    """Translate JARVIS_* variables into a settings fragment."""
    out: dict[str, Any] = {}
    for var, key in _SCALAR_ENV.items():
        if env.get(var):
            out[key] = env[var]
    for var, key in _LIST_ENV.items():
        if env.get(var):
            out[key] = [d for d in env[var].split(os.pathsep) if d]
    model = {key: env[var] for var, key in _MODEL_ENV.items() if env.get(var)}
    if model:
        group = out.get("model_group", group)
        out["model_groups"] = {group: {role: dict(model) for role in ROLES}}
    return out


def load_settings(
    project: Path | None = None,
    env: dict[str, str] | None = None,
    overrides: dict[str, Any] | None = None,
) -> Settings:
    """Merge defaults, the user file, the project file, env and explicit overrides.

    Args:
        project: Project root holding ``.jarvis/``; defaults to the current directory.
        env: Environment to read ``JARVIS_*`` from; defaults to ``os.environ``.
        overrides: Highest-precedence values (from CLI flags or the run context).

    Raises:
        ConfigError: A file is not valid YAML, or a key or value is invalid.
    """
    env = dict(os.environ if env is None else env)
    project = Path.cwd() if project is None else project
    merged: dict[str, Any] = {}
    for path in (user_config_path(), project_config_path(project)):
        data, node = _load_yaml(path)
        if data:
            _validate_file(path, data, node)
        if path != user_config_path():  # also with no config.yaml: .jarvis/mcp.json
            data = _trusted_part(project, data)
        merged = _deep_merge(merged, data)
    group = str(merged.get("model_group", "default"))
    merged = _deep_merge(merged, _env_overrides(env, group))
    if overrides:
        merged = _deep_merge(merged, overrides)
    try:
        return Settings.model_validate(merged)
    except ValidationError as exc:
        raise ConfigError(_describe(exc, "JARVIS_* environment / command-line", None)) from exc


def _trusted_part(project: Path, data: dict[str, Any]) -> dict[str, Any]:
    """The project file's settings this run may use: all when trusted, else the safe ones.

    What is left out is said once per process (``announce_ignored``), never silently.
    """
    if project_trusted(project):
        return data
    kept, held = split_by_trust(data)  # ``data`` is the file held_settings would read again
    held |= _held_mcp_json(project)
    if held:
        announce_ignored(project.resolve(), sorted(held))
    return kept


def mask_secrets(data: Any) -> Any:
    """Return ``data`` with values of secret-looking keys replaced by ``***``."""
    if isinstance(data, dict):
        return {
            k: ("***" if _is_secret_key(str(k)) and v else mask_secrets(v)) for k, v in data.items()
        }
    if isinstance(data, list):
        return [mask_secrets(v) for v in data]
    return data


def _is_secret_key(key: str) -> bool:
    low = key.lower()
    if low.endswith("_env"):  # names an env var, not a secret
        return False
    return any(word in low for word in ("key", "token", "secret", "password"))


DEFAULT_CONFIG_TEMPLATE = """\
# Jarvis Graph configuration. Precedence: JARVIS_* env > project > user > defaults.
model_group: default
model_groups:
  default:
    normal:
      # auto: a provider when its key variable or base_url is set, else the embedded local
      # model (offline, no key). A model named here needs its key variable or base_url.
      platform: auto          # auto | openai | local | scripted | <plugin>
      # model: gpt-4o-mini
      # base_url: http://localhost:11434/v1   # any OpenAI-compatible endpoint
      # api_key_env: OPENAI_API_KEY   # the NAME of the variable holding the key
    cheap:
      platform: auto
      # model: gpt-4o-mini
      # api_key_env: OPENAI_API_KEY
confirm: risky                # never | risky | sandboxed | always
max_iterations: 40
tool_output_limit: 20000
execute_timeout: 120
sandbox: auto                 # auto | bwrap | landlock | off (see `jarvis doctor`)
sandbox_network: none         # none | allow
# sandbox_writable: [~/.cache/pip]   # paths outside the workspace scripts may change
allow_outside_workspace: false
force_save_memory: false      # ask the model to save memories once per task
episodic_archive: true        # index completed tasks for `jarvis memory episodes`
# tool_load_dirs: [~/my-tools]  # *.py files with langchain tools or Jarvis-style tool classes
# tool_groups:                  # named subsets of tools; choose one with tool_group or --tool-group
#   readonly: [read_code, list_files, search_files, "time__*"]
# central_tool_repo: https://example.org/team/jarvis-tools.git
# mcp:                          # MCP servers (also: mcpServers in ~/.jarvis/mcp.json)
#   - name: time
#     type: stdio               # stdio | sse | streamable
#     command: mcp-server-time  # on PATH or beside Jarvis' Python (pip install mcp-server-time)
#     args: [--local-timezone, UTC]
#   - name: search
#     type: streamable
#     base_url: http://127.0.0.1:3001/mcp
#     headers: {Authorization: "Bearer ${SEARCH_TOKEN}"}
# web:                          # search_web / read_webpage (off until search is set)
#   search: searxng             # searxng | tavily | brave
#   url: http://127.0.0.1:8888  # SearxNG's base URL (its JSON format must be enabled)
#   # api_key_env: TAVILY_API_KEY   # tavily / brave: the NAME of the key's variable
#   allow_private: false        # model URLs may not reach loopback / private addresses
"""
