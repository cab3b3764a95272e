"""The database layer on both backends: transactions, row locks, UTC times, append-only tables."""

import threading
from datetime import UTC, datetime
from pathlib import Path

import peewee
import pytest

from appliance.common.db import UTCDateTimeField, locked, make_database, write_transaction
from migrations.support import forbid_changes
from tests.conftest import empty_postgres

BACKENDS = [pytest.param("sqlite"), pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture
def database(request: pytest.FixtureRequest, tmp_path: Path):
    db = make_database(f"sqlite:///{tmp_path / 'b.db'}") if request.param == "sqlite" else empty_postgres()
    proxy = peewee.DatabaseProxy()
    proxy.initialize(db)

    class Counter(peewee.Model):
        value = peewee.IntegerField(default=0)
        at = UTCDateTimeField(null=True)

        class Meta:
            database = proxy

    class Journal(peewee.Model):
        text = peewee.CharField()

        class Meta:
            database = proxy

    with db.connection_context():
        db.create_tables([Counter, Journal])
        forbid_changes(db, "journal")
    yield proxy, Counter, Journal
    if not db.is_closed():
        db.close()


@pytest.mark.parametrize("database", BACKENDS, indirect=True)
def test_concurrent_read_then_write_transactions_lose_no_update(database) -> None:
    proxy, counter_model, _ = database
    with proxy.connection_context():
        row = counter_model.create(value=0)

    def bump() -> None:
        for _ in range(20):
            with proxy.connection_context(), write_transaction(proxy):
                current = locked(counter_model.select().where(counter_model.id == row.id)).get()
                counter_model.update(value=current.value + 1).where(counter_model.id == row.id).execute()

    threads = [threading.Thread(target=bump) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with proxy.connection_context():
        assert counter_model.get_by_id(row.id).value == 80


@pytest.mark.parametrize("database", BACKENDS, indirect=True)
def test_times_come_back_as_the_same_aware_utc_instant(database) -> None:
    proxy, counter_model, _ = database
    moment = datetime(2026, 11, 22, 20, 59, 59, 123456, tzinfo=UTC)
    with proxy.connection_context():
        row = counter_model.create(at=moment)
        assert counter_model.get_by_id(row.id).at == moment


@pytest.mark.parametrize("database", BACKENDS, indirect=True)
def test_an_append_only_table_refuses_update_and_delete(database) -> None:
    proxy, _, journal_model = database
    with proxy.connection_context():
        entry = journal_model.create(text="first")
        with pytest.raises(peewee.DatabaseError), proxy.atomic():
            journal_model.update(text="changed").where(journal_model.id == entry.id).execute()
        with pytest.raises(peewee.DatabaseError), proxy.atomic():
            journal_model.delete().where(journal_model.id == entry.id).execute()
        assert journal_model.get_by_id(entry.id).text == "first"
