"""The tracking view is kept per link and served again while nothing it shows has changed; every
change (a status move, a new fix, the courier's other stops, the company's branding, a rating, a
revoked or expired link) is seen on the next read, however and wherever it was written."""

from __future__ import annotations

from datetime import timedelta

from appliance.common import clock
from appliance.dispatch.db import database
from appliance.dispatch.models import Company, Courier, Order
from appliance.dispatch.tracking import kept as kept_views
from tests.dispatch.orders_helpers import assigned_order, courier_status


def _link(client, dispatcher, order_id) -> str:
    response = client.post(f"/orders/{order_id}/tracking", headers=dispatcher.headers)
    assert response.status_code == 201
    return response.json["token"]


def _gps(client, courier, lat: float, lon: float, *, ago: timedelta = timedelta(seconds=5)) -> None:
    fix = {"lat": lat, "lon": lon, "capturedAt": clock.iso(clock.now() - ago)}
    response = client.post("/courier/location", json={"points": [fix]}, headers=courier.headers)
    assert response.status_code == 202


def _on_the_way(client, dispatcher, courier) -> tuple[dict, str]:
    order = assigned_order(client, dispatcher, courier)
    assert courier_status(client, courier, order["id"], status="picked_up").status_code == 200
    _gps(client, courier, 40.18231, 44.51678)
    return order, _link(client, dispatcher, order["id"])


def _counting_views(monkeypatch) -> list[str]:
    made: list[str] = []
    real = kept_views.dumps_bytes

    def counted(value):
        made.append("view")
        return real(value)

    monkeypatch.setattr(kept_views, "dumps_bytes", counted)
    return made


def test_a_repeated_read_is_the_kept_view_byte_for_byte(
    dispatch_app, dispatch_client, dispatcher, courier, monkeypatch
) -> None:
    _order, token = _on_the_way(dispatch_client, dispatcher, courier)
    made = _counting_views(monkeypatch)
    first = dispatch_client.get(f"/track/{token}")
    second = dispatch_client.get(f"/track/{token}")
    assert first.status_code == second.status_code == 200
    assert second.data == first.data and second.content_type == "application/json"
    assert len(made) == 1


def test_a_status_move_and_a_new_fix_are_seen_on_the_next_read(dispatch_client, dispatcher, courier) -> None:
    order, token = _on_the_way(dispatch_client, dispatcher, courier)
    before = dispatch_client.get(f"/track/{token}").json
    _gps(dispatch_client, courier, 40.19000, 44.52000, ago=timedelta(seconds=1))
    moved = dispatch_client.get(f"/track/{token}").json
    assert moved["courier"] != before["courier"] and moved["courierUpdatedAt"] != before["courierUpdatedAt"]
    assert courier_status(dispatch_client, courier, order["id"], status="arrived").status_code == 200
    assert dispatch_client.get(f"/track/{token}").json["stage"] == "arrived"


def test_the_couriers_other_stops_change_the_stops_ahead(dispatch_client, dispatcher, courier) -> None:
    order, token = _on_the_way(dispatch_client, dispatcher, courier)
    other = assigned_order(dispatch_client, dispatcher, courier)
    with database.connection_context():
        Order.update(sequence=2).where(Order.id == int(order["id"])).execute()
        Order.update(sequence=1).where(Order.id == int(other["id"])).execute()
    assert dispatch_client.get(f"/track/{token}").json["stopsAhead"] == 1
    with database.connection_context():  # written outside the API: the database's revisions say so
        Order.update(sequence=3).where(Order.id == int(other["id"])).execute()
    assert dispatch_client.get(f"/track/{token}").json["stopsAhead"] == 0


def test_branding_the_couriers_name_and_a_rating_are_seen(
    dispatch_client, dispatcher, courier, company
) -> None:
    order, token = _on_the_way(dispatch_client, dispatcher, courier)
    dispatch_client.get(f"/track/{token}")
    with database.connection_context():
        Company.update(brand_color="#000000").where(Company.id == company.id).execute()
        Courier.update(display_name="Armen Petrosyan").where(Courier.id == courier.courier.id).execute()
    seen = dispatch_client.get(f"/track/{token}").json
    assert (seen["company"]["brandColor"], seen["courierName"]) == ("#000000", "Armen")
    assert courier_status(dispatch_client, courier, order["id"], status="arrived").status_code == 200
    delivered = courier_status(dispatch_client, courier, order["id"], status="delivered", recipientName="Ani")
    assert delivered.status_code == 200
    assert dispatch_client.get(f"/track/{token}").json["rating"] is None
    assert dispatch_client.post(f"/track/{token}/rating", json={"ok": True}).status_code == 201
    assert dispatch_client.get(f"/track/{token}").json["rating"]["ok"] is True


def test_a_revoked_or_expired_link_is_not_served_from_the_kept_views(
    dispatch_client, dispatcher, courier
) -> None:
    order, token = _on_the_way(dispatch_client, dispatcher, courier)
    assert dispatch_client.get(f"/track/{token}").status_code == 200
    newer = _link(dispatch_client, dispatcher, order["id"])  # revokes the first
    assert dispatch_client.get(f"/track/{token}").status_code == 404
    assert dispatch_client.get(f"/track/{newer}").status_code == 200
    clock.advance(timedelta(days=30))
    try:
        assert dispatch_client.get(f"/track/{newer}").status_code == 404
    finally:
        clock.advance(-timedelta(days=30))


def test_a_kept_view_lasts_a_few_seconds_at_most(dispatch_client, dispatcher, courier, monkeypatch) -> None:
    _order, token = _on_the_way(dispatch_client, dispatcher, courier)
    made = _counting_views(monkeypatch)
    dispatch_client.get(f"/track/{token}")
    dispatch_client.get(f"/track/{token}")
    assert len(made) == 1
    almost = timedelta(seconds=kept_views.KEEP_SECONDS - 2)
    clock.advance(almost)  # counted from the view's making, not from a wall-clock boundary
    try:
        dispatch_client.get(f"/track/{token}")
        assert len(made) == 1
        clock.advance(timedelta(seconds=2))
        dispatch_client.get(f"/track/{token}")
    finally:
        clock.advance(-timedelta(seconds=kept_views.KEEP_SECONDS))
    assert len(made) == 2
