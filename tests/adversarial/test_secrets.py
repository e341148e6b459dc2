"""No secret in a tool's reach, none in storage.

Scripts run by ``execute_script`` must not see provider keys (``OPENAI_API_KEY``, any model
group's ``api_key_env``), MCP ``${VAR}`` secrets or variables whose names look secret,
unless ``script_env_passthrough`` names them. Whatever a tool prints, the value of every
configured secret (even a 3-character one) is masked in the tool message stored in the
checkpoint, in the file under ``.jarvis/tool_outputs/`` and in the episodic archive. A
``--base-url`` with ``user:password@`` is used but stored without them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from jarvis_graph.config import load_settings
from jarvis_graph.tools.base import ToolEnv
from jarvis_graph.tools.builtin import execute_script_impl
from tests.support.cli import invoke, run_process, write_script
from tests.support.store import stored_text
from tests.support.trust import trust

OPENAI_KEY = "sk-test-leak-0123456789abcdefXYZ"
ACME_KEY = "acme-key-5566-unique"
SHORT = "Zq9"
"""A 3-character configured secret: masked like a long one."""
MARKER = "!!!COMPLETE!!!"


def configure(ws: Path, **values: Any) -> None:
    """Write the project's ``.jarvis/config.yaml``, trusted as the user's own."""
    path = ws / ".jarvis" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(values), encoding="utf-8")
    trust(ws)  # the user's own settings


def acme_group(key_env: str = "ACME_LLM") -> dict[str, Any]:
    """A second model group whose provider key lives in ``key_env`` (a harmless name)."""
    spec = {"platform": "openai", "model": "acme-1", "api_key_env": key_env}
    default: dict[str, Any] = {"normal": {}, "cheap": {}}
    return {"model_groups": {"default": default, "acme": {"normal": spec, "cheap": spec}}}


def run_script(ws: Path, script: str) -> str:
    """``execute_script`` as a model would call it, with the project's settings."""
    return execute_script_impl(ToolEnv(ws, load_settings(ws)), script)


def seen_by_script(ws: Path) -> str:
    """The environment a script gets, as it wrote it to a file.

    The tool's own output masks the values of secret-looking variables (it is stored), so
    what a script was given is read from the file it wrote.
    """
    assert run_script(ws, "env > seen.env") == "exit code: 0\n"
    return (ws / "seen.env").read_text()


def archived_text(ws: Path) -> bytes:
    """Every byte of the project's memory store, where the episodic archive lives."""
    files = sorted((ws / ".jarvis" / "memory").glob("store.sqlite*"))
    assert files, "the run made no episodic archive"
    return b"".join(p.read_bytes() for p in files)


def run_cli(ws: Path, tmp_path: Path, turns: list[dict[str, Any]], task: str, *extra: str) -> str:
    script = write_script(tmp_path / "script.yaml", turns)
    args = ["run", "-n", "--yes", "-w", str(ws), "--platform", "scripted", *extra]
    result = invoke([*args, "--script", str(script), task])
    assert result.exit_code == 0, result.output
    return str(result.output)


def script_turns(script: str, answer: str = "Done.") -> list[dict[str, Any]]:
    call = {"name": "execute_script", "args": {"script": script}}
    return [{"tool_calls": [call]}, {"text": f"{answer} {MARKER}"}]


# --- what scripts see ----------------------------------------------------------------------


def test_env_in_a_script_shows_no_provider_key(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    out = run_script(workspace, "env")
    assert out.startswith("exit code: 0") and "PATH=" in out
    assert OPENAI_KEY not in out and "OPENAI_API_KEY" not in out


def test_printenv_of_the_provider_key_prints_nothing(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    assert run_script(workspace, "printenv OPENAI_API_KEY") == "exit code: 1\n"


def test_a_model_groups_api_key_env_is_not_given_to_scripts(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACME_LLM", ACME_KEY)  # a name no pattern would catch
    configure(workspace, **acme_group())  # not even the active group
    out = run_script(workspace, "printenv ACME_LLM; env")
    assert ACME_KEY not in out and "ACME_LLM" not in out


def test_mcp_var_secrets_are_not_given_to_scripts(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UPSTREAM_CRED", "upstream-value-1")
    monkeypatch.setenv("REMOTE_BEARER", "remote-value-2")
    servers = {
        "local": {"command": "server-bin", "env": {"UPSTREAM": "${UPSTREAM_CRED}"}},
        "remote": {
            "url": "http://127.0.0.1:9/mcp",
            "headers": {"X-Forward": "Bearer ${REMOTE_BEARER}"},
            "disabled": True,
        },
    }
    (workspace / ".jarvis").mkdir()
    (workspace / ".jarvis" / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    out = run_script(workspace, "env")
    assert "upstream-value-1" not in out and "remote-value-2" not in out


def test_secret_looking_names_are_not_given_but_ordinary_ones_are(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hidden = {
        "GITHUB_TOKEN": "ghp-value-a1",
        "DB_PASSWORD": "pw-value-b2",
        "AWS_SECRET_ACCESS_KEY": "aws-value-c3",
        "STRIPE_APIKEY": "stripe-value-d4",
        "GOOGLE_APPLICATION_CREDENTIALS": "/creds/value-e5.json",
        "SMTP_PASS": "smtp-value-f6",
        "GH_PAT": "pat-value-g7",
        "DATABASE_URL": "postgres://app:dbpass-h8@db.internal/app",
    }
    shown = {"KEYBOARD_LAYOUT": "de-value", "TOKENIZERS_PARALLELISM": "false", "MY_SETTING": "on"}
    for name, value in {**hidden, **shown}.items():
        monkeypatch.setenv(name, value)
    out = run_script(workspace, "env")
    for name, value in hidden.items():
        assert f"{name}=" not in out and value not in out
    for name, value in shown.items():
        assert f"{name}={value}" in out
    assert f"HOME={Path.home()}" in out and f"PWD={workspace}" in out


def test_passthrough_setting_gives_named_variables(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-value-a1")
    monkeypatch.setenv("NPM_TOKEN", "npm-value-z9")
    configure(workspace, script_env_passthrough=["GITHUB_TOKEN"])
    out = seen_by_script(workspace)
    assert "GITHUB_TOKEN=ghp-value-a1" in out and "npm-value-z9" not in out


def test_passthrough_from_the_jarvis_variable_accepts_globs(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NPM_TOKEN", "npm-value-z9")
    monkeypatch.setenv("NPM_AUTH", "npm-auth-y8")
    monkeypatch.setenv("JARVIS_SCRIPT_ENV_PASSTHROUGH", "NPM_*")
    out = seen_by_script(workspace)
    assert "NPM_TOKEN=npm-value-z9" in out and "NPM_AUTH=npm-auth-y8" in out


def test_env_end_to_end_keeps_keys_out_of_the_session_db(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real ``jarvis run`` process, with the keys in its environment."""
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("ACME_LLM", ACME_KEY)
    configure(workspace, **acme_group())
    script = write_script(tmp_path / "s.yaml", script_turns("env; printenv OPENAI_API_KEY"))
    args = ["run", "-n", "--yes", "-w", str(workspace), "--platform", "scripted"]
    done = run_process([*args, "--script", str(script), "show env"], cwd=workspace)
    assert done.returncode == 0, done.stdout + done.stderr
    assert OPENAI_KEY not in done.stdout and ACME_KEY not in done.stdout  # not on screen
    stored = stored_text(workspace)
    assert b"PATH=" in stored  # the script's output is there ...
    assert OPENAI_KEY.encode() not in stored and ACME_KEY.encode() not in stored  # ... the keys not


# --- what is stored ------------------------------------------------------------------------


@pytest.fixture
def short_secret_run(workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A run whose script prints a file holding the configured 3-character key, at length."""
    monkeypatch.setenv("ACME_LLM", SHORT)
    configure(workspace, tool_output_limit=200, **acme_group())
    filler = "".join(f"filler line {n}\n" for n in range(60))
    (workspace / "notes.txt").write_text(f"the key is {SHORT} here\n{filler}key={SHORT}\n")
    run_cli(workspace, tmp_path, script_turns("cat notes.txt"), "print the notes")
    return workspace


def test_a_three_character_secret_is_masked_in_the_tool_output_file(
    short_secret_run: Path,
) -> None:
    (saved,) = (short_secret_run / ".jarvis" / "tool_outputs").iterdir()
    text = saved.read_text()
    assert "filler line 59" in text and "the key is *** here" in text
    assert SHORT not in text


def test_a_three_character_secret_is_masked_in_the_checkpoint_db(short_secret_run: Path) -> None:
    stored = stored_text(short_secret_run)
    assert b"the key is *** here" in stored
    assert SHORT.encode() not in stored


def test_a_three_character_secret_is_masked_in_the_episodic_archive(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACME_LLM", SHORT)
    configure(workspace, **acme_group())
    turns = [{"text": f"I set the key to {SHORT} as asked. {MARKER}"}]
    run_cli(workspace, tmp_path, turns, f"set the acme key to {SHORT} please")
    archive = archived_text(workspace)
    assert b"set the acme key to *** please" in archive
    assert SHORT.encode() not in archive


def test_a_literal_mcp_header_secret_is_masked_in_stored_output(
    workspace: Path, tmp_path: Path
) -> None:
    literal = "literal-header-secret-4411"
    server = {"url": "http://127.0.0.1:9/mcp", "headers": {"X-Api-Key": literal}, "disabled": True}
    (workspace / ".jarvis").mkdir()
    (workspace / ".jarvis" / "mcp.json").write_text(json.dumps({"mcpServers": {"r": server}}))
    (workspace / "conf.txt").write_text(f"header value {literal}\n")
    run_cli(workspace, tmp_path, script_turns("cat conf.txt"), "print conf.txt")
    stored = stored_text(workspace)
    assert b"header value ***" in stored and literal.encode() not in stored


def test_base_url_credentials_are_not_stored(workspace: Path, tmp_path: Path) -> None:
    url = "http://alice:pw-Secret-77@127.0.0.1:9/v1"
    run_cli(workspace, tmp_path, [{"text": f"Done. {MARKER}"}], "say done", "--base-url", url)
    stored = stored_text(workspace)
    assert b"http://127.0.0.1:9/v1" in stored  # the endpoint is kept, for resume
    assert b"pw-Secret-77" not in stored and b"alice" not in stored


def test_resume_gets_base_url_credentials_back_only_from_the_environment(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jarvis_graph.checkpointing import open_checkpointer
    from jarvis_graph.cli.driver import saved_context

    url = "http://alice:pw-Secret-77@127.0.0.1:9/v1"
    out = run_cli(workspace, tmp_path, [{"text": f"Done. {MARKER}"}], "say done", "--base-url", url)
    thread = re.search(r"session (\d{8}-\d{6}-[0-9a-f]{6})", out)
    assert thread, out
    with open_checkpointer(workspace) as saver:
        found = saver.get_tuple({"configurable": {"thread_id": thread.group(1)}})
    assert found is not None
    assert saved_context(found)["base_url"] == "http://127.0.0.1:9/v1"
    monkeypatch.setenv("JARVIS_BASE_URL", url)
    assert saved_context(found)["base_url"] == url
