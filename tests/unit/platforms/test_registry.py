"""Platform registry: lookup, ``auto`` resolution, plugins, the openai factory."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage

from jarvis_graph.config import ModelSpec, jarvis_home
from jarvis_graph.platforms import create_chat_model, list_platforms, register_platform
from jarvis_graph.platforms.openai import create_openai_model
from jarvis_graph.platforms.registry import (
    PlatformError,
    plugin_errors,
    reset_plugins,
    resolve_platform,
)
from jarvis_graph.platforms.scripted import ScriptedChatModel

PLUGIN = """\
from jarvis_graph.platforms.scripted import ScriptedChatModel, Script


def _factory(spec):
    return ScriptedChatModel(script=Script(turns=[{{"text": "from plugin " + spec.model}}]))


def register(register_platform):
    register_platform({name!r}, _factory, description="A test plugin")
"""


def plugin_dir() -> Path:
    folder = jarvis_home() / "platforms"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def names() -> list[str]:
    return [p.name for p in list_platforms()]


def test_builtins_are_listed_sorted() -> None:
    listed = names()
    assert listed == sorted(listed)
    assert {"openai", "scripted"} <= set(listed)
    assert all(p.source == "built-in" for p in list_platforms())


def test_unknown_platform_lists_known_ones() -> None:
    with pytest.raises(PlatformError) as info:
        create_chat_model(ModelSpec(platform="nosuch"))
    assert "unknown platform 'nosuch'" in str(info.value)
    assert "known platforms: local, openai, scripted" in str(info.value)


def test_auto_with_script_is_scripted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # the script still wins
    assert resolve_platform(ModelSpec(script="s.yaml")) == "scripted"


def test_auto_with_key_env_is_openai(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_KEY", "k")
    assert resolve_platform(ModelSpec(api_key_env="MY_KEY")) == "openai"
    assert resolve_platform(ModelSpec(base_url="http://localhost:1/v1")) == "openai"


def test_auto_ignores_keys_in_other_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    assert resolve_platform(ModelSpec(api_key_env="MY_KEY")) == "local"


def test_auto_without_anything_is_the_embedded_model() -> None:
    assert resolve_platform(ModelSpec()) == "local"


def test_local_without_llama_cpp_gives_guidance(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_llama(name: str, *args: object, **kwargs: object) -> object:
        if name == "llama_cpp":
            raise ImportError("No module named 'llama_cpp'")
        return real_import(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", no_llama)
    with pytest.raises(PlatformError) as info:
        create_chat_model(ModelSpec())
    message = str(info.value)
    assert "no model is configured" in message
    assert "jarvis-graph[local]" in message
    assert "OPENAI_API_KEY" in message
    assert "--platform scripted --script FILE" in message


def test_explicit_platform_is_kept() -> None:
    assert resolve_platform(ModelSpec(platform="whatever")) == "whatever"


def test_create_scripted_model(tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    script.write_text("- text: hi\n")
    model = create_chat_model(ModelSpec(script=str(script)))
    assert isinstance(model, ScriptedChatModel)
    assert model.invoke([HumanMessage("x")]).content == "hi"


def test_plugin_is_registered_and_used() -> None:
    (plugin_dir() / "mine.py").write_text(PLUGIN.format(name="mine"))
    info = {p.name: p for p in list_platforms()}["mine"]
    assert info.description == "A test plugin"
    assert info.source.endswith("mine.py")
    model = create_chat_model(ModelSpec(platform="mine", model="m1"))
    assert model.invoke([HumanMessage("x")]).content == "from plugin m1"
    assert plugin_errors() == []


def test_plugin_named_local_is_the_auto_fallback() -> None:
    (plugin_dir() / "local.py").write_text(PLUGIN.format(name="local"))
    assert resolve_platform(ModelSpec()) == "local"


def test_broken_plugins_are_skipped_and_reported(caplog: pytest.LogCaptureFixture) -> None:
    folder = plugin_dir()
    (folder / "a_broken.py").write_text("raise RuntimeError('plugin import failed')\n")
    (folder / "b_no_register.py").write_text("X = 1\n")
    (folder / "c_good.py").write_text(PLUGIN.format(name="good"))

    with caplog.at_level(logging.WARNING, logger="jarvis_graph.platforms.registry"):
        assert "good" in names()
    errors = plugin_errors()

    assert len(errors) == 2
    assert "a_broken.py" in errors[0]
    assert "plugin import failed" in errors[0]
    assert "b_no_register.py" in errors[1]
    assert "defines no register(register_platform) function" in errors[1]
    assert sum("was skipped" in r.getMessage() for r in caplog.records) == 2


def test_plugins_load_once_until_reset() -> None:
    assert "late" not in names()
    (plugin_dir() / "late.py").write_text(PLUGIN.format(name="late"))
    assert "late" not in names()  # loaded once per process
    reset_plugins()
    assert "late" in names()


def test_reset_restores_a_builtin_a_plugin_replaced() -> None:
    (plugin_dir() / "override.py").write_text(PLUGIN.format(name="openai"))
    assert {p.name: p for p in list_platforms()}["openai"].source.endswith("override.py")
    (plugin_dir() / "override.py").unlink()
    reset_plugins()
    assert {p.name: p for p in list_platforms()}["openai"].source == "built-in"


def test_register_platform_adds_a_factory(tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    script.write_text("- text: replaced\n")
    register_platform("temp-test", lambda spec: ScriptedChatModel.from_file(script), "t")
    try:
        model = create_chat_model(ModelSpec(platform="temp-test"))
        assert model.invoke([HumanMessage("x")]).content == "replaced"
    finally:
        from jarvis_graph.platforms import registry

        registry._registry.pop("temp-test")


def test_openai_without_key_names_the_variable() -> None:
    with pytest.raises(PlatformError) as info:
        create_openai_model(ModelSpec(platform="openai", model="m", api_key_env="MY_PROVIDER_KEY"))
    assert "environment variable MY_PROVIDER_KEY is not set" in str(info.value)


def test_openai_through_the_registry_without_key() -> None:
    with pytest.raises(PlatformError, match="OPENAI_API_KEY"):
        create_chat_model(ModelSpec(platform="openai", model="m"))


def test_openai_needs_a_model_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with pytest.raises(PlatformError, match="needs a model name"):
        create_openai_model(ModelSpec(platform="openai"))


def test_openai_model_is_configured_from_the_spec(monkeypatch: pytest.MonkeyPatch) -> None:
    from langchain_openai import ChatOpenAI

    monkeypatch.setenv("MY_KEY", "sk-secret")
    spec = ModelSpec(
        platform="auto",
        model="kimi-k2",
        api_key_env="MY_KEY",
        base_url="http://127.0.0.1:9/v1",
        temperature=0.2,
        max_retries=1,
        timeout=5,
    )
    model = create_chat_model(spec)
    assert isinstance(model, ChatOpenAI)
    assert model.model_name == "kimi-k2"
    assert model.openai_api_base == "http://127.0.0.1:9/v1"
    assert model.openai_api_key is not None
    assert model.openai_api_key.get_secret_value() == "sk-secret"
    assert (model.temperature, model.max_retries) == (0.2, 1)


def test_openai_local_server_needs_no_key() -> None:
    model = create_openai_model(
        ModelSpec(platform="openai", model="llama", base_url="http://127.0.0.1:9/v1")
    )
    assert model.openai_api_key is not None
    assert model.openai_api_key.get_secret_value() == "not-needed"
