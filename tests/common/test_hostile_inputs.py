"""Hand-picked hostile requests (issue 18): each gets a clear 4xx Problem, never a 500 or a hang.

In process for what the apps decide (JSON nesting, invalid UTF-8, huge integers, path traversal in
object keys); through the real waitress server for what it decides before an app runs (a 10 MB
body refused from its Content-Length before it is parsed, oversized headers).
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
import requests

from appliance.serving.listener import Listener
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.orders_helpers import ORDER, create_order
from tests.engine.helpers import Signer, make_operator, payout_request

PROBLEM = "application/problem+json"


def problem(response, status: int) -> dict:
    assert response.status_code == status, response.get_data()[:300]
    assert response.mimetype == PROBLEM
    body = response.json
    assert body["status"] == status and body["type"].startswith("about:blank#")
    return body


@pytest.fixture
def dispatch(dispatch_app):
    company = make_company()
    members = {role: make_member(dispatch_app, company, role) for role in ("owner", "dispatcher", "courier")}
    return dispatch_app.test_client(), members


@pytest.fixture
def signer(engine_app, engine_client) -> Signer:
    operator = make_operator(engine_app)
    return Signer(engine_client, operator["operatorId"], operator["secret"])


@pytest.mark.parametrize(
    "raw",
    [
        b"[" * 100_000 + b"]" * 100_000,
        b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
        # A NUL deep inside: the NUL check reads the JSON before the model does.
        b'{"a":' + b"[" * 5_000 + b'"\\u0000"' + b"]" * 5_000 + b"}",
    ],
    ids=["deep-list", "deep-object", "deep-with-nul"],
)
def test_deeply_nested_json_is_a_400(dispatch, signer, raw) -> None:
    client, members = dispatch
    headers = members["dispatcher"].headers
    problem(client.post("/orders", data=raw, content_type="application/json", headers=headers), 400)
    problem(client.post("/plans/suggest", data=raw, content_type="application/json", headers=headers), 400)
    problem(signer.request("POST", "/v1/payouts", raw, key="key-deep-json-1"), 400)


def test_invalid_utf8_in_a_body_or_query_is_a_400(dispatch, signer) -> None:
    client, members = dispatch
    headers = members["dispatcher"].headers
    body = b'{"recipientName": "\xff\xfe", "pin": {"lat": 40.18, "lon": 44.51}}'
    problem(client.post("/orders", data=body, content_type="application/json", headers=headers), 400)
    problem(client.get("/orders?date=%FF%FE", headers=headers), 400)
    problem(signer.request("POST", "/v1/payouts", b'{"payoutId": "\xff"}', key="key-utf8-0001"), 400)


def test_huge_integers_in_ids_are_404_or_400_never_sent_to_the_database(dispatch) -> None:
    client, members = dispatch
    dispatcher, courier = members["dispatcher"], members["courier"]
    huge = 10**30
    order = create_order(client, dispatcher)
    paths = ("/orders/" + "9" * 40, f"/orders/{2**63}", f"/couriers/{2**64}/eta", "/orders/" + "9" * 5000)
    for path in (*paths, f"/couriers/{'1' * 5000}/earnings", "/orders/" + "0" * 5000 + "9" * 20):
        problem(client.get(path, headers=dispatcher.headers), 404)
    problem(
        client.post(f"/orders/{order['id']}/assign", json={"courierId": huge}, headers=dispatcher.headers),
        404,
    )
    problem(client.post("/plans/suggest", json={"orderIds": [huge]}, headers=dispatcher.headers), 400)
    problem(client.post("/plans/suggest", json={"courierIds": [2**63]}, headers=dispatcher.headers), 400)
    stops = [{"orderId": huge, "sequence": 1}]
    plan = {"routes": [{"courierId": huge, "stops": stops}]}
    problem(client.post("/plans/apply", json=plan, headers=dispatcher.headers), 404)
    problem(client.get("/events?cursor=" + "9" * 40, headers=dispatcher.headers), 400)
    problem(client.get("/courier/history?limit=" + "9" * 40, headers=courier.headers), 400)


@pytest.mark.parametrize("value", ["9" * 40, str(2**63), "\u00b2", "-1"])
def test_a_last_event_id_that_cannot_name_an_event_is_a_400_before_the_stream_starts(dispatch, value) -> None:
    client, members = dispatch
    headers = {**members["dispatcher"].headers, "Last-Event-ID": value}
    problem(client.get("/events", headers=headers), 400)


def test_huge_amounts_are_a_400(dispatch, signer) -> None:
    client, members = dispatch
    headers = members["dispatcher"].headers
    for field in ("amountAmd", "codAmountAmd"):
        body = problem(
            client.post("/orders", json={**ORDER, field: 10**30, "isCod": True}, headers=headers), 400
        )
        assert body["errors"][0]["field"] == field
    problem(client.post("/cash/settlements/1/confirm", json={"receivedAmd": 10**30}, headers=headers), 400)
    forty_digits = payout_request("pyo_hugeamount01", amount="1" + "0" * 39)
    problem(signer.request("POST", "/v1/payouts", forty_digits, key="key-huge-0001"), 400)
    as_number = json.dumps(payout_request("pyo_hugeamount02")).replace('"1000"', "1" + "0" * 400).encode()
    problem(signer.request("POST", "/v1/payouts", as_number, key="key-huge-0002"), 400)


@pytest.mark.parametrize(
    "key",
    [
        "../../appliance.key",
        "/etc/passwd",
        "1/logos/../../../appliance.key",
        "1/logos/%2e%2e/x.png",
        "..\\..\\x",
    ],
)
def test_path_traversal_in_object_keys_is_refused(dispatch, key) -> None:
    client, members = dispatch
    body = problem(client.patch("/company", json={"logoKey": key}, headers=members["owner"].headers), 422)
    assert body["errors"][0]["field"] == "logoKey"


@pytest.mark.parametrize("path", ["/objects/..%2f..%2fappliance.key", "/objects/1/../../appliance.key"])
def test_path_traversal_in_object_links_is_refused(dispatch, path) -> None:
    client, _ = dispatch
    assert client.get(path).status_code in {403, 404}
    assert client.put(path, data=b"x").status_code in {403, 404, 405}


def test_path_traversal_in_engine_ids_is_a_400_or_no_route(signer) -> None:
    problem(signer.request("GET", "/v1/payouts/pyo_..secrets00"), 400)
    problem(signer.request("GET", "/v1/exports/..engine.db/download"), 400)
    # An encoded slash is a slash: the path names no route at all.
    problem(signer.request("GET", "/v1/payouts/pyo_..%2F..%2Fsecrets"), 404)


# --- through the real server -----------------------------------------------------------------


@pytest.fixture
def served(dispatch_app, engine_app) -> Iterator[dict[str, str]]:
    listeners = {
        name: Listener(name, app, "127.0.0.1", 0, threads=4, max_body=max_body)
        for name, app, max_body in (
            ("dispatch", dispatch_app, 15 * 1024 * 1024),
            ("engine", engine_app, 2 * 1024 * 1024),
        )
    }
    for listener in listeners.values():
        listener.start()
    try:
        yield {name: listener.url for name, listener in listeners.items()}
    finally:
        for listener in listeners.values():
            listener.close()


def _raw(url: str, request: bytes) -> bytes:
    """Send ``request`` while reading the answer: a server that refuses early answers and closes
    before the rest is sent, and the reset that follows must not hide the answer."""
    host, port = url.removeprefix("http://").split(":")
    chunks: list[bytes] = []
    with socket.create_connection((host, int(port)), timeout=10) as sock:

        def send() -> None:
            with contextlib.suppress(OSError):
                sock.sendall(request)

        sender = threading.Thread(target=send, daemon=True)
        sender.start()
        with contextlib.suppress(ConnectionResetError):
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        sender.join(10)
    return b"".join(chunks)


@pytest.mark.server
def test_a_10_mb_body_is_a_413_problem_without_being_parsed(served, dispatch) -> None:
    _, members = dispatch
    body = b'{"recipientName": "' + b"a" * (10 * 1024 * 1024) + b'"}'
    for url, path in ((served["dispatch"], "/orders"), (served["engine"], "/v1/payouts")):
        started = time.monotonic()
        response = requests.post(
            url + path,
            data=body,
            headers={**members["dispatcher"].headers, "Content-Type": "application/json"},
            timeout=30,
        )
        assert time.monotonic() - started < 30
        assert response.status_code == 413
        assert response.headers["Content-Type"] == PROBLEM and response.json()["status"] == 413


@pytest.mark.server
@pytest.mark.parametrize("path", ["/orders", "/v1/payouts", "/no-such-route"])
def test_a_chunked_body_over_the_limit_is_a_413_problem_on_both_ports_whatever_the_route(
    served, path
) -> None:
    # 20 MB: over the engine's 2 MB and over dispatch's limit for proof photos (15 MB)
    chunk = b"a" * 65536
    body = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(320)) + b"0\r\n\r\n"
    for url in served.values():
        head = f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        answer = _raw(url, head.encode() + b"Transfer-Encoding: chunked\r\n\r\n" + body)
        status_line, _, rest = answer.partition(b"\r\n")
        assert status_line.split(b" ", 2)[1] == b"413", (url, status_line)
        assert json.loads(rest.partition(b"\r\n\r\n")[2])["status"] == 413


@pytest.mark.server
def test_oversized_headers_are_a_431_problem_and_the_server_goes_on(served) -> None:
    for url in served.values():
        request = b"GET /openapi.json HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 300_000 + b"\r\n\r\n"
        answer = _raw(url, request)
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.split(b" ", 2)[1] == b"431"
        assert b"Content-Type: application/problem+json" in head
        problem_body = json.loads(body)
        assert problem_body["status"] == 431 and problem_body["title"] == "Request Header Fields Too Large"
        assert {"type", "detail", "requestId"} <= set(problem_body)
        assert requests.get(url + "/openapi.json", timeout=10).status_code == 200


@pytest.mark.server
def test_a_malformed_request_line_is_a_400_problem(served) -> None:
    answer = _raw(served["dispatch"], b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n")
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.split(b" ", 2)[1] == b"400" and b"application/problem+json" in head
    assert json.loads(body)["status"] == 400


@pytest.mark.server
def test_a_proof_photo_larger_than_a_json_body_still_uploads_through_the_server(served, dispatch_app) -> None:
    store = dispatch_app.extensions["dispatch"].objects
    upload = store.presign_put("1/p/photo.jpg", "image/jpeg")
    parts = urlsplit(upload.url)
    photo = b"\xff\xd8" + b"x" * (5 * 1024 * 1024)
    response = requests.put(
        f"{served['dispatch']}{parts.path}?{parts.query}",
        data=photo,
        headers={"Content-Type": "image/jpeg"},
        timeout=30,
    )
    assert response.status_code == 200
    assert store.exists("1/p/photo.jpg")
