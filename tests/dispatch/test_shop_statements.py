"""Shop statements and remittances (issue 47; docs/statements.md): a shop (an integration key)
reads what its orders brought in, less the fees; the cash adds up with the cash report and the
handovers; the owner pays a period once; a key reads its own statements and nobody else's."""

from __future__ import annotations

import csv
import datetime as dt
import io
from datetime import timedelta

import pytest
from openpyxl import load_workbook

from appliance.common import clock
from appliance.dispatch import audit
from appliance.dispatch.models import Collection
from appliance.dispatch.reports.service import YEREVAN
from appliance.dispatch.statements.schemas import RemittanceEnvelope, Statement
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.orders_helpers import ORDER, assigned_order, courier_status
from tests.dispatch.test_fee_zones import CENTRE


@pytest.fixture
def owner(dispatch_app, company):
    return make_member(dispatch_app, company, "owner")


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def new_key(client, owner, name: str) -> tuple[str, dict[str, str]]:
    made = client.post("/company/integration-keys", json={"name": name}, headers=owner.headers).json
    return made["id"], bearer(made["key"])


def period() -> str:
    """Yesterday to the day after tomorrow, Yerevan: today's deliveries are in it whenever the test
    runs (also across midnight)."""
    today = clock.now().astimezone(YEREVAN).date()
    return f"from={(today - timedelta(days=1)).isoformat()}&to={(today + timedelta(days=2)).isoformat()}"


def shop_order(client, key, dispatcher, courier, *, outcome: str = "delivered", **fields) -> dict:
    """An order the shop's key creates, that the courier then delivers (or fails)."""
    made = client.post("/orders", json=ORDER | fields, headers=key)
    assert made.status_code == 201, made.json
    order = made.json["order"]
    assert (
        client.post(
            f"/orders/{order['id']}/status", json={"status": "ready"}, headers=dispatcher.headers
        ).status_code
        == 200
    )
    assert (
        client.post(
            f"/orders/{order['id']}/assign",
            json={"courierId": courier.courier.id},
            headers=dispatcher.headers,
        ).status_code
        == 201
    )
    assert courier_status(client, courier, order["id"], status="picked_up").status_code == 200
    extra = {"failureReason": "recipient_absent"} if outcome == "failed" else {}
    assert courier_status(client, courier, order["id"], status=outcome, **extra).status_code == 200
    return client.get(f"/orders/{order['id']}", headers=dispatcher.headers).json["order"]


@pytest.fixture
def shop(dispatch_client, owner, dispatcher, courier):
    """Shop Arev: two cash orders delivered, one prepaid delivered, one returned, in a zone that
    charges 500 and 1 % of the cash; and one order of the company's own, not the shop's."""
    zone = {"name": "Centre", "polygon": CENTRE, "baseFeeAmd": 500, "codBasisPoints": 100}
    assert (
        dispatch_client.post("/company/fee-zones", json=zone, headers=dispatcher.headers).status_code == 201
    )
    key_id, key = new_key(dispatch_client, owner, "Shop Arev")
    orders = [
        shop_order(dispatch_client, key, dispatcher, courier, isCod=True, amountAmd=10_000),
        shop_order(dispatch_client, key, dispatcher, courier, isCod=True, amountAmd=25_050),
        shop_order(dispatch_client, key, dispatcher, courier, amountAmd=7_000),
        shop_order(dispatch_client, key, dispatcher, courier, outcome="failed", isCod=True, amountAmd=3_000),
    ]
    own = assigned_order(dispatch_client, dispatcher, courier, isCod=True, amountAmd=99_000)
    courier_status(dispatch_client, courier, own["id"], status="picked_up")
    assert courier_status(dispatch_client, courier, own["id"], status="delivered").status_code == 200
    return key_id, key, orders


def test_a_statement_counts_the_shops_deliveries_cash_fees_and_returns_and_its_net(
    dispatch_client, dispatcher, shop
) -> None:
    key_id, _key, orders = shop
    assert [o["deliveryFeeAmd"] for o in orders] == [600, 751, 500, 530]
    assert all(o["shopId"] == key_id for o in orders)
    answer = dispatch_client.get(f"/shops/{key_id}/statement?{period()}", headers=dispatcher.headers)
    assert answer.status_code == 200, answer.json
    body = Statement.model_validate(answer.json).model_dump(by_alias=True)
    assert body["shop"]["name"] == "Shop Arev"
    assert (body["delivered"], body["returned"]) == (3, 1)
    assert body["codCollectedAmd"] == 35_050 and body["feesAmd"] == 600 + 751 + 500
    assert body["netAmd"] == 35_050 - 1_851
    assert body["cash"]["balanced"] and body["cash"]["ledgerCollectedAmd"] == 35_050
    kinds = sorted((line["kind"], line["publicId"]) for line in body["lines"])
    assert kinds == sorted(
        [("delivered", o["publicId"]) for o in orders[:3]] + [("returned", orders[3]["publicId"])]
    )
    returned = next(line for line in body["lines"] if line["kind"] == "returned")
    assert returned["codCollectedAmd"] == 0 and returned["feeAmd"] == 0  # a return brings no cash nor fee


def test_the_statements_cash_sums_with_the_cash_report_and_the_handovers(
    dispatch_client, dispatcher, courier, shop
) -> None:
    key_id, _key, orders = shop
    statement = dispatch_client.get(f"/shops/{key_id}/statement?{period()}", headers=dispatcher.headers).json
    cash_csv = dispatch_client.get(f"/reports/cash.csv?{period()}", headers=dispatcher.headers)
    rows = list(csv.DictReader(io.StringIO(cash_csv.get_data(as_text=True).lstrip("\ufeff"))))
    ours = {o["publicId"] for o in orders}
    report_collected = sum(
        int(r["amount_amd"]) for r in rows if r["kind"] == "collection" and r["order"] in ours
    )
    assert report_collected == statement["codCollectedAmd"] == statement["cash"]["ordersCollectedAmd"]
    assert statement["cash"]["handedOverAmd"] == 0
    assert statement["cash"]["withCouriersAmd"] == statement["codCollectedAmd"]
    # The courier hands over all the day's cash (the company's own order's too); once confirmed,
    # the shop's part shows as handed over, and collected = handed over + with couriers throughout.
    handover = dispatch_client.post("/courier/cash/settle", headers=courier.headers).json["settlement"]
    confirmed = dispatch_client.post(
        f"/cash/settlements/{handover['id']}/confirm", json={}, headers=dispatcher.headers
    )
    assert confirmed.status_code == 200, confirmed.json
    after = dispatch_client.get(f"/shops/{key_id}/statement?{period()}", headers=dispatcher.headers).json
    assert (
        after["cash"]["handedOverAmd"] == after["codCollectedAmd"] and after["cash"]["withCouriersAmd"] == 0
    )
    report = dispatch_client.get(f"/reports/cash.csv?{period()}", headers=dispatcher.headers)
    rows = list(csv.DictReader(io.StringIO(report.get_data(as_text=True).lstrip("\ufeff"))))
    received = sum(int(r["received_amd"]) for r in rows if r["kind"] == "handover")
    assert received == after["codCollectedAmd"] + 99_000  # the handover: the shop's cash and the company's


def test_a_ledger_that_disagrees_with_the_orders_unbalances_the_statement_and_it_cannot_be_paid(
    dispatch_app, dispatch_client, company, dispatcher, shop
) -> None:
    key_id, _key, orders = shop
    Collection.update(amount_amd=Collection.amount_amd - 50).where(
        Collection.order == int(orders[0]["id"])
    ).execute()
    statement = dispatch_client.get(f"/shops/{key_id}/statement?{period()}", headers=dispatcher.headers).json
    assert statement["cash"]["balanced"] is False and statement["cash"]["ledgerCollectedAmd"] == 35_000
    clock.advance(timedelta(days=3))
    owner = make_member(dispatch_app, company, "owner")
    body = {**dict(p.split("=") for p in period_before().split("&")), "reference": "BANK-1"}
    paid = dispatch_client.post(f"/shops/{key_id}/remittances", json=body, headers=owner.headers)
    assert paid.status_code == 409 and paid.json["code"] == "statement_unbalanced"


def period_before() -> str:
    """The period() of three days ago (the clock having moved on): over now."""
    today = clock.now().astimezone(YEREVAN).date() - timedelta(days=3)
    return f"from={(today - timedelta(days=1)).isoformat()}&to={(today + timedelta(days=2)).isoformat()}"


def test_the_owner_pays_a_period_once_audited_and_its_fees_are_then_fixed(
    dispatch_app, dispatch_client, company, dispatcher, shop
) -> None:
    key_id, _key, orders = shop
    span = dict(p.split("=") for p in period().split("&"))
    early = dispatch_client.post(
        f"/shops/{key_id}/remittances",
        json=span | {"reference": "BANK-0"},
        headers=make_member(dispatch_app, company, "owner").headers,
    )
    assert early.status_code == 409 and early.json["code"] == "period_open"
    clock.advance(timedelta(days=3))
    owner = make_member(dispatch_app, company, "owner")
    clerk = make_member(dispatch_app, company, "dispatcher")
    path = f"/shops/{key_id}/remittances"
    assert (
        dispatch_client.post(path, json=span | {"reference": "BANK-7"}, headers=clerk.headers).status_code
        == 403
    )
    paid = dispatch_client.post(path, json=span | {"reference": "BANK-7"}, headers=owner.headers)
    assert paid.status_code == 201, paid.json
    remittance = RemittanceEnvelope.model_validate(paid.json).remittance
    assert (remittance.netAmd, remittance.feesAmd, remittance.orders) == (35_050 - 1_851, 1_851, 3)
    again = dispatch_client.post(path, json=span | {"reference": "BANK-8"}, headers=owner.headers)
    assert again.status_code == 409 and again.json["code"] == "already_paid"
    start = dt.date.fromisoformat(span["from"])
    overlapping = {
        "from": (start - timedelta(days=5)).isoformat(),
        "to": (start + timedelta(days=1)).isoformat(),
    }
    assert (
        dispatch_client.post(path, json=overlapping | {"reference": "X"}, headers=owner.headers).json["code"]
        == "already_paid"
    )
    listed = dispatch_client.get(path, headers=clerk.headers).json["remittances"]
    assert [r["reference"] for r in listed] == ["BANK-7"]
    entry = [e for e in audit.entries(company.id) if e["action"] == "statement.paid"]
    assert (
        len(entry) == 1
        and entry[0]["subject"] == f"shop:{key_id}"
        and entry[0]["after"]["reference"] == "BANK-7"
    )
    statement = dispatch_client.get(
        f"/shops/{key_id}/statement?from={span['from']}&to={span['to']}", headers=clerk.headers
    ).json
    assert [r["reference"] for r in statement["remittances"]] == ["BANK-7"]
    fee = dispatch_client.patch(
        f"/orders/{orders[0]['id']}", json={"deliveryFeeAmd": 1}, headers=clerk.headers
    )
    assert fee.status_code == 409 and fee.json["code"] == "fee_paid"


def test_a_shops_key_reads_only_its_own_statement(
    dispatch_app, dispatch_client, owner, dispatcher, shop
) -> None:
    key_id, key, orders = shop
    own = dispatch_client.get(f"/statements?{period()}", headers=key)
    assert own.status_code == 200 and own.json["shop"]["id"] == key_id and own.json["delivered"] == 3
    other_id, other_key = new_key(dispatch_client, owner, "Shop Two")
    theirs = dispatch_client.get(f"/statements?{period()}", headers=other_key).json
    assert theirs["shop"]["id"] == other_id and theirs["delivered"] == 0 and theirs["lines"] == []
    # A key reaches no other shop's statement, nor the dispatchers' routes; a member not the keys' one.
    assert dispatch_client.get(f"/shops/{key_id}/statement?{period()}", headers=other_key).status_code == 403
    assert dispatch_client.get(f"/statements?{period()}", headers=dispatcher.headers).status_code == 403
    csv_answer = dispatch_client.get(f"/statements.csv?{period()}", headers=key)
    text = csv_answer.get_data(as_text=True)
    assert csv_answer.status_code == 200 and all(o["publicId"] in text for o in orders)
    # Another company's dispatcher finds no such shop.
    stranger = make_member(dispatch_app, make_company("Other"), "dispatcher")
    assert (
        dispatch_client.get(f"/shops/{key_id}/statement?{period()}", headers=stranger.headers).status_code
        == 404
    )
    assert dispatch_client.get(f"/shops/{key_id}/remittances", headers=stranger.headers).status_code == 404
    assert dispatch_client.get("/shops", headers=stranger.headers).json["shops"] == []


def test_the_statement_downloads_as_csv_xlsx_and_a_printable_page(dispatch_client, dispatcher, shop) -> None:
    key_id, _key, orders = shop
    answer = dispatch_client.get(f"/shops/{key_id}/statement.csv?{period()}", headers=dispatcher.headers)
    rows = list(csv.DictReader(io.StringIO(answer.get_data(as_text=True).lstrip("\ufeff"))))
    assert [r["kind"] for r in rows].count("delivered") == 3 and rows[-1]["kind"] == "total"
    assert int(rows[-1]["collected_amount_amd"]) == 35_050 and int(rows[-1]["net_amd"]) == 35_050 - 1_851
    assert sum(int(r["delivery_fee_amd"]) for r in rows[:-1]) == int(rows[-1]["delivery_fee_amd"])
    book = dispatch_client.get(f"/shops/{key_id}/statement.xlsx?{period()}", headers=dispatcher.headers)
    sheet = load_workbook(io.BytesIO(book.data), read_only=True).active
    values = list(sheet.iter_rows(values_only=True))
    assert values[0][0] == "Տող" and values[-1][5] == 35_050 and len(values) == 1 + 4 + 1
    page = dispatch_client.get(f"/shops/{key_id}/statement.html?{period()}", headers=dispatcher.headers)
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and page.content_type.startswith("text/html")
    assert "Shop Arev" in html and all(o["publicId"] in html for o in orders) and "<script" not in html


def test_a_bad_range_is_a_problem_and_an_unknown_shop_is_missing(dispatch_client, dispatcher) -> None:
    assert (
        dispatch_client.get(
            "/shops/1/statement?from=2026-03-10&to=2026-03-09", headers=dispatcher.headers
        ).status_code
        == 422
    )
    assert (
        dispatch_client.get(
            "/shops/999999/statement?from=2026-03-01&to=2026-03-09", headers=dispatcher.headers
        ).status_code
        == 404
    )
    assert (
        dispatch_client.get(
            "/shops/1/statement?from=junk&to=2026-03-09", headers=dispatcher.headers
        ).status_code
        == 400
    )


def test_a_dispatcher_enters_and_imports_a_shops_orders_by_hand_and_moves_one_to_another_shop(
    dispatch_app, dispatch_client, company, owner, dispatcher
) -> None:
    from tests.dispatch.import_helpers import csv_bytes, post_csv, row

    key_id, key = new_key(dispatch_client, owner, "Shop Arev")
    other_id, _other = new_key(dispatch_client, owner, "Shop Two")
    made = dispatch_client.post("/orders", json=ORDER | {"shopId": key_id}, headers=dispatcher.headers)
    assert made.status_code == 201 and made.json["order"]["shopId"] == key_id
    # A key's order is its own whatever it names.
    own = dispatch_client.post("/orders", json=ORDER | {"shopId": other_id}, headers=key).json["order"]
    assert own["shopId"] == key_id
    stranger_key = new_key(
        dispatch_client, make_member(dispatch_app, make_company("Other"), "owner"), "Theirs"
    )[0]
    refused = dispatch_client.post(
        "/orders", json=ORDER | {"shopId": stranger_key}, headers=dispatcher.headers
    )
    assert refused.status_code == 422 and refused.json["errors"][0]["field"] == "shopId"
    imported = dispatch_client.post(
        f"/orders/import?shopId={key_id}", data=csv_bytes([row(1), row(2)]), content_type="text/csv",
        headers=dispatcher.headers,
    )  # fmt: skip
    assert imported.status_code == 200 and imported.json["created"] == 2, imported.json
    shops = {
        dispatch_client.get(f"/orders/{i}", headers=dispatcher.headers).json["order"]["shopId"]
        for i in imported.json["orderIds"]
    }
    assert shops == {key_id}
    assert post_csv(dispatch_client, dispatcher, csv_bytes([row(3)])).json["created"] == 1  # no shop: none
    bad = dispatch_client.post(
        f"/orders/import?shopId={stranger_key}", data=csv_bytes([row(4)]), content_type="text/csv",
        headers=dispatcher.headers,
    )  # fmt: skip
    assert bad.status_code == 422
    path = f"/orders/{made.json['order']['id']}"
    moved = dispatch_client.patch(path, json={"shopId": other_id}, headers=dispatcher.headers)
    assert moved.status_code == 200 and moved.json["order"]["shopId"] == other_id
    cleared = dispatch_client.patch(path, json={"shopId": None}, headers=dispatcher.headers)
    assert cleared.json["order"]["shopId"] is None
    changes = [e for e in audit.entries(company.id) if e["action"] == "order.shop_changed"]
    assert [c["after"]["shopId"] for c in changes] == [int(other_id), None]
