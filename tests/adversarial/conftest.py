"""The adversarial suite: each test is one attack or first-hour scenario.

Every test here is marked ``adversarial`` so the suite can be run alone
(``pytest -m adversarial``); all of them also run in ``make test``.
"""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/adversarial/" in str(item.fspath):
            item.add_marker(pytest.mark.adversarial)
