"""Held-out tasks of the local-agent bench (part en): written before any change they measure.

Never used to decide a rule of the answer check; see ``bench/local_agent.py`` (``--split``).

Kinds: values from other file formats (YAML, INI, XML, a Markdown table, TSV, a Dockerfile),
questions on a small git history (built by ``prepare`` with fixed dates and authors), date
arithmetic, word / line / character counts with decoys, lookups across files, and writes
of CSV, INI and YAML files checked by reading them back with python3.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

from bench.task_kit import (
    Checker,
    Task,
    Verdict,
    expect_command_output,
    expect_number,
    expect_token,
    lines,
)

# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------

_MONTH = r"(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_MONTHS = "jan feb mar apr may jun jul aug sep oct nov dec".split()


def dates_in(text: str) -> set[dt.date]:
    """Every calendar date in ``text``: ``2021-11-03``, ``2021/11/03``, ``November 3, 2021``,
    ``3 Nov 2021``, ``3rd of November 2021`` and git's ``Wed Nov 3 09:15:00 2021``."""
    text = re.sub(r"[*`]", " ", text.lower())
    found: set[dt.date] = set()
    triples: list[tuple[str, str, str]] = []
    triples += re.findall(r"(?<!\d)(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)", text)
    clock = r"(?:\d{1,2}:\d{2}(?::\d{2})?\s+)?"  # git's "Nov 3 09:15:00 2021"
    month_first = rf"\b{_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+{clock}(\d{{4}})\b"
    for month, day, year in re.findall(month_first, text):
        triples.append((year, str(_MONTHS.index(month[:3]) + 1), day))
    day_first = rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH},?\s+(\d{{4}})\b"
    for day, month, year in re.findall(day_first, text):
        triples.append((year, str(_MONTHS.index(month[:3]) + 1), day))
    for year, month, day in triples:
        try:
            found.add(dt.date(int(year), int(month), int(day)))
        except ValueError:
            continue
    return found


def expect_date(iso: str, others: tuple[str, ...] = (), max_others: int = 0) -> Checker:
    """The answer states the date ``iso`` (in any common spelling) and at most
    ``max_others`` of the task's other candidate dates."""
    want = dt.date.fromisoformat(iso)
    other_dates = {dt.date.fromisoformat(o) for o in others}

    def check(answer: str, _ws: Path) -> Verdict:
        found = dates_in(answer)
        if want not in found:
            return False, f"{iso} not in the answer"
        named = sorted(str(d) for d in found & other_dates)
        if len(named) > max_others:
            return False, f"also names {', '.join(named)} (lists the candidates)"
        return True, f"states {iso}"

    return check


_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def expect_weekday(day: str) -> Checker:
    """The answer names ``day`` and no other weekday."""
    return expect_token(day, tuple(d for d in _WEEKDAYS if d != day.lower()))


def commit(author: str, date: str, message: str) -> str:
    """Bash: stage everything and commit it as ``author`` ("Name <email>") at ``date``."""
    name, email = re.fullmatch(r"(.+) <(.+)>", author).groups()  # type: ignore[union-attr]
    when = f"{date}T10:00:00+00:00" if len(date) == 10 else date
    return (
        f"git add -A && GIT_AUTHOR_NAME='{name}' GIT_AUTHOR_EMAIL='{email}' "
        f"GIT_COMMITTER_NAME='{name}' GIT_COMMITTER_EMAIL='{email}' "
        f"GIT_AUTHOR_DATE='{when}' GIT_COMMITTER_DATE='{when}' git commit -q -m '{message}'"
    )


def history(*steps: str) -> str:
    """A ``prepare`` script: a new repository on ``main``, then ``steps`` in order."""
    return "\n".join(("git init -q -b main", *steps)) + "\n"


def py(code: str) -> str:
    """Bash: run ``code`` with python3 (double quotes inside ``code`` are escaped)."""
    return 'python3 -c "' + code.replace('"', '\\"') + '"'


# --------------------------------------------------------------------------------------------
# Tasks
# --------------------------------------------------------------------------------------------


def tasks() -> list[Task]:
    """This part's held-out tasks (their ``split`` is set by the runner)."""
    return [
        *_other_format_tasks(),
        *_git_history_tasks(),
        *_date_tasks(),
        *_count_tasks(),
        *_multi_file_tasks(),
        *_write_tasks(),
    ]


def _other_format_tasks() -> list[Task]:
    deploy_yaml = lines(
        "app:",
        "  name: ledger",
        "  port: 8000",
        "services:",
        "  api:",
        "    image: ledger-api:2.3",
        "    port: 8081",
        "    replicas: 3",
        "  worker:",
        "    image: ledger-worker:2.3",
        "    replicas: 5",
        "    queue:",
        "      name: jobs",
        "      port: 5673",
        "  metrics:",
        "    port: 9102",
        "broker:",
        "  port: 5672",
    )
    app_ini = lines(
        "[database]",
        "host = db.internal",
        "timeout = 30",
        "",
        "[cache]",
        "host = cache.internal",
        "timeout = 5",
        "",
        "[smtp]",
        "host = mail.internal",
        "; timeout = 60   (old value, before the relay moved)",
        "timeout = 12",
        "sender = noreply@example.org",
    )
    cluster_xml = lines(
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<cluster name="eu-west" version="4">',
        '  <server id="alpha" host="alpha.eu-west.internal" port="7001" weight="2"/>',
        '  <server id="beta" host="beta.eu-west.internal" port="7002" weight="5"/>',
        '  <server id="gamma" host="gamma.eu-west.internal" port="7013" weight="3">',
        "    <!-- gamma moved off port 7003 after the disk swap -->",
        "  </server>",
        '  <backup id="gamma-b" host="gamma-b.eu-west.internal" port="7103" weight="1"/>',
        "</cluster>",
    )
    services_md = lines(
        "# Services",
        "",
        "Who to ask about what. Ports are the internal HTTP ports.",
        "",
        "## Production",
        "",
        "| Service | Owner      | Port | Pager |",
        "|---------|------------|------|-------|",
        "| billing | Ana Ruiz   | 8401 | yes   |",
        "| search  | Tom Keller | 8402 | yes   |",
        "| reports | Iris Novak | 8403 | no    |",
        "",
        "## Staging",
        "",
        "| Service | Owner      | Port | Pager |",
        "|---------|------------|------|-------|",
        "| billing | Ana Ruiz   | 9401 | no    |",
        "| search  | Devi Rao   | 9402 | no    |",
        "| reports | Iris Novak | 9403 | no    |",
    )
    tsv_rows = [
        ("station", "temp_c", "humidity", "pressure_hpa"),
        ("S-11", "18.4", "62", "1012"),
        ("S-140", "22.3", "55", "1011"),
        ("S-14", "21.7", "48", "1009"),
        ("S-41", "19.9", "71", "1015"),
        ("S-19", "20.2", "66", "1013"),
    ]
    dockerfile = lines(
        "# build stage: compiles the front end",
        "FROM node:20-alpine AS build",
        "WORKDIR /src",
        "ENV PORT=5173",
        "COPY package*.json ./",
        "RUN npm ci",
        "COPY . .",
        "RUN npm run build",
        "EXPOSE 5173",
        "",
        "# runtime stage: what we ship",
        "FROM nginx:1.25-alpine AS runtime",
        "COPY --from=build /src/dist /usr/share/nginx/html",
        "COPY nginx.conf /etc/nginx/conf.d/default.conf",
        "EXPOSE 8088",
        "HEALTHCHECK CMD wget -qO- http://localhost:8088/healthz || exit 1",
    )
    return [
        Task(
            name="h_yaml_queue_port",
            kind="other_format",
            text="In deploy.yaml, what port does the worker service's queue use?",
            files={"deploy.yaml": deploy_yaml},
            check=expect_number(5673, (8000, 8081, 9102, 5672), max_others=0),
            expected="5673",
            solution=py(
                "import yaml; d = yaml.safe_load(open('deploy.yaml')); "
                "print(d['services']['worker']['queue']['port'])"
            ),
            good="The worker's queue (services.worker.queue.port) is on port 5673.",
            bad=(
                "The worker uses port 8081.",
                "The broker listens on 5672.",
                "Ports: 8000, 8081, 5673, 9102, 5672.",
            ),
        ),
        Task(
            name="h_ini_smtp_timeout",
            kind="other_format",
            text="What's the SMTP timeout set to in app.ini? Answer with the number.",
            files={"app.ini": app_ini},
            check=expect_number(12, (30, 5, 60), max_others=0),
            expected="12",
            solution=py(
                "import configparser; c = configparser.ConfigParser(); c.read('app.ini'); "
                "print(c['smtp']['timeout'])"
            ),
            good="The [smtp] section sets timeout = 12.",
            bad=("The SMTP timeout is 60.", "timeout = 30", "Timeouts: 30, 5 and 12."),
        ),
        Task(
            name="h_xml_gamma_port",
            kind="other_format",
            text="Which port is the gamma server on, according to cluster.xml?",
            files={"cluster.xml": cluster_xml},
            check=expect_number(7013, (7001, 7002, 7003, 7103), max_others=0),
            expected="7013",
            solution=py(
                "import xml.etree.ElementTree as E; r = E.parse('cluster.xml').getroot(); "
                "print([s.get('port') for s in r.iter('server') if s.get('id') == 'gamma'][0])"
            ),
            good="gamma listens on port 7013.",
            bad=(
                "The gamma server is on port 7003.",
                "gamma's backup uses 7103.",
                "7001, 7002, 7013 and 7103",
            ),
        ),
        Task(
            name="h_markdown_staging_owner",
            kind="other_format",
            text="Check docs/services.md: who owns the search service in staging?",
            files={"docs/services.md": services_md},
            check=expect_token("rao", ("keller", "ruiz", "novak")),
            expected="Devi Rao",
            solution=(
                "sed -n '/^## Staging/,$p' docs/services.md | grep '| search' | cut -d'|' -f3"
            ),
            good="In staging, search is owned by Devi Rao.",
            bad=("Tom Keller owns search.", "Ana Ruiz", "Tom Keller (production), Devi Rao"),
        ),
        Task(
            name="h_tsv_station_humidity",
            kind="other_format",
            text="What humidity did station S-14 report? The readings are in readings.tsv.",
            files={"readings.tsv": lines(*("\t".join(row) for row in tsv_rows))},
            check=expect_number(48, (62, 55, 71, 66, 21.7), max_others=0),
            expected="48",
            solution="awk -F'\\t' '$1 == \"S-14\" {print $3}' readings.tsv",
            good="Station S-14 reported a humidity of 48.",
            bad=("S-14's humidity is 55.", "The humidity is 71.", "62, 55, 48, 71, 66"),
        ),
        Task(
            name="h_dockerfile_runtime_port",
            kind="other_format",
            text=(
                "Our Dockerfile has two stages. Which port does the image we actually ship "
                "(the final stage) expose?"
            ),
            files={"Dockerfile": dockerfile, "nginx.conf": "server { listen 8088; }\n"},
            check=expect_number(8088, (5173, 20), max_others=0),
            expected="8088",
            solution="grep '^EXPOSE' Dockerfile | tail -n 1 | awk '{print $2}'",
            good="The runtime stage exposes port 8088.",
            bad=("It exposes port 5173.", "EXPOSE 5173 and EXPOSE 8088"),
        ),
    ]


def _git_history_tasks() -> list[Task]:
    amara = "Amara Okafor <amara@example.org>"
    bruno = "Bruno Costa <bruno@example.org>"
    ines = "Ines Ferreira <ines@example.org>"
    chen = "Chen Wei <chen@example.org>"
    last_author = history(
        "mkdir -p src tests",
        "printf 'def total(lines):\\n    return sum(lines)\\n' > src/billing.py",
        "printf 'VAT = 0.23\\n' > src/tax.py",
        commit(amara, "2023-01-09", "Initial billing module"),
        "printf 'def total(lines):\\n    return round(sum(lines), 2)\\n' > src/billing.py",
        commit(bruno, "2023-01-16", "Round invoice totals to cents"),
        "printf 'VAT = 0.23\\nVAT_REDUCED = 0.06\\n' > src/tax.py",
        commit(amara, "2023-01-23", "Add reduced VAT rate"),
        "printf 'def total(lines):\\n    return round(sum(lines), 2)\\n\\n\\n"
        "def credit(note):\\n    return -abs(note)\\n' > src/billing.py",
        commit(ines, "2023-02-06", "Handle credit notes"),
        "printf 'from src.billing import credit\\n\\n\\ndef test_credit():\\n"
        "    assert credit(5) == -5\\n' > tests/test_billing.py",
        commit(bruno, "2023-02-13", "Test credit notes"),
        "printf 'VAT = 0.23\\nVAT_REDUCED = 0.06\\nVAT_ZERO = 0.0\\n' > src/tax.py",
        "printf '\\nTax rates live in src/tax.py.\\n' >> README.md",
        commit(chen, "2023-02-20", "Document tax rates"),
        "printf 'def monthly(rows):\\n    return len(rows)\\n' > src/billing_report.py",
        commit(bruno, "2023-02-27", "Monthly billing report"),
    )
    docs_count = history(
        "mkdir -p src docs tests docs-site",
        "printf 'print(\"app\")\\n' > src/app.py",
        "printf '# Index\\n' > docs/index.md",
        commit(amara, "2022-05-02", "Initial layout"),
        "printf 'import sys\\nprint(sys.argv)\\n' > src/app.py",
        commit(bruno, "2022-05-04", "Add CLI flags"),
        "printf '# Usage\\n\\nRun app.py.\\n' > docs/usage.md",
        commit(ines, "2022-05-09", "Write usage guide"),
        "printf '\\nSee the docs folder for the guide.\\n' >> README.md",
        commit(chen, "2022-05-11", "Link the docs from the README"),
        "printf '#!/bin/sh\\nmkdocs build\\n' > docs-site/build.sh",
        commit(chen, "2022-05-16", "Add docs site build script"),
        "printf 'import sys\\nDRY = \"--dry-run\" in sys.argv\\nprint(sys.argv)\\n' > src/app.py",
        "printf '# Usage\\n\\nRun app.py, add --dry-run to preview.\\n' > docs/usage.md",
        commit(bruno, "2022-05-18", "Add a dry-run flag and explain it"),
        "printf 'def test_app():\\n    assert True\\n' > tests/test_app.py",
        commit(ines, "2022-05-23", "Add tests"),
        "printf '# Index\\n\\nStart with usage.md.\\n' > docs/index.md",
        commit(amara, "2022-05-30", "Fix typo in docs index"),
        "printf '__version__ = \"0.2.0\"\\n' > src/version.py",
        commit(bruno, "2022-06-01", "Bump version"),
    )
    line_added = history(
        "printf 'retry_limit = 3\\ntimeout = 20\\n' > settings.conf",
        commit(amara, "2023-06-01", "Add service settings"),
        "printf '# copy to settings.conf\\nretry_limit = 7\\ntimeout = 20\\n' "
        "> settings.example.conf",
        commit(chen, "2023-06-08", "Document retry options in the example config"),
        "printf 'retry_limit = 3\\ntimeout = 45\\n' > settings.conf",
        commit(bruno, "2023-06-15", "Raise timeout for slow reports"),
        "printf 'retry_limit = 7\\ntimeout = 45\\n' > settings.conf",
        commit(ines, "2023-06-22", "Retry more often against the flaky payment gateway"),
        "printf 'retry_limit = 7\\ntimeout = 45\\nlog_level = info\\n' > settings.conf",
        commit(chen, "2023-06-29", "Add a log level setting"),
    )
    first_date = history(
        "printf 'def main():\\n    pass\\n' > main.py",
        commit(amara, "2021-11-03T09:15:00+00:00", "Initial commit"),
        "printf 'def main():\\n    print(\"hello\")\\n' > main.py",
        commit(bruno, "2021-11-10T16:40:00+00:00", "Say hello"),
        "printf '## 0.1.0 - 2021-11-12\\n\\nFirst release.\\n' > CHANGELOG.md",
        commit(amara, "2021-11-12T11:00:00+00:00", "Changelog for 0.1.0"),
        "printf 'def test_main():\\n    assert True\\n' > test_main.py",
        commit(chen, "2022-01-05T08:05:00+00:00", "Add a test"),
        "printf '\\nLicensed under MIT.\\n' >> README.md",
        commit(ines, "2022-03-21T14:30:00+00:00", "Add license note"),
    )
    return [
        Task(
            name="h_git_last_author",
            kind="git_history",
            text="Who was the last person to change src/billing.py?",
            files={
                "README.md": lines(
                    "# billing",
                    "",
                    "Owners: billing - Bruno Costa; tax - Amara Okafor.",
                )
            },
            prepare=last_author,
            check=expect_token("ferreira", ("costa", "okafor", "wei")),
            expected="Ines Ferreira",
            solution="git log -1 --format='%an' -- src/billing.py",
            good="Ines Ferreira made the last change to src/billing.py (Handle credit notes).",
            bad=(
                "Bruno Costa last changed it.",
                "Chen Wei made the latest commit.",
                "Amara Okafor created it; Bruno Costa and Ines Ferreira changed it.",
            ),
        ),
        Task(
            name="h_git_docs_commits",
            kind="git_history",
            text="How many commits in this repo touched something in the docs/ folder?",
            files={"README.md": lines("# app", "", "A tiny command line app.")},
            prepare=docs_count,
            check=expect_number(4, (9, 5, 3), max_others=0),
            expected="4",
            solution="git log --oneline -- docs | wc -l",
            good="4 commits touched docs/.",
            bad=("5 commits touched the docs.", "There are 9 commits.", "3 commits"),
        ),
        Task(
            name="h_git_line_added_message",
            kind="git_history",
            text=(
                "Which commit put the line `retry_limit = 7` into settings.conf? "
                "I need its commit message."
            ),
            files={},
            prepare=line_added,
            check=expect_token(
                "flaky payment gateway",
                ("example config", "slow reports", "log level", "add service settings"),
            ),
            expected="Retry more often against the flaky payment gateway",
            solution="git log -S'retry_limit = 7' --format=%s -- settings.conf",
            good=(
                "It was added by the commit 'Retry more often against the flaky payment "
                "gateway' (Ines Ferreira, 2023-06-22)."
            ),
            bad=(
                "The commit message is 'Document retry options in the example config'.",
                "Add a log level setting",
                "Raise timeout for slow reports",
            ),
        ),
        Task(
            name="h_git_first_commit_date",
            kind="git_history",
            text="When was the very first commit in this repository made? Just the date, please.",
            files={"README.md": lines("# greeter", "", "Project planning began 2021-10-01.")},
            prepare=first_date,
            check=expect_date(
                "2021-11-03", ("2021-10-01", "2021-11-10", "2021-11-12", "2022-03-21")
            ),
            expected="2021-11-03",
            solution="git log --reverse --format=%ad --date=short | head -n 1",
            good="The first commit was made on November 3, 2021.",
            bad=(
                "The first commit is from 2021-10-01.",
                "It was on 2021-11-12.",
                "March 21, 2022",
            ),
        ),
    ]


def _date_tasks() -> list[Task]:
    releases = lines(
        "version,date,status",
        "3.1.0,2024-03-05,released",
        "3.1.1,2024-04-18,released",
        "3.2.0-rc1,2024-05-29,released",
        "3.2.0,2024-06-14,planned",
        "3.2.1,2024-07-02,planned",
    )
    return [
        Task(
            name="h_dates_beta_to_launch",
            kind="dates",
            text="How many days from the beta to the launch? The dates are in milestones.txt.",
            files={
                "milestones.txt": lines(
                    "# Project Falcon milestones",
                    "kickoff: 2024-02-12",
                    "design freeze: 2024-03-08",
                    "beta: 2024-04-02",
                    "launch: 2024-05-20",
                    "retro: 2024-06-03",
                )
            },
            check=expect_number(48, (47, 49, 50, 98, 73, 14), max_others=0),
            expected="48",
            solution=(
                'python3 -c "from datetime import date; '
                'print((date(2024, 5, 20) - date(2024, 4, 2)).days)"'
            ),
            good="From the beta to the launch it's 48 days.",
            bad=("49 days.", "It is 98 days from kickoff to launch.", "47 days"),
        ),
        Task(
            name="h_dates_release_weekday",
            kind="dates",
            text="What day of the week is the 3.2.0 release planned for? See releases.csv.",
            files={"releases.csv": releases},
            check=expect_weekday("friday"),
            expected="Friday",
            solution=(
                'python3 -c "import csv, datetime; '
                "r = [x for x in csv.DictReader(open('releases.csv')) if x['version'] == '3.2.0']; "
                "print(datetime.date.fromisoformat(r[0]['date']).strftime('%A'))\""
            ),
            good="3.2.0 is planned for 2024-06-14, which is a Friday.",
            bad=("It's a Wednesday.", "Thursday", "Tuesday, 2 July"),
        ),
        Task(
            name="h_dates_oldest_backup",
            kind="dates",
            text="Which machine has gone longest without a backup? The list is in backups.txt.",
            files={
                "backups.txt": lines(
                    "# host        last backup (DD/MM/YYYY)",
                    "ledger-db     05/01/2024",
                    "mail-relay    19/07/2023",
                    "ci-runner     11/12/2022",
                    "wiki          23/03/2023",
                    "vpn-gw        30/11/2023",
                )
            },
            check=expect_token("ci-runner", ("ledger-db", "mail-relay", "wiki", "vpn-gw")),
            expected="ci-runner",
            solution=(
                "grep -v '^#' backups.txt | awk '{split($2, d, \"/\"); "
                "print d[3] d[2] d[1], $1}' | sort | head -n 1 | cut -d' ' -f2"
            ),
            good="ci-runner: its last backup was on 11 December 2022.",
            bad=(
                "ledger-db (05/01/2024)",
                "wiki has the oldest backup.",
                "ledger-db, mail-relay, ci-runner, wiki, vpn-gw",
            ),
        ),
    ]


def _count_tasks() -> list[Task]:
    abstract = lines(
        "We study how small language models plan multi step tasks when they",
        "can call tools. Across four benchmarks the models often stop early,",
        "report results they did not check, or repeat a failing call. A short",
        "verification step before the final answer removes most of these errors",
        "at a modest cost in latency.",
    )
    draft = lines(
        "Small models can call tools but they stop early and report results",
        "they did not check. We propose a verification step.",
    )
    notes = lines(
        "# Sprint 14 notes",
        "",
        "TODO: tidy this file before the review.",
        "",
        "## Frontend",
        "- TODO fix the date picker on Safari",
        "- DONE dark mode toggle",
        "- TODO lazy-load the charts",
        "",
        "## Backend",
        "- TODO add an index on orders.created_at",
        "- DONE paginate the invoices endpoint",
        "- TODO retry webhooks with backoff",
        "- TODO drop the legacy auth table",
        "- DONE move cron jobs to the queue",
        "- TODO log slow queries",
        "",
        "## Ops",
        "- TODO rotate the TLS certificates",
        "- TODO move backups to cold storage",
        "- TODO pin the runner image",
        "- DONE upgrade the runners",
    )
    commit_msg = lines(
        "Retry webhook deliveries with exponential backoff",
        "",
        "Webhook deliveries that failed with a server error were dropped after",
        "a single attempt. They are now retried up to five times, waiting twice",
        "as long before each attempt, then moved to the dead letter queue.",
    )
    poem = lines(
        "The harbour wakes before the town,",
        "the gulls already quarrelling,",
        "a kettle somewhere, and the ropes",
        "and all of us are up and out and on the boats by now,",
        "the ferryman slowly unfastening his weatherproofed tarpaulins",
        "while somebody is singing",
        "a song about the weather.",
    )
    return [
        Task(
            name="h_words_abstract",
            kind="word_line_count",
            text="How many words are in abstract.txt?",
            files={"abstract.txt": abstract, "abstract_draft.txt": draft},
            check=expect_number(53, (5, 21, 74, 52, 54), max_others=0),
            expected="53",
            solution="wc -w < abstract.txt",
            good="abstract.txt has 53 words.",
            bad=("It has 21 words.", "74 words in total.", "54"),
        ),
        Task(
            name="h_lines_backend_todos",
            kind="word_line_count",
            text=(
                "How many open TODO items are there in the Backend section of notes.md? "
                "Answer with the number."
            ),
            files={"notes.md": notes},
            check=expect_number(4, (2, 3, 6, 9, 10), max_others=0),
            expected="4",
            solution="sed -n '/^## Backend/,/^## /p' notes.md | grep -c '^- TODO'",
            good="The Backend section has 4 open TODOs.",
            bad=("There are 9 TODO items.", "6 items in Backend.", "10"),
        ),
        Task(
            name="h_chars_commit_subject",
            kind="word_line_count",
            text=(
                "commit_msg.txt holds a commit message. How many characters long is its "
                "subject line?"
            ),
            files={"commit_msg.txt": commit_msg},
            check=expect_number(49, (50, 70, 258, 6, 5), max_others=0),
            expected="49",
            solution="head -n 1 commit_msg.txt | tr -d '\\n' | wc -c",
            good="The subject line is 49 characters long.",
            bad=("50 characters.", "The longest line has 70 characters.", "6 words"),
        ),
        Task(
            name="h_longest_line_number",
            kind="word_line_count",
            text="Which line of poem.txt is the longest? Give me its line number.",
            files={"poem.txt": poem},
            check=expect_number(5, (4, 7, 1), max_others=0),
            expected="5",
            solution=(
                "awk '{ if (length($0) > m) { m = length($0); n = NR } } END { print n }' poem.txt"
            ),
            good="Line 5 is the longest (61 characters).",
            bad=("Line 4 is the longest.", "Line 7.", "The first line."),
        ),
    ]


def _multi_file_tasks() -> list[Task]:
    region = {
        "north": ("41200", "38900", "44100"),
        "south": ("52300", "49800", "47600"),
        "east": ("36400", "61800", "33900"),
        "west": ("45500", "44200", "48800"),
    }
    auth_logs = {
        "01": ("FAILED login", 3, "FAILED upload", 4),
        "02": ("FAILED login", 2, "FAILED upload", 1),
        "03": ("FAILED login", 5, "FAILED upload", 0),
        "04": ("FAILED login", 4, "FAILED upload", 2),
    }

    def auth_log(day: str) -> str:
        _, logins, _, uploads = auth_logs[day]
        rows = [f"2024-05-{day} 08:00:00 OK login user=ana"]
        rows += [f"2024-05-{day} 09:{i:02d}:00 FAILED login user=u{i}" for i in range(logins)]
        rows += [f"2024-05-{day} 10:{i:02d}:00 FAILED upload file=r{i}.pdf" for i in range(uploads)]
        rows += [f"2024-05-{day} 11:00:00 OK login user=dev"]
        return lines(*rows)

    return [
        Task(
            name="h_multi_order_city",
            kind="multi_file",
            text=(
                "Which city is order 5531 going to? The orders, the customers and the city "
                "codes are in the CSV files here."
            ),
            files={
                "orders.csv": lines(
                    "order_id,customer_id,amount",
                    "5513,C-240,88.00",
                    "5529,C-118,12.50",
                    "5531,C-204,240.00",
                    "5533,C-118,19.90",
                ),
                "customers.csv": lines(
                    "customer_id,name,city_code",
                    "C-118,Marco Diaz,MAD",
                    "C-204,Lena Park,LIS",
                    "C-240,Ravi Shah,OPO",
                    "C-402,Noor Aziz,BCN",
                ),
                "cities.csv": lines(
                    "code,city", "BCN,Barcelona", "LIS,Lisbon", "MAD,Madrid", "OPO,Porto"
                ),
            },
            check=expect_token("lisbon", ("porto", "madrid", "barcelona")),
            expected="Lisbon",
            solution=(
                "c=$(grep '^5531,' orders.csv | cut -d, -f2); "
                'code=$(grep "^$c," customers.csv | cut -d, -f3); '
                'grep "^$code," cities.csv | cut -d, -f2'
            ),
            good="Order 5531 belongs to Lena Park (C-204), who is in Lisbon.",
            bad=("It goes to Porto.", "Madrid", "Lisbon or Porto"),
        ),
        Task(
            name="h_multi_manager_extension",
            kind="multi_file",
            text="What's the desk extension of the manager of whoever holds badge B-207?",
            files={
                "badges.txt": lines("B-207 -> E31", "B-270 -> E13", "B-112 -> E05", "B-305 -> E08"),
                "employees.csv": lines(
                    "id,name,manager_id",
                    "E02,Olga Berg,",
                    "E05,Kofi Mensah,E02",
                    "E08,Hana Ito,E02",
                    "E13,Luis Vidal,E05",
                    "E31,Sam Ortiz,E08",
                ),
                "phones.csv": lines(
                    "id,extension",
                    "E02,4499",
                    "E05,4401",
                    "E08,4472",
                    "E13,4423",
                    "E31,4410",
                ),
            },
            check=expect_number(4472, (4410, 4401, 4499, 4423), max_others=0),
            expected="4472",
            solution=(
                "e=$(grep '^B-207 ' badges.txt | awk '{print $3}'); "
                'm=$(grep "^$e," employees.csv | cut -d, -f3); '
                'grep "^$m," phones.csv | cut -d, -f2'
            ),
            good="B-207 is Sam Ortiz, whose manager Hana Ito is on extension 4472.",
            bad=("Extension 4410.", "The manager's extension is 4401.", "4499"),
        ),
        Task(
            name="h_multi_max_revenue_file",
            kind="multi_file",
            text=(
                "Each file in reports/ has a region's monthly revenue for the quarter. Which "
                "file has the highest total? Answer with the file name."
            ),
            files={
                f"reports/{name}.csv": lines(
                    "month,revenue",
                    *(f"{m},{v}" for m, v in zip(("jul", "aug", "sep"), vals, strict=True)),
                )
                for name, vals in region.items()
            },
            check=expect_token("south.csv", ("north.csv", "east.csv", "west.csv")),
            expected="reports/south.csv",
            solution=(
                "for f in reports/*.csv; do "
                "echo \"$(awk -F, 'NR > 1 {s += $2} END {print s}' $f) $f\"; done "
                "| sort -n | tail -n 1 | cut -d' ' -f2"
            ),
            good="reports/south.csv has the highest total (149,700).",
            bad=(
                "east.csv has the highest revenue.",
                "west.csv",
                "north.csv, south.csv, east.csv, west.csv",
            ),
        ),
        Task(
            name="h_multi_failed_logins",
            kind="multi_file",
            text=(
                "There's one auth log per day in logs/. On which day's log were there the most "
                "failed logins? Give me the file name."
            ),
            files={f"logs/auth-2024-05-{day}.log": auth_log(day) for day in auth_logs},
            check=expect_token(
                "auth-2024-05-03.log",
                ("auth-2024-05-01.log", "auth-2024-05-02.log", "auth-2024-05-04.log"),
            ),
            expected="logs/auth-2024-05-03.log",
            solution=(
                "grep -c 'FAILED login' logs/*.log | sort -t: -k2 -n | tail -n 1 | cut -d: -f1"
            ),
            good="logs/auth-2024-05-03.log has the most failed logins (5).",
            bad=(
                "auth-2024-05-01.log has the most failures.",
                "auth-2024-05-04.log",
                "auth-2024-05-01.log, auth-2024-05-03.log",
            ),
        ),
    ]


def _write_tasks() -> list[Task]:
    staff = lines(
        "id,name,team,start_date",
        "1031,Ana Ruiz,billing,2021-03-01",
        "1035,Tom Keller,search,2021-09-13",
        "1042,Iris Novak,reports,2022-05-02",
        "1029,Devi Rao,search,2020-11-16",
        "1038,Kofi Mensah,platform,2023-01-09",
        "1036,Hana Ito,billing,2023-06-19",
    )
    staff_check = py(
        "import csv; rows = [[c.strip() for c in r] for r in csv.reader(open('staff.csv')) if r]; "
        "print('rows=%d' % len(rows)); print('header=' + '|'.join(rows[0])); "
        "print('ids=' + '|'.join(sorted(r[0] for r in rows[1:]))); "
        "print('new=' + ';'.join('|'.join(r) for r in rows if 'Priya Nair' in r))"
    )
    orders = lines(
        "order,status,amount",
        "A-100,paid,120",
        "A-101,refunded,80",
        "A-102,paid,245",
        "A-103,pending,60",
        "A-104,paid,310",
        "A-105,paid,95",
        "A-106,refunded,150",
        "A-107,paid,180",
    )
    ini_check = py(
        "import configparser; c = configparser.ConfigParser(); c.read('summary.ini'); "
        "t = c['totals']; print('paid_orders=%g' % float(t['paid_orders'])); "
        "print('paid_total=%g' % float(t['paid_total']))"
    )
    app_yaml = lines(
        "name: ledger",
        "database:",
        "  hostname: db.prod.internal",
        "  port: 5432",
        "  pool: 10",
        "cache:",
        "  hostname: cache.prod.internal",
        "  ttl: 300",
    )
    yaml_check = py(
        "import yaml; d = yaml.safe_load(open('app.yaml')); db = d['database']; "
        "print('host=' + db['host']); print('old=%s' % ('hostname' in db)); "
        "print('port=%s pool=%s' % (db['port'], db['pool'])); "
        "print('cache=' + d['cache']['hostname']); print('name=' + d['name'])"
    )
    return [
        Task(
            name="h_write_csv_append",
            kind="write_other",
            text=(
                "Add Priya Nair to staff.csv: team platform, start date 2024-09-02. Give her "
                "the next free id, one more than the highest id already in the file."
            ),
            files={"staff.csv": staff},
            check=expect_command_output(
                staff_check,
                "rows=8",
                "header=id|name|team|start_date",
                "ids=1029|1031|1035|1036|1038|1042|1043",
                "new=1043|Priya Nair|platform|2024-09-02",
            ),
            expected="staff.csv with a new row 1043,Priya Nair,platform,2024-09-02",
            solution=(
                "echo '1043,Priya Nair,platform,2024-09-02' >> staff.csv && tail -n 1 staff.csv"
            ),
            good="Added Priya Nair with id 1043.",
            bad=("Added Priya Nair with id 1043.",),
            good_files={"staff.csv": staff + "1043,Priya Nair,platform,2024-09-02\n"},
            # the id after the last row's, not after the highest
            bad_files={"staff.csv": staff + "1037,Priya Nair,platform,2024-09-02\n"},
        ),
        Task(
            name="h_write_ini_summary",
            kind="write_other",
            text=(
                "Create summary.ini with a [totals] section that has two keys: paid_orders "
                "(how many orders in orders.csv have status paid) and paid_total (the sum of "
                "their amounts)."
            ),
            files={"orders.csv": orders},
            check=expect_command_output(ini_check, "paid_orders=5", "paid_total=950"),
            expected="summary.ini: [totals] paid_orders = 5, paid_total = 950",
            solution=(
                'awk -F, \'$2 == "paid" {n++; s += $3} END '
                '{print "[totals]"; print "paid_orders = " n; print "paid_total = " s}\' '
                "orders.csv > summary.ini && cat summary.ini"
            ),
            good="summary.ini is written.",
            bad=("summary.ini is written.",),
            good_files={"summary.ini": lines("[totals]", "paid_orders = 5", "paid_total = 950")},
            # every order counted, not only the paid ones
            bad_files={"summary.ini": lines("[totals]", "paid_orders = 8", "paid_total = 1240")},
        ),
        Task(
            name="h_write_yaml_rename_key",
            kind="write_other",
            text=(
                "In app.yaml, rename the database's hostname key to host. Keep its value, "
                "and leave the cache section alone."
            ),
            files={"app.yaml": app_yaml},
            check=expect_command_output(
                yaml_check,
                "host=db.prod.internal",
                "old=False",
                "port=5432 pool=10",
                "cache=cache.prod.internal",
                "name=ledger",
            ),
            expected="app.yaml with database.host: db.prod.internal, cache.hostname unchanged",
            solution=("sed -i '3s/hostname:/host:/' app.yaml && cat app.yaml"),
            good="Renamed database.hostname to database.host.",
            bad=("Renamed database.hostname to database.host.",),
            good_files={"app.yaml": app_yaml.replace("  hostname: db", "  host: db")},
            # both sections renamed
            bad_files={"app.yaml": app_yaml.replace("  hostname:", "  host:")},
        ),
    ]
