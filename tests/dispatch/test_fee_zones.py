"""Delivery fee zones over HTTP (issue 47; docs/fees.md): drawn and changed by dispatchers and
owners, bounded, scoped to the company; the fee worked out when an order is created or imported,
shown on the order, and changed by a dispatcher with an audit entry."""

from __future__ import annotations

import pytest

from appliance.dispatch import audit
from appliance.dispatch.fees.schemas import FeeZoneEnvelope
from appliance.dispatch.models import OrderEvent
from appliance.dispatch.orders.schemas import OrderEnvelope
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.import_helpers import csv_bytes, post_csv, row
from tests.dispatch.orders_helpers import create_order

# Around the centre of Yerevan (orders_helpers.ORDER's pin and the import rows' pins lie inside).
CENTRE = [
    {"lat": 40.17, "lon": 44.50},
    {"lat": 40.17, "lon": 44.53},
    {"lat": 40.19, "lon": 44.53},
    {"lat": 40.19, "lon": 44.50},
]
OUTSIDE_PIN = {"lat": 40.21, "lon": 44.56}
ORDER_PIN = {"lat": 40.1812, "lon": 44.5140}  # orders_helpers.ORDER's


def draw(client, member, polygon=None, **rules) -> dict:
    body = {"name": "Centre", "polygon": polygon or CENTRE} | rules
    response = client.post("/company/fee-zones", json=body, headers=member.headers)
    assert response.status_code == 201, response.json
    FeeZoneEnvelope.model_validate(response.json)
    return response.json["zone"]


def test_a_dispatcher_draws_lists_changes_and_deletes_a_zone_each_in_the_audit_log(
    dispatch_client, company, dispatcher
) -> None:
    zone = draw(dispatch_client, dispatcher, baseFeeAmd=700, codBasisPoints=150)
    assert zone["polygon"] == CENTRE and zone["baseFeeAmd"] == 700 and zone["perKmAmd"] == 0
    listed = dispatch_client.get("/company/fee-zones", headers=dispatcher.headers).json["zones"]
    assert [z["id"] for z in listed] == [zone["id"]]
    changed = dispatch_client.patch(
        f"/company/fee-zones/{zone['id']}",
        json={"perKmAmd": 120, "name": "Kentron"},
        headers=dispatcher.headers,
    )
    assert changed.status_code == 200 and changed.json["zone"]["perKmAmd"] == 120
    assert changed.json["zone"]["name"] == "Kentron" and changed.json["zone"]["baseFeeAmd"] == 700
    deleted = dispatch_client.delete(f"/company/fee-zones/{zone['id']}", headers=dispatcher.headers)
    assert deleted.status_code == 204
    assert (
        dispatch_client.get(f"/company/fee-zones/{zone['id']}", headers=dispatcher.headers).status_code == 404
    )
    actions = [e["action"] for e in audit.entries(company.id) if e["action"].startswith("fee_zone.")]
    assert actions == ["fee_zone.created", "fee_zone.changed", "fee_zone.deleted"]


def test_a_closing_vertex_repeating_the_first_is_dropped(dispatch_client, dispatcher) -> None:
    zone = draw(dispatch_client, dispatcher, polygon=[*CENTRE, CENTRE[0]])
    assert zone["polygon"] == CENTRE


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        ({"polygon": [CENTRE[0], CENTRE[2], CENTRE[1], CENTRE[3]]}, 422, "polygon"),  # edges cross
        ({"polygon": CENTRE[:2]}, 422, "polygon"),
        (
            {"polygon": [{"lat": 40.0 + i / 10000, "lon": 44.5 + (i % 2) / 1000} for i in range(201)]},
            422,
            "polygon",
        ),
        (
            {
                "polygon": [
                    {"lat": 40.17, "lon": 44.50},
                    {"lat": 40.18, "lon": 44.51},
                    {"lat": 40.19, "lon": 44.52},
                ]
            },
            422,
            "polygon",
        ),
        ({"polygon": [*CENTRE[:3], {"lat": 50.0, "lon": 44.5}]}, 422, "polygon.3.lat"),
        ({"baseFeeAmd": -1}, 400, "baseFeeAmd"),
        ({"perKmAmd": 10_000_001}, 400, "perKmAmd"),
        ({"codBasisPoints": 10_001}, 400, "codBasisPoints"),
        ({"weightThresholdKg": -0.5}, 400, "weightThresholdKg"),
        ({"perKgAmd": "100"}, 400, "perKgAmd"),
        ({"name": ""}, 400, "name"),
    ],
)
def test_bad_polygons_and_amounts_are_problems_that_name_the_field(
    dispatch_client, dispatcher, body, status, field
) -> None:
    answer = dispatch_client.post(
        "/company/fee-zones", json={"name": "Zone", "polygon": CENTRE} | body, headers=dispatcher.headers
    )
    assert answer.status_code == status, answer.json
    assert answer.content_type.startswith("application/problem+json")
    assert field in [e["field"] for e in answer.json["errors"]]
    assert dispatch_client.get("/company/fee-zones", headers=dispatcher.headers).json["zones"] == []


def test_another_companys_zone_behaves_as_a_missing_one(dispatch_app, dispatch_client, dispatcher) -> None:
    other = make_member(dispatch_app, make_company("Other"), "owner")
    theirs = draw(dispatch_client, other, baseFeeAmd=999)
    path = f"/company/fee-zones/{theirs['id']}"
    assert dispatch_client.get(path, headers=dispatcher.headers).status_code == 404
    assert dispatch_client.patch(path, json={"baseFeeAmd": 1}, headers=dispatcher.headers).status_code == 404
    assert dispatch_client.delete(path, headers=dispatcher.headers).status_code == 404
    assert dispatch_client.get("/company/fee-zones", headers=dispatcher.headers).json["zones"] == []
    assert dispatch_client.get(path, headers=other.headers).json["zone"]["baseFeeAmd"] == 999
    # Their zone prices none of this company's orders.
    assert create_order(dispatch_client, dispatcher)["deliveryFeeAmd"] is None


def test_couriers_cannot_see_or_draw_zones(dispatch_client, courier) -> None:
    assert dispatch_client.get("/company/fee-zones", headers=courier.headers).status_code == 403
    answer = dispatch_client.post(
        "/company/fee-zones", json={"name": "Z", "polygon": CENTRE}, headers=courier.headers
    )
    assert answer.status_code == 403


def test_a_new_order_gets_its_zones_base_weight_and_cash_parts(dispatch_client, dispatcher) -> None:
    draw(dispatch_client, dispatcher, baseFeeAmd=600, weightThresholdKg=3, perKgAmd=100, codBasisPoints=200)
    plain = create_order(dispatch_client, dispatcher)
    assert plain["deliveryFeeAmd"] == 600
    heavy = create_order(dispatch_client, dispatcher, weightKg=4.5)
    assert heavy["deliveryFeeAmd"] == 600 + 200
    cash = create_order(dispatch_client, dispatcher, isCod=True, amountAmd=12_345)
    assert cash["deliveryFeeAmd"] == 600 + 247  # 2 % of 12 345 = 246.9
    OrderEnvelope.model_validate({"order": cash})
    outside = create_order(dispatch_client, dispatcher, pin=OUTSIDE_PIN)
    assert outside["deliveryFeeAmd"] is None


def test_the_first_drawn_of_overlapping_zones_prices_the_order(dispatch_client, dispatcher) -> None:
    draw(dispatch_client, dispatcher, baseFeeAmd=500)
    draw(dispatch_client, dispatcher, baseFeeAmd=900)
    assert create_order(dispatch_client, dispatcher)["deliveryFeeAmd"] == 500


def test_imported_rows_get_their_fee_and_a_row_outside_every_zone_none(dispatch_client, dispatcher) -> None:
    draw(dispatch_client, dispatcher, baseFeeAmd=650, codBasisPoints=100)
    rows = [row(1), row(2, isCod="yes"), row(3, lat=40.21, lon=44.56)]
    answer = post_csv(dispatch_client, dispatcher, csv_bytes(rows))
    assert answer.status_code == 200 and answer.json["created"] == 3, answer.json
    fees = [
        dispatch_client.get(f"/orders/{i}", headers=dispatcher.headers).json["order"]["deliveryFeeAmd"]
        for i in answer.json["orderIds"]
    ]
    assert fees == [650, 650 + 10, None]  # 1 % of 1002 = 10.02


def test_a_dispatcher_changes_the_fee_of_a_delivered_order_and_the_change_is_audited(
    dispatch_client, company, dispatcher, courier
) -> None:
    from tests.dispatch.orders_helpers import assigned_order, courier_status

    draw(dispatch_client, dispatcher, baseFeeAmd=700)
    order = assigned_order(dispatch_client, dispatcher, courier)
    courier_status(dispatch_client, courier, order["id"], status="picked_up")
    assert courier_status(dispatch_client, courier, order["id"], status="delivered").status_code == 200
    path = f"/orders/{order['id']}"
    changed = dispatch_client.patch(path, json={"deliveryFeeAmd": 450}, headers=dispatcher.headers)
    assert changed.status_code == 200 and changed.json["order"]["deliveryFeeAmd"] == 450
    entry = [e for e in audit.entries(company.id) if e["action"] == "order.fee_changed"][-1]
    assert entry["subject"] == f"order:{order['id']}" and entry["actorKind"] == "user"
    assert entry["before"] == {"deliveryFeeAmd": 700} and entry["after"] == {"deliveryFeeAmd": 450}
    trail = OrderEvent.select().where(
        (OrderEvent.order == int(order["id"])) & (OrderEvent.kind == "fee_changed")
    )
    assert trail.count() == 1
    cleared = dispatch_client.patch(path, json={"deliveryFeeAmd": None}, headers=dispatcher.headers)
    assert cleared.status_code == 200 and cleared.json["order"]["deliveryFeeAmd"] is None
    # Other fields of a delivered order stay closed, and a negative fee is refused.
    assert dispatch_client.patch(path, json={"amountAmd": 1}, headers=dispatcher.headers).status_code == 409
    assert (
        dispatch_client.patch(path, json={"deliveryFeeAmd": -5}, headers=dispatcher.headers).status_code
        == 400
    )
    assert dispatch_client.patch(path, json={"deliveryFeeAmd": 1}, headers=courier.headers).status_code == 403


def test_the_openapi_document_describes_fee_zones_and_the_orders_fee(dispatch_client) -> None:
    document = dispatch_client.get("/openapi.json").json
    assert {"get", "post"} <= set(document["paths"]["/company/fee-zones"])
    assert {"get", "patch", "delete"} <= set(document["paths"]["/company/fee-zones/{zone_id}"])
    schemas = document["components"]["schemas"]
    assert "deliveryFeeAmd" in schemas["OrderOut"]["properties"]
    assert "deliveryFeeAmd" in schemas["OrderPatch"]["properties"]


def test_moving_the_pin_or_changing_the_weight_prices_the_order_again(
    dispatch_client, company, dispatcher
) -> None:
    draw(dispatch_client, dispatcher, baseFeeAmd=600, weightThresholdKg=1, perKgAmd=100)
    order = create_order(dispatch_client, dispatcher, pin=OUTSIDE_PIN)
    assert order["deliveryFeeAmd"] is None
    path = f"/orders/{order['id']}"
    moved = dispatch_client.patch(path, json={"pin": ORDER_PIN}, headers=dispatcher.headers).json["order"]
    assert moved["deliveryFeeAmd"] == 600
    heavier = dispatch_client.patch(path, json={"weightKg": 2.5}, headers=dispatcher.headers).json["order"]
    assert heavier["deliveryFeeAmd"] == 600 + 200
    # A fee given with the edit wins over the rules; the recipient's name alone changes no fee.
    given = dispatch_client.patch(
        path, json={"weightKg": 9, "deliveryFeeAmd": 50}, headers=dispatcher.headers
    )
    assert given.json["order"]["deliveryFeeAmd"] == 50
    renamed = dispatch_client.patch(path, json={"recipientName": "Ani"}, headers=dispatcher.headers).json[
        "order"
    ]
    assert renamed["deliveryFeeAmd"] == 50
    changes = [e for e in audit.entries(company.id) if e["action"] == "order.fee_changed"]
    assert [c["after"]["deliveryFeeAmd"] for c in changes] == [600, 800, 50]
