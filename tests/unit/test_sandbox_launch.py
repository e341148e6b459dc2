"""The sandbox's command line and policy, built from plain paths (no process started)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jarvis_graph.config import Settings
from jarvis_graph.sandbox import cgroup, confine, git_guard
from jarvis_graph.sandbox.bwrap import bwrap_prefix
from jarvis_graph.sandbox.launch import landlock_rules
from jarvis_graph.sandbox.policy import Policy
from jarvis_graph.sandbox.system_secrets import readable_parts
from jarvis_graph.tools.base import ToolEnv
from jarvis_graph.tools.builtin import execute_script_impl


def _mounts(prefix: list[str]) -> list[tuple[str, str]]:
    """``(option, target)`` of every mount in a bwrap command line, in order."""
    found, i = [], 0
    while i < len(prefix):
        option = prefix[i]
        if option == "--tmpfs":
            found.append((option, prefix[i + 1]))
            i += 2
        elif option in ("--bind", "--ro-bind"):
            found.append((option, prefix[i + 2]))
            i += 3
        else:
            i += 1
    return found


def _position(mounts: list[tuple[str, str]], option: str, target: Path) -> int:
    return mounts.index((option, str(target.resolve())))


def test_the_workspace_is_writable_inside_a_hidden_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ws = home / "project"
    (ws / ".jarvis").mkdir(parents=True)
    mounts = _mounts(bwrap_prefix(Policy(workspace=ws, home=home), ws, {"PATH": "/usr/bin"}))
    assert _position(mounts, "--tmpfs", home) < _position(mounts, "--bind", ws)
    assert ("--tmpfs", str((ws / ".jarvis").resolve())) in mounts


def test_a_folder_of_a_larger_repository_sees_its_root_read_only(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    ws = repo / "sub"
    (repo / ".git").mkdir(parents=True)
    (repo / ".jarvis").mkdir()
    ws.mkdir()
    mounts = _mounts(bwrap_prefix(Policy(workspace=ws, home=tmp_path / "h"), ws, {}))
    assert _position(mounts, "--ro-bind", repo) < _position(mounts, "--bind", ws)
    assert ("--tmpfs", str((repo / ".jarvis").resolve())) in mounts
    assert not (ws / ".jarvis").exists()  # nothing is made in the workspace but .git/hooks


def test_a_home_kept_in_git_is_not_shown(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ws = home / "project"
    (home / ".git").mkdir(parents=True)
    ws.mkdir()
    mounts = _mounts(bwrap_prefix(Policy(workspace=ws, home=home), ws, {}))
    assert ("--ro-bind", str(home.resolve())) not in mounts


def test_a_home_inside_the_workspace_stays_hidden(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    home = ws / "home"
    home.mkdir(parents=True)
    mounts = _mounts(bwrap_prefix(Policy(workspace=ws, home=home), ws, {"PATH": "/usr/bin"}))
    assert _position(mounts, "--bind", ws) < _position(mounts, "--tmpfs", home)


def test_repository_hooks_and_config_are_pinned_read_only(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / ".git" / "config").write_text("[core]\n", encoding="utf-8")
    mounts = _mounts(bwrap_prefix(Policy(workspace=ws, home=tmp_path), ws, {}))
    assert ("--ro-bind", str((ws / ".git" / "hooks").resolve())) in mounts  # made if missing
    assert ("--ro-bind", str((ws / ".git" / "config").resolve())) in mounts


def test_a_toolchain_on_path_in_the_home_is_shown_without_its_secrets(tmp_path: Path) -> None:
    home = tmp_path / "home"
    tools = home / ".tool"
    (tools / "bin").mkdir(parents=True)
    (tools / "credentials.toml").write_text("token = 'x'\n", encoding="utf-8")
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {"PATH": f"{tools / 'bin'}:/usr/bin"}
    prefix = bwrap_prefix(Policy(workspace=ws, home=home), ws, env)
    mounts = _mounts(prefix)
    assert ("--ro-bind", str(tools.resolve())) in mounts
    secret = str((tools / "credentials.toml").resolve())
    assert prefix[prefix.index(secret) - 2 : prefix.index(secret)] == ["--ro-bind", "/dev/null"]


def test_network_none_unshares_the_network_and_allow_shares_it(tmp_path: Path) -> None:
    assert "--share-net" not in bwrap_prefix(
        Policy(workspace=tmp_path, home=tmp_path), tmp_path, {}
    )
    allowed = Policy(workspace=tmp_path, network="allow", home=tmp_path)
    assert "--share-net" in bwrap_prefix(allowed, tmp_path, {})


def test_landlock_rules_write_only_the_workspace_and_the_private_folder(tmp_path: Path) -> None:
    ws, private = tmp_path / "ws", tmp_path / "private"
    ws.mkdir()
    private.mkdir()
    rules = landlock_rules(Policy(workspace=ws, home=tmp_path / "home"), private, {})
    assert sorted(rules["write"]) == sorted([str(private.resolve()), str(ws.resolve())])
    assert "/tmp" not in rules["read"] and str(tmp_path / "home") not in rules["read"]
    assert rules["net"] is False


def test_the_socket_filter_refuses_the_listed_families_only() -> None:
    program = confine.seccomp_program(["unix"], True, "x86_64")
    assert len(program) % 8 == 0
    with pytest.raises(confine.ConfineError, match="no socket filter"):
        confine.seccomp_program(["unix"], True, "sparc")


def test_a_policy_that_cannot_be_applied_starts_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    policy = json.dumps({"limits": {"nosuch": 1}})
    argv = [sys.executable, "-I", "-S", confine.__file__, policy, "--", "touch", str(marker)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    assert done.returncode == confine.CONFINE_FAILED, done.stderr
    assert "the command was not run" in done.stderr
    assert not marker.exists()


def test_a_workspace_that_is_the_home_shows_it_without_its_secrets(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / "notes.txt").write_text("mine\n", encoding="utf-8")
    mounts = _mounts(bwrap_prefix(Policy(workspace=home, home=home), home, {}))
    assert _position(mounts, "--tmpfs", home) < _position(mounts, "--bind", home)
    assert ("--tmpfs", str((home / ".ssh").resolve())) in mounts


def test_a_path_entry_holding_the_home_does_not_show_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ws = tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    env = {"PATH": f"{tmp_path}:{home}:/usr/bin"}
    mounts = _mounts(bwrap_prefix(Policy(workspace=ws, home=home), ws, env))
    assert ("--ro-bind", str(home.resolve())) not in mounts
    assert ("--ro-bind", str(tmp_path.resolve())) not in mounts
    rules = landlock_rules(Policy(workspace=ws, home=home), tmp_path / "p", env)
    assert str(home.resolve()) not in rules["read"]
    assert str(tmp_path.resolve()) not in rules["read"]


def test_readable_parts_leave_out_only_what_is_excluded(tmp_path: Path) -> None:
    (tmp_path / "a" / "deep").mkdir(parents=True)
    (tmp_path / "a" / "deep" / "secret").write_text("x", encoding="utf-8")
    (tmp_path / "a" / "open.txt").write_text("y", encoding="utf-8")
    (tmp_path / "b").mkdir()
    secret = tmp_path / "a" / "deep" / "secret"
    parts = readable_parts(tmp_path, (secret,))
    assert sorted(parts) == sorted([tmp_path / "a" / "open.txt", tmp_path / "b"])
    assert readable_parts(tmp_path, ()) == [tmp_path]


def test_a_planted_git_redirect_is_moved_out_of_the_repository(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".git" / "modules" / "lib").mkdir(parents=True)
    (ws / ".git" / "modules" / "lib" / "HEAD").write_text("ref: refs/heads/main\n")
    before = git_guard.redirects(ws)
    (ws / ".git" / "commondir").write_text("/elsewhere\n", encoding="utf-8")
    (ws / ".git" / "modules" / "lib" / "config.worktree").write_text("[core]\n")
    notes = git_guard.undo_new_redirects(ws, before)
    assert len(notes) == 2 and "moved .git/commondir out of the repository" in notes[0]
    assert git_guard.redirects(ws) == set()
    kept = list((ws / ".jarvis" / "quarantine").rglob("commondir"))
    assert [p.read_text(encoding="utf-8") for p in kept] == ["/elsewhere\n"]  # nothing lost


@pytest.mark.skipif(os.geteuid() != 0, reason="sets securebits, which takes CAP_SETPCAP")
def test_a_launcher_holding_no_capability_still_confines_itself(tmp_path: Path) -> None:
    # A user's process holds no capability but keeps a full bounding set, which it cannot
    # shrink; root with SECBIT_NOROOT gets exactly that state after exec.
    marker = tmp_path / "ran"
    policy = json.dumps({"limits": {"cpu": 60}})
    launcher = (
        "import ctypes, os, sys\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "assert libc.prctl(28, 3, 0, 0, 0) == 0  # PR_SET_SECUREBITS: NOROOT, locked\n"
        "os.execv(sys.argv[1], sys.argv[1:])\n"
    )
    argv = [sys.executable, "-c", launcher, sys.executable, "-I", "-S", confine.__file__]
    argv += [policy, "--", "sh", "-c", f"grep CapPrm /proc/self/status; touch {marker}"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert "CapPrm:\t0000000000000000" in done.stdout
    assert marker.exists()


def test_cgroups_of_ended_jarvis_processes_are_swept() -> None:
    parent = cgroup.pids_parent()
    if parent is None:
        pytest.skip("no writable pids cgroup here (the sandbox limits processes otherwise)")
    dead = parent / f"{cgroup.PREFIX}{1 << 30}-0"  # above any pid_max: no such process
    mine = parent / f"{cgroup.PREFIX}{os.getpid()}-999999"
    dead.mkdir()
    mine.mkdir()
    try:
        cgroup.sweep.cache_clear()
        made = cgroup.make_pids_cgroup(16)
        assert made is not None
        made.remove()
        assert not dead.exists()  # its process is gone: nobody else would remove it
        assert mine.exists()  # a live process's own
        assert not made.path.exists()
    finally:
        for path in (dead, mine):
            if path.exists():
                path.rmdir()


def test_no_cgroup_is_left_behind_by_scripts(workspace: Path) -> None:
    parent = cgroup.pids_parent()
    if parent is None:
        pytest.skip("no writable pids cgroup here (the sandbox limits processes otherwise)")
    env = ToolEnv(workspace.resolve(), Settings(sandbox="bwrap"))
    for _ in range(20):  # each ends with its PID namespace, taken down by the kernel
        assert execute_script_impl(env, "sleep 0.01 & echo hi").startswith("exit code: 0")
    assert list(parent.glob(f"{cgroup.PREFIX}{os.getpid()}-*")) == []


def test_a_redirect_is_not_moved_through_a_planted_link(tmp_path: Path) -> None:
    ws, elsewhere = tmp_path / "ws", tmp_path / "elsewhere"
    (ws / ".git").mkdir(parents=True)
    (ws / ".jarvis").mkdir()
    elsewhere.mkdir()
    (ws / ".jarvis" / "quarantine").symlink_to(elsewhere)
    before = git_guard.redirects(ws)
    (ws / ".git" / "commondir").write_text("/x\n", encoding="utf-8")
    with pytest.raises(OSError, match="link"):
        git_guard.undo_new_redirects(ws, before)
    assert list(elsewhere.iterdir()) == []
