"""Loading and checking chain files: every problem names file:line, nothing half-loaded."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from jarvis_graph.chains.catalog import BUILTIN_DIR, Catalog, load_catalog
from jarvis_graph.chains.spec import ChainError, check_tools, find_cycles, load_chain

GOOD = """\
description: Find markers and write a report.
input:
  pattern: {type: string, default: TODO}
  limit: {type: integer, default: 5}
steps:
  - id: find
    tool: search_files
    args: {pattern: "${input.pattern}"}
  - id: write
    tool: write_file
    if: "not ${steps.find.result} startswith 'no matches'"
    args: {path: out.md, content: "found: ${steps.find.result}"}
    on_error: retry 2
output: "${steps.write.status}"
"""

# The schemas of the tools the checks are given: (properties, required).
TOOLS = {
    "search_files": ({"pattern": {"type": "string"}, "path": {"type": "string"}}, ["pattern"]),
    "write_file": (
        {"path": {"type": "string"}, "content": {"type": "string"}},
        ["path", "content"],
    ),
    "list_files": ({"path": {"type": "string"}, "max_depth": {"type": "integer"}}, []),
    "ask_user": ({"question": {"type": "string"}}, ["question"]),
}


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def error_of(tmp_path: Path, text: str) -> str:
    path = write(tmp_path, "c.yaml", text)
    with pytest.raises(ChainError) as caught:
        load_chain(path)
    return str(caught.value)


def test_a_good_chain_loads_with_its_inputs_steps_and_policies(tmp_path: Path) -> None:
    chain = load_chain(write(tmp_path, "report.yaml", GOOD))

    assert chain.name == "report"  # the file's name when it gives none
    assert [s.id for s in chain.steps] == ["find", "write"]
    assert (chain.steps[1].on_error, chain.steps[1].retries) == ("retry", 2)
    assert chain.steps[1].condition is not None
    assert chain.input_schema() == {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "default": "TODO"},
            "limit": {"type": "integer", "default": 5},
        },
        "required": [],
    }
    assert chain.arguments({"limit": 2}) == {"pattern": "TODO", "limit": 2}
    assert check_tools(chain, TOOLS) == []


@pytest.mark.parametrize(
    ("text", "line", "says"),
    [
        ("steps: [\n  {id: a, tool: x\n", 3, "invalid YAML"),
        ("steps:\n  - id: a\n    tool: x\n    retries: 3\n", 4, "unknown key 'retries'"),
        ("steps:\n  - id: a\n    tool: x\n  - id: a\n    tool: y\n", 4, "'a' is used twice"),
        ("steps:\n  - id: finish\n    tool: x\n", 2, "'finish' is reserved"),
        ("steps:\n  - id: a\n    tool: x\n    args: {p: '${nope}'}\n", 4, "is not a reference"),
        ("steps:\n  - id: a\n    tool: x\n    args:\n      p: '${input.q}'\n", 5, "no input 'q'"),
        (
            "steps:\n  - id: a\n    tool: x\n    args: {p: '${steps.b.result}'}\n"
            "  - id: b\n    tool: y\n",
            4,
            "refers to a later step: that would be a cycle",
        ),
        (
            "steps:\n  - id: a\n    tool: x\n    args: {p: '${steps.a.result}'}\n",
            4,
            "refers to itself",
        ),
        ("steps:\n  - id: a\n    tool: x\n    args: {p: '${steps.z.ok}'}\n", 4, "no step 'z'"),
        (
            "steps:\n  - id: a\n    tool: x\n    if: '${steps.a.ok} maybe 1'\n",
            4,
            "is not [not] VALUE",
        ),
        ("steps:\n  - id: a\n    tool: x\n    on_error: retry 99\n", 4, "retry N (N from 1 to 10)"),
        (
            "input:\n  n: {type: integer, default: many}\nsteps:\n  - {id: a, tool: x}\n",
            2,
            "not a integer",
        ),
        ("input:\n  n: {type: float}\nsteps:\n  - {id: a, tool: x}\n", 2, "type 'float'"),
        ("steps: []\n", 1, "at least one"),
        ("- just a list\n", 1, "a chain file is a mapping"),
        ("name: has-dash\nsteps:\n  - {id: a, tool: x}\n", 1, "letters, digits and _"),
    ],
)
def test_each_problem_names_the_file_and_line(
    tmp_path: Path, text: str, line: int, says: str
) -> None:
    message = error_of(tmp_path, text)

    assert message.startswith(f"{tmp_path / 'c.yaml'}:{line}: "), message
    assert says in message


@pytest.mark.parametrize(
    ("step", "says"),
    [
        ("{id: a, tool: nosuch}", "step 'a' calls unknown tool 'nosuch'"),
        ("{id: a, tool: list_files, args: {depth: 2}}", "list_files has no argument 'depth'"),
        ("{id: a, tool: list_files, args: {max_depth: deep}}", "'deep' is not integer"),
        ("{id: a, tool: list_files, args: {max_depth: '${input.text}'}}", "input 'text' is string"),
        ("{id: a, tool: list_files, args: {max_depth: 'at ${input.text}'}}", "text, but it takes"),
        ("{id: a, tool: write_file, args: {path: x}}", "does not give write_file's content"),
        ("{id: a, tool: ask_user, args: {question: hi}}", "ask_user pauses or hands over"),
    ],
)
def test_tool_problems_are_found_against_the_runs_tools(
    tmp_path: Path, step: str, says: str
) -> None:
    head = "input:\n  text: {type: string}\nsteps:\n  - id: first\n    tool: list_files\n"
    text = f"{head}  - {step}\n"
    chain = load_chain(write(tmp_path, "c.yaml", text))

    problems = [str(p) for p in check_tools(chain, TOOLS)]

    assert len(problems) == 1, problems
    assert problems[0].startswith(f"{tmp_path / 'c.yaml'}:6: "), problems
    assert says in problems[0]


def test_a_reference_to_an_integer_input_fits_a_number_argument(tmp_path: Path) -> None:
    step = "{id: a, tool: list_files, args: {max_depth: '${input.n}'}}"
    text = f"input:\n  n: {{type: integer}}\nsteps:\n  - {step}\n"
    chain = load_chain(write(tmp_path, "c.yaml", text))

    assert check_tools(chain, TOOLS) == []


def test_chains_calling_each_other_are_a_cycle_and_both_left_out(tmp_path: Path) -> None:
    folder = tmp_path / "chains"
    write(folder, "ping.yaml", "steps:\n  - {id: a, tool: list_files}\n  - {id: b, tool: pong}\n")
    write(folder, "pong.yaml", "steps:\n  - {id: a, tool: ping}\n")
    write(folder, "user.yaml", "steps:\n  - {id: a, tool: ping}\n")  # calls a chain left out
    write(folder, "fine.yaml", "steps:\n  - {id: a, tool: list_files}\n")
    chains = {p.stem: load_chain(p) for p in sorted(folder.glob("*.yaml"))}

    cycles = find_cycles(chains)
    usable, problems = Catalog(chains).usable(TOOLS)

    assert sorted(cycles) == ["ping", "pong"]
    assert f"{folder / 'ping.yaml'}:3: chains call each other in a cycle: ping -> pong -> ping" in [
        str(e) for e in cycles.values()
    ]
    assert sorted(usable) == ["fine"]
    assert any("user.yaml:2: step 'a' calls unknown tool 'ping'" in str(p) for p in problems)


def test_a_quiet_chain_lacking_a_tool_is_left_out_unsaid_but_its_other_problems_are_said(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "chains"
    write(folder, "report.yaml", GOOD)  # calls write_file, which this run has not got
    bad = "steps:\n  - {id: a, tool: write_file}\n  - {id: b, tool: list_files, args: {x: 1}}\n"
    write(folder, "odd.yaml", bad)
    write(folder, "mine.yaml", "steps:\n  - {id: a, tool: report}\n")  # calls a quiet one
    chains = {p.stem: load_chain(p) for p in sorted(folder.glob("*.yaml"))}
    tools = {k: v for k, v in TOOLS.items() if k != "write_file"}

    usable, problems = Catalog(chains).usable(tools, quiet={"report", "odd"})

    assert usable == {}
    assert [str(p).removeprefix(str(folder)) for p in problems] == [
        "/odd.yaml:3: list_files has no argument 'x' (its arguments: path, max_depth)",
        "/mine.yaml:2: step 'a' calls unknown tool 'report' (tools: "
        "ask_user, list_files, search_files)",
    ]


def test_the_project_replaces_a_builtin_chain_and_broken_files_are_reported(
    tmp_path: Path, isolated_home: Path
) -> None:
    project = tmp_path / "proj"
    chains = project / ".jarvis" / "chains"
    write(chains, "todo_report.yaml", "description: mine\nsteps:\n  - {id: a, tool: list_files}\n")
    write(chains, "broken.yaml", "steps:\n  - {id: a, tool: x, bad: 1}\n")
    write(isolated_home / ".jarvis" / "chains", "mine.yaml", "steps:\n  - {id: a, tool: x}\n")

    catalog = load_catalog(project)

    assert catalog.chains["todo_report"].description == "mine"
    assert not catalog.builtin("todo_report")
    assert catalog.builtin("test_failures")
    assert "mine" in catalog.chains
    assert [str(e) for e in catalog.errors] == [
        f"{chains / 'broken.yaml'}:2: unknown key 'bad' (known: id, tool, args, if, on_error)"
    ]


def test_a_name_given_twice_in_one_folder_keeps_the_first(tmp_path: Path) -> None:
    chains = tmp_path / ".jarvis" / "chains"
    write(chains, "a.yaml", "name: same\nsteps:\n  - {id: a, tool: x}\n")
    write(chains, "b.yaml", "name: same\nsteps:\n  - {id: b, tool: y}\n")

    catalog = load_catalog(tmp_path)

    assert catalog.chains["same"].steps[0].id == "a"
    assert [str(e) for e in catalog.errors] == [
        f"{chains / 'b.yaml'}:1: chain 'same' is also defined in {chains / 'a.yaml'}"
    ]


def test_the_builtin_chains_load_and_fit_the_builtin_tools(tmp_path: Path) -> None:
    from jarvis_graph.context import JarvisContext
    from jarvis_graph.features.chains import tool_schema
    from jarvis_graph.runtime.services import RunServices

    tools = RunServices(JarvisContext(workspace=str(tmp_path), platform="scripted")).tools
    schemas = {
        n: tool_schema(t) for n, t in tools.items() if n not in ("todo_report", "test_failures")
    }
    for path in sorted(BUILTIN_DIR.glob("*.yaml")):
        assert check_tools(load_chain(path), schemas) == [], path


def test_arguments_are_checked_against_the_inputs(tmp_path: Path) -> None:
    chain = load_chain(
        write(tmp_path, "c.yaml", "input:\n  n: integer\nsteps:\n  - {id: a, tool: x}\n")
    )

    with pytest.raises(ValueError, match="needs input 'n' \\(integer\\)"):
        chain.arguments({})
    with pytest.raises(ValueError, match="input 'n' must be integer, got '3'"):
        chain.arguments({"n": "3"})
    with pytest.raises(ValueError, match="input 'n' must be integer, got True"):
        chain.arguments({"n": True})
    with pytest.raises(ValueError, match="has no input 'm'; its inputs: n"):
        chain.arguments({"n": 1, "m": 2})
