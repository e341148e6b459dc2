"""Prompt states on disk (no model file: a stand-in file and llama-cpp-python's classes).

A file is restored only when it is exactly what this process would have made; every other
file is passed over, with one notice when it claims to be of this model.
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("llama_cpp", reason="the `local` extra")  # installed by `make test`

from llama_cpp.llama import LlamaState  # noqa: E402

from jarvis_graph.platforms import local_prefix  # noqa: E402

N_CTX = 512
TOKENS = tuple(range(100, 164))  # 64 tokens


@pytest.fixture
def model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("JARVIS_MODELS_DIR", str(tmp_path / "models"))
    path = tmp_path / "models" / "tiny.gguf"
    path.parent.mkdir()
    path.write_bytes(b"GGUF" + b"\0" * 60)
    return str(path)


def state(tokens: tuple[int, ...], payload: bytes = b"kv" * 50) -> LlamaState:
    return LlamaState(
        input_ids=np.array(tokens, dtype=np.intc),
        scores=np.zeros((1, 4), dtype=np.single),
        n_tokens=len(tokens),
        llama_state=payload,
        llama_state_size=len(payload),
        seed=7,
    )


def test_a_saved_state_comes_back_for_a_prompt_sharing_its_prefix(model: str) -> None:
    path = local_prefix.save_state(model, N_CTX, TOKENS, state(TOKENS))
    assert path is not None and path.parent == local_prefix.states_dir()
    longer = (*TOKENS, 7, 8, 9)
    found = local_prefix.best_state(model, N_CTX, longer)
    assert found is not None and found[1] == len(TOKENS)
    restored = local_prefix.load_state(found[0], n_vocab=4, n_ctx=N_CTX, seed=7)
    assert restored is not None
    assert restored.llama_state == b"kv" * 50 and restored.n_tokens == len(TOKENS)
    assert restored.input_ids.shape == (N_CTX,)  # llama-cpp-python's whole-context buffer
    assert tuple(restored.input_ids[: len(TOKENS)]) == TOKENS


def test_too_short_a_shared_prefix_is_evaluated_again(model: str) -> None:
    local_prefix.save_state(model, N_CTX, TOKENS, state(TOKENS))
    other = (*TOKENS[: local_prefix.MIN_SHARED - 1], 1, 2, 3)
    assert local_prefix.best_state(model, N_CTX, other) is None


def test_a_file_cut_short_is_never_loaded(model: str, caplog: pytest.LogCaptureFixture) -> None:
    path = local_prefix.save_state(model, N_CTX, TOKENS, state(TOKENS))
    assert path is not None
    path.write_bytes(path.read_bytes()[:-10])
    found = local_prefix.best_state(model, N_CTX, TOKENS)
    assert found is not None  # its header and tokens are whole
    with caplog.at_level(logging.WARNING):
        assert local_prefix.load_state(found[0], 4, N_CTX, 7) is None
    assert [r.getMessage() for r in caplog.records] == [
        f"prompt state {path.name} ignored: its state is cut short or altered"
    ]


def test_an_altered_state_is_never_loaded(model: str) -> None:
    path = local_prefix.save_state(model, N_CTX, TOKENS, state(TOKENS))
    assert path is not None
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF  # same length, one byte changed
    path.write_bytes(bytes(data))
    found = local_prefix.best_state(model, N_CTX, TOKENS)
    assert found is not None and local_prefix.load_state(found[0], 4, N_CTX, 7) is None


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ("llama_cpp", "made with another llama_cpp"),
        ("model_file", "made with another model file"),
        ("n_ctx", "made with another n_ctx"),
    ],
)
def test_a_stale_file_of_this_model_is_passed_over_with_a_notice(
    model: str,
    change: str,
    said: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    path = local_prefix.save_state(model, N_CTX, TOKENS, state(TOKENS))
    assert path is not None
    n_ctx = N_CTX
    if change == "llama_cpp":
        import llama_cpp

        monkeypatch.setattr(llama_cpp, "__version__", "0.0.1")
    elif change == "model_file":
        Path(model).write_bytes(b"GGUF" + b"\1" * 80)  # pulled again: another file
    else:
        n_ctx = 2 * N_CTX
    with caplog.at_level(logging.WARNING):
        assert local_prefix.best_state(model, n_ctx, TOKENS) is None
    assert [r.getMessage() for r in caplog.records] == [f"prompt state {path.name} ignored: {said}"]


def test_another_models_files_are_passed_over_quietly(
    model: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    other = tmp_path / "models" / "other.gguf"
    other.write_bytes(b"GGUF" + b"\2" * 60)
    local_prefix.save_state(str(other), N_CTX, TOKENS, state(TOKENS))
    with caplog.at_level(logging.WARNING):
        assert local_prefix.best_state(model, N_CTX, TOKENS) is None
    assert caplog.records == []


def test_a_file_that_is_not_a_state_is_passed_over_with_a_notice(
    model: str, caplog: pytest.LogCaptureFixture
) -> None:
    folder = local_prefix.states_dir()
    folder.mkdir(parents=True)
    (folder / "planted.state").write_bytes(b"\x80\x04K\x01.")  # a pickle: never unpickled
    with caplog.at_level(logging.WARNING):
        assert local_prefix.best_state(model, N_CTX, TOKENS) is None
    assert [r.getMessage() for r in caplog.records] == [
        "prompt state planted.state ignored: not a prompt state of Jarvis"
    ]


def test_the_folder_keeps_under_its_cap_least_recently_used_out_first(
    model: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    payload = b"x" * 1000
    first = local_prefix.save_state(model, N_CTX, TOKENS, state(TOKENS, payload))
    second = local_prefix.save_state(model, N_CTX, (*TOKENS, 1), state(TOKENS, payload))
    assert first is not None and second is not None
    os.utime(first, (1, 1))  # used longest ago
    monkeypatch.setenv(local_prefix.CAP_ENV, str(first.stat().st_size * 2 + 100))
    third = local_prefix.save_state(model, N_CTX, (*TOKENS, 2), state(TOKENS, payload))
    assert third is not None
    assert sorted(p.name for p in local_prefix.states_dir().iterdir()) == sorted(
        [second.name, third.name]
    )
    monkeypatch.setenv(local_prefix.CAP_ENV, "0")  # keep no file
    assert local_prefix.save_state(model, N_CTX, (*TOKENS, 3), state(TOKENS, payload)) is None
    sizes = second.stat().st_size + third.stat().st_size
    assert local_prefix.clear() == (2, sizes)
    assert not list(local_prefix.states_dir().iterdir())


def test_models_cache_lists_and_clears_the_saved_states(model: str, tmp_path: Path) -> None:
    from tests.support.cli import run_process

    empty = run_process(["models", "cache"], cwd=tmp_path)
    assert empty.returncode == 0 and "no saved prompt states in" in empty.stdout
    local_prefix.save_state(model, N_CTX, TOKENS, state(TOKENS))
    (local_prefix.states_dir() / "planted.state").write_bytes(b"junk")
    listed = run_process(["models", "cache"], cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "tiny.gguf" in listed.stdout and " 64 " in listed.stdout  # its model, its tokens
    assert "unreadable: not a prompt state of Jarvis" in listed.stdout
    assert re.search(r"\d+\.\d kB of 1073\.7 MB in ", listed.stdout), listed.stdout
    cleared = run_process(["models", "cache", "--clear"], cwd=tmp_path)
    assert cleared.returncode == 0 and "removed 2 saved prompt state(s)" in cleared.stdout
    assert not list(local_prefix.states_dir().iterdir())
