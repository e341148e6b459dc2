"""Loading a ``bench/`` script as a module, for tests that use its data or functions."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[2] / "bench"


def load_bench(name: str) -> ModuleType:
    """``bench/<name>.py`` imported as the module ``bench_<name>`` (once per process)."""
    module_name = f"bench_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, BENCH / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module
