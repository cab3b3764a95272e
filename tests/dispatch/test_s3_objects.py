"""Proof photos in an S3-compatible bucket: a real S3 server (moto's server mode) on loopback, and
the checks that a proof photo was really issued and uploaded (issue 17 item 5, issue 18 item 3)."""

from __future__ import annotations

import pytest
import requests
from minio import Minio

from appliance.dispatch.app import create_app
from tests.conftest import free_port
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.orders_helpers import assigned_order, courier_status

JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 2048


@pytest.fixture
def s3():
    from moto.server import ThreadedMotoServer

    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    Minio(f"127.0.0.1:{port}", access_key="test", secret_key="testsecret", secure=False).make_bucket("proofs")
    yield server, f"http://127.0.0.1:{port}"
    try:
        server.stop()
    except Exception:
        pass


@pytest.fixture
def s3_app(settings, s3):
    _, endpoint = s3
    return create_app(
        settings.replace(
            s3_endpoint=endpoint, s3_bucket="proofs", s3_access_key="test", s3_secret_key="testsecret"
        )
    )


def _delivery(app):
    client = app.test_client()
    company = make_company("Arev")
    owner = make_member(app, company, "owner")
    courier = make_member(app, company, "courier")
    order = assigned_order(client, owner, courier)
    courier_status(client, courier, order["id"], status="picked_up")
    return client, owner, courier, order


def _upload_url(client, courier, order) -> requests.Response:
    return client.post(
        f"/courier/orders/{order['id']}/proof/upload-url",
        json={"contentType": "image/jpeg"},
        headers=courier.headers,
    )


def test_a_proof_photo_goes_to_the_bucket_and_the_tracking_page_links_to_it(s3_app) -> None:
    client, owner, courier, order = _delivery(s3_app)
    upload = _upload_url(client, courier, order).json
    assert upload["url"].startswith("http://127.0.0.1:") and "/proofs/" in upload["url"]
    assert (
        requests.put(upload["url"], data=JPEG, headers={"Content-Type": "image/jpeg"}, timeout=10).status_code
        == 200
    )
    done = courier_status(client, courier, order["id"], status="delivered", photoKey=upload["key"])
    assert done.status_code == 200, done.json
    token = client.post(f"/orders/{order['id']}/tracking", json={}, headers=owner.headers).json["token"]
    photo = client.get(f"/track/{token}").json["proof"]["photoUrl"]
    assert requests.get(photo, timeout=10).content == JPEG
    health = client.get("/healthz").json["checks"]
    assert health["objects"]["status"] == "pass" and health["objects"]["bucket"] == "proofs"


def test_a_bucket_that_is_down_is_503_and_fails_the_health_check(s3_app, s3) -> None:
    server, _ = s3
    client, _, courier, order = _delivery(s3_app)
    server.stop()
    response = _upload_url(client, courier, order)
    assert response.status_code == 503
    health = client.get("/healthz")
    assert health.status_code == 503 and health.json["checks"]["objects"]["status"] == "fail"


def test_a_photo_key_that_was_issued_but_never_uploaded_is_refused(s3_app) -> None:
    client, _, courier, order = _delivery(s3_app)
    key = _upload_url(client, courier, order).json["key"]
    refused = courier_status(client, courier, order["id"], status="delivered", photoKey=key)
    assert refused.status_code == 422


@pytest.mark.parametrize(
    "key",
    [
        "{company}/proofs/{order}/../../../appliance.key",
        "{company}/proofs/{order}/0123456789abcdef0123456789abcdef.exe",
        "{company}/proofs/{order}/short.jpg",
        "{company}/proofs/9999/0123456789abcdef0123456789abcdef.jpg",
    ],
)
def test_a_photo_key_the_app_did_not_issue_for_the_order_is_refused(dispatch_app, key: str) -> None:
    client, _, courier, order = _delivery(dispatch_app)
    photo_key = key.format(company=courier.membership.company_id, order=order["id"])
    response = courier_status(client, courier, order["id"], status="delivered", photoKey=photo_key)
    assert response.status_code == 422, photo_key


@pytest.mark.parametrize(
    ("body", "content_type"),
    [(JPEG, "text/html"), (JPEG, "image/png"), (JPEG + b"\x00" * 4096, "image/jpeg")],
    ids=["html", "another image type", "larger than the limit"],
)
def test_an_upload_of_another_type_or_larger_than_the_limit_is_never_taken_as_the_photo(
    s3_app, body: bytes, content_type: str
) -> None:
    s3_app.extensions["dispatch"].objects.max_bytes = 4096  # the limit, small for the test
    client, _, courier, order = _delivery(s3_app)
    upload = _upload_url(client, courier, order).json
    requests.put(upload["url"], data=body, headers={"Content-Type": content_type}, timeout=30)
    refused = courier_status(client, courier, order["id"], status="delivered", photoKey=upload["key"])
    assert refused.status_code == 422
