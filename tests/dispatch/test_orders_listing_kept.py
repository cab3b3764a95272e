"""The orders listing keeps its answer while nothing it was made of changed: every change to an
order, an order entering the day, or a courier renamed is seen on the next read, however it was
written; the database raises an order's revision on every UPDATE, on SQLite and PostgreSQL."""

from __future__ import annotations

import gzip

import pytest

from appliance.common import clock
from appliance.common import migrate as migrations
from appliance.common.db import make_database
from appliance.dispatch.db import database
from appliance.dispatch.models import Order
from appliance.dispatch.orders import listing
from tests.conftest import empty_postgres
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.orders_helpers import assigned_order, courier_status, create_order


def _day() -> str:
    return clock.now().astimezone(clock.YEREVAN).date().isoformat()


def _orders(client, member) -> list[dict]:
    response = client.get(f"/orders?date={_day()}&limit=2000", headers=member.headers)
    assert response.status_code == 200
    return response.json["orders"]


def test_a_repeated_read_is_the_kept_answer_byte_for_byte(
    dispatch_app, dispatch_client, company, dispatcher
) -> None:
    create_order(dispatch_client, dispatcher)
    url = f"/orders?date={_day()}"
    first = dispatch_client.get(url, headers=dispatcher.headers).data
    assert dispatch_client.get(url, headers=dispatcher.headers).data == first
    kept = dispatch_app.extensions["dispatch"].listings
    assert (company.id, _day(), listing.DEFAULT_LIMIT_WITH_DATE, None) in kept  # no needsPin filter


def test_a_status_move_and_an_edit_are_seen_on_the_next_read(dispatch_client, dispatcher) -> None:
    order = create_order(dispatch_client, dispatcher)
    assert _orders(dispatch_client, dispatcher)[0]["status"] == "draft"
    dispatch_client.post(
        f"/orders/{order['id']}/status", json={"status": "ready"}, headers=dispatcher.headers
    )
    assert _orders(dispatch_client, dispatcher)[0]["status"] == "ready"
    dispatch_client.patch(f"/orders/{order['id']}", json={"recipientName": "Ani"}, headers=dispatcher.headers)
    assert _orders(dispatch_client, dispatcher)[0]["recipientName"] == "Ani"


def test_a_new_order_and_a_write_outside_the_api_are_seen(dispatch_client, dispatcher) -> None:
    first = create_order(dispatch_client, dispatcher)
    assert len(_orders(dispatch_client, dispatcher)) == 1
    second = create_order(dispatch_client, dispatcher)
    assert [o["id"] for o in _orders(dispatch_client, dispatcher)] == [second["id"], first["id"]]
    with database.connection_context():
        Order.update(recipient_name="Written elsewhere").where(Order.id == int(first["id"])).execute()
    assert _orders(dispatch_client, dispatcher)[1]["recipientName"] == "Written elsewhere"


def test_a_renamed_courier_is_seen_in_the_last_attempt(dispatch_client, dispatcher, courier) -> None:
    order = assigned_order(dispatch_client, dispatcher, courier)
    for status in ("picked_up", "arrived"):
        assert courier_status(dispatch_client, courier, order["id"], status=status).status_code == 200
    failed = courier_status(dispatch_client, courier, order["id"], status="failed", failureReason="refused")
    assert failed.status_code == 200
    before = _orders(dispatch_client, dispatcher)[0]["lastAttempt"]["courierName"]
    response = dispatch_client.patch(
        f"/couriers/{courier.courier.id}", json={"displayName": "Renamed Courier"}, headers=dispatcher.headers
    )
    assert response.status_code == 200
    after = _orders(dispatch_client, dispatcher)[0]["lastAttempt"]["courierName"]
    assert (before, after) == (courier.courier.display_name, "Renamed Courier")


def test_another_company_never_gets_a_kept_answer(dispatch_app, dispatch_client, dispatcher) -> None:
    create_order(dispatch_client, dispatcher)
    other = make_member(dispatch_app, make_company("Other"), "dispatcher")
    _orders(dispatch_client, dispatcher)
    assert _orders(dispatch_client, other) == []


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def migrated(request, tmp_path):
    db = (
        empty_postgres()
        if request.param == "postgres"
        else make_database(f"sqlite:///{tmp_path / 'dispatch.db'}")
    )
    migrations.apply(db, "migrations.dispatch")
    database.initialize(db)  # the models' proxy (the next app re-binds it)
    with db.connection_context():
        yield db
    db.close_all()


def test_the_database_raises_the_revision_on_every_update_whatever_the_writer_sends(migrated) -> None:
    company = make_company("Revisions")
    order = Order.create(
        company=company,
        public_id="ORD-REV-1",
        status="draft",
        recipient_name="R",
        recipient_phone="+37400000000",
        address_hy="A",
        lat=40.1,
        lon=44.5,
        updated_at=clock.now(),
    )
    revisions = []
    for name in ("x", "y"):
        order.recipient_name = name
        order.revision = 0  # a writer's stale copy: the database raises it all the same
        order.save()
        revisions.append(Order.get_by_id(order.id).revision)
    Order.update(recipient_name="z").where(Order.id == order.id).execute()
    revisions.append(Order.get_by_id(order.id).revision)
    assert revisions == [1, 2, 3]


def test_a_large_kept_listing_is_sent_gzip_compressed_to_a_client_that_takes_gzip(
    dispatch_client, dispatcher
) -> None:
    for _ in range(70):  # about 40 KB of JSON, above the size worth compressing
        create_order(dispatch_client, dispatcher)
    url = f"/orders?date={_day()}&limit=100"
    plain = dispatch_client.get(url, headers=dispatcher.headers)
    assert len(plain.data) >= 32 * 1024 and "Content-Encoding" not in plain.headers
    assert "Accept-Encoding" in plain.headers["Vary"]
    zipped = dispatch_client.get(url, headers={**dispatcher.headers, "Accept-Encoding": "gzip, deflate, br"})
    assert zipped.headers["Content-Encoding"] == "gzip" and zipped.content_type == "application/json"
    assert gzip.decompress(zipped.data) == plain.data and len(zipped.data) < len(plain.data) // 4
    refused = dispatch_client.get(url, headers={**dispatcher.headers, "Accept-Encoding": "gzip;q=0"})
    assert "Content-Encoding" not in refused.headers and refused.data == plain.data


def test_a_small_listing_is_never_compressed(dispatch_client, dispatcher) -> None:
    create_order(dispatch_client, dispatcher)
    response = dispatch_client.get(
        f"/orders?date={_day()}", headers={**dispatcher.headers, "Accept-Encoding": "gzip"}
    )
    assert "Content-Encoding" not in response.headers and response.json["orders"]
