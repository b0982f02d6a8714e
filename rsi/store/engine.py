"""Engines for the coverage store: SQLite tuned for one writer and concurrent readers, or any URL.

SQLite (the default, `runs/rsi.sqlite`) runs in WAL mode with synchronous=NORMAL (a commit survives
a process kill; only an OS crash can lose the last commits) and a busy timeout, so `rsi status`
can read while `rsi run` writes. pysqlite's implicit transaction handling is replaced by explicit
BEGIN so that DDL in migrations is atomic and write batches take the lock up front.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url

from rsi.errors import StoreError, UserInputError

SQLITE_BUSY_TIMEOUT_MS = 30_000


def _sqlite_folder(database: Path) -> None:
    """Create the SQLite file's own folder (a workspace's runs/), never a chain of missing folders:
    a typo in RSI_DB or --db must not leave directories behind."""
    folder = database.parent
    try:
        folder.mkdir(exist_ok=True)
    except FileNotFoundError:
        raise UserInputError(
            f"database {database}: the folder {folder.parent} does not exist",
            hint="create it, or point RSI_DB / --db at an existing folder (e.g. sqlite:///runs/rsi.sqlite)",
        ) from None
    except OSError as error:
        raise UserInputError(f"database {database}: cannot create its folder {folder}: {error.strerror}") from None
    if not folder.is_dir():
        raise UserInputError(f"database {database}: {folder} is not a folder")


def make_engine(url: str) -> Engine:
    """An engine for `url` (any SQLAlchemy URL). A SQLite file gets its own folder created (one level)."""
    try:
        parsed = make_url(url)
    except Exception as exc:
        raise StoreError(f"invalid database URL {url!r}: {exc}", hint="use e.g. sqlite:///runs/rsi.sqlite") from exc
    if parsed.get_backend_name() == "sqlite":
        return _sqlite_engine(url, parsed.database)
    try:
        return create_engine(url, pool_pre_ping=True)
    except Exception as exc:  # missing driver, bad dialect
        raise StoreError(f"cannot open database {parsed.render_as_string(hide_password=True)}: {exc}") from exc


def _sqlite_engine(url: str, database: str | None) -> Engine:
    if database and database != ":memory:" and not database.startswith("file:"):
        _sqlite_folder(Path(database).expanduser())
    engine = create_engine(url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # we emit BEGIN ourselves (see the module docstring)
        cursor = dbapi_conn.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        # Writers take the write lock at BEGIN: no deadlock upgrading a read lock mid-transaction.
        immediate = conn.get_execution_options().get("rsi_write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

    return engine
