from __future__ import annotations

import json
from pathlib import Path

import pytest

from jarvis_graph.config import ConfigError, McpServerSpec, Settings, load_settings
from jarvis_graph.tools.mcp_config import expand_vars, load_mcp_json, mcp_servers
from tests.support.trust import trust


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) if not isinstance(data, str) else data)
    return path


def test_desktop_form_maps_to_jarvis_form(tmp_path: Path) -> None:
    path = write(
        tmp_path / "mcp.json",
        {
            "mcpServers": {
                "time": {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC"}},
                "remote": {"url": "http://127.0.0.1:1/mcp", "headers": {"X-Key": "k"}},
                "old": {"url": "http://127.0.0.1:2/sse"},
                "typed": {"type": "sse", "url": "http://127.0.0.1:3/events"},
                "off": {"command": "x", "disabled": True},
            }
        },
    )
    specs = {s.name: s for s in load_mcp_json(path)}
    assert specs["time"].type == "stdio" and specs["time"].args == ["mcp-server-time"]
    assert specs["time"].env["TZ"].get_secret_value() == "UTC"
    assert specs["remote"].type == "streamable"
    assert specs["old"].type == "sse" and specs["typed"].type == "sse"
    assert specs["off"].enable is False


def test_bad_json_names_file_line_and_problem(tmp_path: Path) -> None:
    path = write(tmp_path / "mcp.json", '{\n  "mcpServers": {\n    "a": {"command": "x",}\n  }\n}')
    with pytest.raises(ConfigError, match=rf"{path}:3:\d+: invalid JSON: "):
        load_mcp_json(path)


def test_a_bad_entry_names_its_line(tmp_path: Path) -> None:
    path = write(tmp_path / "mcp.json", {"mcpServers": {"ok": {"command": "x"}, "bad": {"url": 5}}})
    with pytest.raises(ConfigError, match=rf"{path}:6: server 'bad' is invalid: base_url"):
        load_mcp_json(path)
    write(path, {"mcpServers": {"x": {"command": "y", "comand": "typo"}}})
    with pytest.raises(ConfigError, match=r"unknown keys \['comand'\]"):
        load_mcp_json(path)
    write(path, {"servers": {}})
    with pytest.raises(ConfigError, match="mcpServers"):
        load_mcp_json(path)


def test_project_file_wins_over_user_file_and_config(isolated_home: Path, workspace: Path) -> None:
    write(isolated_home / ".jarvis" / "mcp.json", {"mcpServers": {"a": {"command": "user"}}})
    write(workspace / ".jarvis" / "mcp.json", {"mcpServers": {"a": {"command": "project"}}})
    trust(workspace)
    settings = Settings.model_validate(
        {"mcp": [{"name": "a", "command": "config"}, {"name": "b", "command": "b"}]}
    )
    servers = {s.name: s.command for s in mcp_servers(settings, workspace)}
    assert servers == {"a": "project", "b": "b"}


def test_config_files_merge_mcp_lists_by_name(isolated_home: Path, workspace: Path) -> None:
    (isolated_home / ".jarvis").mkdir()
    (isolated_home / ".jarvis" / "config.yaml").write_text(
        "mcp:\n  - {name: a, command: user-a}\n  - {name: b, command: user-b}\n"
    )
    (workspace / ".jarvis").mkdir()
    (workspace / ".jarvis" / "config.yaml").write_text("mcp:\n  - {name: b, command: proj-b}\n")
    trust(workspace)
    settings = load_settings(workspace)
    assert [(s.name, s.command) for s in settings.mcp] == [("a", "user-a"), ("b", "proj-b")]


def test_invalid_server_in_config_yaml_names_line_without_secrets(workspace: Path) -> None:
    (workspace / ".jarvis").mkdir()
    (workspace / ".jarvis" / "config.yaml").write_text(
        "mcp:\n  - name: web\n    type: sse\n    headers: {Authorization: Bearer s3cret}\n"
    )
    with pytest.raises(ConfigError) as err:
        load_settings(workspace)
    assert "config.yaml:2" in str(err.value) and "base_url" in str(err.value)
    assert "s3cret" not in str(err.value)


def test_secrets_are_masked_when_printed() -> None:
    spec = McpServerSpec(name="s", command="x", env={"API_KEY": "s3cret"})  # type: ignore[dict-item]
    assert "s3cret" not in repr(spec)
    assert "s3cret" not in spec.model_dump_json()


def test_expand_vars_leaves_unknown_variables() -> None:
    assert (
        expand_vars("Bearer ${TOKEN} ${NOPE} $TOKEN", {"TOKEN": "t"}) == "Bearer t ${NOPE} $TOKEN"
    )
