"""The courier's realtime stream (issue 28): a new assignment reaches the courier's app over
GET /courier/events, with the courier's own order and assignment events only."""

from __future__ import annotations

import json

import pytest

from appliance.dispatch.app import create_app
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.orders_helpers import ready_order


@pytest.fixture
def app(settings):
    return create_app(settings.replace(event_stream_seconds=1))


def _frames(text: str) -> list[dict[str, str]]:
    frames = []
    for block in text.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if line and not line.startswith(":"))
        if "event" in fields:
            frames.append(fields)
    return frames


def test_a_courier_hears_their_own_assignments_and_nothing_of_anyone_else(app) -> None:
    client = app.test_client()
    company = make_company("Arev")
    dispatcher = make_member(app, company, "dispatcher")
    narek, armen = make_member(app, company, "courier"), make_member(app, company, "courier")
    first = ready_order(client, dispatcher)
    # Without a cursor the stream starts after the newest event: history is not replayed.
    assert _frames(client.get("/courier/events", headers=narek.headers).get_data(as_text=True)) == []
    start = client.get("/events/latest-cursor", headers=dispatcher.headers).json["cursor"]
    mine = client.post(
        f"/orders/{first['id']}/assign", json={"courierId": int(narek.courier.id)}, headers=dispatcher.headers
    )
    other = ready_order(client, dispatcher)
    client.post(
        f"/orders/{other['id']}/assign", json={"courierId": int(armen.courier.id)}, headers=dispatcher.headers
    )
    assert mine.status_code == 201
    text = client.get(f"/courier/events?cursor={start}", headers=narek.headers).get_data(as_text=True)
    frames = _frames(text)
    assert [f["event"] for f in frames] == ["assignment.created"]
    assert {json.loads(f["data"])["payload"]["orderId"] for f in frames} == {first["id"]}
    # The events passed over still move the cursor, so a reconnect resumes after them.
    last = max(int(line[4:]) for line in text.splitlines() if line.startswith("id: "))
    latest = client.get("/events/latest-cursor", headers=dispatcher.headers).json["cursor"]
    assert last == latest
    # Dispatchers have their own stream; a courier's is for couriers.
    assert client.get("/courier/events", headers=dispatcher.headers).status_code == 403
