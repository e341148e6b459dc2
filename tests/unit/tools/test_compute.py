"""``compute``: a checked expression over the workspace, and the tool-offering rules for it."""

from __future__ import annotations

from pathlib import Path

import pytest

from jarvis_graph.context import JarvisContext
from jarvis_graph.nodes.filter_tools import unmentioned_tools
from jarvis_graph.runtime.services import RunServices
from jarvis_graph.tools.base import ToolFailure
from jarvis_graph.tools.compute import compute


def test_a_sum_over_a_csv_file(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(workspace)
    (workspace / "sales.csv").write_text("item,amount\na,10.25\nb,20.25\n")
    expression = "sum(float(r['amount']) for r in csv.DictReader(open('sales.csv')))"
    assert compute.invoke({"expression": expression}) == f"{expression} = 30.5"


def test_a_refused_expression_says_why(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(workspace)
    (workspace / ".env").write_text("TOKEN=secret\n")
    with pytest.raises(ToolFailure, match="failed"):
        compute.invoke({"expression": "open('.env').read()"})
    with pytest.raises(ToolFailure, match="failed"):
        compute.invoke({"expression": "__import__('os').system('id')"})


@pytest.mark.parametrize("literal", ["100", "-3.5", "'forty'", " 7 "])
def test_a_bare_value_is_not_a_computation(literal: str) -> None:
    # the 1.5B model wrote compute("100") and answered 100: a made-up value taken as evidence
    with pytest.raises(ToolFailure, match="is a value, not a computation"):
        compute.invoke({"expression": literal})
    assert compute.invoke({"expression": "2 * 50"}) == "2 * 50 = 100"


def test_memory_tools_are_offered_to_a_local_model_only_when_the_task_speaks_of_them(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    services = RunServices(JarvisContext(workspace=str(workspace)))  # no key: the local model
    hidden = unmentioned_tools(services, "How many lines does notes.txt have?")
    assert {"save_memory", "retrieve_memory", "methodology"} <= hidden
    assert "read_code" not in hidden and "ask_user" not in hidden
    quiet = RunServices(JarvisContext(workspace=str(workspace), non_interactive=True))
    assert "ask_user" in unmentioned_tools(quiet, "Run build.py")  # nobody could answer
    assert not {"save_memory"} & unmentioned_tools(services, "Remember that I use tabs.")
    assert {"ask_document", "read_document"} <= hidden
    assert not {"ask_document"} & unmentioned_tools(services, "What does manual.pdf say?")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    other = RunServices(JarvisContext(workspace=str(workspace)))
    assert unmentioned_tools(other, "How many lines does notes.txt have?") == set()
    assert "compute" not in other.tools  # compute is for the local model
