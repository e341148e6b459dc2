"""What Jarvis prints: no secret of a URL, no terminal control sequence from untrusted text.

Boundary: settings, provider and store errors, and text that came from a model, a file, a
tool or a session store, on their way to the user's terminal. Guaranteed:

- ``config show``, ``models list`` and the errors of a provider or a Mem0 server show URLs
  with ``***@`` for their userinfo and ``***`` for secret-named query values, never the
  password;
- a script (``execute_script``) does not see a variable whose *value* holds a secret by its
  shape (URL userinfo, a JWT, a connection string's password, a Bearer value, a webhook URL),
  whatever its name;
- control characters (OSC 52 clipboard writes, screen clears, OSC 8 links) in a model's
  answer, a file a tool read, a session id or a memory record are printed as visible
  escapes (``\\x1b``), never as raw bytes.
"""

from __future__ import annotations

import base64
import json
import os
import re
import socket
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import yaml

from jarvis_graph.config import load_settings
from jarvis_graph.tools.base import ToolEnv
from jarvis_graph.tools.builtin import execute_script_impl
from tests.support.cli import invoke, run_process, write_script
from tests.support.fake_openai import FakeOpenAI

PASSWORD = "S3cret-Pw-4711"
QUERY_KEY = "query-key-0815"
MARKER = "!!!COMPLETE!!!"
OSC52 = "\x1b]52;c;cm0gLXJmIH4=\x07"
CLEAR = "\x1b[2J"
LINK = "\x1b]8;;http://evil.example\x1b\\click\x1b]8;;\x1b\\"


def configure(values: dict[str, Any]) -> None:
    """Write the user's config file (the test's home): trusted, unlike a project's."""
    path = Path(os.environ["JARVIS_HOME"]) / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(values), encoding="utf-8")


def base_url_group(url: str) -> dict[str, Any]:
    spec = {"platform": "openai", "model": "m-1", "base_url": url}
    return {"model_groups": {"default": {"normal": spec, "cheap": spec}}}


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --- URLs in settings and errors -------------------------------------------------------------


def test_config_show_masks_userinfo_and_secret_query_values(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    configure(base_url_group(f"https://bob:{PASSWORD}@llm.example/v1?key={QUERY_KEY}"))
    monkeypatch.setenv("JARVIS_CHECKPOINT_URL", f"postgresql://app:{PASSWORD}x@db.example/app")
    result = invoke(["config", "show", "-w", str(workspace)])
    assert result.exit_code == 0, result.output
    assert PASSWORD not in result.output and QUERY_KEY not in result.output
    assert "https://***@llm.example/v1?key=***" in result.output
    assert "postgresql://***@db.example/app" in result.output


def test_models_list_masks_the_base_url_password(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "250")  # the whole URL on one line
    configure(base_url_group(f"http://bob:{PASSWORD}@127.0.0.1:9/v1"))
    result = invoke(["models", "list", "-w", str(workspace)])
    assert result.exit_code == 0, result.output
    assert PASSWORD not in result.output
    assert "http://***@127.0.0.1:9/v1" in result.output


def test_a_provider_refusal_shows_no_password(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAI() as server:
        server.fail(401, "invalid api key", times=5)
        url = server.base_url.replace("http://", f"http://bob:{PASSWORD}@")
        args = ["run", "-n", "--platform", "openai", "--base-url", url, "--model", "fake-model"]
        proc = run_process([*args, "say hi"], cwd=workspace)
    seen = proc.stdout + proc.stderr
    assert proc.returncode == 1, seen
    assert "HTTP 401" in seen and "***@127.0.0.1" in seen
    assert PASSWORD not in seen


def test_a_refused_connection_shows_no_password(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    url = f"http://bob:{PASSWORD}@127.0.0.1:{closed_port()}/v1"
    args = ["run", "-n", "--platform", "openai", "--base-url", url, "--model", "m", "hi"]
    proc = run_process(args, workspace)
    seen = proc.stdout + proc.stderr
    assert proc.returncode == 1, seen
    assert "Connection error" in seen and PASSWORD not in seen


def test_an_unreachable_mem0_server_shows_no_password(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JARVIS_STORE_URL", f"mem0+http://bob:{PASSWORD}@127.0.0.1:{closed_port()}")
    proc = run_process(["memory", "list", "-w", str(workspace)], workspace)
    seen = proc.stdout + proc.stderr
    assert proc.returncode != 0, seen
    assert "cannot be reached" in seen and "***@127.0.0.1" in seen
    assert PASSWORD not in seen


# --- secrets by value, hidden from scripts ---------------------------------------------------


def _jwt() -> str:
    def part(data: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")

    return f"{part({'alg': 'HS256', 'typ': 'JWT'})}.{part({'sub': 'u1'})}.c2lnbmF0dXJlLXZhbHVl"


SECRET_SHAPES = {
    "token as URL user": "https://ghp_Tok3nAsUserName0123456789@github.com/o/r.git",
    "JWT": _jwt(),
    "connection string": "Server=db;Database=app;User Id=sa;Password=Conn-Pw-99;",
    "pwd= connection string": "host=db;uid=app;pwd=Odbc-Pw-98",
    "Bearer value": "Bearer bearer-value-5f3a9c",
    "Slack webhook": "https://hooks.slack.com/services/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",
    "Discord webhook": "https://discord.com/api/webhooks/1122334455/Xy7_Qw3-Ab9Cd2Ef5Gh8Ij1Kl4Mn7Op",
}


@pytest.mark.parametrize("shape", sorted(SECRET_SHAPES))
def test_a_value_shaped_like_a_secret_is_hidden_from_scripts(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, shape: str
) -> None:
    value = SECRET_SHAPES[shape]
    monkeypatch.setenv("HARMLESS_SETTING", value)  # a name no name rule would catch
    monkeypatch.setenv("PLAIN_URL", "https://docs.python.org/3/library/some-long-page-name.html")
    out = execute_script_impl(ToolEnv(workspace, load_settings(workspace)), "env")
    assert out.startswith("exit code: 0"), out
    assert "HARMLESS_SETTING" not in out and value not in out
    assert "PLAIN_URL=https://docs.python.org/3/library/some-long-page-name.html" in out


# --- terminal control sequences --------------------------------------------------------------


def run_scripted(ws: Path, tmp_path: Path, turns: list[dict[str, Any]], task: str) -> str:
    script = write_script(tmp_path / "script.yaml", turns)
    args = ["run", "-n", "--yes", "--platform", "scripted", "--script", str(script), task]
    proc = run_process(args, cwd=ws)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_a_model_answer_with_control_sequences_is_shown_escaped(
    workspace: Path, tmp_path: Path
) -> None:
    answer = f"Done {OSC52} then {CLEAR} and {LINK}. {MARKER}"
    out = run_scripted(workspace, tmp_path, [{"text": answer}], "answer")
    assert "\x1b" not in out and "\x07" not in out, out
    assert "\\x1b]52;c;cm0gLXJmIH4=\\a" in out and "\\x1b[2J" in out
    assert "\\x1b]8;;http://evil.example" in out


def test_a_file_with_control_sequences_is_echoed_escaped(workspace: Path, tmp_path: Path) -> None:
    (workspace / "notes.txt").write_text(f"line one {OSC52}{CLEAR} end\n")
    call = {"name": "read_code", "args": {"path": "notes.txt"}}
    out = run_scripted(workspace, tmp_path, [{"tool_calls": [call]}, {"text": MARKER}], "read")
    assert "\x1b" not in out
    assert "line one \\x1b]52;c;" in out


def test_sessions_list_shows_a_crafted_thread_id_escaped(workspace: Path, tmp_path: Path) -> None:
    run_scripted(workspace, tmp_path, [{"text": f"ok {MARKER}"}], f"task {CLEAR}")
    crafted = f"evil{OSC52}id"
    with sqlite3.connect(workspace / ".jarvis" / "sessions.sqlite") as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            columns = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
            if "thread_id" in columns:
                conn.execute(f"UPDATE {table} SET thread_id = ?", (crafted,))
    proc = run_process(["sessions", "list", "-w", str(workspace)], workspace)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "\x1b" not in proc.stdout and "\x07" not in proc.stdout
    assert "evil\\x1b]52;c;cm0gLXJmIH4=\\aid" in proc.stdout
    assert "task \\x1b[2J" in proc.stdout


def test_memory_list_shows_a_record_escaped(workspace: Path) -> None:
    saved = invoke(["memory", "save", f"remember {CLEAR}{OSC52} this", "-w", str(workspace)])
    assert saved.exit_code == 0, saved.output
    proc = run_process(["memory", "list", "-w", str(workspace)], workspace)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "\x1b" not in proc.stdout and "remember \\x1b[2J\\x1b]52;c;" in proc.stdout


def test_in_a_terminal_our_colours_stay_and_the_answers_escapes_do_not(
    workspace: Path, tmp_path: Path
) -> None:
    from tests.support.terminal import Terminal

    script = write_script(tmp_path / "s.yaml", [{"text": f"hi {OSC52}{CLEAR} {MARKER}"}])
    term = Terminal(["run", "--platform", "scripted", "--script", str(script), "go"], workspace)
    term.expect("■ completed")
    assert term.exit_code() == 0, term.screen
    assert "\x1b]52" not in term.raw and "\x1b[2J" not in term.raw
    assert "hi \\x1b]52;c;cm0gLXJmIH4=\\a\\x1b[2J" in term.screen
    assert re.search(r"\x1b\[[0-9;]*m■ completed", term.raw)  # the CLI's own colour


def test_docs_list_shows_a_crafted_file_name_escaped(workspace: Path) -> None:
    name = f"notes{CLEAR}.txt"
    (workspace / name).write_text("Deploys run on Fridays after the review meeting.\n")
    added = run_process(["docs", "add", name, "-w", str(workspace)], workspace)
    assert added.returncode == 0, added.stdout + added.stderr
    listed = run_process(["docs", "list", "-w", str(workspace)], workspace)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    for out in (added.stdout, listed.stdout):
        assert "\x1b" not in out and "notes\\x1b[2J.txt" in out


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("a\x1b]52;c;eA==\x07b", "a\\x1b]52;c;eA==\\ab"),
        ("line\r\noverwrite\rX", "line\\r\noverwrite\\rX"),
        ("tab\tkept\n", "tab\tkept\n"),
        ("\x9b2J 8-bit CSI", "\\x9b2J 8-bit CSI"),
        ("bidi \u202eevil", "bidi \\u202eevil"),
        ("plain ü €", "plain ü €"),
    ],
)
def test_visible_escapes_control_characters_only(text: str, shown: str) -> None:
    from jarvis_graph.cli.visible import visible

    assert visible(text) == shown
    assert visible(shown) == shown  # escaping twice changes nothing


def test_an_unreachable_mcp_server_shows_no_password(workspace: Path) -> None:
    url = f"http://bob:{PASSWORD}@127.0.0.1:{closed_port()}/mcp?token={QUERY_KEY}"
    servers = {"remote": {"url": url}}
    (Path(os.environ["JARVIS_HOME"])).mkdir(parents=True, exist_ok=True)
    (Path(os.environ["JARVIS_HOME"]) / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    proc = run_process(["mcp", "list", "-w", str(workspace)], workspace)
    seen = proc.stdout + proc.stderr
    assert "***@127.0.0.1" in seen, seen
    assert PASSWORD not in seen and QUERY_KEY not in seen


def test_a_failed_methodology_sync_shows_no_token(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = "ghp_Tok3nInTheUrl0123456789"
    monkeypatch.setenv("GIT_TERMINAL_PROMPT", "0")
    url = f"https://{token}@127.0.0.1:{closed_port()}/team/methods.git"
    monkeypatch.setenv("JARVIS_CENTRAL_METHODOLOGY_REPO", url)
    proc = run_process(["methodology", "sync", "-w", str(workspace)], workspace)
    seen = proc.stdout + proc.stderr
    assert proc.returncode != 0, seen
    assert "git could not clone https://***@127.0.0.1" in seen
    assert token not in seen


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://u:pw@h.example/v1?api_key=k1&x=1", "https://***@h.example/v1?api_key=***&x=1"),
        ("https://tok@h.example/", "https://***@h.example/"),
        (
            "https://h.example/s?X-Amz-Signature=ab&sig=cd",
            "https://h.example/s?X-Amz-Signature=***&sig=***",
        ),
        ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1"),
        ("https://h.example/search?q=a%20b&page=2", "https://h.example/search?q=a%20b&page=2"),
        ("not a url", "not a url"),
        ("https://u:pw@[bad/v1?api_key=k1#f", "https://***@[bad/v1?api_key=***#f"),
    ],
)
def test_redact_url_hides_userinfo_and_secret_parameters_only(url: str, shown: str) -> None:
    from jarvis_graph.secrets import redact_url

    assert redact_url(url) == shown


ORDINARY_VALUES = [
    "/usr/local/bin:/usr/bin:/bin",
    "rs=0:di=01;34:ln=01;36:mh=00:pi=40;33",
    "en_US.UTF-8",
    "https://pypi.org/simple/",
    "https://github.com/langchain-ai/langgraph-checkpoint-sqlite",
    "python3.11.7",
    "mail.google.com",
    "xterm-256color",
]


@pytest.mark.parametrize("value", ORDINARY_VALUES)
def test_ordinary_values_are_not_taken_for_secrets(value: str) -> None:
    from jarvis_graph.secrets import secret_parts

    assert secret_parts(value) == []


def test_sessions_show_prints_stored_text_escaped(workspace: Path, tmp_path: Path) -> None:
    out = run_scripted(workspace, tmp_path, [{"text": f"stored {OSC52} {MARKER}"}], f"t {CLEAR}")
    thread = re.search(r"session (\d{8}-\d{6}-[0-9a-f]{6})", out)
    assert thread, out
    proc = run_process(["sessions", "show", thread.group(1), "-w", str(workspace)], workspace)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "\x1b" not in proc.stdout
    assert "stored \\x1b]52;c;" in proc.stdout and "t \\x1b[2J" in proc.stdout


def test_a_crafted_key_in_a_project_config_is_shown_escaped_never_as_a_traceback(
    workspace: Path,
) -> None:
    key = f"x{OSC52}y"  # a cloned repository's .jarvis/config.yaml holds what it likes
    (workspace / ".jarvis").mkdir()
    broken = {"model_groups": {key: {"normal": {"platform": 5}}}}
    (workspace / ".jarvis" / "config.yaml").write_text(yaml.safe_dump(broken), encoding="utf-8")
    shown_key = "x\\x1b]52;c;cm0gLXJmIH4=\\ay"
    for args in (["config", "show"], ["sessions", "list"], ["run", "-n", "hi"]):
        proc = run_process([*args, "-w", str(workspace)], workspace)
        seen = proc.stdout + proc.stderr
        assert proc.returncode in (1, 2) and "Traceback" not in seen, seen
        assert "\x1b" not in seen and "\x07" not in seen, seen
        assert f"model_groups.{shown_key}.normal.platform" in seen, seen
    broken["model_groups"] = {key: {"normal": {"platform": "openai"}}}
    (workspace / ".jarvis" / "config.yaml").write_text(yaml.safe_dump(broken), encoding="utf-8")
    trusted = run_process(["trust", str(workspace)], workspace)
    assert trusted.returncode == 0, trusted.stdout + trusted.stderr
    assert "\x1b" not in trusted.stdout and f"model_groups.{shown_key}" in trusted.stdout


def test_the_terminal_console_shows_what_rich_would_drop_and_keeps_its_markup() -> None:
    import io

    from rich.markup import escape
    from rich.table import Table

    from jarvis_graph.cli.render import TerminalConsole

    out = io.StringIO()
    console = TerminalConsole(file=out, force_terminal=True, width=200, highlight=False)
    console.print(f"answer\rover{OSC52}", markup=False)
    console.print(f"[bold]{escape('tit[le]')}\b\x0b\x0c[/]")
    table = Table("id")
    table.add_row(f"id{CLEAR}\r")
    console.print(table)
    raw = out.getvalue()
    assert "\x07" not in raw and "\r" not in raw and "\x1b]52" not in raw and "\x1b[2J" not in raw
    assert "answer\\rover\\x1b]52;c;cm0gLXJmIH4=\\a" in raw
    assert "tit[le]\\b\\v\\f" in raw and "\x1b[1m" in raw  # our bold still reaches it
    assert "id\\x1b[2J\\r" in raw


def test_text_quoted_from_a_repositorys_files_is_never_taken_as_markup(workspace: Path) -> None:
    linked = "[link=http://evil.example]read_code[/link]"  # rich markup: a hidden OSC 8 link
    chains = workspace / ".jarvis" / "chains"
    chains.mkdir(parents=True)
    chain = {"description": "d", "steps": [{"id": "one", "tool": linked, "args": {"path": "x"}}]}
    (chains / "evil.yaml").write_text(yaml.safe_dump(chain), encoding="utf-8")
    listed = run_process(["chains", "list", "-w", str(workspace)], workspace)
    assert f"unknown tool '{linked}'" in " ".join(listed.stdout.split()), listed.stdout
    config = {"model_groups": {linked: {"normal": {"platform": 5}}}}
    (workspace / ".jarvis" / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    models = run_process(["models", "list", "-w", str(workspace)], workspace)
    assert f"model_groups.{linked}.normal.platform" in " ".join(models.stdout.split())


def test_a_scan_report_on_stdout_shows_the_scanned_codes_escapes_escaped(workspace: Path) -> None:
    code = f"int main(void) {{ char b[8]; gets(b); /* {OSC52} */ return 0; }}\n"
    (workspace / f"evil{CLEAR}.c").write_text(code, encoding="utf-8")
    shown = {}
    for fmt in ("md", "json"):
        proc = run_process(["sec", "scan", ".", "-f", fmt], workspace)
        assert proc.returncode in (0, 1), proc.stdout + proc.stderr
        assert "\x1b" not in proc.stdout and "\x07" not in proc.stdout, proc.stdout
        shown[fmt] = proc.stdout
    assert "evil\\x1b[2J.c" in shown["md"]
    assert "/* \\x1b]52;c;cm0gLXJmIH4=\\a */" in shown["md"]
    assert json.loads(shown["json"])["summary"]["total"] == 1  # JSON stays JSON
