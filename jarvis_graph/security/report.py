"""Reports of a scan: JSON, Markdown and SARIF 2.1.0, with verification verdicts merged in."""

from __future__ import annotations

import json
from typing import Any

from jarvis_graph import __version__
from jarvis_graph.security.grounding import parse_location
from jarvis_graph.security.model import ScanResult
from jarvis_graph.security.rules import RULES

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_SARIF_LEVEL = {"high": "error", "medium": "warning", "low": "note"}
FORMATS = ("json", "md", "sarif")


def to_dict(
    result: ScanResult, verdicts: dict[str, dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The scan as one JSON-friendly dict (issues carry their verdict when verified)."""
    verdicts = verdicts or {}
    issues = []
    for issue in result.issues:
        row = issue.to_dict()
        if issue.id in verdicts:
            row["verification"] = verdicts[issue.id]
        issues.append(row)
    out: dict[str, Any] = {
        "tool": "jarvis-sec",
        "version": __version__,
        "root": result.root,
        "min_confidence": result.min_confidence,
        "summary": result.summary(),
        "issues": issues,
    }
    if verdicts:
        out["verification"] = _verdict_counts(verdicts)
    return out


def _verdict_counts(verdicts: dict[str, dict[str, Any]]) -> dict[str, int]:
    counts = {"confirmed": 0, "false_positive": 0, "uncertain": 0}
    for v in verdicts.values():
        counts[v.get("verdict", "uncertain")] = counts.get(v.get("verdict", "uncertain"), 0) + 1
    return counts


def to_json(result: ScanResult, verdicts: dict[str, dict[str, Any]] | None = None) -> str:
    """The JSON report."""
    return json.dumps(to_dict(result, verdicts), indent=2)


def to_markdown(result: ScanResult, verdicts: dict[str, dict[str, Any]] | None = None) -> str:
    """The Markdown report: summary tables, then one section per issue."""
    verdicts = verdicts or {}
    s = result.summary()
    lines = [
        f"# Security scan of `{result.root}`",
        "",
        f"{s['total']} issues in {s['files_scanned']} files ({s['lines_scanned']} lines); "
        f"skipped: {s['skipped'] or 'none'}; minimum confidence {result.min_confidence}.",
        "",
    ]
    if verdicts:
        counts = _verdict_counts(verdicts)
        lines += ["Verification: " + ", ".join(f"{k} {v}" for k, v in counts.items()), ""]
    for title, key in (("Category", "by_category"), ("Language", "by_language")):
        if s[key]:
            lines += [f"| {title} | Issues |", "|---|---|"]
            lines += [f"| {k} | {v} |" for k, v in sorted(s[key].items(), key=lambda kv: -kv[1])]
            lines.append("")
    if s["top_risk_files"]:
        lines += ["| Top risk file | Score |", "|---|---|"]
        lines += [f"| `{r['file']}` | {r['score']} |" for r in s["top_risk_files"]]
        lines.append("")
    for issue in result.issues:
        where = f"`{issue.file}:{issue.line}`"
        lines += [
            f"## {issue.severity.upper()} {issue.cwe} {issue.category}: {where}",
            "",
            f"- rule `{issue.pattern}`, confidence {issue.confidence:.2f}"
            + (f", in `{issue.function}`" if issue.function else ""),
            f"- {issue.description}",
            f"- fix: {issue.suggestion}",
            f"- evidence: `{issue.evidence.replace('`', chr(39))}`",
        ]
        v = verdicts.get(issue.id)
        if v:
            lines += _verdict_lines(v)
        lines.append("")
    return "\n".join(lines)


def _verdict_lines(v: dict[str, Any]) -> list[str]:
    """A verdict in the Markdown report: the decision, the reasoning, the evidence."""
    claimed = f" (the verifier said {v['claimed']})" if v.get("claimed") else ""
    lines = [f"- verdict: **{v.get('verdict')}**{claimed}: {v.get('reasoning', '')}"]
    for item in v.get("evidence") or []:
        code = " ".join(str(item.get("code", "")).split()).replace("`", "'")
        lines.append(f"  - evidence `{item.get('location', '')}`: `{code}`")
    if v.get("grounded") is False:
        why = "; ".join(v.get("grounding_problems") or [])
        lines.append(f"  - not grounded: {why}")
    if v.get("suggested_fix"):
        lines.append(f"- suggested fix: {v['suggested_fix']}")
    return lines


def _related_locations(v: dict[str, Any]) -> list[dict[str, Any]]:
    """SARIF ``relatedLocations`` for the evidence of a grounded verdict."""
    if not v.get("grounded"):
        return []
    related = []
    for n, item in enumerate(v.get("evidence") or []):
        parsed = parse_location(str(item.get("location", "")))
        if parsed is None:
            continue
        path, start, end = parsed
        region = {"startLine": start, "endLine": end}
        related.append(
            {
                "id": n,
                "message": {"text": "verification evidence"},
                "physicalLocation": {
                    "artifactLocation": {"uri": path, "uriBaseId": "SRCROOT"},
                    "region": region,
                },
            }
        )
    return related


def to_sarif(result: ScanResult, verdicts: dict[str, dict[str, Any]] | None = None) -> str:
    """A SARIF 2.1.0 log with one run, the rules that fired, and one result per issue."""
    verdicts = verdicts or {}
    used = sorted({i.pattern for i in result.issues})
    rules = [
        {
            "id": rid,
            "name": rid.replace("-", "_"),
            "shortDescription": {"text": RULES[rid].title},
            "help": {"text": RULES[rid].suggestion},
            "defaultConfiguration": {"level": _SARIF_LEVEL[RULES[rid].severity]},
            "properties": {"tags": ["security", RULES[rid].cwe], "category": RULES[rid].category},
        }
        for rid in used
    ]
    index = {rid: n for n, rid in enumerate(used)}
    results = []
    for issue in result.issues:
        row: dict[str, Any] = {
            "ruleId": issue.pattern,
            "ruleIndex": index[issue.pattern],
            "level": _SARIF_LEVEL.get(issue.severity, "warning"),
            "message": {"text": f"{issue.description}. Fix: {issue.suggestion}"},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": issue.file, "uriBaseId": "SRCROOT"},
                        "region": {"startLine": issue.line, "endLine": issue.line},
                    }
                }
            ],
            "partialFingerprints": {"jarvisIssueId": issue.id},
            "properties": {"cwe": issue.cwe, "confidence": issue.confidence},
        }
        if issue.id in verdicts:
            v = verdicts[issue.id]
            row["properties"]["verdict"] = v.get("verdict")
            row["properties"]["verdictGrounded"] = bool(v.get("grounded"))
            row["properties"]["verdictReasoning"] = v.get("reasoning", "")
            related = _related_locations(v)
            if related:
                row["relatedLocations"] = related
        results.append(row)
    log = {
        "version": "2.1.0",
        "$schema": SARIF_SCHEMA,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "jarvis-sec",
                        "version": __version__,
                        "informationUri": "https://github.com/jarvis-graph",
                        "rules": rules,
                    }
                },
                "originalUriBaseIds": {"SRCROOT": {"uri": _root_uri(result.root)}},
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2)


def _root_uri(root: str) -> str:
    from pathlib import Path

    path = Path(root).resolve()
    return (path if path.is_dir() else path.parent).as_uri() + "/"


def render(result: ScanResult, fmt: str, verdicts: dict[str, dict[str, Any]] | None = None) -> str:
    """The report in ``fmt`` (json, md or sarif)."""
    if fmt == "json":
        return to_json(result, verdicts)
    if fmt == "md":
        return to_markdown(result, verdicts)
    if fmt == "sarif":
        return to_sarif(result, verdicts)
    msg = f"unknown report format {fmt!r}; use one of {', '.join(FORMATS)}"
    raise ValueError(msg)
