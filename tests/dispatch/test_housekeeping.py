"""Housekeeping a running install needs (issue 17, item 7): retention, forgotten shifts, stale fixes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from appliance.common import clock
from appliance.dispatch.events.store import record_event
from appliance.dispatch.housekeeping import Housekeeping, shift_cutoff
from appliance.dispatch.models import CourierLocation, LinkToken, OutgoingMail, RealtimeEvent, Shift
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.orders_helpers import assigned_order


def _points(client, courier, *moments: datetime) -> None:
    points = [{"lat": 40.18, "lon": 44.51, "capturedAt": clock.iso(m)} for m in moments]
    assert (
        client.post("/courier/location", json={"points": points}, headers=courier.headers).status_code == 202
    )


def test_old_gps_points_and_events_are_pruned_but_each_couriers_latest_fix_stays(
    dispatch_app, settings
) -> None:
    company = make_company("Arev")
    busy, idle = make_member(dispatch_app, company, "courier"), make_member(dispatch_app, company, "courier")
    now = clock.now()

    def fix(courier, days_ago: int) -> None:
        moment = now - timedelta(days=days_ago)
        CourierLocation.create(
            courier=courier.courier.id, lat=40.18, lon=44.51, captured_at=moment, received_at=moment
        )

    fix(busy, 200)
    fix(busy, 120)
    fix(busy, 1)
    fix(idle, 150)  # its only fix, however old, is where it was last seen
    old = RealtimeEvent.create(
        company=company.id, kind="courier.updated", payload="{}", created_at=now - timedelta(days=30)
    )
    record_event(company.id, "courier.updated", {"courierId": str(busy.courier.id)})
    assert Housekeeping(settings).run() == 3
    assert CourierLocation.select().where(CourierLocation.courier == busy.courier.id).count() == 1
    assert CourierLocation.select().where(CourierLocation.courier == idle.courier.id).count() == 1
    assert RealtimeEvent.get_or_none(RealtimeEvent.id == old.id) is None
    assert RealtimeEvent.select().count() == 1


def test_a_recent_realtime_event_cannot_be_deleted_even_by_hand(dispatch_app) -> None:
    import peewee
    import pytest

    record_event(make_company("Arev").id, "courier.updated", {})
    # SQLite's RAISE(ABORT) is an integrity error; PostgreSQL's RAISE EXCEPTION an internal one.
    with pytest.raises((peewee.IntegrityError, peewee.InternalError), match="append-only"):
        RealtimeEvent.delete().execute()


def test_expired_links_go_after_thirty_days(dispatch_app, settings) -> None:
    LinkToken.create(kind="magic", token_hash="a" * 64, expires_at=clock.now() - timedelta(days=31))
    LinkToken.create(kind="magic", token_hash="b" * 64, expires_at=clock.now() - timedelta(days=1))
    Housekeeping(settings).run()
    assert [t.token_hash[0] for t in LinkToken.select()] == ["b"]


def test_mail_sent_or_given_up_goes_after_thirty_days_and_queued_mail_stays(dispatch_app, settings) -> None:
    old = clock.now() - timedelta(days=31)
    for status, created in (("sent", old), ("failed", old), ("queued", old), ("sent", clock.now())):
        OutgoingMail.create(
            to_address=f"{status}@example.am", subject="s", body="b", status=status, created_at=created
        )
    Housekeeping(settings).run()
    left = sorted((m.status, m.created_at > old) for m in OutgoingMail.select())
    assert left == [("queued", False), ("sent", True)]


def test_a_shift_left_open_past_the_end_hour_of_a_later_day_ends_by_itself(dispatch_app, settings) -> None:
    client = dispatch_app.test_client()
    courier = make_member(dispatch_app, make_company("Arev"), "courier")
    clock.freeze(datetime(2026, 11, 20, 8, 0, tzinfo=UTC))  # 12:00 in Yerevan
    assert client.post("/courier/shift/start", headers=courier.headers).status_code == 201
    clock.freeze(datetime(2026, 11, 20, 20, 0, tzinfo=UTC))  # midnight in Yerevan: the same working day
    assert Housekeeping(settings).run() == 0
    clock.freeze(datetime(2026, 11, 21, 0, 30, tzinfo=UTC))  # 04:30 the next morning in Yerevan
    assert Housekeeping(settings).run() == 1
    shift = Shift.get()
    assert shift.open_flag is None and shift.ended_by_id is None
    ended = [e for e in RealtimeEvent.select() if e.kind == "courier.shift_ended"]
    assert '"reason":"auto_end"' in ended[-1].payload.replace(" ", "")


def test_the_cutoff_is_the_latest_end_hour_in_yerevan() -> None:
    assert (
        shift_cutoff(datetime(2026, 11, 21, 0, 30, tzinfo=UTC), 4).isoformat().startswith("2026-11-21T04:00")
    )
    assert (
        shift_cutoff(datetime(2026, 11, 20, 23, 0, tzinfo=UTC), 4).isoformat().startswith("2026-11-20T04:00")
    )


def test_an_eta_does_not_start_from_a_stale_fix_and_says_so(dispatch_app) -> None:
    client = dispatch_app.test_client()
    company = make_company("Arev")
    owner = make_member(dispatch_app, company, "owner")
    courier = make_member(dispatch_app, company, "courier")
    _points(client, courier, clock.now() - timedelta(hours=2))
    assigned_order(client, owner, courier)
    stale = client.get(f"/couriers/{courier.courier.id}/eta", headers=owner.headers).json
    assert stale["origin"]["source"] == "depot" and stale["origin"]["staleFixAt"]
    _points(client, courier, clock.now())
    fresh = client.get(f"/couriers/{courier.courier.id}/eta", headers=owner.headers).json
    assert fresh["origin"]["source"] == "gps" and fresh["origin"].get("staleFixAt") is None


def test_a_lease_another_process_created_at_the_same_moment_is_theirs_without_an_error(
    dispatch_app, settings, monkeypatch
) -> None:
    from appliance.common import lease
    from appliance.common.db import connection
    from appliance.dispatch import housekeeping
    from appliance.dispatch.db import database

    first, second = Housekeeping(settings), Housekeeping(settings)
    with dispatch_app.app_context(), connection(database):
        assert first._due()  # creates the lease row
        # The second looked before the first's row was there (two nodes starting together).
        monkeypatch.setattr(lease, "locked", lambda query: query.where(housekeeping.JobLease.name == ""))
        assert second._due() is False  # before: an IntegrityError, logged as a failed pass
