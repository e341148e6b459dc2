"""What the local-agent bench's tasks are made of: the answer matchers, the checkers and ``Task``.

Shared by ``bench/local_agent.py`` (the runner and the development split) and
``bench/local_agent_heldout.py`` (the held-out split), so both splits are judged by the same
code.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TRANSCRIPT_CHARS = 240


def short(text: Any, limit: int = TRANSCRIPT_CHARS) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --------------------------------------------------------------------------------------------
# Answer matching
# --------------------------------------------------------------------------------------------

_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty"
).split()
# A CJK character is not part of a word here: "共有7个" holds 7 (``\w`` would say 有7 is a word).
_NOT_WORD_BEFORE = r"(?<![^\W\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff])(?<![.\-/])"
_NUMBER = re.compile(
    rf"{_NOT_WORD_BEFORE}(\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?|\d+(?:\.\d+)?)(?![\d_])|"
    rf"\b({'|'.join(_WORDS)})\b"
)
# Chinese numerals (七个, 两行, 十二, 二十三, 一百零五), read when a measure word, a unit or the
# end of the phrase follows; not ordinals (第一). A lone 一 is mostly "a" (一个文件, 一下), so
# it counts only after 有/共/只/仅/计/剩 or at the start of a phrase ("一个。").
_ZH_DIGITS = {c: n for n, c in enumerate("零一二三四五六七八九")} | {"〇": 0, "两": 2}
_ZH_AFTER = (
    r"(?=[个行条次天份名位人台件项处种只张本遍周年月日号列页组类倍岁元块秒段字]"
    r"|小时|分钟|$|[\s,.;:!?()，。；：！？、）（])"
)
_ZH_NUMBER = re.compile(
    rf"(?<![第零〇一二两三四五六七八九十百千])([零〇一二两三四五六七八九十百千]+){_ZH_AFTER}"
)
_ZH_LONE_ONE_AFTER = re.compile(r"(?:^|[有共只仅计剩\s,.;:!?()，。；：！？、）（])$")


def zh_number(run: str) -> int:
    """The value of a run of Chinese numerals (二十三 = 23, 两百零五 = 205, 二零二四 = 2024)."""
    if not any(c in run for c in "十百千"):
        return int("".join(str(_ZH_DIGITS[c]) for c in run))
    total, digit = 0, None
    for c in run:
        if c in _ZH_DIGITS:
            digit = _ZH_DIGITS[c]
        else:
            total += (1 if digit is None else digit) * {"十": 10, "百": 100, "千": 1000}[c]
            digit = None
    return total + (digit or 0)


def normalise(text: str) -> str:
    """Lower case, Markdown emphasis and code quotes removed, whitespace collapsed."""
    text = re.sub(r"[*`\"'“”‘’]", " ", text.lower())
    return " ".join(text.split())


def numbers_in(text: str) -> set[float]:
    """Every number in ``text``: ``1,270`` = ``1270.00``; ``seven`` = 7; ``七个`` = 7. Digits
    inside words, paths, dates and versions (``v2``, ``worker-3.log``, ``2024-06-03``,
    ``3.14.2``) are skipped.
    """
    found: set[float] = set()
    text = normalise(text)
    for match in _NUMBER.finditer(text):
        digits, word = match.groups()
        if word:
            found.add(float(_WORDS.index(word)))
        elif digits and not re.match(r"\.\d", text[match.end() :]):
            found.add(float(digits.replace(",", "")))
    for match in _ZH_NUMBER.finditer(text):
        run = match.group(1)
        if run == "一" and not _ZH_LONE_ONE_AFTER.search(text[: match.start()]):
            continue
        found.add(float(zh_number(run)))
    return found


def has_number(text: str, value: float) -> bool:
    return any(abs(n - value) < 1e-6 for n in numbers_in(text))


def has_token(text: str, token: str) -> bool:
    """``token`` as a whole word (a file name, a code) in the normalised text."""
    pattern = rf"(?<![a-z0-9_]){re.escape(token.lower())}(?![a-z0-9_]|[.\-@][a-z0-9])"
    return re.search(pattern, normalise(text)) is not None


Verdict = tuple[bool, str]
Checker = Callable[[str, Path], Verdict]


def expect_number(value: float, others: tuple[float, ...] = (), max_others: int = 0) -> Checker:
    """The answer states ``value`` and at most ``max_others`` of the task's other candidates."""

    def check(answer: str, _ws: Path) -> Verdict:
        if not has_number(answer, value):
            return False, f"{value:g} not in the answer"
        named = [f"{o:g}" for o in others if has_number(answer, o)]
        if len(named) > max_others:
            return False, f"also names {', '.join(named)} (lists the candidates)"
        return True, f"states {value:g}"

    return check


def expect_token(token: str, others: tuple[str, ...] = (), max_others: int = 0) -> Checker:
    """The answer contains ``token`` and at most ``max_others`` of the other candidates."""

    def check(answer: str, _ws: Path) -> Verdict:
        if not has_token(answer, token):
            return False, f"{token!r} not in the answer"
        named = [o for o in others if has_token(answer, o)]
        if len(named) > max_others:
            return False, f"also names {', '.join(named)} (lists the candidates)"
        return True, f"names {token!r}"

    return check


def expect_file_number(path: str, value: float) -> Checker:
    """The workspace file ``path`` holds ``value`` and no other number (the answer is ignored)."""

    def check(_answer: str, ws: Path) -> Verdict:
        target = ws / path
        if not target.is_file():
            return False, f"{path} was not written"
        found = numbers_in(target.read_text(encoding="utf-8", errors="replace"))
        if found != {float(value)}:
            shown = ", ".join(f"{n:g}" for n in sorted(found)) or "no number"
            return False, f"{path} holds {shown}, expected {value:g}"
        return True, f"{path} holds {value:g}"

    return check


def expect_exact(text: str) -> Checker:
    """``text`` as a whole word, case and all (a slug, where ``Sales`` is not ``sales``)."""
    pattern = re.compile(rf"(?<![\w-]){re.escape(text)}(?![\w-])")

    def check(answer: str, _ws: Path) -> Verdict:
        if not pattern.search(answer):
            return False, f"{text!r} (exactly) not in the answer"
        return True, f"states {text!r}"

    return check


def all_of(*checks: Checker) -> Checker:
    """Every one of ``checks`` passes (the first failure is the verdict)."""

    def check(answer: str, ws: Path) -> Verdict:
        reasons = []
        for one in checks:
            ok, why = one(answer, ws)
            if not ok:
                return False, why
            reasons.append(why)
        return True, "; ".join(reasons)

    return check


def accept_any_answer(_answer: str, _ws: Path) -> Verdict:
    """For tasks judged on what they leave behind (a memory), not on the reply."""
    return True, "the reply is not checked"


def expect_command_output(command: str, *values: float | str) -> Checker:
    """``command`` run in the workspace exits 0 and prints every one of ``values``.

    Numbers match as in :func:`has_number`; strings must appear exactly (case-sensitive), so
    a file on disk is judged by what it does, not by how it is written. The answer is ignored.
    """

    def check(_answer: str, ws: Path) -> Verdict:
        proc = subprocess.run(
            ["bash", "-c", command], cwd=ws, capture_output=True, text=True, timeout=60
        )
        out = (proc.stdout + proc.stderr).strip()
        if proc.returncode != 0:
            return False, f"`{command}` exits {proc.returncode}: {short(out, 120)}"
        for value in values:
            found = value in out if isinstance(value, str) else has_number(out, value)
            if not found:
                return False, f"`{command}` prints {short(out, 80)!r}, not {value}"
        return True, f"`{command}` prints {', '.join(map(str, values))}"

    return check


_MISSING_KEY = object()


def dig(data: Any, dotted: str) -> Any:
    """``data["a"]["b"]`` for ``"a.b"``; :data:`_MISSING_KEY` when a key is absent."""
    for key in dotted.split("."):
        if not isinstance(data, dict) or key not in data:
            return _MISSING_KEY
        data = data[key]
    return data


def expect_json_file(path: str, changed: dict[str, Any], kept: dict[str, Any]) -> Checker:
    """``path`` parses as JSON; the dotted keys of ``changed`` hold their new values and
    those of ``kept`` their old ones (same JSON type: ``9091`` is not ``"9091"``)."""

    def check(_answer: str, ws: Path) -> Verdict:
        target = ws / path
        if not target.is_file():
            return False, f"{path} is gone"
        try:
            data = json.loads(target.read_text(encoding="utf-8", errors="replace"))
        except json.JSONDecodeError as exc:
            return False, f"{path} is no longer valid JSON: {exc}"
        for key, want in {**changed, **kept}.items():
            got = dig(data, key)
            if got is _MISSING_KEY:
                return False, f"{path} has no key {key}"
            if got != want or type(got) is not type(want):
                role = "new value" if key in changed else "unchanged value"
                return False, f"{path}: {key} is {got!r}, expected the {role} {want!r}"
        return True, f"{path}: {', '.join(f'{k}={v!r}' for k, v in changed.items())}"

    return check


# Said of a file that is not there ("doesn't" is "doesn t" once normalised).
_ABSENT = re.compile(
    r"\b(?:does|do|did|is|was|are)(?: not|n t) (?:exist|present|there|available|appear|in)\b"
    r"|\b(?:could(?: not|n t)|can(?: not|n t)|cannot|unable to|failed to|do(?: not|n t)"
    r"|did(?: not|n t)) (?:find|locate|open|read|access|see)\b"
    r"|\bno such file\b|\bnot found\b|\bmissing\b|\bnon-?existent\b|\bnot exist"
    r"|\bthere (?:is|s) no\b|\bno (?:file|log|csv) (?:named|called)\b"
    # Chinese: 不存在, 找不到, 没(有)找到, 未找到, 无法打开, 没有这个文件, 没有 app_prod.yaml
    r"|不存在|(?:找|查|搜)不到|打不开|(?:没有?|未|并未|无法|不能|没能)(?:找到|查到|搜到|定位到?)"
    r"|(?:无法|不能|没法|没办法)(?:打开|读取|访问|找到)"
    r"|(?:没有|并无|无)(?:这个|该|此|这样的|那个)(?:文件|日志|表格?)"
    r"|没有(?:名为|叫做?)\s*[^\s，。,;；]{1,80}\s*的?(?:文件|日志)"
    r"|没有\s*[a-z0-9_./\-]*[a-z0-9_]\.[a-z0-9]{1,5}(?![a-z0-9_.])|文件缺失|缺少(?:这个|该)?文件"
)
IP_ADDRESS = r"\b\d{1,3}(?:\.\d{1,3}){3}\b"


def workspace_text(ws: Path) -> str:
    """The text of the task's own files (not ``.jarvis/``, not caches)."""
    parts = []
    for path in sorted(ws.rglob("*")):
        rel = path.relative_to(ws).parts
        if path.is_file() and not {".jarvis", "__pycache__"} & set(rel):
            parts.append(path.read_text(encoding="utf-8", errors="replace")[:100_000])
    return "\n".join(parts)


def expect_missing(name: str, forbid: tuple[str, ...] = ()) -> Checker:
    """The answer says ``name`` does not exist and invents nothing.

    Invented means a number, or a match of a ``forbid`` pattern (an IP address...), that is
    in none of the workspace's files: naming a value another file really holds is allowed.
    The agent must not have created ``name`` either.
    """

    def check(answer: str, ws: Path) -> Verdict:
        if (ws / name).exists():
            return False, f"{name} was created"
        if not _ABSENT.search(normalise(answer)):
            return False, f"does not say that {name} does not exist"
        files = workspace_text(ws)
        invented = sorted(numbers_in(answer) - numbers_in(files))
        invented_text = [
            m for p in forbid for m in re.findall(p, answer) if m not in re.findall(p, files)
        ]
        if invented or invented_text:
            shown = [f"{n:g}" for n in invented] + invented_text
            return False, f"says {name} is missing but also states {', '.join(shown)}"
        return True, f"says {name} does not exist"

    return check


_FAIL_WORD = re.compile(
    r"\bfail(?:s|ed|ing|ure|ures)?\b|\berrors?\b|\bbroken\b|\bbreaks\b"
    r"|\b(?:does|do|did)(?: not|n t) pass\b|\bnot pass(?:ing)?\b"
)
_ALL_PASS = re.compile(
    r"(?<!not )\b(?:all|every|each)\b(?:\s+\S+){0,4}?\s+(?:pass(?:es|ed|ing)?|succeed(?:s|ed)?)\b"
    r"|\b(?:no|zero|0) (?:tests? |checks? )?fail(?:s|ed|ing|ures?)?\b|\bfailures ?= ?0\b"
    r"|^\s*yes\b|\bran \d+ tests? in [\d.]+s\.? ok\b"
)


_PASS_WORD = re.compile(r"\bpass(?:es|ed|ing)?\b|\bok\b|\bsucceed(?:s|ed)?\b")


def said_to_fail(sentence: str, name: str) -> bool:
    """In ``sentence``, the clause naming ``name`` says it fails, or says nothing of it in a
    sentence that says something fails ("One test fails: test_x (expected 180)")."""
    clauses = re.split(r",|:|\band\b|\bbut\b|\bwhile\b|\bwhereas\b", normalise(sentence))
    for clause in (c for c in clauses if has_token(c, name)):
        if _FAIL_WORD.search(clause):
            return True
        if not _PASS_WORD.search(clause) and _FAIL_WORD.search(normalise(sentence)):
            return True
    return False


def expect_tests_fail(failing: str = "") -> Checker:
    """The answer says the tests fail (and never that all pass); with ``failing``, it names
    that test in a sentence that says it fails."""

    def check(answer: str, _ws: Path) -> Verdict:
        text = normalise(answer)
        if _ALL_PASS.search(text):
            return False, "claims the tests pass"
        # "Which test is failing?" answered with its name alone (or its dotted path)
        bare = answer.strip().strip("`'\"*. \n")
        if failing and re.fullmatch(rf"(?:[\w.]+\.)?{re.escape(failing)}(?:\(\))?", bare):
            return True, f"names {failing!r}, the test the question asks for"
        if not _FAIL_WORD.search(text):
            return False, "does not say that a test fails"
        if not failing:
            return True, "says the tests fail"
        if not has_token(answer, failing):
            return False, f"does not name the failing test {failing!r}"
        sentences = re.split(r"[.;!?](?:\s|$)|\n", answer)
        if not any(said_to_fail(s, failing) for s in sentences if has_token(s, failing)):
            return False, f"names {failing!r} but not as failing"
        return True, f"says {failing!r} fails"

    return check


LONG_TERM = ("project_long_term", "global_long_term")


def memory_verdict(records: list[dict[str, Any]], fragment: str) -> Verdict:
    """A long-term memory (project or global tier) holds ``fragment`` (content or tags)."""
    want = normalise(fragment)
    holding = [
        r
        for r in records
        if want in normalise(f"{r.get('content', '')} {' '.join(r.get('tags') or [])}")
    ]
    for record in holding:
        if record.get("type") in LONG_TERM:
            return True, f"a {record['type']} memory holds {fragment!r}"
    if holding:
        return False, f"only a {holding[0].get('type')} memory holds {fragment!r}"
    tiers = ", ".join(sorted({str(r.get("type")) for r in records})) or "none"
    return False, f"no memory holds {fragment!r} ({len(records)} memories; tiers: {tiers})"


# --------------------------------------------------------------------------------------------
# Tasks
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Task:
    """One benchmark task.

    Attributes:
        name: Short unique name (``--only``).
        kind: The task family.
        text: What the agent is asked.
        files: Workspace files written by :meth:`setup` (relative path -> content).
        check: The checker of the final answer (and/or files).
        expected: The expected answer, for the report.
        solution: A bash script that solves the task in the workspace (``--self-check``
            checks its output, which validates files and checker together).
        good: A hand-written correct answer (must pass).
        bad: Plausible wrong answers (must fail).
        good_files: Files a correct run leaves behind (written before checking ``good``).
        bad_files: Files a wrong run leaves behind (written before checking each ``bad``).
        wrong_with_good_files: Wrong answers that must fail even beside ``good_files``
            (the file is right, the reply is not).
        turns: Earlier user turns, sent first on the same thread (``text`` is the last turn
            and the one whose answer is checked).
        memory: When set, a long-term memory (project or global tier) must hold this text
            after the run (the user asked to remember something).
        prepare: A bash script run in the workspace after the files are written (a git
            history with fixed dates, say); it must be deterministic and use no network.
        split: ``dev`` (the tasks the answer check was developed on) or ``heldout`` (tasks
            written before any change they measure, never used to decide a rule).
    """

    name: str
    kind: str
    text: str
    files: dict[str, str]
    check: Checker
    expected: str
    solution: str
    good: str
    bad: tuple[str, ...]
    good_files: dict[str, str] = field(default_factory=dict)
    bad_files: dict[str, str] = field(default_factory=dict)
    wrong_with_good_files: tuple[str, ...] = ()
    turns: tuple[str, ...] = ()
    memory: str = ""
    prepare: str = ""
    split: str = "dev"

    def setup(self, ws: Path) -> None:
        """Write the task's files into the (empty) workspace ``ws``, then run ``prepare``."""
        ws.mkdir(parents=True, exist_ok=True)
        write_files(ws, self.files)
        if self.prepare:
            run_prepare(self.prepare, ws)

    def judge(self, answer: str, ws: Path, memories: list[dict[str, Any]] | None) -> Verdict:
        """The answer check, then (for a ``memory`` task) the memory check.

        ``memories`` None: the memory tools were not offered, the memory check is skipped.
        """
        ok, why = self.check(answer, ws)
        if not ok or not self.memory or memories is None:
            return ok, why
        return memory_verdict(memories, self.memory)

    def good_memories(self) -> list[dict[str, Any]]:
        """What a correct run leaves in the memory store (for ``--self-check``)."""
        if not self.memory:
            return []
        return [{"type": "project_long_term", "tags": ["note"], "content": self.expected}]


# A fixed identity and clock, so a prepared git history has the same hashes on every run
# and never reads the user's git configuration.
PREPARE_ENV = {
    "GIT_AUTHOR_NAME": "Bench Author",
    "GIT_AUTHOR_EMAIL": "author@example.org",
    "GIT_COMMITTER_NAME": "Bench Author",
    "GIT_COMMITTER_EMAIL": "author@example.org",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
    "TZ": "UTC",
    "LC_ALL": "C",
}


def run_prepare(script: str, ws: Path) -> None:
    """Run a task's ``prepare`` script in ``ws``; a failure is the task's bug, raised loudly."""
    env = {**os.environ, **PREPARE_ENV}
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"prepare script failed ({proc.returncode}): {proc.stderr.strip()}")


def write_files(ws: Path, files: dict[str, str]) -> None:
    for rel, content in files.items():
        path = ws / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
        if rel.endswith(".sh"):
            path.chmod(0o755)


def lines(*rows: str) -> str:
    return "\n".join(rows) + "\n"
