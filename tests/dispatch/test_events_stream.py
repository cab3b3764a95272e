"""Realtime events: cursor, catch-up, company scope, bounded streams, the cap, and a real server."""

from __future__ import annotations

import threading
import time

import pytest
import requests

from appliance.dispatch.app import create_app
from tests.conftest import serving
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.orders_helpers import create_order


@pytest.fixture
def app(settings):
    return create_app(settings.replace(event_stream_seconds=1, event_stream_max=2))


@pytest.fixture
def dispatcher(app):
    return make_member(app, make_company("Arev"), "dispatcher")


def _frames(text: str) -> list[dict[str, str]]:
    frames = []
    for block in text.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if line and not line.startswith(":"))
        if "id" in fields:
            frames.append(fields)
    return frames


def test_the_latest_cursor_lets_a_new_session_skip_history(app, dispatcher) -> None:
    client = app.test_client()
    assert client.get("/events/latest-cursor", headers=dispatcher.headers).json == {"cursor": 0}
    create_order(client, dispatcher)
    cursor = client.get("/events/latest-cursor", headers=dispatcher.headers).json["cursor"]
    assert cursor > 0
    frames = _frames(
        client.get(f"/events?cursor={cursor}", headers=dispatcher.headers).get_data(as_text=True)
    )
    assert frames == []


def test_a_stream_catches_up_from_the_cursor_or_last_event_id_and_ends(app, dispatcher) -> None:
    client = app.test_client()
    orders = [create_order(client, dispatcher) for _ in range(3)]
    response = client.get("/events?cursor=0", headers=dispatcher.headers)
    assert response.mimetype == "text/event-stream"
    frames = _frames(response.get_data(as_text=True))
    assert [f["event"] for f in frames] == ["order.created"] * 3
    ids = [int(f["id"]) for f in frames]
    assert ids == sorted(ids)
    resumed = _frames(
        client.get("/events", headers={**dispatcher.headers, "Last-Event-ID": str(ids[0])}).get_data(
            as_text=True
        )
    )
    assert [int(f["id"]) for f in resumed] == ids[1:]
    assert orders[2]["id"] in resumed[-1]["data"]


def test_a_stream_shows_only_the_callers_company(app, dispatcher) -> None:
    client = app.test_client()
    other = make_member(app, make_company("Other"), "dispatcher")
    create_order(client, other)
    assert _frames(client.get("/events?cursor=0", headers=dispatcher.headers).get_data(as_text=True)) == []


def test_streams_need_a_dispatcher_and_a_valid_cursor(app, dispatcher) -> None:
    client = app.test_client()
    courier = make_member(app, make_company("C"), "courier")
    assert client.get("/events").status_code == 401
    assert client.get("/events", headers=courier.headers).status_code == 403
    assert client.get("/events?cursor=-1", headers=dispatcher.headers).status_code == 400
    assert client.get("/events", headers={**dispatcher.headers, "Last-Event-ID": "x"}).status_code == 400


@pytest.mark.server
def test_new_events_reach_an_open_stream_on_a_real_server_and_the_cap_answers_503(settings) -> None:
    # A stream long enough for the steps below on a busy machine (the listener returns at the event).
    app = create_app(settings.replace(event_stream_seconds=30, event_stream_max=1))
    dispatcher = make_member(app, make_company("Arev"), "dispatcher")
    received: list[float] = []
    with serving(app) as url:
        cursor = requests.get(f"{url}/events/latest-cursor", headers=dispatcher.headers, timeout=5).json()[
            "cursor"
        ]

        opened = threading.Event()

        def listen() -> None:
            with requests.get(
                f"{url}/events?cursor={cursor}", headers=dispatcher.headers, stream=True, timeout=10
            ) as response:
                opened.set()  # the headers arrived: this stream holds the only slot
                for line in response.iter_lines():
                    if line.startswith(b"event: order.created"):
                        received.append(time.monotonic())
                        return

        thread = threading.Thread(target=listen)
        thread.start()
        assert opened.wait(10)
        assert requests.get(f"{url}/events", headers=dispatcher.headers, timeout=5).status_code == 503
        requests.post(
            f"{url}/orders",
            json={
                "recipientName": "A",
                "recipientPhone": "+37400000",
                "addressLabelHy": "B",
                "pin": {"lat": 40.18, "lon": 44.51},
            },
            headers=dispatcher.headers,
            timeout=5,
        )
        thread.join(10)
    assert received, "the event never arrived"
