"""Model provisioning for the embedded local model: fake part packages on a tmp sys.path."""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import tomllib
from pathlib import Path

import pytest

from jarvis_graph.platforms import local_models
from jarvis_graph.platforms.local_models import (
    RECIPES,
    ModelRecipe,
    find_parts,
    get_recipe,
    locate_parts,
    models_dir,
    pull,
    resolve_model_path,
)
from jarvis_graph.platforms.registry import PlatformError
from tests.support.cli import invoke

ROOT = Path(__file__).resolve().parents[3]
PACKAGES = ("jgfake-part1", "jgfake-part2", "jgfake-part3")
PART_BYTES = (b"GGUF" + bytes(range(256)) * 4, os.urandom(2500), b"tail")
CONTENT = b"".join(PART_BYTES)


def make_recipe(
    sha256: str = hashlib.sha256(CONTENT).hexdigest(), size: int = len(CONTENT)
) -> ModelRecipe:
    return ModelRecipe(
        name="tiny",
        filename="tiny.gguf",
        size=size,
        sha256=sha256,
        part_packages=PACKAGES,
        extra="fake",
    )


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A tmp ``sys.path`` entry; part packages are added with :func:`install_parts`."""
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    return root


def install_parts(site: Path, numbers: tuple[int, ...] = (1, 2, 3)) -> None:
    """Lay out ``jgfake_partN/data/partNN.bin`` plus an ``__init__`` that must never run."""
    for n in numbers:
        folder = site / f"jgfake_part{n}"
        (folder / "data").mkdir(parents=True)
        (folder / "__init__.py").write_text("raise RuntimeError('part code was executed')\n")
        (folder / "data" / f"part{n:02d}.bin").write_bytes(PART_BYTES[n - 1])


@pytest.fixture
def dest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Models folder under tmp, through both variables the code reads."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = tmp_path / "models"
    monkeypatch.setenv("JARVIS_MODELS_DIR", str(folder))
    return folder


@pytest.fixture
def tiny(monkeypatch: pytest.MonkeyPatch) -> ModelRecipe:
    """The fake recipe, registered as ``tiny`` (so ``local:tiny`` works everywhere)."""
    recipe = make_recipe()
    monkeypatch.setitem(RECIPES, "tiny", recipe)
    return recipe


@pytest.fixture
def hash_calls(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Record every whole-file hash done to verify a model."""
    calls: list[Path] = []
    real = local_models.sha256_file

    def counting(path: Path, progress: local_models.Progress | None = None) -> str:
        calls.append(path)
        return real(path, progress)

    monkeypatch.setattr(local_models, "sha256_file", counting)
    return calls


def corrupt(path: Path) -> None:
    """Flip one byte; move mtime on explicitly, as coarse clocks may not within one tick."""
    data = bytearray(path.read_bytes())
    data[100] ^= 0xFF
    before = path.stat().st_mtime_ns
    path.write_bytes(bytes(data))
    os.utime(path, ns=(before, before + 1_000_000_000))


def test_models_dir_env_and_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JARVIS_MODELS_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert models_dir() == tmp_path / "xdg" / "jarvis-graph" / "models"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert models_dir() == Path.home() / ".cache" / "jarvis-graph" / "models"
    monkeypatch.setenv("JARVIS_MODELS_DIR", str(tmp_path / "m"))
    assert models_dir() == tmp_path / "m"


def test_pull_assembles_atomically(site: Path, dest: Path) -> None:
    install_parts(site)
    progress: list[tuple[int, int]] = []
    path = pull(make_recipe(), dest, progress=lambda done, total: progress.append((done, total)))
    assert path == dest / "tiny.gguf"
    assert path.read_bytes() == CONTENT
    assert sorted(p.name for p in dest.iterdir()) == ["tiny.gguf", "tiny.gguf.verified"]
    sidecar = json.loads((dest / "tiny.gguf.verified").read_text())
    assert sidecar["sha256"] == make_recipe().sha256
    assert sidecar["size"] == len(CONTENT)
    assert progress[-1] == (len(CONTENT), len(CONTENT))
    assert not any(name.startswith("jgfake") for name in sys.modules)


def test_pull_keeps_a_verified_file(site: Path, dest: Path, hash_calls: list[Path]) -> None:
    install_parts(site)
    path = pull(make_recipe(), dest)
    mtime = path.stat().st_mtime_ns
    assert pull(make_recipe(), dest) == path
    assert path.stat().st_mtime_ns == mtime
    assert hash_calls == []


def test_pull_missing_parts_names_them_and_the_extra(site: Path, dest: Path) -> None:
    install_parts(site, numbers=(2,))
    with pytest.raises(PlatformError) as err:
        pull(make_recipe(), dest)
    text = str(err.value)
    assert "jgfake-part1" in text and "jgfake-part3" in text and "jgfake-part2" not in text
    assert "pip install 'jarvis-graph[fake]'" in text
    assert not dest.exists() or list(dest.iterdir()) == []


def test_pull_hash_mismatch_leaves_no_file(site: Path, dest: Path) -> None:
    install_parts(site)
    with pytest.raises(PlatformError) as err:
        pull(make_recipe(sha256="0" * 64), dest)
    text = str(err.value)
    assert "0" * 64 in text and hashlib.sha256(CONTENT).hexdigest() in text
    assert list(dest.iterdir()) == []


def test_pull_size_mismatch_is_caught_before_copying(site: Path, dest: Path) -> None:
    install_parts(site)
    with pytest.raises(PlatformError, match=f"add up to {len(CONTENT)} bytes, expected 5"):
        pull(make_recipe(size=5), dest)
    assert not dest.exists()


def test_resolve_assembles_when_parts_are_installed(
    site: Path, dest: Path, tiny: ModelRecipe
) -> None:
    install_parts(site)
    path = resolve_model_path("tiny")
    assert path == dest / tiny.filename
    assert path.read_bytes() == CONTENT


def test_resolve_without_parts_or_file_says_how_to_get_one(dest: Path, tiny: ModelRecipe) -> None:
    with pytest.raises(PlatformError) as err:
        resolve_model_path("local:tiny")
    text = str(err.value)
    assert "jarvis models pull local:tiny" in text
    assert "jarvis-graph[fake]" in text and "JARVIS_LOCAL_MODEL_PATH" in text


def test_resolve_detects_a_corrupted_file(
    site: Path, dest: Path, tiny: ModelRecipe, hash_calls: list[Path]
) -> None:
    install_parts(site)
    path = pull(tiny, dest)
    corrupt(path)
    with pytest.raises(PlatformError) as err:
        resolve_model_path("tiny")
    text = str(err.value)
    actual = hashlib.sha256(path.read_bytes()).hexdigest()
    assert str(path) in text and tiny.sha256 in text and actual in text
    assert "jarvis models pull local:tiny --force" in text
    assert hash_calls == [path]
    assert pull(tiny, dest, force=True).read_bytes() == CONTENT


def test_sidecar_skips_rehash_until_the_file_changes(
    site: Path, dest: Path, tiny: ModelRecipe, hash_calls: list[Path]
) -> None:
    install_parts(site)
    path = pull(tiny, dest)
    resolve_model_path("tiny")
    resolve_model_path("tiny")
    assert hash_calls == []
    (dest / "tiny.gguf.verified").unlink()
    resolve_model_path("tiny")
    resolve_model_path("tiny")
    assert hash_calls == [path]
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    resolve_model_path("tiny")
    assert hash_calls == [path, path]


def test_env_path_must_be_gguf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = tmp_path / "model.bin"
    bad.write_bytes(b"PK\x03\x04 not a model")
    monkeypatch.setenv("JARVIS_LOCAL_MODEL_PATH", str(bad))
    with pytest.raises(PlatformError, match="JARVIS_LOCAL_MODEL_PATH: .* is not a GGUF"):
        resolve_model_path("1.5b")


def test_env_path_must_exist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JARVIS_LOCAL_MODEL_PATH", str(tmp_path / "nope.gguf"))
    with pytest.raises(PlatformError, match="nope.gguf does not exist"):
        resolve_model_path("")


def test_env_path_to_a_gguf_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    good = tmp_path / "mine.gguf"
    good.write_bytes(b"GGUF\x03\x00\x00\x00rest")
    monkeypatch.setenv("JARVIS_LOCAL_MODEL_PATH", str(good))
    assert resolve_model_path("0.5b") == good
    monkeypatch.delenv("JARVIS_LOCAL_MODEL_PATH")
    assert resolve_model_path(str(good)) == good


def test_unknown_model_name_lists_valid_ones() -> None:
    with pytest.raises(PlatformError, match="use one of local, local:0.5b, local:1.5b") as err:
        get_recipe("7b")
    assert all(f"local:{name}" in str(err.value) for name in RECIPES)
    assert get_recipe("") is get_recipe("local") is get_recipe("local:1.5b") is RECIPES["1.5b"]
    assert get_recipe("0.5b") is get_recipe("local:0.5b") is RECIPES["0.5b"]


def test_the_old_extra_of_the_15b_still_installs_it() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert RECIPES["1.5b"].extra == "local" and extras["local-1.5b"] == ["jarvis-graph[local]"]


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_every_recipe_is_installable_by_its_extra(name: str) -> None:
    """``pip install 'jarvis-graph[<extra>]'`` pins every part and llama.cpp; pins look sane."""
    recipe = RECIPES[name]
    assert get_recipe(f"local:{name}") is recipe and recipe.name == name
    assert recipe.filename.endswith(".gguf") and "/" not in recipe.filename
    assert re.fullmatch(r"[0-9a-f]{64}", recipe.sha256) and recipe.size > 50_000_000
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    wanted = extras[recipe.extra]
    for package in recipe.part_packages:
        pins = [r for r in wanted if re.fullmatch(rf"{re.escape(package)}==\d[\w.]*", r)]
        named = [r for r in wanted if re.match(rf"{re.escape(package)}\b", r)]
        assert pins == named and len(pins) == 1, f"{recipe.extra} must pin {package} with =="
    llama = [*wanted, *(extras["local"] if "jarvis-graph[local]" in wanted else [])]
    assert "llama-cpp-python==0.3.36" in llama


def test_filenames_are_distinct() -> None:
    names = [recipe.filename for recipe in RECIPES.values()]
    assert len(set(names)) == len(names)


def test_a_whole_model_inside_one_package_is_copied_without_importing_it(
    site: Path, dest: Path
) -> None:
    """A package that ships the model whole (SmolLM2's pattern) under its own file name."""
    folder = site / "jgwhole"
    folder.mkdir()
    (folder / "__init__.py").write_text("raise RuntimeError('package code was executed')\n")
    (folder / "Whole-Model.Q4_1.gguf").write_bytes(CONTENT)
    (folder / "README.md").write_text("not the model")
    recipe = ModelRecipe(
        name="whole",
        filename="whole.gguf",
        size=len(CONTENT),
        sha256=hashlib.sha256(CONTENT).hexdigest(),
        part_packages=("jgwhole",),
        extra="fake-whole",
        part_file="Whole-Model.Q4_1.gguf",
    )
    assert locate_parts(recipe) == [folder / "Whole-Model.Q4_1.gguf"]
    assert pull(recipe, dest).read_bytes() == CONTENT
    assert not any(name.startswith("jgwhole") for name in sys.modules)
    default = ModelRecipe("whole", "whole.gguf", 1, "0" * 64, ("jgwhole",), "fake-whole")
    assert locate_parts(default) == [None]  # the default ``data/*.bin`` is not there


@pytest.mark.skipif(
    not all(locate_parts(RECIPES["0.5b"])), reason="the `local-0.5b` extra is not installed"
)
def test_real_05b_parts_are_found_without_importing_them() -> None:
    parts = find_parts(RECIPES["0.5b"])
    assert [p.name for p in parts] == [f"part{n:02d}.bin" for n in range(1, 7)]
    assert sum(p.stat().st_size for p in parts) == 491_400_064 == RECIPES["0.5b"].size
    assert not any(name.startswith("pandas_sns") for name in sys.modules)


def test_cli_pull_assembles_and_prints_the_path(site: Path, dest: Path, tiny: ModelRecipe) -> None:
    install_parts(site)
    result = invoke(["models", "pull", "local:tiny"])
    assert result.exit_code == 0, result.output
    assert str(dest / "tiny.gguf") in result.output
    assert (dest / "tiny.gguf").read_bytes() == CONTENT


def test_cli_pull_unknown_spec(dest: Path) -> None:
    result = invoke(["models", "pull", "local:7b"])
    assert result.exit_code == 1
    assert "unknown model 'local:7b'" in result.output
    assert "local, local:0.5b, local:1.5b" in result.output


def test_cli_pull_reports_missing_parts(site: Path, dest: Path, tiny: ModelRecipe) -> None:
    result = invoke(["models", "pull", "local:tiny"])
    assert result.exit_code == 1
    assert "jgfake-part1" in result.output and "jarvis-graph[fake]" in result.output


def test_cli_list_shows_local_models(
    site: Path, dest: Path, tiny: ModelRecipe, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    install_parts(site, numbers=(1, 2))
    result = invoke(["models", "list"])
    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines() if "local:tiny" in line)
    assert "2/3" in row and "-" in row
