"""Proof requirements (issue 47): what a delivery must carry, set per company, per integration key
and per order, enforced on the server at delivery (a queued offline move too); the bulk pick-up
at the depot; the proof a shop downloads through its key."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import pytest

from appliance.dispatch.models import Order, OrderEvent, User
from appliance.dispatch.orders import codes
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.orders_helpers import ORDER, assigned_order, courier_status


@pytest.fixture
def courier(dispatch_app, company):
    """A courier who reads the API's English (the Problems' own wording)."""
    member = make_member(dispatch_app, company, "courier")
    User.update(language="en").where(User.id == member.user.id).execute()
    return member


@pytest.fixture
def owner(dispatch_app, company):
    return make_member(dispatch_app, company, "owner")


def _upload(client, courier, order_id: str, kind: str = "photo") -> str:
    content_type = "image/png" if kind == "signature" else "image/jpeg"
    upload = client.post(
        f"/courier/orders/{order_id}/proof/upload-url",
        json={"contentType": content_type, "kind": kind},
        headers=courier.headers,
    )
    assert upload.status_code == 200, upload.json
    parts = urlsplit(upload.json["url"])
    put = client.put(f"{parts.path}?{parts.query}", data=b"\x89PNG-ish", content_type=content_type)
    assert put.status_code == 200
    return upload.json["key"]


def _code(dispatch_app, order_id: str) -> str:
    order = Order.get_by_id(int(order_id))
    return codes.decrypt_code(
        dispatch_app.extensions["dispatch"].master_key, order.public_id, order.otp_cipher
    )


def _picked_up(client, dispatcher, courier, **fields) -> dict:
    order = assigned_order(client, dispatcher, courier, **fields)
    assert courier_status(client, courier, order["id"], status="picked_up").status_code == 200
    return order


def _full_proof(client, dispatch_app, courier, order: dict) -> dict:
    """Every kind of proof for ``order`` (its delivery code when it has one)."""
    proof = {
        "photoKey": _upload(client, courier, order["id"]),
        "signatureKey": _upload(client, courier, order["id"], "signature"),
        "scannedCode": order["externalRef"] or order["publicId"],
        "recipientName": "Gayane P",
        "ageChecked": True,
    }
    if order["otpRequired"]:
        proof["otpCode"] = _code(dispatch_app, order["id"])
    return proof


ALL_KINDS = ["photo", "signature", "code", "scan", "name", "age"]


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_each_required_proof_kind_is_refused_when_missing_and_accepted_when_present(
    dispatch_app, dispatch_client, dispatcher, courier, kind
):
    order = _picked_up(dispatch_client, dispatcher, courier, proofRequired=[kind], externalRef=f"SHOP-{kind}")
    assert order["proofRequired"] == [kind]
    assert order["otpRequired"] is (kind == "code")
    proof = _full_proof(dispatch_client, dispatch_app, courier, order)
    field = {
        "photo": "photoKey",
        "signature": "signatureKey",
        "code": "otpCode",
        "scan": "scannedCode",
        "name": "recipientName",
        "age": "ageChecked",
    }[kind]
    without = {k: v for k, v in proof.items() if k != field}
    refused = courier_status(dispatch_client, courier, order["id"], status="delivered", **without)
    assert refused.status_code == 422
    assert refused.json["code"] == "proof_missing"
    assert refused.json["detail"] == f"The delivery needs more proof: {kind}."
    assert refused.json["errors"] == [{"field": field, "message": "required"}]
    assert Order.get_by_id(int(order["id"])).otp_attempts == 0  # a refused move spends no code try
    done = courier_status(dispatch_client, courier, order["id"], status="delivered", **proof)
    assert done.status_code == 200, done.json
    recorded = done.json["order"]["proof"]
    assert recorded["hasSignature"] is True and recorded["ageChecked"] is True
    assert recorded["scannedCode"] == f"SHOP-{kind}"


def test_the_problem_names_every_missing_kind_in_the_couriers_language(dispatch_client, dispatcher, courier):
    order = _picked_up(dispatch_client, dispatcher, courier, proofRequired=["signature", "photo", "age"])
    User.update(language="hy").where(User.id == courier.user.id).execute()
    refused = courier_status(dispatch_client, courier, order["id"], status="delivered")
    assert refused.status_code == 422
    assert (
        refused.json["detail"]
        == "Առաքմանը պակասում է ապացույց՝ լուսանկար, ստացողի ստորագրություն, տարիքի ստուգում։"
    )
    assert [e["field"] for e in refused.json["errors"]] == ["photoKey", "signatureKey", "ageChecked"]


def test_a_scan_of_another_parcel_is_refused_and_the_public_id_is_read_too(
    dispatch_client, dispatcher, courier
):
    order = _picked_up(dispatch_client, dispatcher, courier, proofRequired=["scan"])
    wrong = courier_status(dispatch_client, courier, order["id"], status="delivered", scannedCode="OTHER-1")
    assert wrong.status_code == 422 and wrong.json["errors"][0]["field"] == "scannedCode"
    right = courier_status(
        dispatch_client, courier, order["id"], status="delivered", scannedCode=order["publicId"].lower()
    )
    assert right.status_code == 200, right.json


def test_the_company_setting_applies_to_orders_that_name_none_and_an_order_may_say_otherwise(
    dispatch_client, owner, dispatcher, courier
):
    settings = dispatch_client.patch(
        "/company/order-settings", json={"proofRequired": ["name", "photo"]}, headers=owner.headers
    )
    assert settings.status_code == 200 and settings.json["proofRequired"] == ["photo", "name"]
    assert dispatch_client.get("/company/order-settings", headers=dispatcher.headers).json[
        "proofRequired"
    ] == ["photo", "name"]
    bad = dispatch_client.patch(
        "/company/order-settings", json={"proofRequired": ["selfie"]}, headers=owner.headers
    )
    assert bad.status_code in (400, 422)
    inherits = _picked_up(dispatch_client, dispatcher, courier)
    assert inherits["proofRequired"] is None
    refused = courier_status(dispatch_client, courier, inherits["id"], status="delivered", recipientName="A")
    assert refused.status_code == 422 and refused.json["errors"] == [
        {"field": "photoKey", "message": "required"}
    ]
    free = _picked_up(dispatch_client, dispatcher, courier, proofRequired=[])
    assert courier_status(dispatch_client, courier, free["id"], status="delivered").status_code == 200


def test_a_dispatcher_sets_an_orders_proof_by_patch_and_code_turns_the_delivery_code_on(
    dispatch_app, dispatch_client, dispatcher, courier
):
    from tests.dispatch.orders_helpers import create_order

    order = create_order(dispatch_client, dispatcher)
    patched = dispatch_client.patch(
        f"/orders/{order['id']}", json={"proofRequired": ["code", "signature"]}, headers=dispatcher.headers
    )
    assert patched.status_code == 200, patched.json
    assert patched.json["order"]["proofRequired"] == ["signature", "code"]
    assert patched.json["order"]["otpRequired"] is True
    cleared = dispatch_client.patch(
        f"/orders/{order['id']}", json={"proofRequired": None}, headers=dispatcher.headers
    )
    assert cleared.json["order"]["proofRequired"] is None


def test_an_integration_keys_default_goes_onto_the_orders_it_creates(
    dispatch_client, owner, dispatcher, courier
):
    key = dispatch_client.post(
        "/company/integration-keys",
        json={"name": "Shop", "proofRequired": ["signature"]},
        headers=owner.headers,
    ).json
    assert key["proofRequired"] == ["signature"]
    shop = {"Authorization": f"Bearer {key['key']}"}
    created = dispatch_client.post("/orders", json=ORDER, headers=shop)
    assert created.status_code == 201 and created.json["order"]["proofRequired"] == ["signature"]
    changed = dispatch_client.patch(
        f"/company/integration-keys/{key['id']}", json={"proofRequired": ["age"]}, headers=owner.headers
    )
    assert changed.status_code == 200 and changed.json["proofRequired"] == ["age"]
    later = dispatch_client.post("/orders", json=ORDER, headers=shop).json["order"]
    assert later["proofRequired"] == ["age"]
    named = dispatch_client.post("/orders", json=ORDER | {"proofRequired": []}, headers=shop).json["order"]
    assert named["proofRequired"] == []
    other = make_member(dispatch_client.application, make_company("Other"), "owner")
    assert (
        dispatch_client.patch(
            f"/company/integration-keys/{key['id']}", json={"proofRequired": None}, headers=other.headers
        ).status_code
        == 404
    )


def test_an_offline_queued_delivery_with_a_signature_is_accepted_when_replayed(
    dispatch_client, dispatcher, courier
):
    order = _picked_up(dispatch_client, dispatcher, courier, proofRequired=["signature", "name"])
    # The app queued the move while without signal: the signature waits with it, uploaded first
    # when the signal returns, then the move is sent with its key and the time it was tapped; the
    # answer is lost and the app sends the same move again.
    signature = _upload(dispatch_client, courier, order["id"], "signature")
    move = {
        "status": "delivered",
        "recipientName": "Gayane P",
        "signatureKey": signature,
        "idempotencyKey": "queued-move-0001",
        "occurredAt": "2026-11-28T09:00:00Z",
    }
    first = courier_status(dispatch_client, courier, order["id"], **move)
    assert first.status_code == 200, first.json
    again = courier_status(dispatch_client, courier, order["id"], **move)
    assert again.status_code == 200 and again.json["replayed"] is True
    assert again.json["order"]["proof"]["hasSignature"] is True
    assert Order.get_by_id(int(order["id"])).proof_signature_key == signature
    (event,) = OrderEvent.select().where(
        (OrderEvent.order == int(order["id"])) & (OrderEvent.to_status == "delivered")
    )
    assert json.loads(event.data)["proofKinds"] == ["signature", "name"]  # the history names them


def test_a_photo_key_does_not_pass_for_a_signature_nor_a_signature_as_jpeg(
    dispatch_client, dispatcher, courier
):
    order = _picked_up(dispatch_client, dispatcher, courier, proofRequired=["signature"])
    photo = _upload(dispatch_client, courier, order["id"])
    refused = courier_status(dispatch_client, courier, order["id"], status="delivered", signatureKey=photo)
    assert refused.status_code == 422 and refused.json["errors"][0]["field"] == "signatureKey"
    jpeg = dispatch_client.post(
        f"/courier/orders/{order['id']}/proof/upload-url",
        json={"contentType": "image/jpeg", "kind": "signature"},
        headers=courier.headers,
    )
    assert jpeg.status_code == 415


def test_a_depot_scan_picks_up_every_scanned_order_in_one_request_each_its_own_audited_move(
    dispatch_client, dispatcher, courier
):
    first = assigned_order(dispatch_client, dispatcher, courier, externalRef="SHOP-1")
    second = assigned_order(dispatch_client, dispatcher, courier)
    third = assigned_order(dispatch_client, dispatcher, courier)
    answer = dispatch_client.post(
        "/courier/orders/pick-up",
        json={
            "codes": ["SHOP-1", second["publicId"], "NOT-OURS", "SHOP-1"],
            "orderIds": [third["id"]],
            "idempotencyKey": "depot-scan-1",
        },
        headers=courier.headers,
    )
    assert answer.status_code == 200, answer.json
    assert answer.json["pickedUp"] == 3
    by_order = {r["orderId"]: r for r in answer.json["results"]}
    assert {by_order[o["id"]]["order"]["status"] for o in (first, second, third)} == {"picked_up"}
    assert by_order[None]["status"] == 404 and by_order[None]["code"] == "NOT-OURS"
    for order in (first, second, third):
        moves = OrderEvent.select().where(
            (OrderEvent.order == int(order["id"])) & (OrderEvent.to_status == "picked_up")
        )
        assert moves.count() == 1
    replay = dispatch_client.post(
        "/courier/orders/pick-up",
        json={"orderIds": [first["id"], second["id"], third["id"]], "idempotencyKey": "depot-scan-1"},
        headers=courier.headers,
    )
    # Named by id this time, under the same key: each move is answered as the first time, none twice.
    assert [r["replayed"] for r in replay.json["results"]] == [True, True, True]


def test_another_companys_parcel_scanned_at_the_depot_behaves_as_missing(
    dispatch_app, dispatch_client, courier
):
    other = make_company("Other")
    other_dispatcher = make_member(dispatch_app, other, "dispatcher")
    other_courier = make_member(dispatch_app, other, "courier")
    theirs = assigned_order(dispatch_client, other_dispatcher, other_courier, externalRef="THEIRS-1")
    answer = dispatch_client.post(
        "/courier/orders/pick-up",
        json={"codes": ["THEIRS-1", theirs["publicId"]], "orderIds": [theirs["id"]]},
        headers=courier.headers,
    )
    assert answer.status_code == 200
    assert [r["status"] for r in answer.json["results"]] == [404, 404, 404]
    assert Order.get_by_id(int(theirs["id"])).status == "assigned"
    move = courier_status(dispatch_client, courier, theirs["id"], status="delivered")
    assert move.status_code == 404


def test_a_shop_downloads_the_proof_of_its_own_orders_through_its_key_and_no_other(
    dispatch_app, dispatch_client, owner, dispatcher, courier
):
    shop = dispatch_client.post(
        "/company/integration-keys", json={"name": "Shop"}, headers=owner.headers
    ).json
    rival = dispatch_client.post(
        "/company/integration-keys", json={"name": "Rival"}, headers=owner.headers
    ).json
    shop_headers = {"Authorization": f"Bearer {shop['key']}"}
    rival_headers = {"Authorization": f"Bearer {rival['key']}"}
    created = dispatch_client.post(
        "/orders",
        json=ORDER | {"proofRequired": ["signature", "photo"], "externalRef": "S-77"},
        headers=shop_headers,
    ).json["order"]
    assert dispatch_client.get(f"/orders/{created['id']}/proof", headers=shop_headers).status_code == 404
    dispatch_client.post(
        f"/orders/{created['id']}/status", json={"status": "ready"}, headers=dispatcher.headers
    )
    dispatch_client.post(
        f"/orders/{created['id']}/assign", json={"courierId": courier.courier.id}, headers=dispatcher.headers
    )
    courier_status(dispatch_client, courier, created["id"], status="picked_up")
    signature = _upload(dispatch_client, courier, created["id"], "signature")
    photo = _upload(dispatch_client, courier, created["id"])
    done = courier_status(
        dispatch_client, courier, created["id"], status="delivered", signatureKey=signature, photoKey=photo
    )
    assert done.status_code == 200, done.json
    proof = dispatch_client.get(f"/orders/{created['id']}/proof", headers=shop_headers)
    assert proof.status_code == 200, proof.json
    assert proof.json["required"] == ["photo", "signature"] and proof.json["externalRef"] == "S-77"
    link = urlsplit(proof.json["signature"]["url"])
    assert dispatch_client.get(f"{link.path}?{link.query}").data == b"\x89PNG-ish"
    assert proof.json["photo"]["url"] and proof.json["ageChecked"] is False
    assert (
        dispatch_client.get(f"/orders/{created['id']}/proof", headers=dispatcher.headers).status_code == 200
    )
    assert dispatch_client.get(f"/orders/{created['id']}/proof", headers=rival_headers).status_code == 404
    stranger = make_member(dispatch_app, make_company("Other"), "owner")
    stranger_key = dispatch_client.post(
        "/company/integration-keys", json={"name": "Theirs"}, headers=stranger.headers
    ).json["key"]
    for headers in (stranger.headers, {"Authorization": f"Bearer {stranger_key}"}):
        assert dispatch_client.get(f"/orders/{created['id']}/proof", headers=headers).status_code == 404


def test_the_tracking_page_shows_the_signature_once_delivered(dispatch_client, dispatcher, courier):
    order = _picked_up(dispatch_client, dispatcher, courier, proofRequired=["signature"])
    link = dispatch_client.post(f"/orders/{order['id']}/tracking", json={}, headers=dispatcher.headers)
    assert link.status_code == 201, link.json
    token = link.json["token"]
    signature = _upload(dispatch_client, courier, order["id"], "signature")
    before = dispatch_client.get(f"/track/{token}")
    assert before.json["proof"] is None
    courier_status(dispatch_client, courier, order["id"], status="delivered", signatureKey=signature)
    after = dispatch_client.get(f"/track/{token}").json
    assert after["proof"]["signatureUrl"]


def test_an_import_sets_each_rows_proof_from_its_column_and_a_keys_import_takes_the_keys_default(
    dispatch_client, owner, dispatcher
):
    from types import SimpleNamespace

    from tests.dispatch.import_helpers import csv_bytes, post_csv, row

    data = csv_bytes([row(1, proofRequired="signature; photo"), row(2), row(3, proofRequired="selfie")])
    answer = post_csv(dispatch_client, dispatcher, data)
    assert answer.status_code == 200, answer.json
    assert answer.json["created"] == 2 and [r["row"] for r in answer.json["refused"]] == [4]
    first, second = (Order.get(Order.external_ref == ref) for ref in ("SHOP-1", "SHOP-2"))
    assert first.proof_required == "photo,signature" and second.proof_required is None
    key = dispatch_client.post(
        "/company/integration-keys", json={"name": "Shop", "proofRequired": ["age"]}, headers=owner.headers
    ).json
    shop = SimpleNamespace(headers={"Authorization": f"Bearer {key['key']}"})
    answer = post_csv(dispatch_client, shop, csv_bytes([row(4), row(5, proofRequired="name")]))
    assert answer.status_code == 200 and answer.json["created"] == 2, answer.json
    fourth, fifth = (Order.get(Order.external_ref == ref) for ref in ("SHOP-4", "SHOP-5"))
    assert (fourth.proof_required, fifth.proof_required) == ("age", "name")
    assert fourth.shop_key_id == int(key["id"])


def test_the_companys_code_gives_new_orders_a_code_and_holds_no_older_order_to_one(
    dispatch_app, dispatch_client, owner, dispatcher, courier
):
    older = _picked_up(dispatch_client, dispatcher, courier)
    dispatch_client.patch("/company/order-settings", json={"proofRequired": ["code"]}, headers=owner.headers)
    newer = _picked_up(dispatch_client, dispatcher, courier)
    assert (older["otpRequired"], newer["otpRequired"]) == (False, True)
    refused = courier_status(dispatch_client, courier, newer["id"], status="delivered")
    assert refused.status_code == 422 and refused.json["errors"] == [
        {"field": "otpCode", "message": "required"}
    ]
    done = courier_status(
        dispatch_client, courier, newer["id"], status="delivered", otpCode=_code(dispatch_app, newer["id"])
    )
    assert done.status_code == 200
    assert courier_status(dispatch_client, courier, older["id"], status="delivered").status_code == 200


def test_an_import_under_the_companys_code_gives_each_row_a_code_unless_the_row_says_otherwise(
    dispatch_client, owner, dispatcher
):
    from tests.dispatch.import_helpers import csv_bytes, post_csv, row

    dispatch_client.patch("/company/order-settings", json={"proofRequired": ["code"]}, headers=owner.headers)
    answer = post_csv(dispatch_client, dispatcher, csv_bytes([row(1), row(2, proofRequired="photo")]))
    assert answer.status_code == 200 and answer.json["created"] == 2, answer.json
    first, second = (Order.get(Order.external_ref == ref) for ref in ("SHOP-1", "SHOP-2"))
    assert (first.otp_required, second.otp_required) == (True, False)
