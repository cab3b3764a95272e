"""A presigned PUT for a proof photo is bound at the bucket (issue 33): signed for the content type
it was issued for, and for the photo's size when the courier app says it, so the bucket refuses
another type or size. The bucket's check is made by a verifying proxy in front of the test S3
server (tests/dispatch/s3_verifier.py), which moto's server mode does not do itself."""

from __future__ import annotations

from datetime import timedelta

import pytest
import requests
from minio import Minio

from appliance.dispatch.app import create_app
from tests.dispatch.orders_helpers import courier_status
from tests.dispatch.s3_verifier import signature_matches, verifying_proxy
from tests.dispatch.test_s3_objects import JPEG, _delivery, s3  # noqa: F401  (the S3 server fixture)

KEYS = {"access_key": "test", "secret_key": "testsecret", "region": "us-east-1"}


@pytest.fixture
def bucket(s3):  # noqa: F811
    _, endpoint = s3
    with verifying_proxy(endpoint, **KEYS) as url:
        yield url


@pytest.fixture
def app(settings, bucket):
    return create_app(
        settings.replace(
            s3_endpoint=bucket, s3_bucket="proofs", s3_access_key="test", s3_secret_key="testsecret"
        )
    )


def _link(client, courier, order, **extra) -> requests.Response:
    return client.post(
        f"/courier/orders/{order['id']}/proof/upload-url",
        json={"contentType": "image/jpeg", **extra},
        headers=courier.headers,
    )


def _put(url: str, body: bytes, content_type: str) -> int:
    return requests.put(url, data=body, headers={"Content-Type": content_type}, timeout=30).status_code


def test_the_verifier_checks_signatures_as_the_bucket_does(bucket) -> None:
    """A link the MinIO client signs itself (Host only) passes; the same link tampered with fails."""
    client = Minio(bucket.split("//")[1], secure=False, **{k: v for k, v in KEYS.items()})
    url = client.presigned_put_object("proofs", "a/b.jpg", expires=timedelta(minutes=5))
    assert signature_matches("PUT", url, {}, **KEYS)
    assert not signature_matches("PUT", url.replace("a/b.jpg", "a/c.jpg"), {}, **KEYS)
    assert not signature_matches("PUT", url, {}, **{**KEYS, "secret_key": "another"})


def test_a_link_with_the_photos_size_is_refused_by_the_bucket_for_another_type_or_size(app) -> None:
    client, _, courier, order = _delivery(app)
    upload = _link(client, courier, order, contentLength=len(JPEG)).json
    assert "content-length%3Bcontent-type%3Bhost" in upload["url"]
    assert _put(upload["url"], JPEG, "text/html") == 403  # another type
    assert _put(upload["url"], JPEG + b"\0" * 10, "image/jpeg") == 403  # another size
    refused = courier_status(client, courier, order["id"], status="delivered", photoKey=upload["key"])
    assert refused.status_code == 422  # nothing was stored
    assert _put(upload["url"], JPEG, "image/jpeg") == 200  # exactly what it was issued for
    done = courier_status(client, courier, order["id"], status="delivered", photoKey=upload["key"])
    assert done.status_code == 200, done.json


def test_a_link_without_a_size_binds_the_content_type(app) -> None:
    client, _, courier, order = _delivery(app)
    upload = _link(client, courier, order).json
    assert "content-type%3Bhost" in upload["url"]
    assert _put(upload["url"], JPEG, "image/png") == 403
    assert _put(upload["url"], JPEG, "image/jpeg") == 200


def test_a_size_over_the_upload_limit_is_413_and_a_malformed_one_400(app) -> None:
    client, _, courier, order = _delivery(app)
    limit = app.extensions["dispatch"].objects.max_bytes
    too_large = _link(client, courier, order, contentLength=limit + 1)
    assert too_large.status_code == 413 and too_large.mimetype == "application/problem+json"
    assert _link(client, courier, order, contentLength=0).status_code == 400
    assert _link(client, courier, order, contentLength="12").status_code == 400
    assert _link(client, courier, order, contentLength=limit).status_code == 200
