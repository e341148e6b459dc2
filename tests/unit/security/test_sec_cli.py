"""``jarvis sec``: clear errors (no traceback), report files, evaluation table."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.support.cli import invoke, run_process

FIXTURES = Path(__file__).parents[2] / "fixtures" / "security"


def test_missing_path_exits_with_a_message(tmp_path: Path):
    result = invoke(["sec", "scan", str(tmp_path / "nowhere")])
    assert result.exit_code == 2
    assert "does not exist" in result.output and "Traceback" not in result.output


def test_empty_tree_exits_with_a_message(tmp_path: Path):
    (tmp_path / "readme.md").write_text("# nothing to scan")
    result = invoke(["sec", "scan", str(tmp_path)])
    assert result.exit_code == 2
    assert "no c/cpp/rust source files" in result.output


def test_bad_format_and_language_are_refused():
    assert "unknown format 'xml'" in invoke(["sec", "scan", str(FIXTURES), "-f", "xml"]).output
    result = invoke(["sec", "scan", str(FIXTURES), "--lang", "go"])
    assert result.exit_code == 2 and "unknown language(s) 'go'" in result.output


def test_sarif_report_written_to_a_file(tmp_path: Path):
    out = tmp_path / "out" / "scan.sarif"
    result = invoke(["sec", "scan", str(FIXTURES), "--format", "sarif", "-o", str(out),
                     "--lang", "rust", "--workers", "1"])  # fmt: skip
    assert result.exit_code == 0, result.output
    log = json.loads(out.read_text())
    assert log["version"] == "2.1.0"
    assert {r["ruleId"] for r in log["runs"][0]["results"]} >= {"rust-transmute"}


def test_eval_prints_figures_per_cwe_and_overall(tmp_path: Path):
    src = tmp_path / "juliet"
    (src / "t").mkdir(parents=True)
    (src / "t" / "case.c").write_text(
        'void CASE_bad()\n{\n    char *p = NULL;\n    printf("%d", *p);\n}\n\n'
        "void CASE_good()\n{\n    char c = 'a';\n    char *p = &c;\n    printf(\"%d\", *p);\n}\n"
    )
    manifest = {"testcases": {"CASE": {"cwe": 476, "files": ["t/case.c"]}}}
    (src / "manifest.json").write_text(json.dumps(manifest))
    figures = tmp_path / "figures.json"
    result = invoke(["sec", "eval", "--juliet", str(src), "--json", str(figures)])
    assert result.exit_code == 0, result.output
    assert "CWE-476" in result.output and "overall" in result.output
    assert json.loads(figures.read_text())["overall"]["j"] == 1.0


def test_eval_without_manifest_is_a_clear_error(tmp_path: Path):
    (tmp_path / "a.c").write_text("int main(void)\n{\n    return 0;\n}\n")
    result = invoke(["sec", "eval", "--juliet", str(tmp_path)])
    assert result.exit_code == 2 and "no manifest.json" in result.output


def _scan_process(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    args = ["sec", "scan", str(FIXTURES), "--lang", "rust", "--workers", "1", *extra]
    return run_process(args, cwd=tmp_path)


def test_a_plain_scan_gives_what_the_full_command_line_gives(tmp_path: Path):
    direct = _scan_process(tmp_path)
    # --concurrency belongs to --verify: the direct path leaves the command to typer
    full = _scan_process(tmp_path, "--concurrency", "4")
    assert direct.returncode == full.returncode == 0, direct.stderr + full.stderr
    assert json.loads(direct.stdout) == json.loads(full.stdout)
    assert direct.stderr == full.stderr
    assert direct.stderr.startswith("scanned ") and "issues" in direct.stderr


def test_a_plain_scan_does_not_load_the_full_command_line(tmp_path: Path):
    cmd = [sys.executable, "-X", "importtime", "-m", "jarvis_graph.cli", "sec", "scan"]
    cmd += [str(FIXTURES), "--lang", "rust", "--workers", "1", "-o", str(tmp_path / "r.json")]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    loaded = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if "|" in line}
    assert "jarvis_graph.security.direct" in loaded
    assert not {"typer", "click", "jarvis_graph.cli.app", "pydantic"} & loaded
    assert json.loads((tmp_path / "r.json").read_text())["tool"] == "jarvis-sec"


def test_the_direct_path_refuses_as_the_full_one_does(tmp_path: Path):
    missing = run_process(["sec", "scan", str(tmp_path / "nowhere")], cwd=tmp_path)
    assert missing.returncode == 2
    assert missing.stderr.startswith("error: ") and "does not exist" in missing.stderr
    assert "Traceback" not in missing.stderr
    bad = run_process(["sec", "scan", str(FIXTURES), "-f", "xml"], cwd=tmp_path)
    assert bad.returncode == 2 and "unknown format 'xml'" in bad.stderr
    helped = run_process(["sec", "scan", "--help"], cwd=tmp_path)  # typer's help
    assert helped.returncode == 0 and "--verify" in helped.stdout


def test_a_report_that_cannot_be_written_is_a_clear_error(tmp_path: Path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    out = str(blocker / "scan.json")  # a folder that is a file
    direct = run_process(["sec", "scan", str(FIXTURES), "--lang", "rust", "-o", out], tmp_path)
    assert direct.returncode == 2, direct.stderr
    assert "error: cannot write the report to" in direct.stderr and "Traceback" not in direct.stderr
    full = invoke(["sec", "scan", str(FIXTURES), "--lang", "rust", "-o", out, "--concurrency", "2"])
    assert full.exit_code == 2 and "cannot write the report to" in full.output


def _cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a running process, from ``/proc``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_ctrl_c_ends_the_engines_command_with_one_line(tmp_path: Path):
    """``python -m jarvis_graph.security`` as ``jarvis sec scan``: exit 130, no traceback."""
    body = "".join(
        f"int f{i}(char *s, int n) {{ char b[8]; if (n > {i}) strcpy(b, s); return b[n]; }}\n"
        for i in range(400)
    )
    for k in range(400):  # about 10 s of one worker's scan; start-up is 0.06 s
        (tmp_path / f"m{k}.c").write_text(body)
    proc = subprocess.Popen(  # noqa: S603 - this interpreter, with arguments built here
        [sys.executable, "-m", "jarvis_graph.security", str(tmp_path), "--workers", "1",
         "-o", str(tmp_path / "out.json")],
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        # well past the imports (by CPU time, so a busy machine does not matter): scanning
        while proc.poll() is None and _cpu_seconds(proc.pid) < 0.5:
            assert time.monotonic() < deadline, "the scan did not start"
            time.sleep(0.02)
        assert proc.poll() is None, "the scan ended before it could be interrupted"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.communicate()
    assert proc.returncode == 130, err
    assert err.strip() == "interrupted" and not (tmp_path / "out.json").exists()


def test_the_readme_names_the_fields_of_an_issue_as_the_json_report_does(tmp_path: Path):
    (tmp_path / "t.c").write_text("#include <stdio.h>\nint main(void) { char b[8]; gets(b); }\n")
    result = invoke(["sec", "scan", str(tmp_path), "--format", "json", "-o", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    keys = set(json.loads((tmp_path / "r").read_text())["issues"][0])
    readme = (Path(__file__).parents[3] / "README.md").read_text(encoding="utf-8")
    found = re.search(r"Each issue has ([^;]+);", readme)
    assert found, "the README lists the fields of an issue"
    listed = re.sub(r"\s*\([^)]*\)", "", " ".join(found.group(1).split()))
    assert set(re.split(r",\s*|\s+and\s+", listed)) == keys
