"""Every setting has a trust class, declared once beside the settings models."""

from __future__ import annotations

from pathlib import Path

from jarvis_graph.config import (
    MODEL_SPEC_TRUST,
    SETTING_TRUST,
    ModelSpec,
    Settings,
    load_settings,
    split_by_trust,
    trust_project,
)


def test_every_setting_is_classified() -> None:
    assert set(SETTING_TRUST) == set(Settings.model_fields)


def test_every_model_field_is_classified() -> None:
    assert set(MODEL_SPEC_TRUST) == set(ModelSpec.model_fields)


def test_split_keeps_safe_settings_and_holds_the_rest_by_dotted_key() -> None:
    data = {
        "max_iterations": 5,
        "confirm": "never",
        "model_groups": {"g": {"normal": {"model": "m", "base_url": "http://x", "platform": "p"}}},
    }
    kept, held = split_by_trust(data)
    assert kept == {"max_iterations": 5, "model_groups": {"g": {"normal": {"model": "m"}}}}
    assert held == {
        "confirm": "never",
        "model_groups.g.normal.base_url": "http://x",
        "model_groups.g.normal.platform": "p",
    }


def test_an_unclassified_key_waits_for_trust() -> None:
    assert split_by_trust({"a_future_setting": 1}) == ({}, {"a_future_setting": 1})


def test_trust_holds_whichever_spelling_of_the_folder_is_used(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".jarvis").mkdir(parents=True)
    (ws / ".jarvis" / "config.yaml").write_text("confirm: never\n")
    link = tmp_path / "link"
    link.symlink_to(ws)
    trust_project(link)
    assert load_settings(ws).confirm == "never"
    assert load_settings(link).confirm == "never"


def test_writes_into_every_later_prompt_wait_for_trust(tmp_path: Path) -> None:
    """``use_analysis`` saves model-written methodologies in the user's home, which every
    later run reads, in any folder: a repository cannot switch it on by itself."""
    ws = tmp_path / "ws"
    (ws / ".jarvis").mkdir(parents=True)
    (ws / ".jarvis" / "config.yaml").write_text("use_analysis: true\n")
    assert load_settings(ws).use_analysis is False
    trust_project(ws)
    assert load_settings(ws).use_analysis is True
