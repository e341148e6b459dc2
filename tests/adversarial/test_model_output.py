"""What a model writes is never run unless it parsed exactly; what it fumbles is said plainly.

Scenarios over a real loopback HTTP server speaking the OpenAI API (streamed and whole
replies), the text tool protocol, tool calls written as text, a failing helper model seen
through the CLI, a named model without its key, provider errors and mistyped completion
markers. A side effect (a file the call would create) shows whether anything ran; the
requests the server received show what the model was told.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver

from jarvis_graph.graphs.agent import build_agent_graph
from jarvis_graph.platforms import ProviderError
from tests.support.cli import run_process, write_script
from tests.support.fake_openai import (
    FAKE_KEY,
    FAKE_KEY_VAR,
    FakeOpenAI,
    ToolCall,
    Turn,
    openai_context,
    thread_config,
)
from tests.support.trust import trust

CREATED = "CREATED_FROM_BROKEN_JSON"
TOUCH = f"touch {CREATED}"
DONE = "Understood: nothing ran. !!!COMPLETE!!!"


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(api_key=FAKE_KEY) as fake:
        yield fake


@pytest.fixture
def ws(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(FAKE_KEY_VAR, FAKE_KEY)
    return workspace


@pytest.fixture
def agent(tmp_path: Path) -> Iterator[Any]:
    with SqliteSaver.from_conn_string(str(tmp_path / "sessions.sqlite")) as saver:
        yield build_agent_graph().compile(checkpointer=saver)


def configure(ws: Path, **normal: Any) -> None:
    """The project config: no confirmation (calls run at once), these normal-model settings."""
    spec = {"platform": "openai", "model": "fake-model", **normal}
    config = {"confirm": "never", "model_groups": {"default": {"normal": spec}}}
    (ws / ".jarvis").mkdir(exist_ok=True)
    (ws / ".jarvis" / "config.yaml").write_text(json.dumps(config))
    trust(ws)  # the user's own settings


def run(agent: Any, ws: Path, server: FakeOpenAI, task: str, **ctx: Any) -> dict[str, Any]:
    context = {**openai_context(ws, server), **ctx}
    return agent.invoke({"task": task}, thread_config("t"), context=context)


def tool_answers(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def flat(text: str) -> str:
    return " ".join(text.split())


# -- 3. malformed tool-call arguments: refused, explained, never run -------------------

MALFORMED = {
    "cut-json": ('{"script": "touch ' + CREATED, "end before the JSON is complete"),
    "trailing-garbage": (json.dumps({"script": TOUCH}) + " and then", "text follows the JSON"),
    "json-array": (json.dumps([TOUCH]), "not a JSON array"),
    "json-string": (json.dumps(TOUCH), "not a JSON string"),
    "json-null": ("null", "not null"),
    "duplicate-keys": (
        '{"script": "echo harmless", "script": "' + TOUCH + '"}',
        "'script' appears more than once",
    ),
    "nan": ('{"script": "' + TOUCH + '", "timeout": NaN}', "NaN is not a JSON value"),
    "single-quotes": ("{'script': '" + TOUCH + "'}", "not valid JSON"),
    "empty-string": ("", "the arguments are empty"),
}


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole-reply"])
@pytest.mark.parametrize("shape", sorted(MALFORMED))
def test_malformed_arguments_are_refused_and_explained(
    agent: Any, server: FakeOpenAI, ws: Path, shape: str, stream: bool
) -> None:
    raw, reason = MALFORMED[shape]
    configure(ws, stream=stream)
    server.reply(tool_calls=[ToolCall("execute_script", raw, id="call_bad")])
    server.reply(text=DONE)

    out = run(agent, ws, server, "Create the marker file")

    assert not (ws / CREATED).exists(), f"{shape}: the call ran"
    assert all(body["stream"] is stream for body in server.requests)
    [answer] = tool_answers(server.requests[1])
    assert "could not be run" in answer and reason in answer, answer
    assert out["status"] == "completed"
    assert not server.rejected  # the refused call is still answered, so the history pairs


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole-reply"])
def test_well_formed_call_runs_so_the_side_effect_check_can_fail(
    agent: Any, server: FakeOpenAI, ws: Path, stream: bool
) -> None:
    configure(ws, stream=stream)
    server.reply(tool_calls=[ToolCall("execute_script", {"script": TOUCH})])
    server.reply(text="Created. !!!COMPLETE!!!")

    run(agent, ws, server, "Create the marker file")

    assert (ws / CREATED).exists()


SCHEMA_PROBLEMS = {
    "unknown-tool": (ToolCall("exec_script", {"script": TOUCH}), "no tool named 'exec_script'"),
    "missing-required": (ToolCall("execute_script", {}), "script: Field required"),
    "wrong-type": (
        ToolCall("execute_script", {"script": ["touch", CREATED]}),
        "script: Input should be a valid string",
    ),
}


@pytest.mark.parametrize("case", sorted(SCHEMA_PROBLEMS))
def test_calls_that_parse_but_do_not_fit_a_tool_are_refused(
    agent: Any, server: FakeOpenAI, ws: Path, case: str
) -> None:
    call, reason = SCHEMA_PROBLEMS[case]
    configure(ws)
    server.reply(tool_calls=[call])
    server.reply(text=DONE)

    run(agent, ws, server, "Create the marker file")

    assert not (ws / CREATED).exists()
    [answer] = tool_answers(server.requests[1])
    assert reason in answer, answer


# -- 3. the text protocol: exact YAML or JSON, no guessed repairs ---------------------


def text_block(body: str) -> str:
    return f"I will create it.\n<TOOL_CALL>\nname: execute_script\n{body}\n</TOOL_CALL>"


TEXT_PROTOCOL = {
    # YAML refuses the plain value (": " inside it); quoting it would be a guess.
    "unquoted-colon": ("arguments:\n  script: touch CREATED: now", "does not parse", "CREATED:"),
    "duplicate-key": (
        f"arguments:\n  script: echo harmless\n  script: {TOUCH}",
        "'script' appears more than once",
        CREATED,
    ),
    "json-string-with-nan": (
        f'arguments: \'{{"script": "{TOUCH}", "timeout": NaN}}\'',
        "NaN is not a JSON value",
        CREATED,
    ),
}


@pytest.mark.parametrize("case", sorted(TEXT_PROTOCOL))
def test_text_protocol_refuses_what_does_not_parse_exactly(
    agent: Any, server: FakeOpenAI, ws: Path, case: str
) -> None:
    body, reason, created = TEXT_PROTOCOL[case]
    configure(ws, tool_protocol="text")
    server.reply(text=text_block(body))
    server.reply(text=DONE)

    out = run(agent, ws, server, "Create the marker file")

    assert not (ws / created).exists(), f"{case}: the call ran"
    results = server.requests[1]["messages"][-1]["content"]  # tool results: a user message
    assert "could not be run" in results and reason in results, results
    assert out["status"] == "completed"


class _CutTurn(Turn):
    """A streamed reply the provider cut at its output-token limit."""

    @property
    def finish_reason(self) -> str:
        return "length"


def test_text_protocol_block_cut_at_the_token_limit_is_not_run(
    agent: Any, server: FakeOpenAI, ws: Path
) -> None:
    configure(ws, tool_protocol="text")
    server._turns.append(_CutTurn(text=text_block(f"arguments:\n  script: {TOUCH}")[:-13]))
    server.reply(text=DONE)

    run(agent, ws, server, "Create the marker file")

    assert not (ws / CREATED).exists()
    results = server.requests[1]["messages"][-1]["content"]
    assert "cut off at the output-token limit" in results, results


def test_text_protocol_system_prompt_describes_the_mode_in_use(
    agent: Any, server: FakeOpenAI, ws: Path
) -> None:
    configure(ws, tool_protocol="text")
    server.reply(text="Nothing to do. !!!COMPLETE!!!")

    run(agent, ws, server, "Say hello")

    system = server.requests[0]["messages"][0]["content"]
    assert "tool-calling interface" not in system
    assert "Call a tool by writing a <TOOL_CALL> block" in system
    assert "tools" not in server.requests[0]  # the provider is sent no native tools


# -- 14. a tool call written as text is not an answer --------------------------------

CALL_JSON = json.dumps({"name": "execute_script", "arguments": {"script": "touch DONE"}})


def test_call_written_as_json_text_is_sent_back_then_made_properly(
    agent: Any, server: FakeOpenAI, ws: Path
) -> None:
    configure(ws)
    server.reply(text=CALL_JSON)
    server.reply(tool_calls=[ToolCall("execute_script", {"script": "touch DONE"})])
    server.reply(text="Created DONE. !!!COMPLETE!!!")

    out = run(agent, ws, server, "Create a file named DONE")

    assert (ws / "DONE").exists()  # the real call ran, once
    correction = server.requests[1]["messages"][-1]
    assert correction["role"] == "user"
    assert "written as plain text: nothing was run" in correction["content"]
    assert "tool-calling interface" in correction["content"]
    assert out["status"] == "completed"
    assert out["final_answer"] == "Created DONE."


def test_call_kept_in_a_json_fence_ends_the_run_honestly_after_two_corrections(
    agent: Any, server: FakeOpenAI, ws: Path
) -> None:
    configure(ws)
    fenced = f"Here is the call:\n```json\n{CALL_JSON}\n```"
    for _ in range(3):
        server.reply(text=fenced)

    out = run(agent, ws, server, "Create a file named DONE")

    assert not (ws / "DONE").exists()
    assert len(server.requests) == 3  # the reply, then two corrections, then it stops
    assert out["status"] == "stopped"
    assert "nothing was run" in out["final_answer"]
    assert "told so 2 times" in out["final_answer"]


def test_tool_call_tag_in_text_is_sent_back_as_not_run(
    agent: Any, server: FakeOpenAI, ws: Path
) -> None:
    # Native calls expected, but the model writes a <tool_call> tag (a weak HTTP model).
    configure(ws)
    server.reply(text=f"<tool_call>\n{CALL_JSON}\n</tool_call>")
    server.reply(text="I cannot create files here. !!!COMPLETE!!!")

    out = run(agent, ws, server, "Create a file named DONE")

    assert (
        "a <tool_call> tag written as plain text" in server.requests[1]["messages"][-1]["content"]
    )
    assert out["status"] == "completed"
    assert out["final_answer"] == "I cannot create files here."


def test_json_call_in_text_protocol_mode_is_told_to_use_a_block(
    agent: Any, server: FakeOpenAI, ws: Path
) -> None:
    configure(ws, tool_protocol="text")
    server.reply(text=CALL_JSON)
    server.reply(text=text_block("arguments:\n  script: touch DONE"))
    server.reply(text="Created DONE. !!!COMPLETE!!!")

    out = run(agent, ws, server, "Create a file named DONE")

    assert "<TOOL_CALL> block" in server.requests[1]["messages"][-1]["content"]
    assert (ws / "DONE").exists()
    assert out["status"] == "completed"


def test_prose_that_names_a_tool_is_an_answer(agent: Any, server: FakeOpenAI, ws: Path) -> None:
    configure(ws)
    answer = 'I would run execute_script with {"script": "ls"}; nothing else is needed.'
    server.reply(text=f"{answer} !!!COMPLETE!!!")

    out = run(agent, ws, server, "How would you list files?")

    assert len(server.requests) == 1
    assert out["status"] == "completed"
    assert out["final_answer"] == answer


# -- 11. a failing helper model is one warning line ----------------------------------


def _example_workspace(tmp_path: Path) -> Path:
    """A copy of the README's example folder, and one saved methodology to select from."""
    import shutil

    examples = Path(__file__).resolve().parents[2] / "examples"
    copy = tmp_path / "examples"
    shutil.copytree(examples, copy, ignore=shutil.ignore_patterns(".jarvis"))
    home = Path(os.environ["JARVIS_HOME"]) / "methodologies"
    home.mkdir(parents=True, exist_ok=True)
    record = {"problem_type": "csv totals", "content": "Read the CSV, then run report.py."}
    (home / "csv-totals.json").write_text(json.dumps(record))
    return copy


def test_readme_plan_example_with_a_failing_helper_shows_no_traceback(tmp_path: Path) -> None:
    examples = _example_workspace(tmp_path)
    args = ["run", "--plan", "-n", "--yes", "--platform", "scripted", "--script"]
    task = "How many rows has data.csv, and what total does report.py print?"

    proc = run_process([*args, "../plan_script.yaml", task], cwd=examples / "workspace")

    seen = proc.stdout + proc.stderr
    assert proc.returncode == 0, seen
    assert "Traceback" not in seen
    warnings = [line for line in seen.splitlines() if "helper (cheap) model" in line]
    assert warnings and all("could not select methodologies" in w for w in warnings), seen
    assert "270.00" in proc.stdout


def test_readme_multi_example_with_a_failing_helper_shows_no_traceback(tmp_path: Path) -> None:
    examples = _example_workspace(tmp_path)
    args = ["multi", "-c", "../agents.yaml", "--yes", "--platform", "scripted", "--script"]
    task = "Check that report.py's total matches data.csv"

    proc = run_process([*args, "../multi_script.yaml", task], cwd=examples / "workspace")

    seen = proc.stdout + proc.stderr
    assert proc.returncode == 0, seen
    assert "Traceback" not in seen
    assert "could not select methodologies, so the run goes on without it" in seen
    assert "completed" in proc.stdout


def test_unreachable_helper_for_summaries_and_tool_filter_is_one_line_each(
    tmp_path: Path, workspace: Path
) -> None:
    dead = _closed_port_url()
    script = write_script(
        tmp_path / "s.yaml",
        [
            {"tool_calls": [{"name": "list_files", "args": {"path": "."}}]},
            {"text": "The workspace is empty. !!!COMPLETE!!!"},
        ],
    )
    cheap = {"platform": "openai", "base_url": dead, "model": "helper", "max_retries": 0}
    config = {
        "max_input_tokens": 1,  # every turn is over budget: summaries are asked for
        "tool_filter_threshold": 1,  # more than one tool: the helper filters them
        "model_groups": {
            "default": {"normal": {"platform": "scripted", "script": str(script)}, "cheap": cheap}
        },
    }
    (workspace / ".jarvis").mkdir()
    (workspace / ".jarvis" / "config.yaml").write_text(json.dumps(config))
    trust(workspace)

    proc = run_process(["run", "-n", "What is in this workspace?"], cwd=workspace)

    seen = proc.stdout + proc.stderr
    assert proc.returncode == 0, seen
    assert "Traceback" not in seen
    assert "could not filter the tools" in seen
    assert "could not summarize the history" in seen
    assert "The workspace is empty." in proc.stdout
    for line in seen.splitlines():
        if "helper (cheap) model" in line:
            assert "Connection error." in line, line


# -- 12. a model the user named is never swapped for another --------------------------


@pytest.fixture
def no_local_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A broken local model file: had the embedded model been picked, its error would show."""
    fake = tmp_path / "not-a-model.gguf"
    fake.write_text("not a model")
    monkeypatch.setenv("JARVIS_LOCAL_MODEL_PATH", str(fake))
    return fake


def test_named_model_without_its_key_is_an_error_not_the_local_model(
    workspace: Path, no_local_model: Path
) -> None:
    proc = run_process(["run", "-n", "--model", "gpt-4o-mini", "Say hi"], cwd=workspace)

    seen = flat(proc.stdout + proc.stderr)
    assert proc.returncode == 1, seen
    assert "model 'gpt-4o-mini' needs OPENAI_API_KEY" in seen
    assert "--platform local" in seen
    assert "GGUF" not in seen and str(no_local_model) not in seen  # local was not tried
    assert "Traceback" not in seen


def test_model_named_in_the_environment_counts_as_named(
    workspace: Path, no_local_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JARVIS_MODEL", "deepseek-chat")
    monkeypatch.setenv("JARVIS_API_KEY_ENV", "DEEPSEEK_API_KEY")

    proc = run_process(["run", "-n", "Say hi"], cwd=workspace)

    seen = flat(proc.stdout + proc.stderr)
    assert proc.returncode == 1, seen
    assert "model 'deepseek-chat' needs DEEPSEEK_API_KEY" in seen


def test_nothing_named_and_no_key_keeps_the_local_default(
    workspace: Path, no_local_model: Path
) -> None:
    proc = run_process(["run", "-n", "Say hi"], cwd=workspace)

    seen = flat(proc.stdout + proc.stderr)
    assert proc.returncode == 1, seen  # the local platform was chosen: its model file is bad
    assert "JARVIS_LOCAL_MODEL_PATH" in seen
    assert "needs OPENAI_API_KEY" not in seen


# -- 9 and 19. provider errors say what happened, once ---------------------------------


def test_error_after_one_request_does_not_claim_retries(
    agent: Any, server: FakeOpenAI, ws: Path
) -> None:
    configure(ws, max_retries=2)  # nothing queued: the server answers 500 "do not retry"

    with pytest.raises(ProviderError) as caught:
        run(agent, ws, server, "Say hi")

    message = str(caught.value)
    assert len(server.requests) == 1
    assert "after 1 request" in message
    assert "retries" not in message


def test_retried_error_counts_the_requests_sent(agent: Any, server: FakeOpenAI, ws: Path) -> None:
    configure(ws, max_retries=2)
    server.fail(503, "overloaded", times=3, retry_after_ms=10)

    with pytest.raises(ProviderError) as caught:
        run(agent, ws, server, "Say hi")

    assert len(server.requests) == 3
    assert "failed after 3 requests (the first and 2 retries)" in str(caught.value)


def _closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_connection_error_has_one_full_stop(workspace: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    args = ["run", "-n", "--platform", "openai", "--base-url", _closed_port_url()]

    proc = run_process([*args, "--model", "m", "Say hi"], cwd=workspace)

    seen = flat(proc.stdout + proc.stderr)
    assert proc.returncode == 1, seen
    assert "Connection error." in seen
    assert ".." not in seen.replace("...", "")
    assert "Traceback" not in seen


# -- 19. a mistyped completion marker never reaches the user ----------------------------

MARKERS = ["!!COMPLETE!!", "!!!COMPLETE!!", "!!! COMPLETE !!!", "!!!complete!!!", "!COMPLETE!"]


@pytest.mark.parametrize("marker", MARKERS)
def test_mistyped_marker_is_stripped_from_the_streamed_and_final_answer(
    server: FakeOpenAI, workspace: Path, monkeypatch: pytest.MonkeyPatch, marker: str
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    server.reply(text=f"The answer is 42. {marker}")
    args = ["run", "-n", "--platform", "openai", "--base-url", server.base_url, "--model", "m"]

    proc = run_process([*args, "What is the answer?"], cwd=workspace)

    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "The answer is 42." in proc.stdout
    shown = proc.stdout.upper().replace("COMPLETED", "")  # the status line says "completed"
    assert "COMPLETE" not in shown and "!" not in shown, proc.stdout


def test_mistyped_marker_ends_an_interactive_task(agent: Any, server: FakeOpenAI, ws: Path) -> None:
    configure(ws)
    server.reply(text="All done !!COMPLETE!!")

    out = run(agent, ws, server, "Finish", non_interactive=False)

    assert out["status"] == "completed"  # not waiting for the next instruction
    assert out["final_answer"] == "All done"
    assert out["messages"][-1].content == "All done"  # the stored answer, too
