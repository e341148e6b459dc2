"""bench/local_agent.py: its tasks and checkers, its summary, and a scripted run end to end."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "local_agent.py"
ISSUE_KINDS = {
    "fix_and_run",
    "edit_json",
    "create_module",
    "combine_files",
    "count_log",
    "missing_file",
    "failing_tests",
    "thread_recall",
    "remember",
    "run_command",
}


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_local_agent", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module


def test_every_task_passes_its_self_check(bench: ModuleType, tmp_path: Path) -> None:
    report = bench.self_check(bench.TASKS, tmp_path)
    failed = {r["name"]: r["problems"] for r in report["tasks"] if not r["ok"]}
    assert failed == {}
    assert report["total"] >= 40


def test_the_issue_kinds_each_have_two_tasks_or_more(bench: ModuleType) -> None:
    kinds: dict[str, int] = {}
    for task in bench.TASKS:
        kinds[task.kind] = kinds.get(task.kind, 0) + 1
    assert len(kinds) >= 12
    assert {k: kinds.get(k, 0) for k in ISSUE_KINDS if kinds.get(k, 0) < 2} == {}


def test_the_command_line_self_check_filters_by_kind() -> None:
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--self-check", "--kinds", "missing_file,remember"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "[PASS] self-check: 5/5 tasks" in proc.stdout
    assert "missing_nginx_log" in proc.stdout
    assert "fix_print_typo" not in proc.stdout


@pytest.mark.parametrize(
    ("answer", "ok"),
    [
        ("settings_prod.py doesn't exist; settings.py has TIMEOUT = 30.", True),
        ("I couldn't find settings_prod.py in the workspace.", True),
        ("settings_prod.py does not exist, so TIMEOUT is probably 60.", False),
        ("TIMEOUT is 30.", False),
    ],
)
def test_a_missing_file_answer_invents_nothing(
    bench: ModuleType, tmp_path: Path, answer: str, ok: bool
) -> None:
    task = next(t for t in bench.TASKS if t.name == "missing_settings_prod")
    task.setup(tmp_path)
    assert task.judge(answer, tmp_path, None)[0] is ok


@pytest.mark.parametrize(
    ("answer", "ok"),
    [
        ("FAIL: test_apply_discount (test_pricing.PricingTests.test_apply_discount)", True),
        ("Not all tests pass: test_apply_discount failed, the other two passed.", True),
        ("test_apply_discount passed and test_add_tax failed.", False),
        ("Ran 3 tests in 0.001s\n\nOK", False),
        ("test_apply_discount", True),  # the name alone answers "which test is failing?"
        ("`test_pricing.PricingTests.test_apply_discount`", True),
        ("test_add_tax", False),
        ("test_apply_discount passes", False),
    ],
)
def test_a_failing_test_must_be_named_as_failing(
    bench: ModuleType, tmp_path: Path, answer: str, ok: bool
) -> None:
    task = next(t for t in bench.TASKS if t.name == "tests_which_fails")
    assert task.judge(answer, tmp_path, None)[0] is ok


def test_the_summary_counts_wrong_answers_that_ended_completed(
    bench: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    def result(kind: str, ok: bool, status: str, seconds: float, **extra: Any) -> dict[str, Any]:
        name = f"{kind}-{len(results)}"
        row = {"name": name, "kind": kind, "ok": ok, "status": status, "seconds": seconds}
        return {**row, "model_calls": 2, **extra}

    results: list[dict[str, Any]] = []

    results.append(result("edit_json", True, "completed", 10.0))
    results.append(result("edit_json", False, "completed", 20.0))
    results.append(result("missing_file", False, "unverified", 30.0))
    results.append(result("missing_file", False, "max_iterations", 60.0))
    results.append(result("remember", False, "completed", 5.0, skipped="no memory tools"))
    summary = bench.summarise(results)
    assert summary["by_kind"] == {"edit_json": "1/2", "missing_file": "0/2"}
    assert (summary["passed"], summary["total"]) == (1, 4)
    assert (summary["wrong_completed"], summary["wrong_answers"]) == (1, 3)
    assert summary["mean_seconds"] == 25.0  # every run's seconds, the skipped one too
    assert summary["median_seconds"] == 20.0
    assert summary["skipped"] == ["remember-4"]
    bench.print_summary(summary)
    out = capsys.readouterr().out
    assert "wrong answers ending completed: 1 of 3" in out
    assert "overall: 1/4 (25%)" in out


def test_each_split_and_group_reports_how_far_completed_can_be_trusted(
    bench: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [  # kind, split, right, status
        ("read_value", "dev", True, "completed"),
        ("read_value", "dev", False, "completed"),
        ("zh_count", "heldout", True, "unverified"),
        ("zh_count", "heldout", True, "completed"),
        ("no_tool", "heldout", False, "unverified"),
        ("dates", "heldout", True, "completed"),
    ]
    results = [
        {"name": f"t{i}", "kind": kind, "split": split, "ok": ok, "status": status}
        | {"seconds": 10.0 * (i + 1), "model_calls": 1}
        for i, (kind, split, ok, status) in enumerate(rows)
    ]
    summary = bench.summarise(results)
    dev, held = summary["splits"]["dev"], summary["splits"]["heldout"]
    assert (dev["right"], dev["completed_right"], dev["completed_wrong"]) == (1, 1, 1)
    assert dev["precision"] == 0.5
    assert (held["right"], held["completed_right"], held["completed_wrong"]) == (3, 2, 0)
    assert (held["right_unverified"], held["false_alarms"]) == (1, 1 / 3)
    assert held["mean_seconds"] == 45.0
    groups = summary["groups"]
    assert (groups["chinese"]["total"], groups["no_tool"]["total"], groups["other"]["total"]) == (
        2,
        1,
        3,
    )
    bench.print_summary(summary)
    out = capsys.readouterr().out
    assert "heldout" in out and "chinese" in out and "precision" in out


def scripted(monkeypatch: pytest.MonkeyPatch, bench: ModuleType, turns: list[Any]) -> None:
    """Runs of the bench play ``turns`` through the scripted platform."""
    real = bench.run_context

    def context(ws: Path, *args: Any) -> dict[str, Any]:
        script = ws.parent / f"{ws.name}-script.yaml"
        script.write_text(yaml.safe_dump({"turns": turns}), encoding="utf-8")
        return {**real(ws, *args), "platform": "scripted", "script": str(script)}

    monkeypatch.setattr(bench, "run_context", context)


# The second turn's scene comes first: in the first turn its question is not asked yet.
RECALL_TURNS = [
    {"when": "Which branch did I say", "text": "You said rel-harbor. !!!COMPLETE!!!"},
    {"when": "notes folder", "tool_calls": [{"name": "list_files", "args": {"path": "notes"}}]},
    {"when": "notes folder", "text": "There are 2 .txt files. !!!COMPLETE!!!"},
]


def test_a_recall_task_runs_its_two_turns_on_one_thread(
    bench: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scripted(monkeypatch, bench, RECALL_TURNS)
    task = next(t for t in bench.TASKS if t.name == "recall_user_fact")
    result = bench.run_task(task, tmp_path / "ws", "scripted", "scripted", 8, False)
    assert result.get("error") is None, result.get("traceback")
    assert [t["answer"] for t in result["turns"]] == [
        "There are 2 .txt files.",
        "You said rel-harbor.",
    ]
    assert result["ok"], result["check"]
    assert result["tool_calls"] == ["list_files"]
    assert any("user (turn 2)" in line for line in result["transcript"])


def test_a_tasks_seconds_are_broken_down_by_where_they_went(
    bench: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scripted(monkeypatch, bench, RECALL_TURNS)
    task = next(t for t in bench.TASKS if t.name == "recall_user_fact")
    result = bench.run_task(task, tmp_path / "ws", "scripted", "scripted", 8, False)
    assert result.get("error") is None, result.get("traceback")
    assert {"call_model", "run_tools"} <= set(result["node_seconds"])
    parts = result["breakdown"]
    shares = ("load_s", "prompt_s", "generate_s", "tools_s", "jarvis_s")
    assert sum(parts[k] for k in shares) == pytest.approx(parts["total_s"], abs=0.01)
    assert parts["tools_s"] > 0 and parts["total_s"] == pytest.approx(result["seconds"], abs=1e-3)
    summary = bench.summarise([result])
    assert summary["breakdown"]["tools_s"]["total"] == parts["tools_s"]


def test_a_remember_task_passes_only_with_a_long_term_memory(
    bench: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = next(t for t in bench.TASKS if t.name == "remember_staging_port")
    memory = {"memory_type": "short_term", "tags": ["staging"], "content": "staging db: 6543"}
    save = {"name": "save_memory", "args": {"memories": [memory]}}
    scripted(monkeypatch, bench, [{"tool_calls": [save]}, {"text": "Noted. !!!COMPLETE!!!"}])
    result = bench.run_task(task, tmp_path / "short", "scripted", "scripted", 8, False)
    assert not result["ok"]
    assert "only a short_term memory" in result["check"]
    assert result["status"] == "completed"

    memory["memory_type"] = "project_long_term"
    scripted(monkeypatch, bench, [{"tool_calls": [save]}, {"text": "Noted. !!!COMPLETE!!!"}])
    result = bench.run_task(task, tmp_path / "long", "scripted", "scripted", 8, False)
    assert result["ok"], result["check"]
    assert result["memories"][0]["type"] == "project_long_term"


def test_a_run_is_written_after_every_task_and_resumes_where_it_stopped(
    bench: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tasks = bench.TASKS[:3]
    ran: list[str] = []
    stop_at = [tasks[1].name]

    def run_task(task: Any, *_args: Any) -> dict[str, Any]:
        ran.append(task.name)
        if task.name in stop_at:
            raise KeyboardInterrupt  # the user stops the run during this task
        done = {"ok": True, "status": "completed", "seconds": 1.0, "model_calls": 1}
        return {
            "name": task.name,
            "kind": task.kind,
            **done,
            "tokens_per_second": None,
            "answer": "a",
        }

    monkeypatch.setattr(bench, "prepare_model", lambda model, *_: {"model": model, "warmup_s": 0})
    monkeypatch.setattr(bench, "run_task", run_task)
    output = tmp_path / "out.json"
    args = bench.argparse.Namespace(
        platform="scripted", max_iterations=8, verbose=False, output=output, resume=True
    )

    def save(run: dict[str, Any]) -> None:
        bench.write_results(args, tasks, [run])

    run = bench.bench_model("m", tasks, args, tmp_path, [], save)
    assert run["interrupted"] and [r["name"] for r in run["tasks"]] == [tasks[0].name]
    assert [r["name"] for r in bench.resumed_runs(output)["m"]] == [tasks[0].name]
    assert not output.with_name("out.json.part").exists()

    ran.clear()
    stop_at.clear()
    run = bench.bench_model("m", tasks, args, tmp_path, bench.resumed_runs(output)["m"], save)
    assert ran == [tasks[1].name, tasks[2].name]  # the kept task is not run again
    assert [r["name"] for r in run["tasks"]] == [t.name for t in tasks]
    assert run["summary"]["total"] == 3
    assert len(bench.resumed_runs(output)["m"]) == 3
    # the file names the commit its tasks ran on, not the one that read it back
    written = json.loads(output.read_text())
    assert written["versions"]["source"] == bench.source_version()
    kept = [{**t, "source": "abc1234"} for t in run["tasks"]]
    bench.write_results(args, tasks, [{**run, "tasks": kept}])
    assert json.loads(output.read_text())["versions"]["source"] == "abc1234"
    mixed = [{**kept[0], "source": "def5678"}, *kept[1:]]
    bench.write_results(args, tasks, [{**run, "tasks": mixed}])
    assert json.loads(output.read_text())["versions"]["source"] == "abc1234, def5678"


def test_resume_refuses_a_file_of_another_benchmark(bench: ModuleType, tmp_path: Path) -> None:
    other = tmp_path / "bfcl.json"
    other.write_text('{"benchmark": "bfcl"}', encoding="utf-8")
    with pytest.raises(SystemExit, match="not a local_agent result"):
        bench.resumed_runs(other)
    assert bench.resumed_runs(tmp_path / "missing.json") == {}


def test_the_default_model_is_the_best_success_rate_within_twice_the_smallest_time(
    bench: ModuleType,
) -> None:
    def run(model: str, rate: float, seconds: float, total: int = 40) -> dict[str, Any]:
        summary = {"total": total, "success_rate": rate, "mean_seconds": seconds}
        return {"model": model, "summary": summary}

    small, big = run("0.5b", 0.3, 100.0), run("1.5b", 0.6, 190.0)
    assert bench.default_by_rule([small, big])["chosen"] == "1.5b"
    slow = run("1.5b", 0.6, 210.0)  # better, but more than twice the time
    chosen = bench.default_by_rule([small, slow])
    assert chosen["chosen"] == "0.5b" and chosen["eligible"] == ["0.5b"]
    same = run("1.5b", 0.3, 150.0)  # a tie goes to the faster
    assert bench.default_by_rule([small, same])["chosen"] == "0.5b"
    assert bench.default_by_rule([small]) is None
    assert bench.default_by_rule([small, run("1.5b", 0.9, 120.0, total=12)]) is None


def test_a_run_that_stopped_answered_nothing(bench: ModuleType, tmp_path: Path) -> None:
    """Its stop notice quotes the model's last reply: a right value there is no answer."""
    row = {"name": "pyproject_version", "kind": "read_value", "ok": True, "status": "stopped"}
    bench.stopped_verdict(row)
    assert row["ok"] is False and "stop notice is no answer" in row["check"]
    done = {"name": "x", "kind": "read_value", "ok": True, "status": "unverified"}
    bench.stopped_verdict(done)
    assert done["ok"] is True
    saved = tmp_path / "run.json"
    capped = {"name": "y", "kind": "k", "ok": True, "status": "max_iterations"}
    saved.write_text(
        json.dumps({"benchmark": "local_agent", "models": [{"model": "m", "tasks": [capped]}]})
    )
    assert bench.resumed_runs(saved)["m"][0]["ok"] is False  # results written before the rule
