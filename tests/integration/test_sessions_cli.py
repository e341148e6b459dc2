"""``jarvis sessions list``, ``delete`` and ``show --tree`` as a user meets them.

Real processes on the project's SQLite store; the confirmation of ``delete`` in a real
pseudo-terminal.
"""

from __future__ import annotations

from pathlib import Path

from tests.integration.test_chains_cli import COPY, project_chain
from tests.support.cli import invoke, run_process, write_script
from tests.support.terminal import Terminal


def _session(ws: Path, tmp_path: Path, thread: str) -> None:
    script = write_script(tmp_path / f"{thread}.yaml", [{"text": "Hello. !!!COMPLETE!!!"}])
    args = ["run", "-n", "--platform", "scripted", "--script", str(script)]
    done = run_process([*args, "--new-thread", thread, "say hello"], cwd=ws)
    assert done.returncode == 0, done.stdout + done.stderr


def _exists(ws: Path, thread: str) -> bool:
    return invoke(["sessions", "show", thread, "-w", str(ws)]).exit_code == 0


def test_a_piped_list_names_its_columns_first(workspace: Path, tmp_path: Path) -> None:
    _session(workspace, tmp_path, "greeting")

    listed = run_process(["sessions", "list"], cwd=workspace)

    assert listed.returncode == 0, listed.stdout + listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0] == "session\tstatus\tcalls\tsteps\tupdated\ttask"
    assert lines[1].startswith("greeting\tcompleted\t1\t") and lines[1].endswith("\tsay hello")


def test_delete_asks_on_a_terminal(workspace: Path, tmp_path: Path) -> None:
    _session(workspace, tmp_path, "kept")
    question = "Delete session kept, all its checkpoints and its archived episodes? [y/N]"

    term = Terminal(["sessions", "delete", "kept"], workspace)
    term.expect(question)
    term.type("n")
    term.expect("nothing deleted")
    assert term.exit_code() == 1
    assert _exists(workspace, "kept")

    term = Terminal(["sessions", "delete", "kept"], workspace)
    term.expect(question)
    term.type("y")
    term.expect(r"deleted session kept and its \d+ archived episodes", regex=True)
    assert term.exit_code() == 0
    assert not _exists(workspace, "kept")


def test_delete_without_a_terminal_needs_yes(workspace: Path, tmp_path: Path) -> None:
    _session(workspace, tmp_path, "kept")

    refused = run_process(["sessions", "delete", "kept"], cwd=workspace)

    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert refused.stderr.strip() == (
        "error: not deleting session kept, all its checkpoints and its archived episodes "
        "without asking: pass --yes (-y)"
    )
    assert _exists(workspace, "kept")
    deleted = run_process(["sessions", "delete", "kept", "-y"], cwd=workspace)
    assert deleted.returncode == 0, deleted.stdout + deleted.stderr
    assert not _exists(workspace, "kept")


def test_the_tree_of_a_chain_run_by_hand_shows_its_steps(workspace: Path) -> None:
    project_chain(workspace, "copy", COPY)
    (workspace / "a.txt").write_text("hello chain\n")
    done = run_process(["chains", "run", "copy", "-a", '{"src": "a.txt"}', "--yes"], workspace)
    assert done.returncode == 0, done.stdout + done.stderr
    thread = done.stdout.split("session ", 1)[1].split()[0]

    for extra in (["--tree"], []):
        shown = run_process(["sessions", "show", thread, *extra], cwd=workspace)

        assert shown.returncode == 0, shown.stdout + shown.stderr
        lines = shown.stdout.splitlines()
        assert lines[:3] == [
            "chain copy · completed · read succeeded, write succeeded → Chain copy completed: "
            "read succeeded, write…",
            "  └ ✓ read succeeded → a.txt (lines 1-1 of 1) 1 | hello chain",
            "  └ ✓ write succeeded → Created copy.txt (2 lines).",
        ], shown.stdout
        assert "no sub-runs" not in shown.stdout
