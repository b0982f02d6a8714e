"""Schema versioning: an explicit `schema_version` table and ordered migrations applied at open.

A fresh database gets the current tables from rows.py and is stamped with the latest version. An
existing database at version v gets migrations v+1 .. latest, each in its own transaction (DDL is
transactional on SQLite and PostgreSQL), the version bumped in the same transaction. A database
newer than this rsi is refused instead of being written with an older schema.

How to add a migration (version N):
1. Change the tables in rows.py (this is what fresh databases get).
2. Append `Migration(N, "what changed", _vN)` to MIGRATIONS, where `_vN(conn)` brings a version N-1
   database to the rows.py of version N, with DDL that works on SQLite and PostgreSQL (e.g.
   `ALTER TABLE attempts ADD COLUMN note VARCHAR NOT NULL DEFAULT ''`, `CREATE INDEX ...`, data
   backfills with UPDATE). SQLite cannot drop or alter constraints in place: copy the table.
3. Add a test to tests/store/test_migrate.py that builds a version N-1 database (with rows) and
   opens it: the version must read N and the rows must survive.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, Engine, Table, inspect, select
from sqlmodel import SQLModel

from rsi.errors import StoreError
from rsi.store import rows
from rsi.store.types import utc_now


@dataclass(frozen=True)
class Migration:
    version: int
    description: str
    apply: Callable[[Connection], None]


def _v1(conn: Connection) -> None:
    """The initial schema. Never applied by upgrade (version 1 is where versioning starts)."""
    SQLModel.metadata.create_all(conn)


def _v2(conn: Connection) -> None:
    """The look ledger (rows.LookRow): a new table and its indexes; no existing row changes."""
    table: Table = rows.LookRow.__table__  # type: ignore[attr-defined]
    table.create(conn, checkfirst=True)


def _v3(conn: Connection) -> None:
    """The response cache's figures per attempt (rsi.models.cache): hits, misses, tokens not spent."""
    for column in ("cache_hits", "cache_misses", "tokens_not_spent"):
        conn.exec_driver_sql(f"ALTER TABLE attempts ADD COLUMN {column} INTEGER NOT NULL DEFAULT 0")


MIGRATIONS: list[Migration] = [
    Migration(1, "initial schema: runs, jobs, configurations, tasks, attempts, attempt_stats", _v1),
    Migration(2, "the look ledger: looks (one row per evaluation that read heldout or test verdicts)", _v2),
    Migration(3, "attempts: the response cache's hits, misses and tokens not spent", _v3),
]


def latest_version(migrations: Sequence[Migration] | None = None) -> int:
    return (migrations if migrations is not None else MIGRATIONS)[-1].version


def read_version(conn: Connection) -> int | None:
    """The stored version, or None for a database without rsi tables."""
    if not inspect(conn).has_table(rows.SchemaVersionRow.__tablename__):
        return None
    value = conn.execute(select(_table().c.version)).scalar()
    return int(value) if value is not None else None


def _table() -> Table:
    return rows.SchemaVersionRow.__table__  # type: ignore[attr-defined,no-any-return]


def _write_version(conn: Connection, version: int) -> None:
    table = _table()
    updated = conn.execute(table.update().values(version=version, updated=utc_now()))
    if updated.rowcount == 0:
        conn.execute(table.insert().values(id=1, version=version, updated=utc_now()))


def migrate(engine: Engine, migrations: Sequence[Migration] | None = None) -> int:
    """Create or upgrade the schema; returns the version the database is at afterwards."""
    chain = list(migrations if migrations is not None else MIGRATIONS)
    versions = [m.version for m in chain]
    if versions != list(range(1, len(chain) + 1)):
        raise StoreError(f"migrations must be numbered 1..N in order, got {versions}")
    latest = versions[-1]
    with engine.connect().execution_options(rsi_write=True) as conn:
        with conn.begin():
            current = read_version(conn)
            if current is None:
                SQLModel.metadata.create_all(conn)
                _write_version(conn, latest)
                return latest
        if current > latest:
            raise StoreError(
                f"the store is at schema version {current}, newer than this rsi knows ({latest})",
                hint="upgrade rsi, or point --db / RSI_DB at another database",
            )
        for migration in chain[current:]:
            with conn.begin():
                # Re-read under the write lock: another process may have migrated meanwhile.
                if (read_version(conn) or 0) >= migration.version:
                    continue
                try:
                    migration.apply(conn)
                except Exception as exc:
                    raise StoreError(
                        f"schema migration {migration.version} ({migration.description}) failed: {exc}",
                        hint="the database was left at the previous version",
                    ) from exc
                _write_version(conn, migration.version)
        return latest
