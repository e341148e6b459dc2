"""``jarvis sec``: the security scanner (direct scan, agent verification, evaluation)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from jarvis_graph.cli import options
from jarvis_graph.cli.visible import echo

app = typer.Typer(help="Security scan of C, C++ and Rust code.", no_args_is_help=True)

Lang = typer.Option("c,cpp,rust", "--lang", help="Languages to scan, comma-separated.")
Format = typer.Option("json", "--format", "-f", help="Report format: json, md or sarif.")
Output = typer.Option(None, "--output", "-o", help="Write the report here (default: stdout).")
MinConf = typer.Option(None, "--min-confidence", help="Report issues at or above this (0..1).")
ScanPath = typer.Argument(..., help="File or folder to scan.")
JulietDir = typer.Option(..., "--juliet", help="Juliet subset folder (with manifest.json).")
JsonOut = typer.Option(None, "--json", help="Also write the figures here.")


def _fail(message: str, code: int = 2) -> typer.Exit:
    echo(f"error: {message}", err=True)
    return typer.Exit(code)


@app.command("scan")
def scan(
    path: Path = ScanPath,
    verify: bool = typer.Option(False, "--verify", help="Verify each issue with an agent."),
    fmt: str = Format,
    output: Path | None = Output,
    lang: str = Lang,
    min_confidence: float | None = MinConf,
    workers: int | None = typer.Option(None, "--workers", help="Scan processes (default: CPUs)."),
    run_id: str | None = typer.Option(None, "--run-id", help="Verification run to resume."),
    concurrency: int = typer.Option(4, "--concurrency", help="Verifiers running at once."),
    workspace: Path | None = options.Workspace,
    platform: str | None = options.Platform,
    model: str | None = options.Model,
    base_url: str | None = options.BaseUrl,
    script: Path | None = options.Script,
) -> None:
    """Scan PATH; with --verify, an agent judges each issue (resumable with --run-id)."""
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.security import DEFAULT_MIN_CONFIDENCE, ScanInputError, render
    from jarvis_graph.security import scan_path as run_scan
    from jarvis_graph.security.direct import check_format, languages, summary, write_report

    if concurrency < 1:
        raise _fail(f"--concurrency must be at least 1, not {concurrency}")
    threshold = DEFAULT_MIN_CONFIDENCE if min_confidence is None else min_confidence
    try:
        check_format(fmt)
        result = run_scan(path, languages(lang), workers=workers, min_confidence=threshold)
    except ScanInputError as exc:
        raise _fail(str(exc)) from None
    echo(summary(result), err=True)
    verdicts = None
    if verify and result.issues:
        ctx = options.context_kwargs(
            workspace, platform, model, base_url, script, None, False, None, True
        )
        verdicts = verify_issues(result, ctx, run_id, concurrency)
    try:
        write_report(render(result, fmt, verdicts), output)
    except ScanInputError as exc:
        raise _fail(str(exc)) from None


def verify_issues(
    result: Any, ctx: dict[str, Any], run_id: str | None, concurrency: int
) -> dict[str, dict[str, Any]]:
    """Run the verification graph over the scan's issues, with a progress bar."""
    from rich.console import Console
    from rich.progress import Progress

    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.graphs.security_scan import build_security_scan_graph
    from jarvis_graph.security.progress import default_run_id, load_progress, progress_path

    candidates = [i.to_dict() for i in result.issues]
    ids = [c["id"] for c in candidates]
    run = run_id or default_run_id(result.root, ids)
    progress_file = progress_path(Path(ctx["workspace"]) / ".jarvis" / "security", run)
    already = len(set(load_progress(progress_file)) & set(ids))
    echo(f"verification run {run} ({already}/{len(ids)} done before)", err=True)
    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.context import JarvisContext
    from jarvis_graph.state import SecurityScanState

    graph = build_security_scan_graph().compile(name="security_scan")
    state = SecurityScanState(
        run_id=run, root=result.root, progress_file=str(progress_file), candidates=candidates
    )
    final: Any = {}
    with Progress(console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("verifying", total=len(ids), completed=already)
        for mode, chunk in graph.stream(
            state,
            {"max_concurrency": concurrency, "recursion_limit": 50},
            context=JarvisContext(**ctx),
            stream_mode=["updates", "values"],
        ):
            if mode == "updates" and "verify_candidate" in chunk:
                bar.advance(task)
            elif mode == "values":
                final = chunk
    verdicts: dict[str, dict[str, Any]] = final.get("verdicts", {})
    echo(f"verdicts: {final.get('verdict_counts', {})}", err=True)
    return verdicts


@app.command("eval")
def evaluate(
    juliet: Path = JulietDir,
    min_confidence: float | None = MinConf,
    json_out: Path | None = JsonOut,
) -> None:
    """Score the direct scan on a Juliet subset: P, R, F1 and J per CWE and overall."""
    import json

    # deferred: jarvis starts on typer alone (see jarvis_graph/cli/__init__.py)
    from jarvis_graph.security import DEFAULT_MIN_CONFIDENCE, ScanInputError, scan_path, score

    threshold = DEFAULT_MIN_CONFIDENCE if min_confidence is None else min_confidence
    try:
        result = scan_path(juliet, ("c", "cpp"), min_confidence=threshold)
        figures = score(juliet, result.issues)
    except (ScanInputError, FileNotFoundError) as exc:
        raise _fail(str(exc)) from None
    echo(f"{'CWE':<9}{'cases':>6}{'TP':>5}{'FP':>5}{'P':>7}{'R':>7}{'F1':>7}{'J':>7}")
    rows = [*figures["per_cwe"].items(), ("overall", figures["overall"])]
    for name, r in rows:
        echo(
            f"{name:<9}{r['cases']:>6}{r['tp']:>5}{r['fp']:>5}{r['precision']:>7.2f}"
            f"{r['recall']:>7.2f}{r['f1']:>7.2f}{r['j']:>7.2f}"
        )
    if json_out is not None:
        json_out.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
