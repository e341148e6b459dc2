"""Plain records of the scanner: one issue, a scan result and its summary."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

SEVERITIES = ("high", "medium", "low")


@dataclass(frozen=True)
class Issue:
    """One candidate issue found by the direct scan.

    Attributes:
        language: ``c``, ``cpp`` or ``rust``.
        category: a short family name such as ``buffer_overflow`` or ``use_after_free``.
        pattern: the rule id that fired (stable; used as the SARIF ``ruleId``).
        file: the path as scanned (relative to the scan root when possible).
        line: 1-based line of the evidence.
        evidence: the source line, stripped.
        description: what is wrong, with the facts the rule used.
        suggestion: how to fix it.
        confidence: 0..1, how sure the rule is.
        severity: ``high``, ``medium`` or ``low``.
        cwe: ``CWE-<n>``.
        function: the enclosing function, when known.
    """

    language: str
    category: str
    pattern: str
    file: str
    line: int
    evidence: str
    description: str
    suggestion: str
    confidence: float
    severity: str
    cwe: str
    function: str = ""

    @property
    def id(self) -> str:
        """A stable id: rule, file and line."""
        return f"{self.pattern}:{self.file}:{self.line}"

    def to_dict(self) -> dict[str, Any]:
        """The issue as a JSON-friendly dict (with its id)."""
        return {"id": self.id, **asdict(self)}


@dataclass(frozen=True)
class Rule:
    """One scanner rule: its metadata (SARIF's ``tool.driver.rules``) and what it watches.

    Attributes:
        id: stable rule id (the issue's ``pattern``).
        language: ``c`` (C and C++) or ``rust``.
        category: the kind of weakness.
        cwe: the CWE id the rule reports.
        severity: ``high``, ``medium`` or ``low`` (also the default confidence).
        title: what the rule found, in a few words.
        suggestion: how to fix it.
        calls: C functions the rule looks at (the walk looks at no other call for it).
        call_pattern: a family of watched function names (``execvp``, ``_wspawnl``...).
        hints: substrings one of which a text must hold before the rule's hook runs (the
            engine's cheap gate in front of the rule's own pattern).
    """

    id: str
    language: str
    category: str
    cwe: str
    severity: str
    title: str
    suggestion: str
    calls: frozenset[str] = frozenset()
    call_pattern: re.Pattern[str] | None = None
    hints: tuple[str, ...] = ()


@dataclass
class ScanResult:
    """Issues of one scan plus what was scanned and skipped."""

    root: str
    issues: list[Issue] = field(default_factory=list)
    files_scanned: int = 0
    lines_scanned: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    min_confidence: float = 0.0

    def summary(self, top: int = 10) -> dict[str, Any]:
        """Totals by language, category, severity and the files with the most risk."""
        weight = {"high": 3, "medium": 2, "low": 1}
        risk: Counter[str] = Counter()
        for issue in self.issues:
            risk[issue.file] += weight.get(issue.severity, 1)
        return {
            "total": len(self.issues),
            "files_scanned": self.files_scanned,
            "lines_scanned": self.lines_scanned,
            "skipped": dict(self.skipped),
            "by_language": dict(Counter(i.language for i in self.issues)),
            "by_category": dict(Counter(i.category for i in self.issues)),
            "by_severity": dict(Counter(i.severity for i in self.issues)),
            "by_cwe": dict(Counter(i.cwe for i in self.issues)),
            "top_risk_files": [{"file": f, "score": s} for f, s in risk.most_common(top)],
        }
