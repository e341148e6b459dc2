"""Settings: precedence of sources, error messages for people, secrets and model groups."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import yaml

from jarvis_graph.config import (
    DEFAULT_CONFIG_TEMPLATE,
    ConfigError,
    ModelSpec,
    Settings,
    load_settings,
    mask_secrets,
    project_config_path,
    user_config_path,
)
from tests.support.trust import trust


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


def test_paths_follow_jarvis_home(isolated_home: Path, project: Path) -> None:
    assert user_config_path() == isolated_home / ".jarvis" / "config.yaml"
    assert project_config_path(project) == project / ".jarvis" / "config.yaml"


def test_defaults_without_files_or_env(project: Path) -> None:
    settings = load_settings(project, env={})
    assert settings == Settings()
    assert settings.confirm == "risky"
    assert settings.max_iterations == 40
    assert settings.model_for("normal") == ModelSpec()


def test_precedence_env_over_project_over_user_over_defaults(project: Path) -> None:
    write(
        user_config_path(),
        "confirm: always\nmax_iterations: 7\ntool_output_limit: 999\nexecute_timeout: 5\n",
    )
    write(project_config_path(project), "max_iterations: 8\ntool_output_limit: 888\n")
    env = {"JARVIS_TOOL_OUTPUT_LIMIT": "777"}

    settings = load_settings(project, env=env)

    assert settings.confirm == "always"  # user only
    assert settings.execute_timeout == 5  # user only
    assert settings.max_iterations == 8  # project beats user
    assert settings.tool_output_limit == 777  # env beats project and user
    assert settings.allow_outside_workspace is False  # default


def test_overrides_beat_env(project: Path) -> None:
    settings = load_settings(
        project, env={"JARVIS_MAX_ITERATIONS": "3"}, overrides={"max_iterations": 2}
    )
    assert settings.max_iterations == 2


def test_load_settings_reads_os_environ_by_default(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JARVIS_CONFIRM", "never")
    assert load_settings(project).confirm == "never"


def test_model_specs_merge_key_by_key_across_files(project: Path) -> None:
    write(
        user_config_path(),
        "model_groups:\n  default:\n    normal:\n      platform: openai\n      model: big\n"
        "      base_url: http://user.example/v1\n",
    )
    write(
        project_config_path(project),
        "model_groups:\n  default:\n    normal:\n      model: project-model\n",
    )
    spec = load_settings(project, env={}).model_for("normal")
    assert (spec.platform, spec.model, spec.base_url) == (
        "openai",
        "project-model",
        "http://user.example/v1",
    )


def test_model_env_applies_to_every_role_of_the_active_group(project: Path) -> None:
    write(
        project_config_path(project),
        "model_group: fast\nmodel_groups:\n  fast:\n    normal: {platform: openai, model: a}\n"
        "    cheap: {platform: openai, model: b}\n",
    )
    trust(project)
    env = {"JARVIS_MODEL": "from-env", "JARVIS_BASE_URL": "http://localhost:1/v1"}
    settings = load_settings(project, env=env)
    for role in ("normal", "cheap"):
        spec = settings.model_for(role)
        assert spec.model == "from-env"
        assert spec.base_url == "http://localhost:1/v1"
        assert spec.platform == "openai"


def test_env_model_group_selects_the_group_the_model_env_lands_in(project: Path) -> None:
    env = {"JARVIS_MODEL_GROUP": "other", "JARVIS_PLATFORM": "scripted", "JARVIS_SCRIPT": "s.yaml"}
    settings = load_settings(project, env=env)
    assert settings.model_group == "other"
    assert settings.model_for("cheap").script == "s.yaml"
    assert settings.model_for("normal").platform == "scripted"


def test_after_tool_call_cb_dirs_from_env(project: Path) -> None:
    raw = os.pathsep.join(["/a/cbs", "", "/b/cbs"])
    settings = load_settings(project, env={"JARVIS_AFTER_TOOL_CALL_CB_DIRS": raw})
    assert settings.after_tool_call_cb_dirs == ["/a/cbs", "/b/cbs"]


def test_after_tool_call_cb_dirs_env_replaces_file_list(project: Path) -> None:
    write(project_config_path(project), "after_tool_call_cb_dirs: [/from/file]\n")
    trust(project)
    assert load_settings(project, env={}).after_tool_call_cb_dirs == ["/from/file"]
    env = {"JARVIS_AFTER_TOOL_CALL_CB_DIRS": "/from/env"}
    assert load_settings(project, env=env).after_tool_call_cb_dirs == ["/from/env"]


def test_broken_yaml_names_file_and_line(project: Path) -> None:
    path = write(project_config_path(project), "confirm: always\nmodel: a: b\nx: 1\n")
    with pytest.raises(ConfigError) as info:
        load_settings(project, env={})
    message = str(info.value)
    assert message.startswith(f"{path}:2: invalid YAML: mapping values are not allowed")
    assert "Fix the file" in message


def test_broken_yaml_in_user_file_names_the_user_file(project: Path) -> None:
    path = write(user_config_path(), "a: b: c\n")
    with pytest.raises(ConfigError, match=re.escape(f"{path}:1")):
        load_settings(project, env={})


def test_non_mapping_file_is_rejected(project: Path) -> None:
    path = write(project_config_path(project), "- just\n- a list\n")
    with pytest.raises(ConfigError, match=re.escape(f"{path}:1: the config must be a mapping")):
        load_settings(project, env={})


def test_empty_file_is_ignored(project: Path) -> None:
    write(project_config_path(project), "# nothing here\n")
    assert load_settings(project, env={}) == Settings()


def test_unknown_top_level_key_names_file_line_and_key(project: Path) -> None:
    path = write(project_config_path(project), "confirm: never\n\ncolour: blue\n")
    with pytest.raises(ConfigError) as info:
        load_settings(project, env={})
    assert f"{path}:3: unknown key 'colour'" in str(info.value)


def test_unknown_nested_key_names_file_line_and_dotted_key(project: Path) -> None:
    text = "model_groups:\n  default:\n    normal:\n      model: x\n      colour: red\n"
    path = write(user_config_path(), text)
    with pytest.raises(ConfigError) as info:
        load_settings(project, env={})
    assert f"{path}:5: unknown key 'model_groups.default.normal.colour'" in str(info.value)


def test_bad_value_type_names_key_line_and_value(project: Path) -> None:
    path = write(project_config_path(project), "max_iterations: lots\nconfirm: sometimes\n")
    with pytest.raises(ConfigError) as info:
        load_settings(project, env={})
    message = str(info.value)
    assert f"{path}:1: max_iterations:" in message
    assert "'lots'" in message
    assert f"{path}:2: confirm:" in message
    assert "'sometimes'" in message


def test_out_of_range_value_is_rejected(project: Path) -> None:
    write(project_config_path(project), "max_iterations: 0\n")
    with pytest.raises(ConfigError, match="max_iterations"):
        load_settings(project, env={})


def test_bad_env_value_names_the_environment(project: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_settings(project, env={"JARVIS_MAX_ITERATIONS": "many"})
    assert "JARVIS_* environment" in str(info.value)
    assert "'many'" in str(info.value)


def test_error_is_reported_for_the_file_that_holds_it(project: Path) -> None:
    write(user_config_path(), "confirm: always\n")
    path = write(project_config_path(project), "confirm: maybe\n")
    with pytest.raises(ConfigError) as info:
        load_settings(project, env={})
    assert str(path) in str(info.value)
    assert str(user_config_path()) not in str(info.value)


def test_model_for_falls_back_to_normal(project: Path) -> None:
    write(
        project_config_path(project),
        "model_groups:\n  default:\n    normal: {platform: openai, model: only-normal}\n",
    )
    trust(project)
    settings = load_settings(project, env={})
    assert settings.model_for("cheap").model == "only-normal"
    assert settings.model_for("normal").model == "only-normal"


def test_model_for_unknown_group_lists_known_groups(project: Path) -> None:
    settings = Settings(model_group="missing")
    with pytest.raises(ConfigError) as info:
        settings.model_for("normal")
    assert "'missing'" in str(info.value)
    assert "known groups: default" in str(info.value)


def test_model_for_group_without_normal_or_role(project: Path) -> None:
    settings = Settings(model_groups={"default": {"cheap": ModelSpec(model="c")}})
    assert settings.model_for("cheap").model == "c"
    with pytest.raises(ConfigError, match="has no 'normal'"):
        settings.model_for("normal")


def test_mask_secrets_hides_secret_values_only() -> None:
    data = {
        "api_key": "sk-123",
        "api_key_env": "OPENAI_API_KEY",
        "model": "gpt",
        "nested": {"token": "t", "password": "p", "Client_Secret": "s", "empty_key": ""},
        "items": [{"auth_token": "x", "name": "keep"}],
    }
    masked = mask_secrets(data)
    assert masked == {
        "api_key": "***",
        "api_key_env": "OPENAI_API_KEY",
        "model": "gpt",
        "nested": {"token": "***", "password": "***", "Client_Secret": "***", "empty_key": ""},
        "items": [{"auth_token": "***", "name": "keep"}],
    }
    assert data["api_key"] == "sk-123"  # the input is not modified


def test_default_template_is_a_valid_config(project: Path) -> None:
    write(user_config_path(), DEFAULT_CONFIG_TEMPLATE)
    settings = load_settings(project, env={})
    # the starter file keeps the offline default: the provider lines are comments
    assert settings.model_for("normal") == settings.model_for("cheap") == ModelSpec()
    assert yaml.safe_load(DEFAULT_CONFIG_TEMPLATE)["confirm"] == settings.confirm
