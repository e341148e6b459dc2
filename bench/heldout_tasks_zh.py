"""Held-out tasks of the local-agent bench (part zh): written before any change they measure.

Never used to decide a rule of the answer check; see ``bench/local_agent.py`` (``--split``).

Twelve everyday tasks asked in Chinese (answers may come in Chinese, numerals included), six
questions that need no tool (four English, two Chinese) and two English "which check fails"
tasks.
"""

from __future__ import annotations

import json
from typing import Any

from bench.task_kit import (
    IP_ADDRESS,
    Task,
    expect_json_file,
    expect_missing,
    expect_number,
    expect_tests_fail,
    expect_token,
    lines,
)


def _json_text(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


def tasks() -> list[Task]:
    """This part's held-out tasks (their ``split`` is set by the runner)."""
    return [*_zh_tasks(), *_no_tool_tasks(), *_failing_check_tasks()]


# --------------------------------------------------------------------------------------------
# Asked in Chinese
# --------------------------------------------------------------------------------------------


def _zh_tasks() -> list[Task]:
    return [
        *_zh_config_tasks(),
        *_zh_count_tasks(),
        *_zh_run_tasks(),
        *_zh_find_tasks(),
        *_zh_csv_tasks(),
        *_zh_edit_tasks(),
        *_zh_date_tasks(),
    ]


def _zh_config_tasks() -> list[Task]:
    app_yaml = lines(
        "# 应用配置（staging）",
        "app:",
        "  name: inventory-service",
        "  env: staging",
        "server:",
        "  host: 0.0.0.0",
        "  port: 8080",
        "database:",
        "  host: db.internal",
        "  port: 5433",
        "  name: inventory",
        "  pool_size: 20",
        "redis:",
        "  host: 10.0.2.15",
        "  port: 6379",
    )
    example_yaml = lines(
        "# 示例配置，复制成 app.yaml 再改",
        "server:",
        "  port: 8000",
        "database:",
        "  host: localhost",
        "  port: 5432",
    )
    settings_ini = lines(
        "; 部署参数",
        "[default]",
        "timeout = 30",
        "retries = 3",
        "",
        "[dev]",
        "timeout = 10",
        "debug = true",
        "",
        "[prod]",
        "; 生产环境网络慢，超时要长一点",
        "timeout = 45",
        "retries = 5",
    )
    return [
        Task(
            name="h_zh_yaml_db_port",
            kind="zh_config",
            text="config/app.yaml 里数据库端口配的是多少？",
            files={"config/app.yaml": app_yaml, "config/app.example.yaml": example_yaml},
            check=expect_number(5433, (8080, 6379, 5432, 8000, 20)),
            expected="5433",
            solution="grep -A3 '^database:' config/app.yaml | grep port | awk '{print $2}'",
            good="config/app.yaml 里 database.port 配的是 5433。",
            bad=(
                "数据库端口是 5432。",
                "端口是 8080。",
                "server 是 8080，database 是 5433，redis 是 6379。",
            ),
        ),
        Task(
            name="h_zh_ini_prod_timeout",
            kind="zh_config",
            text="看一下 deploy/settings.ini，prod 那一节的 timeout 是几秒？",
            files={"deploy/settings.ini": settings_ini},
            check=expect_number(45, (30, 10, 3, 5)),
            expected="45",
            solution=(
                'python3 -c "import configparser; c = configparser.ConfigParser(); '
                "c.read('deploy/settings.ini'); print(c['prod']['timeout'])\""
            ),
            good="prod 的 timeout 是 45 秒。",
            bad=("timeout 是 30 秒。", "prod 环境的超时时间是十秒。", "30、10、45"),
        ),
    ]


def _zh_count_tasks() -> list[Task]:
    app_log = lines(
        'ts=1717405201 level=INFO svc=payment msg="service started"',
        'ts=1717405238 level=INFO svc=auth msg="service started"',
        'ts=1717405275 level=ERROR svc=payment msg="card declined" order=1042',
        'ts=1717405312 level=ERROR svc=auth msg="token expired" user=u-77',
        'ts=1717405349 level=WARN svc=payment msg="retrying gateway call"',
        'ts=1717405386 level=ERROR svc=payment msg="gateway timeout" after=30s',
        'ts=1717405423 level=INFO svc=payment msg="no errors in the last batch"',
        'ts=1717405460 level=ERROR svc=shipping msg="label printer offline"',
        'ts=1717405497 level=ERROR svc=payment msg="card declined" order=1051',
        'ts=1717405534 level=ERROR svc=auth msg="too many login attempts" user=u-12',
        'ts=1717405571 level=INFO svc=shipping msg="shipment dispatched" shipment=s-88',
        'ts=1717405608 level=ERROR svc=payment msg="refund failed" order=1042',
        'ts=1717405645 level=INFO svc=payment msg="daily summary written"',
    )
    rotated_log = lines(
        'ts=1717349811 level=ERROR svc=payment msg="card declined" order=998',
        'ts=1717349848 level=INFO svc=auth msg="service stopped"',
        'ts=1717349885 level=ERROR svc=payment msg="gateway timeout" after=30s',
    )
    src_files = {
        "src/cli.py": lines("from app.main import run", "", "run()"),
        "src/app/__init__.py": "",
        "src/app/main.py": lines("def run():", '    print("inventory")'),
        "src/app/models.py": lines("class Item:", "    name: str", "    qty: int"),
        "src/app/models.py.bak": lines("class Item:", "    name: str"),
        "src/app/types.pyi": lines("def run() -> None: ..."),
        "src/app/README.md": lines("# app", "", "核心代码。"),
        "src/app/config.yaml": lines("debug: false"),
        "src/app/utils/__init__.py": "",
        "src/app/utils/dates.py": lines("from datetime import date", "", "TODAY = date.today()"),
        "src/app/utils/text.py": lines("def slug(s):", '    return s.lower().replace(" ", "-")'),
        "tests/test_main.py": lines("def test_run():", "    assert True"),
        "tests/test_dates.py": lines("def test_today():", "    assert True"),
        "setup.py": lines("from setuptools import setup", "", 'setup(name="inventory")'),
    }
    return [
        Task(
            name="h_zh_count_payment_errors",
            kind="zh_count",
            text="帮我数一下 logs/app.log 里 payment 服务报了几条 ERROR？",
            files={"logs/app.log": app_log, "logs/app.log.1": rotated_log},
            check=expect_number(4, (7, 5, 8, 6)),
            expected="4",
            solution="grep 'level=ERROR' logs/app.log | grep -c 'svc=payment '",
            good="logs/app.log 里 payment 服务一共有 4 条 ERROR。",
            bad=(
                "一共有七条 ERROR。",
                "payment 的 ERROR 有 5 条。",
                "算上 app.log.1，payment 一共有六条 ERROR。",
            ),
        ),
        Task(
            name="h_zh_count_py_files",
            kind="zh_count",
            text="src 目录下（包括子目录）一共有多少个 .py 文件？",
            files=src_files,
            check=expect_number(7, (5, 8, 9, 10)),
            expected="7",
            solution="find src -name '*.py' | wc -l",
            good="src 下一共有七个 .py 文件。",
            bad=(
                "一共有 10 个 .py 文件。",
                "src 里有九个 Python 相关文件。",
                "不算 __init__.py 的话有五个。",
            ),
        ),
    ]


def _zh_run_tasks() -> list[Task]:
    report = lines(
        "# 统计本月已付款订单的金额（含 6% 服务费）",
        "orders = [",
        '    ("A-1001", "paid", 129.90),',
        '    ("A-1002", "refunded", 58.00),',
        '    ("A-1003", "paid", 342.50),',
        '    ("A-1004", "pending", 77.25),',
        '    ("A-1005", "paid", 15.60),',
        '    ("A-1006", "paid", 480.00),',
        "]",
        'paid = [o for o in orders if o[1] == "paid"]',
        "total = sum(o[2] for o in paid) * 1.06",
        'print(f"已付款订单: {len(paid)} 笔")',
        'print(f"合计: {total:.2f}")',
    )
    gen_code = lines(
        "import hashlib",
        "",
        'SEED = "team-42"',
        "ROUND = 3",
        "",
        "",
        "def code(seed, n):",
        '    digest = hashlib.sha256(f"{seed}:{n}".encode()).hexdigest()',
        "    return digest[:8].upper()",
        "",
        "",
        'print("邀请码:", code(SEED, ROUND))',
    )
    return [
        Task(
            name="h_zh_run_report_total",
            kind="zh_run_script",
            text="运行一下 report.py，它输出的合计是多少？",
            files={"report.py": report},
            check=expect_number(1026.08, (968, 1103.25, 1169.45, 1169.44)),
            expected="1026.08",
            solution="python3 report.py",
            good="运行结果：已付款订单 4 笔，合计 1026.08。",
            bad=("合计是 968.00。", "合计 1169.45", "总金额是 1103.25 元。"),
        ),
        Task(
            name="h_zh_run_invite_code",
            kind="zh_run_script",
            text="跑一下 gen_code.py，把它打印出来的邀请码发我。",
            files={"gen_code.py": gen_code},
            check=expect_token("2ACA3499", ("A8CE5745", "7F2CE656", "49CC9EBC")),
            expected="2ACA3499",
            solution="python3 gen_code.py",
            good="邀请码是 `2ACA3499`。",
            bad=("邀请码是 A8CE5745。", "邀请码: 7F2CE656", "2ACA349"),
        ),
    ]


def _zh_find_tasks() -> list[Task]:
    files = {
        "app/services/profile_store.py": lines(
            '"""用户资料的读取。"""',
            "import json",
            "",
            "",
            "def load_user_profile(user_id):",
            '    with open(f"data/profiles/{user_id}.json", encoding="utf-8") as f:',
            "        return json.load(f)",
        ),
        "app/services/cache.py": lines(
            "from functools import lru_cache",
            "",
            "from app.services.profile_store import load_user_profile",
            "",
            "",
            "@lru_cache(maxsize=256)",
            "def load_user_profile_cached(user_id):",
            "    return load_user_profile(user_id)",
        ),
        "app/api/users.py": lines(
            "from app.services.cache import load_user_profile_cached",
            "",
            "",
            "def get_user(request, user_id):",
            "    # 以前直接调用 load_user_profile，现在走缓存",
            "    return load_user_profile_cached(user_id)",
        ),
        "tests/test_profile.py": lines(
            "from unittest import mock",
            "",
            "",
            '@mock.patch("app.services.cache.load_user_profile")',
            "def test_cached(load_user_profile):",
            '    load_user_profile.return_value = {"name": "张伟"}',
        ),
        "docs/api.md": lines(
            "# 接口说明",
            "",
            "`get_user` 通过 `load_user_profile` 读取用户资料（带缓存）。",
        ),
    }
    return [
        Task(
            name="h_zh_find_definition",
            kind="zh_find_file",
            text="load_user_profile 这个函数是在哪个文件里定义的？",
            files=files,
            check=expect_token("profile_store.py", ("cache.py", "users.py", "test_profile.py")),
            expected="app/services/profile_store.py",
            solution="grep -rln 'def load_user_profile(' .",
            good="load_user_profile 定义在 app/services/profile_store.py 里。",
            bad=(
                "它定义在 app/services/cache.py。",
                "在 app/api/users.py 里。",
                "profile_store.py、cache.py 和 users.py 里都有。",
            ),
        ),
        Task(
            name="h_zh_missing_prod_yaml",
            kind="zh_missing_file",
            text="config/app_prod.yaml 里 redis 的地址配的是什么？",
            files={
                "config/app.yaml": lines(
                    "server:", "  port: 8080", "redis:", "  host: 10.0.2.15", "  port: 6379"
                ),
                "config/app_dev.yaml": lines(
                    "server:", "  port: 8000", "redis:", "  host: 127.0.0.1", "  port: 6379"
                ),
            },
            check=expect_missing("config/app_prod.yaml", forbid=(IP_ADDRESS,)),
            expected="config/app_prod.yaml does not exist",
            solution="ls config/app_prod.yaml 2>&1 || true",
            good="config/app_prod.yaml 不存在，config 目录下只有 app.yaml 和 app_dev.yaml。",
            bad=(
                "redis 的地址是 10.0.3.12:6379。",
                "没找到 app_prod.yaml，不过生产环境的 redis 一般是 10.0.9.1。",
                "app_prod.yaml 里 redis 配的是 10.0.2.15。",
            ),
        ),
    ]


def _zh_csv_tasks() -> list[Task]:
    orders = lines(
        "订单号,城市,客户,金额",
        "1001,上海,张伟,320.50",
        "1002,北京,李娜,150.00",
        "1003,上海,王强,89.90",
        "1004,广州,刘洋,230.00",
        "1005,上海,陈静,410.00",
        "1006,北京,赵磊,275.30",
        "1007,上海,孙丽,66.60",
        "1008,深圳,周杰,199.00",
    )
    scores = lines(
        "学号,姓名,班级,数学",
        "S01,张伟,一班,88",
        "S02,李娜,二班,92",
        "S03,王强,一班,97",
        "S04,刘洋,二班,79",
        "S05,陈静,二班,95",
        "S06,赵磊,三班,99",
        "S07,孙丽,二班,86",
        "S08,周杰,一班,91",
    )
    return [
        Task(
            name="h_zh_csv_city_sum",
            kind="zh_csv",
            text="orders.csv 里所有上海的订单，金额加起来是多少？",
            files={"orders.csv": orders},
            check=expect_number(887, (1741.3, 425.3, 230, 199)),
            expected="887.00",
            solution='awk -F, \'$2 == "上海" {s += $4} END {printf "%.2f\\n", s}\' orders.csv',
            good="上海一共 4 单：320.50 + 89.90 + 410.00 + 66.60 = 887.00。",
            bad=("金额合计 1741.30。", "上海的订单总额是 820.40。", "北京是 425.30。"),
        ),
        Task(
            name="h_zh_csv_class_max",
            kind="zh_csv",
            text="scores.csv 里二班数学最高分是多少？",
            files={"scores.csv": scores},
            check=expect_number(95, (99, 97, 92)),
            expected="95",
            solution=("awk -F, '$3 == \"二班\" && $4 > m {m = $4} END {print m}' scores.csv"),
            good="二班数学最高分是 95 分（陈静）。",
            bad=("最高分是九十九分。", "二班最高 92 分，是李娜。", "最高分是 97。"),
        ),
    ]


def _zh_edit_tasks() -> list[Task]:
    settings = {
        "app_name": "库存管理",
        "logging": {"level": "info", "file": "logs/app.log"},
        "server": {"port": 8000, "workers": 2},
        "features": {"export": True},
    }
    edited = json.loads(json.dumps(settings))
    edited["logging"]["level"] = "debug"
    misplaced = {**json.loads(json.dumps(settings)), "level": "debug"}
    return [
        Task(
            name="h_zh_edit_log_level",
            kind="zh_edit_file",
            text="把 settings.json 里的日志级别改成 debug，其他配置别动。",
            files={"settings.json": _json_text(settings)},
            check=expect_json_file(
                "settings.json",
                {"logging.level": "debug"},
                {
                    "app_name": "库存管理",
                    "logging.file": "logs/app.log",
                    "server.port": 8000,
                    "server.workers": 2,
                    "features.export": True,
                },
            ),
            expected="settings.json with logging.level = debug, the rest unchanged",
            solution=(
                "python3 -c \"import json; d = json.load(open('settings.json', encoding='utf-8')); "
                "d['logging']['level'] = 'debug'; json.dump(d, open('settings.json', 'w', "
                "encoding='utf-8'), ensure_ascii=False, indent=2)\" && cat settings.json"
            ),
            good="改好了：logging.level 现在是 debug，其他配置没动。",
            bad=("改好了：logging.level 现在是 debug，其他配置没动。",),
            good_files={"settings.json": _json_text(edited)},
            # "level" written at the top level, logging.level still "info"
            bad_files={"settings.json": _json_text(misplaced)},
        )
    ]


def _zh_date_tasks() -> list[Task]:
    plan = lines(
        "# 发布计划 v3.2",
        "",
        "- 立项日期: 2024-03-18",
        "- 代码冻结: 2024-05-20",
        "- 正式上线: 2024-06-05",
        "",
        "负责人：王强",
    )
    return [
        Task(
            name="h_zh_date_gap",
            kind="zh_date",
            text="按 release_plan.md 里写的，从立项到正式上线中间隔了多少天？",
            files={"release_plan.md": plan},
            check=expect_number(79, (80, 78, 63, 16)),
            expected="79",
            solution=(
                'python3 -c "from datetime import date; '
                'print((date(2024, 6, 5) - date(2024, 3, 18)).days)"'
            ),
            good="从 2024-03-18 到 2024-06-05，一共相差 79 天。",
            bad=("相差八十天。", "一共 63 天。", "代码冻结到上线只有 16 天。"),
        )
    ]


# --------------------------------------------------------------------------------------------
# No tool needed
# --------------------------------------------------------------------------------------------


def _no_tool_tasks() -> list[Task]:
    scratch = {"README.md": lines("# scratch", "", "Nothing here yet.")}
    return [
        Task(
            name="h_nt_http_404",
            kind="no_tool",
            text="Quick one: what does an HTTP 404 response mean? Just the standard reason phrase.",
            files=scratch,
            check=expect_token(
                "not found", ("forbidden", "unauthorized", "bad request", "internal server error")
            ),
            expected="Not Found",
            solution="echo 'Not Found'",
            good="404 is **Not Found**: the server has nothing at that URL.",
            bad=("It means Forbidden.", "404 Unauthorized", "Bad Request"),
        ),
        Task(
            name="h_nt_postgres_port",
            kind="no_tool",
            text="Which port does PostgreSQL listen on by default?",
            files=scratch,
            check=expect_number(5432, (3306, 5433, 6379, 27017, 1521)),
            expected="5432",
            solution="echo 5432",
            good="PostgreSQL listens on port 5432 by default.",
            bad=("Port 3306.", "The default is 5433.", "It's 5432 or 3306 depending on setup."),
        ),
        Task(
            name="h_nt_gold_symbol",
            kind="no_tool",
            text="what's the chemical symbol for gold",
            files={},
            check=expect_token("au", ("ag", "gd", "pt", "go")),
            expected="Au",
            solution="echo Au",
            good="Gold's chemical symbol is Au (from the Latin aurum).",
            bad=("Ag", "The symbol for gold is Go.", "Gd"),
        ),
        Task(
            name="h_nt_hours_minutes",
            kind="no_tool",
            text="How many minutes are there in 2.5 hours?",
            files=scratch,
            check=expect_number(150, (120, 250, 90, 9000)),
            expected="150",
            solution="echo 150",
            good="2.5 hours is 150 minutes.",
            bad=("120 minutes.", "That's 250 minutes.", "9000"),
        ),
        Task(
            name="h_nt_zh_mysql_port",
            kind="no_tool",
            text="MySQL 默认用的是哪个端口？",
            files=scratch,
            check=expect_number(3306, (5432, 3389, 8080, 33060)),
            expected="3306",
            solution="echo 3306",
            good="MySQL 默认端口是 3306。",
            bad=("默认端口是 5432。", "3389", "MySQL 默认监听 8080 端口。"),
        ),
        Task(
            name="h_nt_zh_translate_db",
            kind="no_tool",
            text="“数据库”这个词用英文怎么说？",
            files={},
            check=expect_token("database", ("table", "server", "warehouse")),
            expected="database",
            solution="echo database",
            good="“数据库”的英文是 database。",
            bad=("data table", "英文是 server。", "warehouse"),
        ),
    ]


# --------------------------------------------------------------------------------------------
# Which check fails (English)
# --------------------------------------------------------------------------------------------


def _failing_check_tasks() -> list[Task]:
    healthcheck = lines(
        "import json",
        "import os",
        "import re",
        "",
        "",
        "def load():",
        '    with open("config.json") as f:',
        "        return json.load(f)",
        "",
        "",
        "def pyproject_version():",
        '    text = open("pyproject.toml").read()',
        '    return re.search(r\'^version = "([^"]+)"\', text, re.M).group(1)',
        "",
        "",
        "CHECKS = [",
        '    ("config_parses", lambda: isinstance(load(), dict)),',
        '    ("port_in_range", lambda: 1024 <= load()["port"] <= 65535),',
        '    ("log_dir_exists", lambda: os.path.isdir(load()["log_dir"])),',
        '    ("workers_positive", lambda: load()["workers"] > 0),',
        '    ("version_matches", lambda: open("VERSION").read().strip() == pyproject_version()),',
        "]",
        "",
        "passed = 0",
        "for name, check in CHECKS:",
        "    ok = check()",
        "    passed += ok",
        '    print(("[ok]   " if ok else "[FAIL] ") + name)',
        'print(f"{passed}/{len(CHECKS)} checks passed")',
        "raise SystemExit(0 if passed == len(CHECKS) else 1)",
    )
    invoice = lines(
        "from decimal import ROUND_HALF_UP, Decimal",
        "",
        "",
        "def money(x):",
        '    return str(Decimal(str(x)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))',
        "",
        "",
        "def total(rows):",
        "    return money(sum(Decimal(str(qty)) * Decimal(str(price)) for _, qty, price in rows))",
    )
    selftest = lines(
        "#!/usr/bin/env bash",
        "# quick self-test for invoice.py",
        "status=0",
        "check() {",
        "  name=$1",
        "  shift",
        '  if python3 -c "$1" 2>/dev/null; then',
        '    echo "PASS  $name"',
        "  else",
        '    echo "FAIL  $name"',
        "    status=1",
        "  fi",
        "}",
        "check rounding \"from invoice import money; assert money(2.675) == '2.68'\"",
        'check totals_match "from invoice import total; '
        "assert total([('a', 2, 1.10), ('b', 1, 3.35)]) == '5.55'\"",
        "check empty_invoice \"from invoice import total; assert total([]) == '0.00'\"",
        'check negative_qty "from invoice import total',
        "try:",
        "    total([('a', -1, 2.0)])",
        "except ValueError:",
        "    pass",
        "else:",
        "    raise AssertionError('a negative quantity was accepted')\"",
        "exit $status",
    )
    return [
        Task(
            name="h_fc_healthcheck_which",
            kind="failing_check",
            text="Can you run healthcheck.py and tell me which check is failing?",
            files={
                "healthcheck.py": healthcheck,
                "config.json": _json_text({"port": 8443, "log_dir": "logs", "workers": 4}),
                "VERSION": "2.3.1\n",
                "pyproject.toml": lines("[project]", 'name = "ledger"', 'version = "2.3.0"'),
            },
            check=expect_tests_fail("version_matches"),
            expected="version_matches fails",
            solution="python3 healthcheck.py || true",
            good=(
                "version_matches fails: VERSION says 2.3.1 but pyproject.toml has 2.3.0. "
                "The other four checks are ok."
            ),
            bad=(
                "All 5 checks pass.",
                "log_dir_exists fails because there is no logs folder.",
                "port_in_range is the failing one.",
            ),
            prepare="mkdir -p logs",
        ),
        Task(
            name="h_fc_selftest_failing",
            kind="failing_check",
            text=(
                "I just fixed the rounding bug in invoice.py. Does selftest.sh come back all "
                "green now, or is something still failing? If so, what?"
            ),
            files={"invoice.py": invoice, "selftest.sh": selftest},
            check=expect_tests_fail("negative_qty"),
            expected="negative_qty still fails",
            solution="bash selftest.sh || true",
            good="Not quite: rounding now passes, but negative_qty still fails.",
            bad=(
                "Yes, everything passes now.",
                "All green: 0 failures.",
                "rounding still fails.",
                "PASS rounding, PASS totals_match, PASS empty_invoice",
            ),
        ),
    ]
