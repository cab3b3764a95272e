"""POST /orders/import (issue 27, item 2): CSV and .xlsx, every refused row explained, each row all
or nothing, idempotent by externalRef, dry runs that write nothing, the same checks as POST /orders."""

from __future__ import annotations

import pytest

from appliance.dispatch.models import Order, OrderEvent
from appliance.dispatch.orders.schemas import ImportResult
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.import_helpers import HEADER, csv_bytes, post_csv, post_file, row, xlsx_bytes
from tests.dispatch.orders_helpers import create_order


def _ok(response) -> dict:
    assert response.status_code == 200, response.get_data(as_text=True)
    ImportResult.model_validate(response.json)
    return response.json


def test_a_csv_file_creates_one_ready_order_per_row_as_post_orders_would(dispatch_client, dispatcher) -> None:
    answer = _ok(post_csv(dispatch_client, dispatcher, csv_bytes([row(1), row(2), row(3)])))
    assert answer["created"] == 3 and answer["existing"] == 0 and answer["refused"] == []
    assert len(answer["orderIds"]) == 3
    first = dispatch_client.get(f"/orders/{answer['orderIds'][0]}", headers=dispatcher.headers).json["order"]
    # Each row has its pin and phone: it arrives ready to plan (issue 45), a draft on request.
    assert first["status"] == "ready" and first["externalRef"] == "SHOP-1"
    assert first["recipientPhone"] == "+37491100001" and first["amountAmd"] == 1001
    assert first["pin"] == {"lat": 40.18001, "lon": 44.51} and first["addressLabelHy"] == "Աբովյան 1"
    assert OrderEvent.select().where(OrderEvent.kind == "created").count() == 3


def test_importing_the_same_file_twice_creates_nothing_the_second_time(dispatch_client, dispatcher) -> None:
    data = csv_bytes([row(n) for n in range(1, 6)])
    first = _ok(post_csv(dispatch_client, dispatcher, data))
    second = _ok(post_csv(dispatch_client, dispatcher, data))
    assert (first["created"], first["existing"]) == (5, 0)
    assert (second["created"], second["existing"]) == (0, 5)
    assert second["orderIds"] == first["orderIds"]
    assert Order.select().count() == 5


def test_an_order_created_by_hand_with_the_ref_counts_as_existing(dispatch_client, dispatcher) -> None:
    made = create_order(dispatch_client, dispatcher, externalRef="SHOP-2")
    answer = _ok(post_csv(dispatch_client, dispatcher, csv_bytes([row(1), row(2)])))
    assert (answer["created"], answer["existing"]) == (1, 1) and made["id"] in answer["orderIds"]


def test_every_refused_row_is_listed_with_its_row_and_column_and_the_rest_is_created(
    dispatch_client, dispatcher
) -> None:
    rows = [
        row(1),
        row(2, recipientPhone="12"),  # row 3
        row(3, lat=10.0),  # row 4: outside the service area
        row(4, amountAmd="12.5"),  # row 5
        row(5, recipientName=""),  # row 6
        row(6),
        row(7, lat=""),  # row 8: one coordinate only
    ]
    answer = _ok(post_csv(dispatch_client, dispatcher, csv_bytes(rows)))
    assert answer["created"] == 2
    where = {(r["row"], r["column"]) for r in answer["refused"]}
    assert where == {(3, "recipientPhone"), (4, "lat"), (5, "amountAmd"), (6, "recipientName"), (8, "lat")}
    assert all(r["message"] for r in answer["refused"])
    assert Order.select().count() == 2


def test_a_row_with_several_problems_lists_each(dispatch_client, dispatcher) -> None:
    answer = _ok(post_csv(dispatch_client, dispatcher, csv_bytes([row(1, amountAmd="lots", isCod="maybe")])))
    assert {(r["row"], r["column"]) for r in answer["refused"]} == {(2, "amountAmd"), (2, "isCod")}


def test_a_dry_run_answers_the_same_counts_and_creates_nothing(dispatch_client, dispatcher) -> None:
    create_order(dispatch_client, dispatcher, externalRef="SHOP-1")
    data = csv_bytes([row(1), row(2), row(3, recipientPhone="x")])
    dry = _ok(post_csv(dispatch_client, dispatcher, data, dry_run=True))
    assert Order.select().count() == 1
    real = _ok(post_csv(dispatch_client, dispatcher, data))
    assert (dry["created"], dry["existing"], dry["refused"]) == (
        real["created"],
        real["existing"],
        real["refused"],
    )
    assert (real["created"], real["existing"]) == (1, 1)
    assert Order.select().count() == 2


def test_a_repeated_external_ref_in_one_file_is_refused_naming_the_first_row(
    dispatch_client, dispatcher
) -> None:
    answer = _ok(post_csv(dispatch_client, dispatcher, csv_bytes([row(1), row(2, externalRef="SHOP-1")])))
    assert answer["created"] == 1
    assert answer["refused"] == [
        {
            "row": 3,
            "column": "externalRef",
            "header": "externalRef",
            "message": "repeats the order number of row 2",
        }
    ]


def test_rows_without_external_ref_are_created_each_time(dispatch_client, dispatcher) -> None:
    data = csv_bytes([row(1, externalRef=None)])
    assert _ok(post_csv(dispatch_client, dispatcher, data))["created"] == 1
    assert _ok(post_csv(dispatch_client, dispatcher, data))["created"] == 1


def test_a_window_is_read_in_yerevan_time_and_checked_as_post_orders_does(
    dispatch_client, dispatcher
) -> None:
    rows = [
        row(1, deliveryWindowStart="2026-11-26 10:00", deliveryWindowEnd="26.11.2026 12:30"),
        row(2, deliveryWindowStart="2026-11-26T10:00:00Z"),
        row(3, deliveryWindowStart="2026-11-26 12:00", deliveryWindowEnd="2026-11-26 11:00"),
        row(4, deliveryWindowStart="tomorrow"),
    ]
    answer = _ok(post_csv(dispatch_client, dispatcher, csv_bytes(rows)))
    assert {(r["row"], r["column"]) for r in answer["refused"]} == {
        (4, "deliveryWindowEnd"),
        (5, "deliveryWindowStart"),
    }
    first, second = (
        dispatch_client.get(f"/orders/{i}", headers=dispatcher.headers).json["order"]
        for i in answer["orderIds"]
    )
    assert first["deliveryWindowStart"] == "2026-11-26T06:00:00.000Z"
    assert first["deliveryWindowEnd"] == "2026-11-26T08:30:00.000Z"
    assert second["deliveryWindowStart"] == "2026-11-26T10:00:00.000Z"


def test_cells_are_read_as_people_type_them(dispatch_client, dispatcher) -> None:
    rows = [
        row(1, recipientPhone="+374 (91) 12-34-56", amountAmd="5 000", isCod="այո", weightKg="1,5"),
        row(2, recipientPhone="37499111222", amountAmd="7,500.00", isCod="нет", lat="40,1812"),
    ]
    answer = _ok(post_csv(dispatch_client, dispatcher, csv_bytes(rows)))
    assert answer["refused"] == []
    one, two = (
        dispatch_client.get(f"/orders/{i}", headers=dispatcher.headers).json["order"]
        for i in answer["orderIds"]
    )
    assert (one["recipientPhone"], one["amountAmd"], one["isCod"], one["codAmountAmd"], one["weightKg"]) == (
        "+37491123456",
        5000,
        True,
        5000,
        1.5,
    )
    assert (two["recipientPhone"], two["amountAmd"], two["isCod"], two["pin"]["lat"]) == (
        "+37499111222",
        7500,
        False,
        40.1812,
    )


def test_door_details_and_the_note_come_from_their_columns(dispatch_client, dispatcher) -> None:
    data = csv_bytes([row(1, entrance="2", floor="5", apartment="17", intercom="17K", noteToCourier="Call")])
    answer = _ok(post_csv(dispatch_client, dispatcher, data))
    order = dispatch_client.get(f"/orders/{answer['orderIds'][0]}", headers=dispatcher.headers).json["order"]
    assert order["addressDetails"] == {"entrance": "2", "floor": "5", "apartment": "17", "intercom": "17K"}
    assert order["noteToCourier"] == "Call"


def test_armenian_and_russian_headers_and_semicolons_are_understood(dispatch_client, dispatcher) -> None:
    hy = "Պատվերի համար;Ստացող;Հեռախոս;Գումար;Հասցե;Լայնություն;Երկայնություն;Հարկ\n"
    hy += "A-1;Գայանե;091123456;5000;Աբովյան 10;40,18;44,51;3\n"
    ru = "Номер заказа,Получатель,Телефон,Сумма,Адрес,Широта,Долгота,Домофон,Комментарий курьеру\n"
    ru += "R-1,Анна,+37477123456,1000,Абовяна 10,40.18,44.51,12,Позвонить\n"
    for text in (hy, ru):
        answer = _ok(post_csv(dispatch_client, dispatcher, text.encode()))
        assert answer["created"] == 1, answer
    orders = {
        o["externalRef"]: o for o in dispatch_client.get("/orders", headers=dispatcher.headers).json["orders"]
    }
    assert orders["A-1"]["addressLabelHy"] == "Աբովյան 10" and orders["A-1"]["addressDetails"]["floor"] == "3"
    assert orders["R-1"]["addressLabelHy"] == "Абовяна 10" and orders["R-1"]["noteToCourier"] == "Позвонить"


def test_an_address_without_coordinates_is_kept_as_a_draft_needing_a_pin_when_no_address_index_is_built(
    dispatch_client, dispatcher
) -> None:
    data = b"externalRef,recipientName,recipientPhone,address\nX-1,Ani,091123456,Abovyan 10\n"
    answer = _ok(post_csv(dispatch_client, dispatcher, data))
    assert answer["created"] == 1 and answer["refused"] == []
    kept = answer["needsPin"][0]
    assert kept["row"] == 2 and kept["header"] == "address"
    assert "no address index" in kept["message"] and "routing build" in kept["message"]
    (order,) = dispatch_client.get("/orders", headers=dispatcher.headers).json["orders"]
    assert order["id"] == kept["orderId"] and order["status"] == "draft"
    assert "no address index" in order["needsPin"]


def test_blank_lines_are_skipped_and_rows_keep_their_file_numbers(dispatch_client, dispatcher) -> None:
    text = (
        csv_bytes([row(1)]).decode()
        + ",,,,,,\n\n"
        + csv_bytes([row(2, recipientPhone="1")]).decode().split("\n", 1)[1]
    )
    answer = _ok(post_csv(dispatch_client, dispatcher, text.encode()))
    assert answer["created"] == 1 and answer["refused"][0]["row"] == 5


def test_an_xlsx_upload_is_read_with_numbers_and_dates_as_cells(dispatch_client, dispatcher) -> None:
    from datetime import datetime

    data = xlsx_bytes(
        [
            [*HEADER, "deliveryWindowStart", "floor"],
            ["X-1", "Ani", 37491123456, 5000, "Աբովյան 1", 40.18, 44.51, datetime(2026, 11, 26, 10, 0), 4],
            ["X-2", "Aram", "091 22 33 44", 2500.0, "Աբովյան 2", 40.181, 44.511, None, None],
            ["X-3", "Bad", "091 22 33 44", 2500.5, "Աբովյան 3", 40.181, 44.511, None, None],
        ]
    )
    answer = _ok(post_file(dispatch_client, dispatcher, data))
    assert answer["created"] == 2 and [(r["row"], r["column"]) for r in answer["refused"]] == [
        (4, "amountAmd")
    ]
    one = dispatch_client.get(f"/orders/{answer['orderIds'][0]}", headers=dispatcher.headers).json["order"]
    assert one["recipientPhone"] == "+37491123456" and one["amountAmd"] == 5000
    assert one["deliveryWindowStart"] == "2026-11-26T06:00:00.000Z" and one["addressDetails"]["floor"] == "4"
    again = _ok(post_file(dispatch_client, dispatcher, data))
    assert (again["created"], again["existing"]) == (0, 2)


def test_a_csv_may_also_be_uploaded_as_a_file(dispatch_client, dispatcher) -> None:
    answer = _ok(post_file(dispatch_client, dispatcher, csv_bytes([row(1)]), "orders.csv"))
    assert answer["created"] == 1


def test_couriers_cannot_import(dispatch_client, courier) -> None:
    assert post_csv(dispatch_client, courier, csv_bytes([row(1)])).status_code == 403


def test_owners_can_import(dispatch_app, dispatch_client, company) -> None:
    owner = make_member(dispatch_app, company, "owner")
    assert _ok(post_csv(dispatch_client, owner, csv_bytes([row(1)])))["created"] == 1


def test_an_import_creates_orders_in_the_callers_company_only(
    dispatch_app, dispatch_client, dispatcher
) -> None:
    stranger = make_member(dispatch_app, make_company("Other"), "dispatcher")
    _ok(post_csv(dispatch_client, stranger, csv_bytes([row(1)])))
    answer = _ok(post_csv(dispatch_client, dispatcher, csv_bytes([row(1)])))
    assert (answer["created"], answer["existing"]) == (1, 0)


@pytest.mark.parametrize("dry_run", [False, True])
def test_an_unknown_column_is_400_naming_it(dispatch_client, dispatcher, dry_run) -> None:
    data = csv_bytes([row(1) | {"colour": "red"}])
    response = post_csv(dispatch_client, dispatcher, data, dry_run=dry_run)
    assert response.status_code == 400 and "colour" in response.json["detail"]
    assert Order.select().count() == 0


def test_a_row_created_meanwhile_by_another_import_counts_as_existing_not_twice(
    dispatch_client, dispatcher, monkeypatch
) -> None:
    from appliance.dispatch.orders import importing

    _ok(post_csv(dispatch_client, dispatcher, csv_bytes([row(1)])))
    seen = importing._existing_refs
    calls = []

    def blind_first(company_id, refs):  # the first look misses what a concurrent import just wrote
        calls.append(list(refs))
        return {} if len(calls) == 1 else seen(company_id, refs)

    monkeypatch.setattr(importing, "_existing_refs", blind_first)
    answer = _ok(post_csv(dispatch_client, dispatcher, csv_bytes([row(1), row(2)])))
    assert (answer["created"], answer["existing"], answer["refused"]) == (1, 1, [])
    assert Order.select().where(Order.external_ref == "SHOP-1").count() == 1
    assert len(answer["orderIds"]) == 2


def test_an_import_arrives_as_the_company_chose_or_as_the_import_asks(
    dispatch_app, dispatch_client, company
) -> None:
    owner = make_member(dispatch_app, company, "owner")
    settings = dispatch_client.get("/company/order-settings", headers=owner.headers).json
    assert settings == {"importStatus": "ready", "integrationOrdersReady": False, "proofRequired": []}
    changed = dispatch_client.patch(
        "/company/order-settings", json={"importStatus": "draft"}, headers=owner.headers
    )
    assert changed.status_code == 200 and changed.json["importStatus"] == "draft"
    drafts = _ok(post_csv(dispatch_client, owner, csv_bytes([row(1)])))
    assert Order.get_by_id(int(drafts["orderIds"][0])).status == "draft"
    asked = dispatch_client.post(
        "/orders/import?status=ready",
        data=csv_bytes([row(2)]),
        content_type="text/csv",
        headers=owner.headers,
    )
    assert Order.get_by_id(int(asked.json["orderIds"][0])).status == "ready"
    made_ready = OrderEvent.get(
        (OrderEvent.order == int(asked.json["orderIds"][0])) & (OrderEvent.to_status == "ready")
    )
    assert made_ready.kind == "status_changed"
    dispatcher = make_member(dispatch_app, company, "dispatcher")
    refused = dispatch_client.patch(
        "/company/order-settings", json={"importStatus": "ready"}, headers=dispatcher.headers
    )
    assert refused.status_code == 403
    bad = dispatch_client.patch(
        "/company/order-settings", json={"importStatus": "maybe"}, headers=owner.headers
    )
    assert bad.status_code == 400
