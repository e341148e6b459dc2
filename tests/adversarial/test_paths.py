"""No way out of the workspace: symlinks, hard links, ``..``, absolute paths, ``~`` and case.

Attachments (the files a task names), ``search_files`` (ripgrep and the pure-Python
fallback), ``list_files``, ``read_code`` and the local model's calculator are attacked with
links and paths that lead out of the workspace or to secret-looking files. What counts is
what the model would be sent and what ends up in the session database.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from jarvis_graph.secrets import SECRET_FILE_GLOBS
from jarvis_graph.tools import builtin, calculator
from jarvis_graph.tools.attachments import AttachLimits, attachment_text
from jarvis_graph.tools.base import ToolEnv, ToolInputError
from jarvis_graph.tools.builtin import list_files_impl, read_code_impl, search_files_impl
from tests.support.cli import invoke, write_script
from tests.support.store import stored_text

OUTSIDE = "OUTSIDE-SECRET-7f3a"
"""Text of files outside the workspace: it must never reach the model or the database."""


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A workspace beside an outside file and an outside folder, with links into both."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "outside_secret.txt").write_text(f"{OUTSIDE} file\n")
    (tmp_path / "outdir").mkdir()
    (tmp_path / "outdir" / "notes.txt").write_text(f"{OUTSIDE} dir\n")
    (ws / "readme.txt").write_text("hello from inside\n")
    (ws / "link_out.txt").symlink_to("../outside_secret.txt")
    (ws / "passwd_link.txt").symlink_to("/etc/passwd")
    (ws / "hop2.txt").symlink_to("link_out.txt")  # a chain: hop1 -> hop2 -> outside
    (ws / "hop1.txt").symlink_to("hop2.txt")
    (ws / "linkdir").symlink_to("../outdir", target_is_directory=True)
    return ws


def attached(task: str, ws: Path) -> str:
    return attachment_text(task, ws, AttachLimits()) or ""


def run_cli(ws: Path, tmp_path: Path, turns: list[dict[str, object]], task: str) -> str:
    script = write_script(tmp_path / "script.yaml", turns)
    args = ["run", "-n", "--yes", "-w", str(ws), "--platform", "scripted"]
    result = invoke([*args, "--script", str(script), task])
    assert result.exit_code == 0, result.output
    return str(result.output)


# --- attachments ---------------------------------------------------------------------------


def test_attachment_of_a_symlink_to_an_outside_file_is_refused(ws: Path) -> None:
    text = attached("Summarize link_out.txt for me", ws)
    assert OUTSIDE not in text
    assert "link_out.txt" not in text  # nor listed: the link leads out of the workspace


def test_attachment_of_a_symlink_to_etc_passwd_is_refused(ws: Path) -> None:
    text = attached("What users are in passwd_link.txt?", ws)
    assert "root:" not in text and "passwd_link.txt" not in text


def test_attachment_of_a_symlink_chain_out_is_refused(ws: Path) -> None:
    text = attached("Show hop1.txt", ws)
    assert OUTSIDE not in text and "hop1.txt" not in text


def test_attachment_through_a_symlinked_directory_is_refused(ws: Path) -> None:
    assert OUTSIDE not in attached("Read linkdir/notes.txt and notes.txt", ws)


def test_attachment_of_an_inside_link_to_a_secret_file_is_refused(ws: Path) -> None:
    (ws / "secrets").mkdir()
    (ws / "secrets" / "db.txt").write_text("db-password-91\n")
    (ws / "harmless.txt").symlink_to("secrets/db.txt")
    assert "db-password-91" not in attached("Print harmless.txt", ws)


def test_attachment_of_an_inside_symlink_still_works(ws: Path) -> None:
    (ws / "alias.txt").symlink_to("readme.txt")
    assert "hello from inside" in attached("What does alias.txt say?", ws)


def test_attachment_of_a_hard_link_is_refused(ws: Path, tmp_path: Path) -> None:
    """A hard link cannot be told from a workspace file by its path: a file with more than
    one link is not attached (the model can still read it with read_code, a documented
    limit); a hard link to an outside file is exactly such a file."""
    os.link(tmp_path / "outside_secret.txt", ws / "hard.txt")
    assert OUTSIDE not in attached("Read hard.txt", ws)


@pytest.mark.parametrize(
    "task",
    ["Read ../outside_secret.txt", "Read ~/home_secret.txt", "Read /etc/hostname and /etc/passwd"],
    ids=["dotdot", "tilde", "absolute"],
)
def test_attachment_of_paths_outside_is_refused(ws: Path, isolated_home: Path, task: str) -> None:
    (isolated_home / "home_secret.txt").write_text(f"{OUTSIDE} home\n")
    text = attached(task, ws)
    assert OUTSIDE not in text and "root:" not in text


@pytest.mark.parametrize(
    "rel",
    [
        "prod.env",
        "Prod.ENV",
        ".env.local",
        "credentials.json",
        "aws/credentials",
        "passwords.txt",
        "secrets/db.txt",
        "SECRETS/DB.TXT",
        "config/secrets/app.yaml",
        ".netrc",
        ".npmrc",
        ".pgpass",
        "vault.kdbx",
        "deploy/id_ecdsa",
        "keys/server.key",
        "client.pfx",
    ],
)
def test_attachment_of_a_secret_looking_file_is_refused(ws: Path, rel: str) -> None:
    path = ws / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("hunter2-value-55\n")
    assert "hunter2-value-55" not in attached(f"Show me {rel}", ws)


def test_attachment_end_to_end_keeps_outside_files_out_of_the_session(
    ws: Path, tmp_path: Path
) -> None:
    (ws / "secrets").mkdir()
    (ws / "secrets" / "db.txt").write_text("db-password-91\n")
    (ws / "prod.env").write_text("TOKEN=prod-value-22\n")
    run_cli(
        ws,
        tmp_path,
        [{"text": "Done. !!!COMPLETE!!!"}],
        "Summarize link_out.txt, passwd_link.txt, secrets/db.txt, prod.env and readme.txt",
    )
    stored = stored_text(ws)
    assert b"hello from inside" in stored  # the inside file was attached and stored
    for leaked in (OUTSIDE.encode(), b"root:x:0", b"db-password-91", b"prod-value-22"):
        assert leaked not in stored


# --- search_files, list_files, read_code ---------------------------------------------------


def test_search_files_python_fallback_does_not_follow_links_out(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shutil, "which", lambda _name, *a, **k: None)  # no ripgrep
    out = search_files_impl(ToolEnv(ws), "OUTSIDE|root:|hello")
    assert OUTSIDE not in out and "root:" not in out
    assert "readme.txt:1:hello from inside" in out


def test_search_files_ripgrep_does_not_follow_links_out(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert shutil.which("rg"), "ripgrep must be installed for this scenario"

    def no_fallback(*_args: object) -> list[str]:
        raise AssertionError("ripgrep failed and the Python fallback ran")

    monkeypatch.setattr(builtin, "_search_py", no_fallback)  # the answer must come from rg
    out = search_files_impl(ToolEnv(ws), "OUTSIDE|root:|hello")
    assert OUTSIDE not in out and "root:" not in out
    assert "readme.txt:1:hello from inside" in out


def test_search_files_ignores_a_ripgreprc_that_adds_follow(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "ripgreprc").write_text("--follow\n--hidden\n")
    monkeypatch.setenv("RIPGREP_CONFIG_PATH", str(tmp_path / "ripgreprc"))
    out = search_files_impl(ToolEnv(ws), "OUTSIDE|root:|hello")
    assert OUTSIDE not in out and "root:" not in out
    assert "readme.txt:1:hello from inside" in out


def test_search_files_end_to_end_without_ripgrep(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shutil, "which", lambda _name, *a, **k: None)
    call = {"name": "search_files", "args": {"pattern": "OUTSIDE|root:"}}
    run_cli(ws, tmp_path, [{"tool_calls": [call]}, {"text": "ok !!!COMPLETE!!!"}], "find it")
    stored = stored_text(ws)
    assert OUTSIDE.encode() not in stored and b"root:x:0" not in stored
    assert b"no matches for" in stored


@pytest.mark.parametrize("path", ["link_out.txt", "linkdir", "hop1.txt"])
def test_search_files_in_a_link_out_is_refused(ws: Path, path: str) -> None:
    with pytest.raises(ToolInputError, match="outside the workspace"):
        search_files_impl(ToolEnv(ws), "OUTSIDE", path)


def test_list_files_does_not_show_links_out(ws: Path) -> None:
    out = list_files_impl(ToolEnv(ws))
    assert "readme.txt" in out
    for name in ("link_out.txt", "passwd_link.txt", "hop1.txt", "notes.txt"):
        assert name not in out


def test_list_files_of_a_symlinked_directory_out_is_refused(ws: Path) -> None:
    with pytest.raises(ToolInputError, match="outside the workspace"):
        list_files_impl(ToolEnv(ws), "linkdir")


@pytest.mark.parametrize(
    "path",
    ["hop1.txt", "linkdir/notes.txt", "passwd_link.txt", "../outside_secret.txt", "/etc/passwd"],
)
def test_read_code_through_links_and_paths_out_is_refused(ws: Path, path: str) -> None:
    with pytest.raises(ToolInputError, match="outside the workspace"):
        read_code_impl(ToolEnv(ws), path)


def test_read_code_of_home_by_tilde_is_refused(ws: Path, isolated_home: Path) -> None:
    (isolated_home / "home_secret.txt").write_text(f"{OUTSIDE} home\n")
    with pytest.raises(ToolInputError, match="outside the workspace"):
        read_code_impl(ToolEnv(ws), "~/home_secret.txt")


# --- the local model's calculator ------------------------------------------------------------


@pytest.mark.parametrize(
    "rel", ["secrets/db.txt", "SECRETS/DB.TXT", "prod.env", "credentials.json", "passwords.txt"]
)
def test_calculator_does_not_read_secret_looking_files(ws: Path, rel: str) -> None:
    path = ws / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("hunter2-value-55\n")
    with pytest.raises(calculator.CalculationError, match="private"):
        calculator.evaluate(f"open({rel!r}).read()", workspace=ws, private=SECRET_FILE_GLOBS)
    found = calculator.evaluate("glob('**/*')", workspace=ws, private=SECRET_FILE_GLOBS)
    assert rel not in found and "readme.txt" in found


def test_calculator_does_not_read_through_links_out(ws: Path) -> None:
    for rel in ("hop1.txt", "linkdir/notes.txt", "passwd_link.txt"):
        with pytest.raises(calculator.CalculationError, match="outside the workspace"):
            calculator.evaluate(f"open({rel!r}).read()", workspace=ws, private=SECRET_FILE_GLOBS)
