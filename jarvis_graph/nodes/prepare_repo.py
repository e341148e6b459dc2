"""prepare_repo: make the workspace a git repository the code agent can commit to.

Finds the repository root (``git init`` when there is none), adds ``.jarvis/`` to
``.gitignore``, and, unless the caller already attached one (the CLI does, with its
console), attaches a :class:`GitWorkflow` that commits every successful edit. A dirty
tree is committed first in non-interactive runs; in interactive ones its paths are left
alone and never swept into the agent's commits.
"""

from __future__ import annotations

import logging
from typing import Any

from langgraph.runtime import Runtime

from jarvis_graph.context import JarvisContext, resolve_settings
from jarvis_graph.gitflow.repo import (
    changed_paths,
    commit_all,
    ensure_gitignore,
    find_repo_root,
    init_repo,
)
from jarvis_graph.gitflow.workflow import GitWorkflow, attach_workflow, workflow_for
from jarvis_graph.nodes.services import bus_for, context_of
from jarvis_graph.state import AgentState

logger = logging.getLogger(__name__)


def prepare_repo(state: AgentState, runtime: Runtime[JarvisContext]) -> dict[str, Any]:
    """Set up the repository and the commit subscriber (idempotent; no state change)."""
    ctx = context_of(runtime)
    workspace = ctx.workspace_path()
    root = find_repo_root(workspace) or init_repo(workspace)
    bus = bus_for(ctx)
    if workflow_for(bus, root) is not None:
        return {}
    settings = resolve_settings(ctx)
    ensure_gitignore(root)
    baseline: set[str] = set()
    if ctx.non_interactive:
        prefix = settings.code_commit_prefix.strip()
        commit_all(root, f"{prefix} checkpoint before the code agent's edits".strip())
    else:
        baseline = set(changed_paths(root))
    workflow = GitWorkflow(
        root,
        workspace,
        prefix=settings.code_commit_prefix,
        suffix=settings.code_commit_suffix,
        show=_log,
        baseline=baseline,
    )
    attach_workflow(bus, workflow)
    return {}


def _log(text: str) -> None:
    logger.info("%s", text)
