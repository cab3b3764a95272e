"""The embedded object store: signed, short-lived links; never listable."""

from datetime import timedelta
from urllib.parse import urlsplit

from appliance.common import clock


def _path(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.path}?{parts.query}"


def _store(app):
    return app.extensions["dispatch"].objects


def test_an_upload_through_a_presigned_put_can_be_read_back_through_a_signed_get(
    dispatch_app, dispatch_client
) -> None:
    store = _store(dispatch_app)
    upload = store.presign_put("1/logos/abc.png", "image/png")
    put = dispatch_client.put(_path(upload.url), data=b"\x89PNG-bytes", content_type="image/png")
    assert put.status_code == 200
    get = dispatch_client.get(_path(store.presign_get("1/logos/abc.png")))
    assert get.status_code == 200
    assert get.data == b"\x89PNG-bytes"
    assert get.mimetype == "image/png"


def test_an_unsigned_or_tampered_link_is_refused(dispatch_app, dispatch_client) -> None:
    store = _store(dispatch_app)
    upload = store.presign_put("1/logos/a.png", "image/png")
    dispatch_client.put(_path(upload.url), data=b"x", content_type="image/png")
    assert dispatch_client.get("/objects/1/logos/a.png").status_code == 403
    tampered = _path(store.presign_get("1/logos/a.png")).replace("1/logos/a.png", "2/logos/a.png")
    assert dispatch_client.get(tampered).status_code == 403


def test_a_link_stops_working_when_it_expires(dispatch_app, dispatch_client) -> None:
    store = _store(dispatch_app)
    upload = store.presign_put("1/p/x.jpg", "image/jpeg")
    clock.advance(timedelta(seconds=store.lifetime_seconds + 1))
    assert dispatch_client.put(_path(upload.url), data=b"x", content_type="image/jpeg").status_code == 403


def test_an_upload_of_another_content_type_than_signed_is_415(dispatch_app, dispatch_client) -> None:
    upload = _store(dispatch_app).presign_put("1/p/x.jpg", "image/jpeg")
    assert dispatch_client.put(_path(upload.url), data=b"x", content_type="image/png").status_code == 415


def test_an_upload_over_the_size_limit_is_413_and_stores_nothing(dispatch_app, dispatch_client) -> None:
    store = _store(dispatch_app)
    upload = store.presign_put("1/p/big.jpg", "image/jpeg")
    response = dispatch_client.put(
        _path(upload.url), data=b"x" * (store.max_bytes + 1), content_type="image/jpeg"
    )
    assert response.status_code == 413
    assert not store.exists("1/p/big.jpg")


def test_the_store_cannot_be_listed(dispatch_client) -> None:
    assert dispatch_client.get("/objects/").status_code == 404
    assert dispatch_client.get("/objects/1").status_code == 403


def test_a_read_link_cannot_upload_and_an_upload_link_cannot_read(dispatch_app, dispatch_client) -> None:
    store = _store(dispatch_app)
    upload = store.presign_put("1/p/y.jpg", "image/jpeg")
    read = store.presign_get("1/p/y.jpg")
    assert dispatch_client.put(_path(read), data=b"x", content_type="image/jpeg").status_code == 403
    assert dispatch_client.put(_path(upload.url), data=b"x", content_type="image/jpeg").status_code == 200
    assert dispatch_client.get(_path(upload.url)).status_code == 403
    assert dispatch_client.get(_path(read)).status_code == 200


def test_a_link_names_the_operation_key_and_content_type_it_was_signed_for(dispatch_app) -> None:
    store = _store(dispatch_app)
    token = urlsplit(store.presign_put("1/p/z.png", "image/png").url).query.removeprefix("link=")
    assert store.verify("put", "1/p/z.png", token) == "image/png"
    assert store.verify("get", "1/p/z.png", token) is None
    assert store.verify("put", "1/p/other.png", token) is None
    assert store.verify("put", "1/p/z.png", token[:-2] + "xx") is None
    assert store.verify("put", "1/p/z.png", "") is None
