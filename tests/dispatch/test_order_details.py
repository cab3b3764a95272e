"""The order fields a courier needs (issue 27, item 1): externalRef (unique per company when
given), addressDetails (entrance, floor, apartment, intercom) and noteToCourier; in create, edit,
detail, listing and the courier's app, never on the recipient's tracking page."""

from __future__ import annotations

import json

import pytest

from appliance.dispatch.orders.schemas import OrderEnvelope, OrderList
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.orders_helpers import ORDER, assigned_order, courier_status, create_order

DETAILS = {"entrance": "2", "floor": "5", "apartment": "17", "intercom": "17K"}
NOTE = "Call before coming up; the dog is friendly"


def test_a_new_order_keeps_its_external_ref_door_details_and_note(dispatch_client, dispatcher) -> None:
    order = create_order(
        dispatch_client, dispatcher, externalRef=" SHOP-1001 ", addressDetails=DETAILS, noteToCourier=NOTE
    )
    assert order["externalRef"] == "SHOP-1001"
    assert order["addressDetails"] == DETAILS and order["noteToCourier"] == NOTE
    detail = dispatch_client.get(f"/orders/{order['id']}", headers=dispatcher.headers)
    body = OrderEnvelope.model_validate(detail.json).order
    assert body.externalRef == "SHOP-1001" and body.addressDetails and body.addressDetails.floor == "5"
    listed = OrderList.model_validate(dispatch_client.get("/orders", headers=dispatcher.headers).json)
    assert listed.orders[0].noteToCourier == NOTE and listed.orders[0].addressDetails == body.addressDetails


def test_an_order_without_the_new_fields_reads_them_as_null(dispatch_client, dispatcher) -> None:
    order = create_order(dispatch_client, dispatcher)
    assert order["externalRef"] is None and order["addressDetails"] is None and order["noteToCourier"] is None


def test_only_the_door_parts_given_are_set(dispatch_client, dispatcher) -> None:
    order = create_order(dispatch_client, dispatcher, addressDetails={"floor": "3"})
    assert order["addressDetails"] == {"entrance": None, "floor": "3", "apartment": None, "intercom": None}


def test_a_second_order_with_the_same_external_ref_is_409_and_nothing_is_created(
    dispatch_client, dispatcher
) -> None:
    create_order(dispatch_client, dispatcher, externalRef="SHOP-7")
    again = dispatch_client.post(
        "/orders", json=ORDER | {"externalRef": "SHOP-7"}, headers=dispatcher.headers
    )
    assert again.status_code == 409 and again.json["code"] == "external_ref_taken"
    assert again.json["errors"][0]["field"] == "externalRef"
    listed = dispatch_client.get("/orders", headers=dispatcher.headers).json["orders"]
    assert len(listed) == 1


def test_the_same_external_ref_in_another_company_is_fine(dispatch_app, dispatch_client, dispatcher) -> None:
    create_order(dispatch_client, dispatcher, externalRef="SHOP-7")
    stranger = make_member(dispatch_app, make_company("Other"), "dispatcher")
    assert create_order(dispatch_client, stranger, externalRef="SHOP-7")["externalRef"] == "SHOP-7"


def test_orders_without_external_ref_do_not_collide(dispatch_client, dispatcher) -> None:
    assert create_order(dispatch_client, dispatcher)["id"] != create_order(dispatch_client, dispatcher)["id"]


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"externalRef": "x" * 101}, "externalRef"),
        ({"externalRef": "   "}, "externalRef"),
        ({"noteToCourier": "n" * 501}, "noteToCourier"),
        ({"addressDetails": {"floor": "f" * 41}}, "addressDetails.floor"),
        ({"addressDetails": {"intercom": 17}}, "addressDetails.intercom"),
        ({"addressDetails": "floor 5"}, "addressDetails"),
    ],
)
def test_out_of_bounds_details_are_400_naming_the_field(dispatch_client, dispatcher, fields, field) -> None:
    response = dispatch_client.post("/orders", json=ORDER | fields, headers=dispatcher.headers)
    assert response.status_code == 400
    assert field in {e["field"] for e in response.json["errors"]}


def test_an_edit_sets_replaces_and_clears_the_details(dispatch_client, dispatcher) -> None:
    order = create_order(dispatch_client, dispatcher, addressDetails=DETAILS, noteToCourier=NOTE)
    url = f"/orders/{order['id']}"
    edited = dispatch_client.patch(
        url, json={"addressDetails": {"apartment": "4"}, "externalRef": "SHOP-9"}, headers=dispatcher.headers
    ).json["order"]
    assert edited["addressDetails"] == {"entrance": None, "floor": None, "apartment": "4", "intercom": None}
    assert edited["externalRef"] == "SHOP-9" and edited["noteToCourier"] == NOTE
    cleared = dispatch_client.patch(
        url,
        json={"addressDetails": None, "noteToCourier": None, "externalRef": None},
        headers=dispatcher.headers,
    ).json["order"]
    assert cleared["addressDetails"] is None and cleared["noteToCourier"] is None
    assert cleared["externalRef"] is None


def test_an_edit_to_a_taken_external_ref_is_409_and_changes_nothing(dispatch_client, dispatcher) -> None:
    create_order(dispatch_client, dispatcher, externalRef="SHOP-1")
    other = create_order(dispatch_client, dispatcher, externalRef="SHOP-2")
    response = dispatch_client.patch(
        f"/orders/{other['id']}",
        json={"externalRef": "SHOP-1", "noteToCourier": "x"},
        headers=dispatcher.headers,
    )
    assert response.status_code == 409 and response.json["code"] == "external_ref_taken"
    again = dispatch_client.get(f"/orders/{other['id']}", headers=dispatcher.headers).json["order"]
    assert again["externalRef"] == "SHOP-2" and again["noteToCourier"] is None


def test_the_courier_sees_the_door_details_and_the_note(dispatch_client, dispatcher, courier) -> None:
    assigned_order(dispatch_client, dispatcher, courier, addressDetails=DETAILS, noteToCourier=NOTE)
    stops = dispatch_client.get("/courier/orders", headers=courier.headers).json["orders"]
    assert stops[0]["addressDetails"] == DETAILS and stops[0]["noteToCourier"] == NOTE


def test_the_tracking_page_shows_the_recipient_none_of_the_details(
    dispatch_client, dispatcher, courier
) -> None:
    secret = {"entrance": "ENTR-Q", "floor": "FLR-Q", "apartment": "APT-Q", "intercom": "ICM-Q"}
    order = assigned_order(
        dispatch_client,
        dispatcher,
        courier,
        externalRef="REF-SECRET-Q",
        addressDetails=secret,
        noteToCourier="NOTE-SECRET-Q",
    )
    link = dispatch_client.post(f"/orders/{order['id']}/tracking", headers=dispatcher.headers).json
    views = [dispatch_client.get(f"/track/{link['token']}")]
    courier_status(dispatch_client, courier, order["id"], status="picked_up")
    views.append(dispatch_client.get(f"/track/{link['token']}"))
    courier_status(dispatch_client, courier, order["id"], status="delivered", recipientName="Gayane P")
    views.append(dispatch_client.get(f"/track/{link['token']}"))
    page = dispatch_client.get(link["path"])
    for answer in [*views, page]:
        assert answer.status_code == 200
        text = answer.get_data(as_text=True)
        for value in [*secret.values(), "REF-SECRET-Q", "NOTE-SECRET-Q", "noteToCourier", "addressDetails"]:
            assert value not in text
    assert json.loads(views[-1].get_data())["state"] == "delivered"
