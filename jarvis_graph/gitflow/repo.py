"""Small, checked wrappers around the ``git`` command line."""

from __future__ import annotations

import functools
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock

from jarvis_graph import sandbox
from jarvis_graph.owned_paths import OwnedPathError, owned_dir, read_owned_tail, write_owned
from jarvis_graph.secrets import is_secret_path, unnamed_environment

IGNORE_LINE = ".jarvis/"


class GitError(RuntimeError):
    """A git command failed; the text has the command and git's own message."""


@dataclass(frozen=True)
class Identity:
    """Who commits: the fallback from Jarvis' settings when git has no identity."""

    name: str
    email: str

    def config_args(self) -> list[str]:
        """``-c user.name=... -c user.email=...`` for one git command."""
        return ["-c", f"user.name={self.name}", "-c", f"user.email={self.email}"]


GLOBAL_KEYS = ("user.name", "user.email", "core.excludesFile", "init.defaultBranch")
"""The user's global git settings a sandboxed git is given (its home folder is hidden):
who commits, which files are ignored everywhere, the first branch's name."""


@functools.cache
def _global_options() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``-c key=value`` options from the user's global git config, and files to read.

    Read outside the sandbox with ``--global`` from ``/``: no repository is looked at, so
    nothing of one (hooks, ``core.fsmonitor``) can run.
    """
    options: list[str] = []
    files: list[str] = []
    for key in GLOBAL_KEYS:
        try:
            done = subprocess.run(
                ["git", "config", "--global", "--path", "--get", key],
                cwd="/",
                capture_output=True,
                text=True,
                env={**unnamed_environment(), "GIT_TERMINAL_PROMPT": "0"},
                timeout=30,
            )
        except (OSError, subprocess.TimeoutExpired):
            break  # no git: the command itself will say so
        value = done.stdout.strip()
        if done.returncode == 0 and value:
            options += ["-c", f"{key}={value}"]
            if key == "core.excludesFile":
                files.append(value)
    default_ignore = Path.home() / ".config" / "git" / "ignore"
    if not files and default_ignore.is_file():  # git's default excludes file
        options += ["-c", f"core.excludesFile={default_ignore}"]
        files.append(str(default_ignore))
    return tuple(options), tuple(files)


def _run(
    repo: Path, args: tuple[str, ...], literal: bool = True
) -> subprocess.CompletedProcess[str]:
    """``git args`` in ``repo``, in the OS sandbox: hooks run there, with no keys.

    The repository's hooks and ``core.fsmonitor`` run with git; the model can write to the
    repository, so git runs sandboxed like a script (workspace ``repo``, no network), with
    the user's identity and excludes passed in (:func:`_global_options`).
    """
    if not repo.is_dir():
        msg = f"{repo} is not a folder; give an existing folder as the workspace"
        raise GitError(msg)
    # Paths are file names, never globs ("a*.py" is one file); check-ignore refuses that.
    env = {**unnamed_environment(), "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    env["GIT_LITERAL_PATHSPECS"] = "1" if literal else "0"
    if shutil.which("git", path=env.get("PATH")) is None:
        msg = "git is not installed; jarvis code needs git (install it and try again)"
        raise GitError(msg)
    options, files = _global_options()
    settings = sandbox.settings_for(repo)
    if files:
        settings = settings.model_copy(
            update={"sandbox_readable": [*settings.sandbox_readable, *files]}
        )
    try:
        confined = sandbox.prepare_for(settings, repo, repo, env, what=f"`git {args[0]}`")
    except sandbox.SandboxUnavailable as exc:
        raise GitError(str(exc)) from None
    try:
        return subprocess.run(
            confined.wrap(["git", *options, *args]),
            cwd=repo,
            capture_output=True,
            text=True,
            env=confined.env,
            pass_fds=confined.pass_fds,
            timeout=120,
        )
    except FileNotFoundError as exc:
        msg = "git is not installed; jarvis code needs git (install it and try again)"
        raise GitError(msg) from exc
    finally:
        confined.close()


def git(repo: Path, *args: str, check: bool = True) -> str:
    """Run ``git args`` in ``repo`` and return its stdout.

    Raises:
        GitError: The command exited non-zero (with ``check``), or git is not installed.
    """
    proc = _run(repo, args)
    if check and proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip()
        msg = f"`git {' '.join(args)}` failed in {repo}: {detail}"
        raise GitError(msg)
    return proc.stdout


def fallback_identity(name: str | None, email: str | None) -> Identity | None:
    """The identity configured for commits when git has none (``None``: not configured).

    Raises:
        GitError: Only one of the two is set.
    """
    if not name and not email:
        return None
    if not (name and email):
        missing = "code_git_email (JARVIS_GIT_EMAIL)" if name else "code_git_name (JARVIS_GIT_NAME)"
        msg = f"the fallback git identity is incomplete: set {missing} too, or neither"
        raise GitError(msg)
    return Identity(name.strip(), email.strip())


def commit_identity(folder: Path, fallback: Identity | None) -> Identity | None:
    """Check, before anything changes, that commits can be made from ``folder``.

    Returns:
        ``None`` when git has an identity of its own (the user's is always preferred),
        else ``fallback``.

    Raises:
        GitError: git is missing, or has no identity and no fallback is configured; the
            text says how to set one.
    """
    for var in ("GIT_AUTHOR_IDENT", "GIT_COMMITTER_IDENT"):
        proc = _run(folder, ("var", var))
        if proc.returncode != 0:
            break
    else:
        return None
    if fallback is not None:
        return fallback
    said = [line for line in proc.stderr.strip().splitlines() if line.startswith("fatal:")]
    msg = (
        f"git has no identity to commit with in {folder}"
        + (f" ({said[-1]})" if said else "")
        + ". jarvis code commits every edit, so it changed nothing. Set your identity with "
        '`git config --global user.name "Your Name"` and `git config --global user.email '
        "you@example.com` (without --global: this repository only), or give Jarvis one to "
        "use when git has none: code_git_name and code_git_email in ~/.jarvis/config.yaml, "
        "or JARVIS_GIT_NAME and JARVIS_GIT_EMAIL"
    )
    raise GitError(msg)


def find_repo_root(path: Path) -> Path | None:
    """The top folder of the git repository holding ``path`` (``None`` outside one)."""
    folder = path if path.is_dir() else path.parent
    try:
        out = git(folder, "rev-parse", "--show-toplevel", check=True)
    except GitError:
        return None
    return Path(out.strip()).resolve()


def init_repo(path: Path) -> Path:
    """``git init`` in ``path``; returns the repository root."""
    git(path, "init", "-q")
    return path.resolve()


def ensure_excluded(root: Path) -> Path | None:
    """Keep ``.jarvis/`` out of the repository without touching its files.

    The line goes into ``.git/info/exclude`` (local to this clone, never committed), so
    the user's history gets no commit of Jarvis' own. Nothing is written when git already
    ignores ``.jarvis/`` (``.gitignore``, a global excludes file, ...).

    Returns:
        The exclude file written to, or ``None`` when nothing was needed.
    """
    probe = ".jarvis/probe"  # a path inside the folder: it need not exist
    checked = _run(root, ("check-ignore", "-q", "--no-index", probe), literal=False)
    if checked.returncode == 0:
        return None
    if checked.returncode != 1:
        msg = f"`git check-ignore {probe}` failed in {root}: {checked.stderr.strip()}"
        raise GitError(msg)
    given = Path(git(root, "rev-parse", "--git-path", "info/exclude").strip())
    if given.is_absolute():  # a linked worktree: the file is in the main repository's git dir
        base, rel = given.parent, Path(given.name)
    else:  # inside the folder we were given, which may hold links to elsewhere
        base, rel = root, given
    exclude = base / rel
    try:
        # a last line without its newline gets one: the line appended stands on its own
        last = read_owned_tail(base, rel, 1)
        sep = "\n" if last and last != b"\n" else ""
        write_owned(base, rel, f"{sep}{IGNORE_LINE}\n", append=True)
    except OwnedPathError as exc:
        raise GitError(str(exc)) from None
    return exclude


def changed_paths(root: Path) -> list[str]:
    """Paths (relative to ``root``) with uncommitted changes, untracked files included."""
    out = git(root, "status", "--porcelain=v1", "-z", "--untracked-files=all")
    paths: list[str] = []
    entries = iter(out.split("\0"))
    for entry in entries:
        if len(entry) < 4:
            continue
        paths.append(entry[3:])
        if entry[0] in "RC":  # a rename is followed by its source path
            next(entries, None)
    return paths


def has_head(root: Path) -> bool:
    """Whether the repository has a commit yet."""
    return bool(git(root, "rev-parse", "--verify", "-q", "HEAD", check=False).strip())


def commit_args(identity: Identity | None) -> list[str]:
    """``commit`` with the fallback identity's ``-c`` options before it, when there is one."""
    return [*(identity.config_args() if identity else []), "commit"]


def untracked_secrets(root: Path) -> list[str]:
    """Untracked files (relative to ``root``, not ignored) whose names look like secrets."""
    out = git(root, "ls-files", "--others", "--exclude-standard", "-z")
    return [path for path in out.split("\0") if path and is_secret_path(path)]


def left_out(paths: Sequence[str]) -> str:
    """What to tell the user about the untracked secret-looking files a commit left out."""
    shown = ", ".join(paths[:8]) + (" …" if len(paths) > 8 else "")
    return (
        f"left out of the commit, as their names look like secrets: {shown} "
        "(commit them yourself if they belong in git)"
    )


def commit_all(
    root: Path, message: str, identity: Identity | None = None, leave: Sequence[str] = ()
) -> str | None:
    """Commit every change of the work tree but the untracked files ``leave`` names.

    Returns:
        The new commit id; ``None`` when there was nothing else to commit.
    """
    if not changed_paths(root):
        return None
    git(root, "add", "-A")
    if leave:
        git(root, "rm", "-r", "-q", "--cached", "--ignore-unmatch", "--", *leave)
    if not git(root, "diff", "--cached", "--name-only", "-z").strip("\0"):
        return None
    git(root, *commit_args(identity), "-q", "-m", message)
    return git(root, "rev-parse", "HEAD").strip()


def repo_lock(root: Path) -> FileLock:
    """The lock that keeps one code agent per repository (``.jarvis/code_agent.lock``)."""
    try:
        folder = owned_dir(root, ".jarvis")
    except OwnedPathError as exc:
        raise GitError(str(exc)) from None
    return FileLock(str(folder / "code_agent.lock"))
