"""The leased queue both services' workers use (appliance.common.jobs), on the mail table."""

from __future__ import annotations

from datetime import timedelta

from appliance.common import clock
from appliance.common.jobs import LeasedQueue, backoff
from appliance.dispatch.db import database
from appliance.dispatch.models import OutgoingMail


def _queue() -> LeasedQueue:
    return LeasedQueue(
        OutgoingMail,
        database,
        pending=lambda: OutgoingMail.status == "queued",
        lease=timedelta(minutes=1),
        error_field="last_error",
    )


def _mail(n: int) -> int:
    return OutgoingMail.create(to_address=f"m{n}@example.am", subject="s", body="b").id


def test_a_claimed_row_is_not_claimed_again_until_its_lease_expires(dispatch_app) -> None:
    with dispatch_app.app_context():
        ids = [_mail(n) for n in range(3)]
        queue = _queue()
        assert queue.claim(2) == ids[:2]
        assert queue.claim(10) == ids[2:]
        assert queue.claim(10) == [] and not queue.claim_one(ids[0])
        clock.advance(timedelta(minutes=2))  # a worker that died keeps nothing
        assert queue.claim(10) == ids


def test_a_failed_attempt_is_counted_recorded_and_backed_off(dispatch_app) -> None:
    with dispatch_app.app_context():
        row_id = _mail(1)
        queue = _queue()
        assert queue.claim_one(row_id)
        delay = queue.retry_later(row_id, "SMTPServerDisconnected: gone")
        row = OutgoingMail.get_by_id(row_id)
        assert (row.attempts, row.last_error, row.lease_until) == (1, "SMTPServerDisconnected: gone", None)
        assert queue.claim(10) == []  # not due before the back-off
        clock.advance(delay + timedelta(seconds=1))
        assert queue.claim(10) == [row_id]
        queue.release(row_id, after=timedelta(seconds=30))  # a wait, not a failure: attempts unchanged
        assert OutgoingMail.get_by_id(row_id).attempts == 1


def test_rows_are_claimed_never_attempted_first_then_by_due_time_on_either_database(dispatch_app) -> None:
    with dispatch_app.app_context():
        queue = _queue()
        retried, released, new = _mail(1), _mail(2), _mail(3)
        assert queue.claim(2) == [retried, released]
        queue.retry_later(retried, "timeout")
        clock.advance(timedelta(hours=1))  # the retry is long due
        queue.release(released)  # given back, due now: after the retry due before it
        assert OutgoingMail.get_by_id(released).next_attempt_at is not None
        assert queue.claim(1) == [new]  # never attempted (PostgreSQL put it last before)
        assert queue.claim(1) == [retried]
        assert queue.claim(1) == [released]


def test_backoff_doubles_with_jitter_and_stops_at_its_cap() -> None:
    for attempts in range(1, 12):
        seconds = backoff(attempts, base=2, cap=600).total_seconds()
        expected = min(600, 2 * 2**attempts)
        assert 0.75 * expected <= seconds <= 1.25 * expected
