"""Fixtures for the coverage store tests: every backend, each test in a fresh database.

`store_url` is parametrized over SQLite (a file in tmp) and PostgreSQL (RSI_TEST_POSTGRES_URL, set by
.ci/services/30-postgres.sh; each test gets its own schema through search_path). `need()` skips
PostgreSQL locally when the variable is unset and fails in CI.
"""

from __future__ import annotations

import os
import secrets
from urllib.parse import quote

import pytest

from tests.conftest import need

BACKENDS = ["sqlite", "postgres"]


@pytest.fixture(params=BACKENDS)
def store_url(request: pytest.FixtureRequest, tmp_path):
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'runs' / 'rsi.sqlite'}"
        return
    base = os.environ.get("RSI_TEST_POSTGRES_URL")
    need(base is not None, "PostgreSQL (RSI_TEST_POSTGRES_URL; .ci/services/30-postgres.sh)")
    from sqlalchemy import create_engine, text

    schema = f"t_{secrets.token_hex(6)}"
    admin = create_engine(base)
    with admin.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    sep = "&" if "?" in base else "?"
    try:
        yield f"{base}{sep}options={quote(f'-csearch_path={schema}')}"
    finally:
        with admin.begin() as conn:
            conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
        admin.dispose()


@pytest.fixture
def store(store_url):
    from rsi.store import open_store

    opened = open_store(store_url)
    yield opened
    opened.close()
