"""How a background step's failure is logged (common/faults.py, ``log_failure``): two writers
meeting on a unique key is a race, retried and logged as a warning; any other broken constraint is
a defect, logged as an error with its traceback."""

from __future__ import annotations

import logging

import peewee
import pytest

from appliance.common.faults import log_failure

database = peewee.SqliteDatabase(":memory:")


class Row(peewee.Model):
    key = peewee.CharField(unique=True)
    note = peewee.CharField()

    class Meta:
        database = database


@pytest.fixture
def table():
    database.connect(reuse_if_open=True)
    database.create_tables([Row])
    Row.create(key="taken", note="first")
    yield
    database.drop_tables([Row])
    database.close()


def _failure(work) -> BaseException:
    with pytest.raises(peewee.IntegrityError) as raised:
        work()
    return raised.value


def test_a_unique_key_taken_first_is_logged_as_a_race_without_a_traceback(table, caplog) -> None:
    failure = _failure(lambda: Row.create(key="taken", note="second"))
    log = logging.getLogger("test.background")
    with caplog.at_level(logging.WARNING):
        log_failure(log, failure, "the sweep")
    [record] = caplog.records
    assert record.levelno == logging.WARNING and "lost a race" in record.getMessage()
    assert record.exc_info is None


def test_a_missing_value_is_logged_as_a_defect_with_its_traceback(table, caplog) -> None:
    failure = _failure(lambda: Row.insert(key="new", note=None).execute())
    log = logging.getLogger("test.background")
    with caplog.at_level(logging.WARNING):
        log_failure(log, failure, "the sweep")
    [record] = caplog.records
    assert record.levelno == logging.ERROR and record.getMessage() == "the sweep failed"
    assert record.exc_info is not None
