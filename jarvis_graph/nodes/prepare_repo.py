"""prepare_repo: make the workspace a git repository the code agent can commit to.

Checks first that git can commit here (git installed, an identity of the user's or the
configured fallback) and changes nothing when it cannot; then finds the repository root
(``git init`` when there is none), keeps ``.jarvis/`` out of git through
``.git/info/exclude`` (no commit of Jarvis' own in the user's history), and, unless the
caller already attached one (the CLI does, with its console), attaches a
:class:`GitWorkflow` that commits every successful edit. A dirty tree is committed first
in non-interactive runs (but for untracked files whose names look like secrets, ``.env``
and the like, which are left out and said so); in interactive ones its paths are left
alone and never swept into the agent's commits.

A code agent started by another run (``sub_code_agent``, a plan step) is the user's
guest in their folder: it never creates a repository (a model's tool call must not turn a
folder into one and commit every file in it, ``.env`` included) and never commits the
user's uncommitted changes; it commits only its own edits.
"""

from __future__ import annotations

import logging
from typing import Any

from langgraph.runtime import Runtime

from jarvis_graph.context import JarvisContext, resolve_settings
from jarvis_graph.events import get_event_bus
from jarvis_graph.gitflow.repo import (
    GitError,
    changed_paths,
    commit_all,
    commit_identity,
    ensure_excluded,
    fallback_identity,
    find_repo_root,
    init_repo,
    left_out,
    untracked_secrets,
)
from jarvis_graph.gitflow.workflow import GitWorkflow, attach_workflow, workflow_for
from jarvis_graph.runtime.services import context_of
from jarvis_graph.state import AgentState

logger = logging.getLogger(__name__)


def prepare_repo(state: AgentState, runtime: Runtime[JarvisContext]) -> dict[str, Any]:
    """Set up the repository and the commit subscriber (idempotent; no state change)."""
    ctx = context_of(runtime)
    workspace = ctx.workspace_path()
    root = find_repo_root(workspace)
    settings = resolve_settings(ctx)
    # The commit workflow outlives one run: it listens on the named bus, not the run's own.
    bus = get_event_bus(ctx.event_bus, settings.after_tool_call_cb_dirs)
    if root is not None and workflow_for(bus, root) is not None:
        return {}
    fallback = fallback_identity(settings.code_git_name, settings.code_git_email)
    identity = commit_identity(workspace, fallback)  # raises before anything changes
    if root is None and ctx.depth > 0:
        msg = (
            f"{workspace} is not in a git repository and the code agent commits every edit; "
            "a sub-run does not create one: run `git init` first, or hand the task to "
            "sub_agent"
        )
        raise GitError(msg)
    root = root or init_repo(workspace)
    ensure_excluded(root)
    baseline: set[str] = set()
    if ctx.non_interactive and ctx.depth == 0:
        prefix = settings.code_commit_prefix.strip()
        message = f"{prefix} checkpoint before the code agent's edits".strip()
        secrets = untracked_secrets(root)  # never swept into a commit, this one or later
        commit_all(root, message, identity, leave=secrets)
        baseline = set(secrets)
        if secrets:
            _log(left_out(secrets))
    else:
        baseline = set(changed_paths(root))
    workflow = GitWorkflow(
        root,
        workspace,
        prefix=settings.code_commit_prefix,
        suffix=settings.code_commit_suffix,
        show=_log,
        baseline=baseline,
        identity=identity,
    )
    attach_workflow(bus, workflow)
    return {}


def _log(text: str) -> None:
    logger.info("%s", text)
