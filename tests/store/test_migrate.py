"""Schema versions: fresh databases are stamped, older ones upgraded in order, newer ones refused."""

from __future__ import annotations

import pytest
from sqlalchemy import inspect, text

from rsi.errors import StoreError
from rsi.store import ConfigInfo, TaskInfo, open_store
from rsi.store import migrate as mig
from rsi.store.engine import make_engine


def v2_add_attempt_note(conn) -> None:
    """An example next migration: a column with a backfill, and an index."""
    conn.execute(text("ALTER TABLE attempts ADD COLUMN note VARCHAR NOT NULL DEFAULT ''"))
    conn.execute(text("UPDATE attempts SET note = 'from v1'"))
    conn.execute(text("CREATE INDEX ix_attempts_note ON attempts (note)"))


def v3_broken(conn) -> None:
    conn.execute(text("ALTER TABLE runs ADD COLUMN half_done INTEGER"))
    raise RuntimeError("boom")


def seed_latest(url: str) -> str:
    """A database at this rsi's latest version holding one run with one attempt."""
    from rsi.store import AttemptRecord
    from rsi.verdict import Verdict

    store = open_store(url)
    store.record_configurations([ConfigInfo("c1", "alpha")])
    store.record_tasks([TaskInfo("s", "t1")])
    run = store.create_run(portfolio="p", suite="s")
    store.start_job(run.id, "c1", ["s/t1"])
    store.record_attempt(run.id, 0, AttemptRecord(task_key="s/t1", verdict=Verdict.PASSED))
    store.close()
    return run.id


def downgrade_to_v1(url: str) -> None:
    """Make a latest-version database what version 1 was: drop what later migrations added."""
    from rsi.store.rows import LookRow

    engine = make_engine(url)
    with engine.begin() as conn:
        LookRow.__table__.drop(conn)  # migration 2
        for column in ("cache_hits", "cache_misses", "tokens_not_spent"):  # migration 3
            conn.execute(text(f"ALTER TABLE attempts DROP COLUMN {column}"))
        conn.execute(text("UPDATE schema_version SET version = 1"))
    engine.dispose()


def version_of(url: str) -> int | None:
    engine = make_engine(url)
    with engine.connect() as conn:
        version = mig.read_version(conn)
    engine.dispose()
    return version


def test_fresh_database_is_stamped_with_the_latest_version(store_url):
    open_store(store_url).close()
    assert version_of(store_url) == mig.latest_version() == mig.MIGRATIONS[-1].version
    open_store(store_url).close()  # opening again changes nothing
    assert version_of(store_url) == mig.latest_version()


def test_a_database_is_upgraded_when_a_migration_is_added(store_url, monkeypatch):
    run_id = seed_latest(store_url)
    latest = mig.latest_version()
    assert version_of(store_url) == latest
    monkeypatch.setattr(mig, "MIGRATIONS", [*mig.MIGRATIONS, mig.Migration(latest + 1, "attempt notes", v2_add_attempt_note)])
    store = open_store(store_url)  # open applies the pending migration
    assert version_of(store_url) == latest + 1
    with store.engine.connect() as conn:
        assert conn.execute(text("SELECT note FROM attempts")).scalars().all() == ["from v1"]
        names = {ix["name"] for ix in inspect(conn).get_indexes("attempts")}
    assert "ix_attempts_note" in names
    assert store.covered_tasks("s") == {"s/t1"} and store.get_run(run_id).suite == "s"
    store.close()
    open_store(store_url).close()  # already there: the migration is not applied twice
    assert version_of(store_url) == latest + 1


def test_a_v1_database_gains_the_cache_figures_and_keeps_its_rows(store_url):
    run_id = seed_latest(store_url)
    downgrade_to_v1(store_url)
    assert version_of(store_url) == 1
    store = open_store(store_url)
    assert version_of(store_url) == mig.latest_version()
    [row] = store.list_attempts(run_id)
    assert (row.task_key, row.cache_hits, row.cache_misses, row.tokens_not_spent) == ("s/t1", 0, 0, 0)
    store.close()


def test_a_v1_database_gains_the_look_ledger_and_keeps_its_rows(store_url):
    from rsi.store.looks import Look, count_looks, record_look

    run_id = seed_latest(store_url)
    downgrade_to_v1(store_url)
    assert version_of(store_url) == 1
    store = open_store(store_url)  # migration 2: the looks table
    assert version_of(store_url) == mig.latest_version() >= 2
    with store.engine.connect() as conn:
        assert inspect(conn).has_table("looks")
        assert "ix_looks_suite_split" in {ix["name"] for ix in inspect(conn).get_indexes("looks")}
    assert store.covered_tasks("s") == {"s/t1"} and store.get_run(run_id).suite == "s"
    record_look(store, Look(eval_id=run_id, suite="s", split="heldout", candidate_hash="h1", tasks=3))
    assert count_looks(store, "s", "heldout") == 1
    store.close()


def test_a_failing_migration_rolls_back_and_keeps_the_old_version(store_url, monkeypatch):
    seed_latest(store_url)
    n = mig.latest_version()
    chain = [*mig.MIGRATIONS, mig.Migration(n + 1, "attempt notes", v2_add_attempt_note), mig.Migration(n + 2, "broken", v3_broken)]
    monkeypatch.setattr(mig, "MIGRATIONS", chain)
    with pytest.raises(StoreError, match=f"migration {n + 2} .*boom"):
        open_store(store_url)
    assert version_of(store_url) == n + 1  # n + 1 committed on its own; n + 2 left nothing behind
    engine = make_engine(store_url)
    with engine.connect() as conn:
        assert "half_done" not in {c["name"] for c in inspect(conn).get_columns("runs")}
    engine.dispose()


def test_a_newer_database_is_refused(store_url, monkeypatch):
    seed_latest(store_url)
    shipped = list(mig.MIGRATIONS)
    monkeypatch.setattr(mig, "MIGRATIONS", [*shipped, mig.Migration(len(shipped) + 1, "attempt notes", v2_add_attempt_note)])
    open_store(store_url).close()
    monkeypatch.setattr(mig, "MIGRATIONS", shipped)
    with pytest.raises(StoreError, match="newer than this rsi"):
        open_store(store_url)


def test_migrations_must_be_numbered_in_order(store_url):
    engine = make_engine(store_url)
    with pytest.raises(StoreError, match="numbered"):
        mig.migrate(engine, [mig.MIGRATIONS[0], mig.Migration(3, "gap", v2_add_attempt_note)])
    engine.dispose()
