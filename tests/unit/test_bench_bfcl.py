"""bench/bfcl.py: BFCL's data, tool conversion and checkers, with no model.

The self-check feeds each sampled case's own possible answer through the same conversion
the model's tool calls take (BFCL doc -> OpenAI tool -> ``tool_calls`` -> BFCL output) and
bfcl-eval's checkers; a wrong answer must be rejected. bfcl-eval comes from ``make``
(installed with ``--no-deps`` beside the ``bench`` extra).
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "bfcl.py"


@pytest.fixture
def bfcl_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """bfcl-eval makes result/score/lock folders under this root when imported."""
    monkeypatch.setenv("BFCL_PROJECT_ROOT", str(tmp_path / "bfcl"))
    return tmp_path / "bfcl"


def load_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_bfcl", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_self_check_accepts_every_answer_and_rejects_every_wrong_one(bfcl_home: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--self-check", "--n", "4", "--multi-turn", "3"],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rows = dict(
        (m.group(1), m.groups()[1:])
        for m in re.finditer(r"^  (\w+)\s+(\d+)\s+(\d+)/(\d+)\s+(\d+)/(\d+)", done.stdout, re.M)
    )
    expected = ["simple", "multiple", "parallel", "parallel_multiple", "irrelevance"]
    assert list(rows) == [*expected, "multi_turn_base"]
    for name, (n, accepted, of, rejected, of_wrong) in rows.items():
        wanted = "3" if name == "multi_turn_base" else "4"
        assert (n, accepted, of, rejected, of_wrong) == (wanted,) * 5, name
    assert "every answer accepted, every wrong one rejected" in done.stdout
    assert (bfcl_home / "result").is_dir()  # bfcl-eval wrote where it was told, not elsewhere


def test_a_dotted_bfcl_name_is_underscored_for_the_tool_and_restored_for_the_checker(
    bfcl_home: Path,
) -> None:
    bench = load_bench()
    doc = {
        "name": "math.factorial",
        "description": "Factorial of a number.",
        "parameters": {
            "type": "dict",
            "properties": {
                "number": {"type": "integer", "description": "The number."},
                "options": {"type": "dict", "description": "Extra options.", "properties": {}},
            },
            "required": ["number"],
        },
    }
    tools, names = bench.to_tools([doc])
    function = tools[0]["function"]
    assert function["name"] == "math_factorial"
    assert function["parameters"]["type"] == "object"
    assert function["parameters"]["properties"]["options"]["type"] == "object"
    calls = [{"name": "math_factorial", "args": {"number": 5}, "id": "call_0"}]
    output = bench.to_bfcl_output(calls, names)
    assert output == [{"math.factorial": {"number": 5}}]
    case = {"category": "simple_python", "checker_functions": [doc]}
    assert bench.check({**case, "truth": [{"math.factorial": {"number": [5]}}]}, output)["valid"]
    assert not bench.check({**case, "truth": [{"math.factorial": {"number": [6]}}]}, output)[
        "valid"
    ]


def test_an_unparsed_reply_is_no_call_not_a_call_with_the_raw_text_as_arguments() -> None:
    """The local platform hands an unparsable reply on with its reason; it is no call."""
    from langchain_core.messages import AIMessage

    from jarvis_graph.platforms.arguments import RAW_TOOL_CALLS

    bench = load_bench()
    raw = '{"thought": "x", "tool": "f", "arguments": {"a": '
    reply = AIMessage(
        content="",
        tool_calls=[
            {"name": "f", "args": {"a": 1}, "id": "good"},
            {"name": "f", "args": {"thought": "x"}, "id": "bad"},
        ],
        additional_kwargs={
            RAW_TOOL_CALLS: [{"id": "bad", "name": "f", "arguments": raw, "error": "cut off"}]
        },
    )
    calls, refused = bench.parsed_calls(reply)
    assert [c["id"] for c in calls] == ["good"] and refused == ["cut off"]
    assert bench.to_bfcl_output(calls, {"f": "f"}) == [{"f": {"a": 1}}]
