"""The security verification graph: topology, verdicts merged, and resume after a kill."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

from jarvis_graph.graphs.security_scan import build_security_scan_graph
from jarvis_graph.security import scan_path
from jarvis_graph.security.progress import load_progress
from tests.support.cli import invoke, jarvis_cmd, write_script

SNAPSHOT = Path(__file__).parent / "snapshots" / "security_scan.mmd"
FIXTURES = Path(__file__).parents[1] / "fixtures" / "security" / "c"

# A platform plugin with a tiny model that decides from its input: it reads the candidate
# in the prompt, logs its id, and calls submit_verdict. Asked about the candidate named in
# FAKE_SEC_DIE_ON it kills its own process (SIGKILL: no cleanup, like a crash).
PLUGIN = """
import json, os, signal
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult


class FakeVerifier(BaseChatModel):
    @property
    def _llm_type(self):
        return "fake-sec"

    def bind_tools(self, tools, **kwargs):
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        text = messages[1].content
        candidate = json.loads(text[text.index("{"):])
        if candidate["id"] == os.environ.get("FAKE_SEC_DIE_ON"):
            os.kill(os.getpid(), signal.SIGKILL)
        with open(os.environ["FAKE_SEC_LOG"], "a") as log:
            log.write(candidate["id"] + "\\n")
        verdict = "confirmed" if candidate["confidence"] >= 0.7 else "uncertain"
        cited = {"location": f"{candidate['file']}:{candidate['line']}",
                 "code": candidate["evidence"]}
        reasoning = "the fake verifier trusts rule " + candidate["pattern"] + " on this line"
        call = {"name": "submit_verdict", "id": "v1", "type": "tool_call",
                "args": {"verdict": verdict, "reasoning": reasoning, "evidence": [cited]}}
        return ChatResult(generations=[ChatGeneration(message=AIMessage("", tool_calls=[call]))])


def register(register_platform):
    register_platform("fake-sec", lambda spec: FakeVerifier(), "test verifier")
"""


def test_mermaid_matches_the_snapshot() -> None:
    drawn = build_security_scan_graph().compile().get_graph().draw_mermaid(with_styles=False)
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        SNAPSHOT.write_text(drawn, encoding="utf-8")
    assert drawn == SNAPSHOT.read_text(encoding="utf-8")


def test_scripted_verification_merges_verdicts_into_the_report(workspace: Path) -> None:
    script = write_script(
        workspace / "verify.yaml",
        [
            {"tool_calls": [{"name": "read_code", "args": {"path": "memory.c", "end_line": 5}}]},
            {"tool_calls": [{"name": "search_code", "args": {"pattern": "free\\\\("}}]},
            {
                "tool_calls": [
                    {
                        "name": "submit_verdict",
                        "args": {
                            "verdict": "false_positive",
                            "reasoning": "every path frees p once and sets it to NULL after",
                            "evidence": [{"location": "memory.c:16-17", "code": "free(p);"}],
                            "suggested_fix": "",
                        },
                    }
                ]
            },
        ],  # fmt: skip
    )
    out = workspace / "report.json"
    args = ["sec", "scan", str(FIXTURES / "memory.c"), "--verify", "-w", str(workspace)]
    result = invoke([*args, "--platform", "scripted", "--script", str(script), "-o", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["issues"]
    assert {i["verification"]["verdict"] for i in data["issues"]} == {"false_positive"}
    assert {i["verification"]["grounded"] for i in data["issues"]} == {True}
    assert data["verification"]["false_positive"] == len(data["issues"])


def _twice(root: Path) -> Path:
    """``root`` holding twice.c: the double free of memory.c alone (free(p) on lines 8-9)."""
    root.mkdir(exist_ok=True)
    (root / "twice.c").write_text((FIXTURES / "memory.c").read_text().split("void once")[0])
    return root


class _Replies:
    """A verifier model that gives its replies in turn and notes which model was asked."""

    def __init__(self, name: str, replies: list[Any], used: list[str]) -> None:
        self.name, self.replies, self.used = name, list(replies), used

    def invoke(self, messages: list[object]) -> Any:
        self.used.append(self.name)
        return self.replies.pop(0)


def _calling(call: dict[str, object]) -> Any:
    from langchain_core.messages import AIMessage

    return AIMessage("", tool_calls=[call])


def _verdict_call(reasoning: str, location: str, code: str) -> dict[str, object]:
    args = {"verdict": "confirmed", "reasoning": reasoning}
    args["evidence"] = [{"location": location, "code": code}]  # type: ignore[assignment]
    return {"tool_calls": [{"name": "submit_verdict", "args": args}]}


def test_a_verdict_whose_evidence_is_not_on_its_lines_is_sent_back_then_counts_uncertain(
    workspace: Path,
) -> None:
    """The verifier cites code that is not on the lines it names, twice: uncertain, shown so."""
    target = _twice(workspace / "src")
    wrong = _verdict_call("the pointer p is freed twice on this path", "twice.c:2", "free(p);")
    script = write_script(workspace / "verify.yaml", [wrong, wrong])
    reports = {}
    for fmt in ("json", "md", "sarif"):
        out = workspace / f"report.{fmt}"
        args = ["sec", "scan", str(target), "--verify", "-w", str(workspace), "-f", fmt]
        args += ["--platform", "scripted", "--script", str(script), "-o", str(out)]
        args += ["--run-id", "grounding"]  # the second and third formats reuse the verdict
        result = invoke(args)
        assert result.exit_code == 0, result.output
        reports[fmt] = out.read_text()
    (issue,) = json.loads(reports["json"])["issues"]
    v = issue["verification"]
    assert v["verdict"] == "uncertain" and v["claimed"] == "confirmed" and not v["grounded"]
    assert v["grounding_problems"] == ["evidence 1: the cited code is not on twice.c:2"]
    assert "- verdict: **uncertain** (the verifier said confirmed)" in reports["md"]
    assert "  - not grounded: evidence 1: the cited code is not on twice.c:2" in reports["md"]
    (row,) = json.loads(reports["sarif"])["runs"][0]["results"]
    assert row["properties"]["verdict"] == "uncertain"
    assert row["properties"]["verdictGrounded"] is False and "relatedLocations" not in row


def test_a_verdict_sent_back_and_corrected_is_grounded_with_its_evidence_in_sarif(
    workspace: Path,
) -> None:
    target = _twice(workspace / "src")
    reason = "the pointer p is freed on line 8 and again on line 9"
    script = write_script(
        workspace / "verify.yaml",
        [
            _verdict_call(reason, "twice.c:2", "free(p);"),
            _verdict_call(reason, "twice.c:8-9", "free(p);\n    free(p);"),
        ],
    )
    out = workspace / "report.sarif"
    args = ["sec", "scan", str(target), "--verify", "-w", str(workspace), "-f", "sarif"]
    result = invoke([*args, "--platform", "scripted", "--script", str(script), "-o", str(out)])
    assert result.exit_code == 0, result.output
    (row,) = json.loads(out.read_text())["runs"][0]["results"]
    assert row["properties"]["verdict"] == "confirmed" and row["properties"]["verdictGrounded"]
    (related,) = row["relatedLocations"]
    location = related["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "twice.c"
    assert location["region"] == {"startLine": 8, "endLine": 9}


def _run(workspace: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    args = ["sec", "scan", str(FIXTURES), "--verify", "--platform", "fake-sec", "--concurrency"]
    args += ["1", "--run-id", "resume-test", "-o", str(workspace / "r.json")]
    return subprocess.run(
        [*jarvis_cmd(), *args], cwd=workspace, env=env, capture_output=True, text=True,
        timeout=240,
    )  # fmt: skip


def test_killed_run_resumes_with_exactly_the_remaining_candidates(
    workspace: Path, isolated_home: Path
) -> None:
    plugins = isolated_home / ".jarvis" / "platforms"
    plugins.mkdir(parents=True)
    (plugins / "fake_sec.py").write_text(PLUGIN, encoding="utf-8")
    ids = [i.id for i in scan_path(FIXTURES, workers=1).issues]
    assert len(ids) >= 6
    victim = ids[4]
    first_log, second_log = workspace / "first.log", workspace / "second.log"

    env = {**os.environ, "FAKE_SEC_LOG": str(first_log), "FAKE_SEC_DIE_ON": victim}
    killed = _run(workspace, env)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    progress = workspace / ".jarvis" / "security" / "resume-test.jsonl"
    done_before = set(load_progress(progress))
    assert done_before == set(first_log.read_text().split())
    assert 0 < len(done_before) < len(ids) and victim not in done_before

    env = {**os.environ, "FAKE_SEC_LOG": str(second_log)}
    resumed = _run(workspace, env)
    assert resumed.returncode == 0, resumed.stderr
    verified_now = second_log.read_text().split()
    assert sorted(verified_now) == sorted(set(ids) - done_before)  # each remaining one, once
    report = json.loads((workspace / "r.json").read_text())
    assert {i["id"] for i in report["issues"] if "verification" in i} == set(ids)
    assert set(load_progress(progress)) == set(ids)


def _verify(root: Path, models: Any, messages: Any, file: str, line: int) -> dict[str, Any]:
    """The verifier's loop (6 steps) on a double free reported at ``file``:``line``."""
    from jarvis_graph.nodes.security_verify import _agent_loop
    from jarvis_graph.security.grounding import check_verdict
    from jarvis_graph.tools.security_verify import verification_tools

    candidate = {"file": file, "line": line, "description": "double free", "evidence": ""}
    return _agent_loop(
        models, verification_tools(root), messages, 6, lambda v: check_verdict(v, root, candidate)
    )


def _confirming(path: str, first: int, code: str) -> dict[str, Any]:
    """A ``submit_verdict`` call confirming the double free of lines ``first`` and the next."""
    cited = {"path": path, "start_line": first, "end_line": first + 1, "code": code}
    reasoning = f"p is freed at line {first} and again at line {first + 1}"
    args = {"reasoning": reasoning, "evidence": [cited], "verdict": "confirmed"}
    return {"name": "submit_verdict", "args": args, "id": "v"}


def test_a_repeated_read_is_not_run_again_and_the_next_step_must_give_the_verdict(
    tmp_path: Path,
) -> None:
    from langchain_core.messages import HumanMessage, ToolMessage

    _twice(tmp_path)
    read = {"name": "read_code", "args": {"path": "twice.c"}, "id": "r"}
    submit = _confirming("twice.c", 8, "free(p);\nfree(p);")
    used: list[str] = []

    messages: list[object] = [HumanMessage("verify")]
    verdict = _verify(
        tmp_path,
        (
            _Replies("all", [_calling(read)] * 3, used),
            _Replies("verdict", [_calling(submit)], used),
        ),
        messages,
        "twice.c",
        9,
    )
    assert used == ["all", "all", "verdict"]
    results = [str(m.content) for m in messages if isinstance(m, ToolMessage)]
    assert "free(p);" in results[0] and results[1].startswith("Not run again:")
    assert verdict["verdict"] == "confirmed" and verdict["grounded"]
    assert verdict["evidence"] == [{"location": "twice.c:8-9", "code": "free(p);\nfree(p);"}]


class _Window(_Replies):
    """A verifier model with a context window of ``limit`` characters, as the local
    platform refuses a conversation longer than its window."""

    def __init__(self, name: str, limit: int, replies: list[Any], used: list[str]) -> None:
        super().__init__(name, replies, used)
        self.limit = limit

    def invoke(self, messages: list[object]) -> Any:
        from jarvis_graph.platforms.errors import ContextTooLongError

        size = sum(len(str(getattr(m, "content", ""))) for m in messages)
        if size > self.limit:
            self.used.append(f"{self.name} (too long)")
            raise ContextTooLongError(f"the conversation is {size} characters, over {self.limit}")
        return super().invoke(messages)


def _long_file(root: Path) -> None:
    body = [f"int f{i}(void) {{ return {i}; }}" for i in range(400)]
    lines = ["#include <stdlib.h>", "void g(char *p) {", "    free(p);", "    free(p);", "}"]
    (root / "long.c").write_text("\n".join(lines + body) + "\n")


def test_a_conversation_that_outgrows_the_context_is_cut_and_the_verdict_asked_for(
    tmp_path: Path,
) -> None:
    from langchain_core.messages import HumanMessage, ToolMessage

    _long_file(tmp_path)
    read = {"name": "read_code", "args": {"path": "long.c"}, "id": "r"}
    submit = _confirming("long.c", 3, "free(p);\n    free(p);")
    used: list[str] = []
    messages: list[object] = [HumanMessage("verify")]
    verdict = _verify(
        tmp_path,
        (
            _Window("all", 6000, [_calling(read)], used),
            _Window("verdict", 6000, [_calling(submit)], used),
        ),
        messages,
        "long.c",
        4,
    )
    assert used == ["all", "all (too long)", "verdict"]
    (result,) = [str(m.content) for m in messages if isinstance(m, ToolMessage)]
    assert "free(p);" in result and "(cut from " in result and len(result) < 1700
    assert verdict["verdict"] == "confirmed" and verdict["grounded"]


def test_a_candidate_that_never_fits_the_context_is_uncertain_and_the_run_goes_on(
    tmp_path: Path,
) -> None:
    from langchain_core.messages import HumanMessage

    _long_file(tmp_path)
    used: list[str] = []
    verdict = _verify(
        tmp_path,
        (_Window("all", 5, [], used), _Window("verdict", 5, [], used)),
        [HumanMessage("verify this candidate")],
        "long.c",
        4,
    )
    assert used == ["all (too long)"]
    assert verdict["verdict"] == "uncertain"
    assert verdict["reasoning"].startswith("not verified: the conversation is 21 characters")


def test_a_verdict_call_that_did_not_parse_is_told_and_the_next_step_gives_the_verdict(
    tmp_path: Path,
) -> None:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    _twice(tmp_path)
    error = "the reply was cut off at the output-token limit"
    broken = {"name": "submit_verdict", "args": '{"reasoning": "p is fr', "id": "c"}
    cut = AIMessage(
        "", invalid_tool_calls=[{**broken, "error": error, "type": "invalid_tool_call"}]
    )
    good = AIMessage("", tool_calls=[_confirming("twice.c", 8, "free(p);\nfree(p);")])
    used: list[str] = []

    messages: list[object] = [HumanMessage("verify")]
    verdict = _verify(
        tmp_path,
        (_Replies("all", [cut], used), _Replies("verdict", [good], used)),
        messages,
        "twice.c",
        9,
    )
    assert used == ["all", "verdict"]
    notes = [str(m.content) for m in messages if isinstance(m, ToolMessage)]
    assert notes == [
        "Your call to submit_verdict could not be run: the reply was cut off at the "
        "output-token limit."
    ]
    assert verdict["verdict"] == "confirmed" and verdict["grounded"]
