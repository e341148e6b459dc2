"""ToolEnv: workspace confinement, the run environment, output limits."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jarvis_graph.config import Settings, project_config_path
from jarvis_graph.context import JarvisContext
from jarvis_graph.tools.base import ToolEnv, ToolInputError, current_env, limit_output


@pytest.fixture
def env(workspace: Path) -> ToolEnv:
    return ToolEnv(workspace.resolve(), Settings(tool_output_limit=300))


def test_relative_and_absolute_paths_inside_are_allowed(env: ToolEnv) -> None:
    assert env.resolve("a/b.txt") == env.workspace / "a" / "b.txt"
    assert env.resolve(".") == env.workspace
    assert env.resolve(str(env.workspace / "c.txt")) == env.workspace / "c.txt"
    assert env.resolve("sub/../d.txt") == env.workspace / "d.txt"


@pytest.mark.parametrize("path", ["../x", "a/../../x", "/etc/passwd", "~/secrets"])
def test_paths_outside_the_workspace_are_refused(env: ToolEnv, path: str) -> None:
    with pytest.raises(ToolInputError) as info:
        env.resolve(path)
    assert repr(path) in str(info.value)
    assert "outside the workspace" in str(info.value)
    assert "use a path inside it" in str(info.value)


def test_symlink_leaving_the_workspace_is_refused(env: ToolEnv, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (env.workspace / "link").symlink_to(outside)
    with pytest.raises(ToolInputError, match="outside the workspace"):
        env.resolve("link/file.txt")


def test_outside_paths_allowed_when_configured(workspace: Path, tmp_path: Path) -> None:
    env = ToolEnv(workspace.resolve(), Settings(allow_outside_workspace=True))
    assert env.resolve("../x") == (workspace / ".." / "x").resolve()
    assert env.resolve("/etc/passwd") == Path("/etc/passwd").resolve()


def test_from_context_reads_workspace_settings_and_mode(workspace: Path) -> None:
    config = project_config_path(workspace)
    config.parent.mkdir(parents=True)
    config.write_text("tool_output_limit: 1234\n")
    env = ToolEnv.from_context(JarvisContext(workspace=str(workspace), non_interactive=True))
    assert env.workspace == workspace.resolve()
    assert env.settings.tool_output_limit == 1234
    assert env.non_interactive is True


def test_current_env_outside_a_run_is_the_cwd(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(workspace)
    env = current_env()
    assert env.workspace == workspace.resolve()
    assert env.settings == Settings()


def test_short_output_is_kept(env: ToolEnv) -> None:
    assert limit_output("x" * 300, env, "read_code") == ("x" * 300, None)
    assert not env.outputs_dir().exists()


def test_long_output_keeps_head_and_tail_and_saves_the_whole(env: ToolEnv) -> None:
    text = "".join(f"{n:04d}\n" for n in range(400))  # 2000 characters
    shown, saved = limit_output(text, env, "execute_script")

    assert saved is not None
    path = Path(saved)
    assert path.parent == env.workspace / ".jarvis" / "tool_outputs"
    assert path.read_text() == text
    assert "execute_script" in path.name
    assert shown.startswith(text[:200])
    assert shown.endswith(text[-100:])
    assert f"saved at {path}" in shown
    assert f"{len(text) - 300} characters omitted" in shown
    assert "0200\n" not in shown  # the middle is left out


def test_unsafe_tool_names_do_not_escape_the_outputs_dir(env: ToolEnv) -> None:
    _, saved = limit_output("y" * 1000, env, "../../evil/name")
    assert saved is not None
    assert Path(saved).parent == env.outputs_dir()
    assert os.sep not in Path(saved).name
