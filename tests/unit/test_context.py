"""JarvisContext: per-run settings layered over the merged config."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from jarvis_graph.config import ConfigError, project_config_path
from jarvis_graph.context import JarvisContext, resolve_settings
from tests.support.trust import trust


def write_project_config(workspace: Path, text: str) -> None:
    path = project_config_path(workspace)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    trust(workspace)  # the user's own project


def test_context_is_frozen_and_hashable() -> None:
    ctx = JarvisContext(workspace="/w", platform="scripted")
    with pytest.raises(dataclasses.FrozenInstanceError):
        ctx.platform = "openai"  # type: ignore[misc]
    assert hash(ctx) == hash(JarvisContext(workspace="/w", platform="scripted"))


def test_workspace_path_is_resolved(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (workspace / "sub").mkdir()
    assert JarvisContext(workspace=str(workspace / "sub" / "..")).workspace_path() == workspace
    monkeypatch.chdir(workspace)
    assert JarvisContext().workspace_path() == workspace


def test_plain_dict_context_is_accepted(workspace: Path) -> None:
    settings = resolve_settings({"workspace": str(workspace), "max_iterations": 3})
    assert settings.max_iterations == 3


def test_unknown_dict_field_is_an_error() -> None:
    with pytest.raises(TypeError, match="colour"):
        resolve_settings({"colour": "red"})


def test_context_overrides_the_project_config(workspace: Path) -> None:
    write_project_config(workspace, "confirm: always\nmax_iterations: 9\n")
    base = resolve_settings(JarvisContext(workspace=str(workspace)))
    assert (base.confirm, base.max_iterations) == ("always", 9)
    over = resolve_settings(
        JarvisContext(workspace=str(workspace), confirm="never", max_iterations=2)
    )
    assert (over.confirm, over.max_iterations) == ("never", 2)


def test_context_model_fields_apply_to_every_role(workspace: Path) -> None:
    write_project_config(
        workspace,
        "model_groups:\n  default:\n    normal: {platform: openai, model: a}\n"
        "    cheap: {platform: openai, model: b, temperature: 0.5}\n",
    )
    ctx = JarvisContext(workspace=str(workspace), platform="scripted", script="s.yaml")
    settings = resolve_settings(ctx)
    normal, cheap = settings.model_for("normal"), settings.model_for("cheap")
    # Relative script paths are anchored at the workspace, not the process cwd.
    assert (normal.platform, normal.script, normal.model) == (
        "scripted",
        str(workspace / "s.yaml"),
        "a",
    )
    assert (cheap.platform, cheap.script, cheap.temperature) == (
        "scripted",
        str(workspace / "s.yaml"),
        0.5,
    )


def test_context_model_group_must_exist(workspace: Path) -> None:
    ctx = JarvisContext(workspace=str(workspace), model_group="nope", platform="scripted")
    with pytest.raises(ConfigError, match="'nope' is not defined"):
        resolve_settings(ctx)


def test_an_edited_config_is_seen_by_the_next_resolve(workspace: Path) -> None:
    ctx = JarvisContext(workspace=str(workspace))
    assert resolve_settings(ctx).max_iterations == 40
    write_project_config(workspace, "max_iterations: 5\n")
    assert resolve_settings(ctx).max_iterations == 5  # a long-lived process sees the edit


def test_broken_project_config_surfaces(workspace: Path) -> None:
    write_project_config(workspace, "bogus: 1\n")
    with pytest.raises(ConfigError, match="unknown key 'bogus'"):
        resolve_settings(JarvisContext(workspace=str(workspace)))
