"""Fiscal receipts through e-HDM (issue 47): printed once from the delivery's outbox on a real
mutual-TLS e-HDM server written from the e-hdm package's contract (tests/dispatch/ehdm_server.py),
whatever is lost on the way: a lost answer or a timeout after the print, a refused certificate, a
process stopped mid-call."""

from __future__ import annotations

import dataclasses

import pytest
from cryptography.exceptions import InvalidTag

from appliance.common import clock
from appliance.dispatch.fiscal.secrets import unseal
from appliance.dispatch.fiscal.sender import ReceiptSender
from appliance.dispatch.models import FiscalReceipt, FiscalSettings, Order
from appliance.settings import Settings
from tests.dispatch.ehdm_server import Authority, EhdmServer
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.orders_helpers import assigned_order, courier_status

CRN = "52014201"
ITEMS = [
    {"name": "Թեյնիկ", "quantity": "2", "priceAmd": 1500, "adgCode": "8516", "code": "KETTLE-1"},
    {"name": "Բաժակ", "quantity": "0.5", "priceAmd": 2000},
]


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """The test e-HDM server listens on loopback: this deployment allows a private e-HDM address."""
    return dataclasses.replace(settings, ehdm_allow_private=True)


@pytest.fixture
def ehdm():
    server = EhdmServer().start()
    yield server
    server.stop()


@pytest.fixture
def owner(dispatch_app, company):
    return make_member(dispatch_app, company, "owner")


@pytest.fixture
def sender(dispatch_app):
    # A short wait for the print's answer: the hung server is released when the test ends.
    return ReceiptSender(dispatch_app.extensions["dispatch"].master_key, allow_private=True, timeout=2.0)


def credentials(ehdm: EhdmServer, crn: str = CRN, **extra) -> dict:
    certificate, key = ehdm.client_certificate(crn)
    return {
        "baseUrl": ehdm.base_url,
        "crn": crn,
        "certificatePem": certificate,
        "privateKeyPem": key,
        "serverCaPem": ehdm.ca.pem,
        "cashierId": 3,
        "department": 1,
        "taxRegime": 1,
        "adgCode": "4791",
        "feeAdgCode": "5320",
        "unit": "հատ",
        **extra,
    }


def set_up(client, owner, ehdm: EhdmServer, **extra) -> dict:
    answer = client.put("/company/fiscal", json=credentials(ehdm, **extra), headers=owner.headers)
    assert answer.status_code == 200, answer.json
    activated = client.post("/company/fiscal/activate", headers=owner.headers)
    assert activated.status_code == 200, activated.json
    return answer.json["settings"]


def delivered_cash_order(
    client, dispatcher, courier, amount: int, *, fee: int | None = None, **fields
) -> dict:
    order = assigned_order(client, dispatcher, courier, isCod=True, amountAmd=amount, **fields)
    if fee is not None:  # the fee rules are another part of issue 47: the column is set here
        Order.update(delivery_fee_amd=fee).where(Order.id == int(order["id"])).execute()
    assert courier_status(client, courier, order["id"], status="picked_up").status_code == 200
    delivered = courier_status(client, courier, order["id"], status="delivered")
    assert delivered.status_code == 200, delivered.json
    return delivered.json["order"]


def run(app, sender: ReceiptSender) -> int:
    with app.app_context():
        return sender.run_pass()


def receipt_of(client, member, order_id: str) -> dict:
    answer = client.get(f"/orders/{order_id}", headers=member.headers)
    assert answer.status_code == 200
    return answer.json["order"]


def test_a_delivered_cash_order_prints_one_receipt_with_its_item_lines_and_the_delivery_fee(
    dispatch_app, dispatch_client, owner, dispatcher, courier, ehdm, sender
):
    set_up(dispatch_client, owner, ehdm)
    order = delivered_cash_order(dispatch_client, dispatcher, courier, 4500, fee=500, items=ITEMS)
    assert order["fiscalReceipt"]["state"] == "queued"
    assert run(dispatch_app, sender) == 1
    assert run(dispatch_app, sender) == 0  # printed: nothing is due again
    [printed] = ehdm.printed(CRN)
    request = printed["request"]
    assert request["cashAmount"] == "4500.00" and request["cardAmount"] == "0.00"
    assert "partnerTin" not in request
    assert [
        (i["goodName"], i["quantity"], i["price"], i["adgCode"], i["goodCode"]) for i in request["items"]
    ] == [
        ("Թեյնիկ", "2.000", "1500.00", "8516", "KETTLE-1"),
        ("Բաժակ", "0.500", "2000.00", "4791", "4791"),
        ("Delivery", "1.000", "500.00", "5320", "DELIVERY"),
    ]
    shown = receipt_of(dispatch_client, dispatcher, order["id"])["fiscalReceipt"]
    summary = printed["summary"]
    assert shown == {
        "state": "printed",
        "receiptId": summary["receiptId"],
        "fiscalNumber": summary["fiscal"],
        "qr": summary["qr"],
    }
    # The recipient's tracking page and the courier's history show the same receipt.
    link = dispatch_client.post(f"/orders/{order['id']}/tracking", json={}, headers=dispatcher.headers).json
    tracked = dispatch_client.get(f"/track/{link['token']}").json["receipt"]["fiscal"]
    assert tracked == {
        "fiscalNumber": summary["fiscal"],
        "receiptId": summary["receiptId"],
        "qr": summary["qr"],
    }
    history = dispatch_client.get("/courier/history", headers=courier.headers).json["history"]
    assert history[0]["fiscalNumber"] == summary["fiscal"]


def test_without_items_the_receipt_has_a_goods_line_a_fee_line_and_the_shops_tin_when_issued_as_agent(
    dispatch_app, dispatch_client, owner, dispatcher, courier, ehdm, sender
):
    set_up(dispatch_client, owner, ehdm, issueAsAgent=True)
    order = delivered_cash_order(dispatch_client, dispatcher, courier, 7000, fee=1000, partnerTin="01234567")
    run(dispatch_app, sender)
    [printed] = ehdm.printed(CRN)
    assert printed["request"]["partnerTin"] == "01234567"
    assert [(i["goodCode"], i["price"]) for i in printed["request"]["items"]] == [
        ("GOODS", "6000.00"),
        ("DELIVERY", "1000.00"),
    ]
    assert receipt_of(dispatch_client, dispatcher, order["id"])["fiscalReceipt"]["state"] == "printed"


def test_the_receipts_waiting_to_be_printed_are_a_queue_of_the_metrics(
    dispatch_app, dispatch_client, owner, dispatcher, courier, ehdm, sender
):
    from tests.common.test_metrics import _samples

    set_up(dispatch_client, owner, ehdm)
    delivered_cash_order(dispatch_client, dispatcher, courier, 1000)
    queue = frozenset({"queue": "fiscal_receipts"}.items())
    assert _samples(dispatch_client)[("appliance_queue_depth", queue)] == 1
    run(dispatch_app, sender)
    assert _samples(dispatch_client)[("appliance_queue_depth", queue)] == 0


def test_an_order_not_paid_in_cash_or_a_company_without_e_hdm_queues_no_receipt(
    dispatch_app, dispatch_client, owner, dispatcher, courier, ehdm, sender
):
    order = delivered_cash_order(dispatch_client, dispatcher, courier, 3000)  # no e-HDM settings
    assert order["fiscalReceipt"] is None
    set_up(dispatch_client, owner, ehdm)
    prepaid = assigned_order(dispatch_client, dispatcher, courier, amountAmd=3000)
    courier_status(dispatch_client, courier, prepaid["id"], status="picked_up")
    courier_status(dispatch_client, courier, prepaid["id"], status="delivered")
    assert run(dispatch_app, sender) == 0
    assert FiscalReceipt.select().count() == 0 and ehdm.printed() == []


@pytest.mark.parametrize("fault", ["drop", "hang"])
def test_a_print_whose_answer_is_lost_is_never_printed_again_and_a_person_records_the_receipt_found(
    dispatch_app, dispatch_client, owner, dispatcher, courier, ehdm, sender, fault
):
    set_up(dispatch_client, owner, ehdm)
    order = delivered_cash_order(dispatch_client, dispatcher, courier, 2500)
    ehdm.fault = fault  # the server prints, then closes the connection or never answers
    run(dispatch_app, sender)
    [printed] = ehdm.printed(CRN)
    row = FiscalReceipt.get(FiscalReceipt.order == int(order["id"]))
    assert row.status == "unknown" and row.request is not None and row.call_started_at is not None
    flagged = receipt_of(dispatch_client, dispatcher, order["id"])
    assert flagged["needsAttention"]["move"] == "fiscal_receipt"
    FiscalReceipt.update(next_attempt_at=clock.now()).execute()
    assert run(dispatch_app, sender) == 0  # a receipt waiting on a person is not sent again
    assert len(ehdm.printed(CRN)) == 1
    wrong = dispatch_client.post(
        f"/orders/{order['id']}/fiscal-receipts/decision",
        json={"outcome": "printed", "receiptId": "999999"},
        headers=dispatcher.headers,
    )
    assert wrong.status_code == 422 and wrong.mimetype == "application/problem+json"
    found = dispatch_client.post(
        f"/orders/{order['id']}/fiscal-receipts/decision",
        json={"outcome": "printed", "receiptId": printed["summary"]["receiptId"]},
        headers=dispatcher.headers,
    )
    assert found.status_code == 200, found.json
    assert found.json["status"] == "printed" and found.json["fiscalNumber"] == printed["summary"]["fiscal"]
    after = receipt_of(dispatch_client, dispatcher, order["id"])
    assert after["needsAttention"] is None
    assert after["fiscalReceipt"]["fiscalNumber"] == printed["summary"]["fiscal"]
    assert len(ehdm.printed(CRN)) == 1


def test_a_process_stopped_mid_call_leaves_the_receipt_to_a_person_who_may_have_it_printed_once(
    dispatch_app, dispatch_client, owner, dispatcher, courier, ehdm, sender
):
    set_up(dispatch_client, owner, ehdm)
    order = delivered_cash_order(dispatch_client, dispatcher, courier, 2500)
    # What a process killed after storing its request leaves: "sending", its lease run out.
    FiscalReceipt.update(status="sending", lease_holder="gone", lease_until=clock.now()).execute()
    run(dispatch_app, sender)
    assert FiscalReceipt.get().status == "unknown" and ehdm.printed() == []
    decided = dispatch_client.post(
        f"/orders/{order['id']}/fiscal-receipts/decision",
        json={"outcome": "not_printed"},
        headers=dispatcher.headers,
    )
    assert decided.status_code == 200 and decided.json["status"] == "queued"
    run(dispatch_app, sender)
    assert len(ehdm.printed(CRN)) == 1
    again = dispatch_client.post(
        f"/orders/{order['id']}/fiscal-receipts/decision",
        json={"outcome": "not_printed"},
        headers=dispatcher.headers,
    )
    assert again.status_code == 409


def test_a_refused_certificate_prints_nothing_and_the_receipt_is_printed_once_the_right_one_is_set(
    dispatch_app, dispatch_client, owner, dispatcher, courier, ehdm, sender
):
    set_up(dispatch_client, owner, ehdm)
    strangers_cert, strangers_key = Authority("another CA").issue(CRN)
    answer = dispatch_client.put(
        "/company/fiscal",
        json=credentials(ehdm) | {"certificatePem": strangers_cert, "privateKeyPem": strangers_key},
        headers=owner.headers,
    )
    assert answer.status_code == 200
    order = delivered_cash_order(dispatch_client, dispatcher, courier, 1200)
    run(dispatch_app, sender)
    row = FiscalReceipt.get()
    assert row.status == "queued" and row.attempts == 1 and "refused or did not answer" in row.last_error
    assert ehdm.printed() == [] and ("", "print") not in ehdm.calls
    assert receipt_of(dispatch_client, dispatcher, order["id"])["needsAttention"] is None
    set_up(dispatch_client, owner, ehdm)
    FiscalReceipt.update(next_attempt_at=clock.now()).execute()
    run(dispatch_app, sender)
    assert len(ehdm.printed(CRN)) == 1 and FiscalReceipt.get().status == "printed"


def test_a_refusal_by_the_service_prints_nothing_and_flags_the_order(
    dispatch_app, dispatch_client, owner, dispatcher, courier, ehdm, sender
):
    dispatch_client.put("/company/fiscal", json=credentials(ehdm), headers=owner.headers)  # never activated
    order = delivered_cash_order(dispatch_client, dispatcher, courier, 1200)
    run(dispatch_app, sender)
    row = FiscalReceipt.get()
    assert row.status == "failed" and "1002" in row.last_error and ehdm.printed() == []
    assert receipt_of(dispatch_client, dispatcher, order["id"])["needsAttention"]["move"] == "fiscal_receipt"


def test_a_return_of_a_delivered_cash_order_prints_its_return_receipt_once(
    dispatch_app, dispatch_client, owner, dispatcher, courier, ehdm, sender
):
    set_up(dispatch_client, owner, ehdm)
    order = delivered_cash_order(dispatch_client, dispatcher, courier, 4500, fee=500, items=ITEMS)
    path = f"/orders/{order['id']}/fiscal-receipts/return"
    assert dispatch_client.post(path, headers=dispatcher.headers).status_code == 409  # not printed yet
    run(dispatch_app, sender)
    asked = dispatch_client.post(path, headers=dispatcher.headers)
    assert asked.status_code == 202 and asked.json["kind"] == "return"
    assert dispatch_client.post(path, headers=dispatcher.headers).status_code == 409
    run(dispatch_app, sender)
    run(dispatch_app, sender)
    [sale] = ehdm.printed(CRN, "sale")
    [back] = ehdm.printed(CRN, "return")
    assert sale["returned"] and back["request"]["receiptId"] == sale["summary"]["receiptId"]
    assert back["request"]["cashAmountForReturn"] == "4500.00"
    assert len(back["request"]["returnItemList"]) == 3
    assert receipt_of(dispatch_client, dispatcher, order["id"])["fiscalReceipt"]["state"] == "returned"
    listed = dispatch_client.get(f"/orders/{order['id']}/fiscal-receipts", headers=dispatcher.headers).json
    assert [(r["kind"], r["status"]) for r in listed["receipts"]] == [
        ("sale", "printed"),
        ("return", "printed"),
    ]


def test_a_sale_is_returned_through_the_companys_new_register_naming_the_one_that_printed_it(
    dispatch_app, dispatch_client, owner, dispatcher, courier, ehdm, sender
):
    set_up(dispatch_client, owner, ehdm)
    order = delivered_cash_order(dispatch_client, dispatcher, courier, 2000)
    run(dispatch_app, sender)
    set_up(dispatch_client, owner, ehdm, crn="52014202")  # the company's register replaced
    returned = dispatch_client.post(
        f"/orders/{order['id']}/fiscal-receipts/return", headers=dispatcher.headers
    )
    assert returned.status_code == 202
    run(dispatch_app, sender)
    [back] = ehdm.printed("52014202", "return")
    assert back["request"]["sourceCrn"] == CRN and ehdm.printed(CRN, "sale")[0]["returned"]


def test_the_client_key_is_sealed_at_rest_and_never_answered(
    dispatch_app, dispatch_client, owner, company, ehdm
):
    fields = credentials(ehdm)
    answer = dispatch_client.put("/company/fiscal", json=fields, headers=owner.headers)
    assert "PRIVATE KEY" not in answer.text and answer.json["settings"]["hasPrivateKey"] is True
    read = dispatch_client.get("/company/fiscal", headers=owner.headers)
    assert "PRIVATE KEY" not in read.text and read.json["settings"]["crn"] == CRN
    from appliance.dispatch.db import database

    raw = database.execute_sql("SELECT * FROM fiscal_settings").fetchall()
    flat = b"".join(bytes(v) if isinstance(v, (bytes, memoryview)) else str(v).encode() for v in raw[0])
    body = "".join(fields["privateKeyPem"].splitlines()[1:-1]).encode()
    assert b"PRIVATE KEY" not in flat and body[:40] not in flat
    master_key = dispatch_app.extensions["dispatch"].master_key
    row = FiscalSettings.get()
    assert unseal(master_key, company.id, row.key_cipher) == fields["privateKeyPem"]
    with pytest.raises(InvalidTag):  # bound to the company: another company's row does not open it
        unseal(master_key, company.id + 1, row.key_cipher)
    kept = dict(fields)
    del kept["privateKeyPem"]  # left out: the key saved before is kept
    assert dispatch_client.put("/company/fiscal", json=kept, headers=owner.headers).status_code == 200
    assert unseal(master_key, company.id, FiscalSettings.get().key_cipher) == fields["privateKeyPem"]


def test_another_companys_orders_and_settings_behave_as_missing(
    dispatch_app, dispatch_client, owner, dispatcher, courier, ehdm, sender
):
    set_up(dispatch_client, owner, ehdm)
    order = delivered_cash_order(dispatch_client, dispatcher, courier, 1500)
    run(dispatch_app, sender)
    other = make_company("Other")
    stranger = make_member(dispatch_app, other, "owner")
    assert dispatch_client.get("/company/fiscal", headers=stranger.headers).json == {"settings": None}
    assert dispatch_client.post("/company/fiscal/check", headers=stranger.headers).status_code == 404
    for method, path, body in (
        ("get", f"/orders/{order['id']}/fiscal-receipts", None),
        ("post", f"/orders/{order['id']}/fiscal-receipts/return", None),
        ("post", f"/orders/{order['id']}/fiscal-receipts/decision", {"outcome": "not_printed"}),
    ):
        answer = getattr(dispatch_client, method)(path, json=body, headers=stranger.headers)
        assert answer.status_code == 404, (path, answer.json)
    assert (
        dispatch_client.get(f"/orders/{order['id']}/fiscal-receipts", headers=owner.headers).status_code
        == 200
    )


def test_only_the_owner_sets_and_checks_the_credentials(dispatch_client, owner, dispatcher, ehdm):
    assert (
        dispatch_client.put("/company/fiscal", json=credentials(ehdm), headers=dispatcher.headers).status_code
        == 403
    )
    assert dispatch_client.get("/company/fiscal", headers=dispatcher.headers).status_code == 403
    assert (
        dispatch_client.put("/company/fiscal", json=credentials(ehdm), headers=owner.headers).status_code
        == 200
    )
    checked = dispatch_client.post("/company/fiscal/check", headers=owner.headers)
    assert checked.status_code == 200 and checked.json["ok"] is True
    # Not activated yet: e-HDM refuses the goods lists, said as a 502 with its words.
    refused = dispatch_client.get("/company/fiscal/goods?taxRegime=1&tin=02612345", headers=owner.headers)
    assert refused.status_code == 502 and "1002" in refused.json["errors"][0]["message"]
    assert dispatch_client.post("/company/fiscal/activate", headers=owner.headers).status_code == 200
    goods = dispatch_client.get("/company/fiscal/goods?taxRegime=1&tin=02612345", headers=owner.headers)
    assert goods.status_code == 200, goods.json
    assert goods.json["goodLists"][0]["goods"][0] == {
        "goodName": "Delivery",
        "goodCode": "DELIVERY",
        "price": "1000.00",
    }
    bad = dispatch_client.get("/company/fiscal/goods?taxRegime=1&tin=123", headers=owner.headers)
    assert bad.status_code == 400


def _other_key() -> str:
    return Authority("x").issue("x")[1]


@pytest.mark.parametrize(
    ("change", "status", "field"),
    [
        ({"privateKeyPem": None}, 422, "privateKeyPem"),  # none saved before
        (
            {"privateKeyPem": "-----BEGIN PRIVATE KEY-----\nnonsense\n-----END PRIVATE KEY-----\n"},
            422,
            "privateKeyPem",
        ),
        ({"privateKeyPem": "other"}, 422, "privateKeyPem"),  # not the certificate's key
        (
            {"certificatePem": "-----BEGIN CERTIFICATE-----\nxx\n-----END CERTIFICATE-----\n"},
            422,
            "certificatePem",
        ),
        ({"certificatePem": "not pem"}, 400, "certificatePem"),
        ({"baseUrl": "http://localhost/x"}, 400, "baseUrl"),
        ({"crn": "52 01"}, 400, "crn"),
        ({"crn": "5" * 33}, 400, "crn"),
        ({"taxRegime": 4}, 400, "taxRegime"),
        ({"cashierId": 0}, 400, "cashierId"),
        ({"adgCode": "abc"}, 400, "adgCode"),
        ({"unit": "u" * 21}, 400, "unit"),
        ({"privateKeyPem": "k" * 20001}, 400, "privateKeyPem"),
    ],
)
def test_bad_credentials_get_a_problem_naming_the_field(dispatch_client, owner, ehdm, change, status, field):
    fields = credentials(ehdm) | change
    if change.get("privateKeyPem") == "other":
        fields["privateKeyPem"] = _other_key()
    answer = dispatch_client.put("/company/fiscal", json=fields, headers=owner.headers)
    assert answer.status_code == status, answer.json
    assert answer.mimetype == "application/problem+json"
    assert field in {e["field"].split(".")[-1] for e in answer.json["errors"]}, answer.json
    assert FiscalSettings.select().count() == 0


@pytest.mark.parametrize(
    "items",
    [
        [{"name": "x", "quantity": "0", "priceAmd": 100}],
        [{"name": "x", "quantity": "1.2345", "priceAmd": 100}],
        [{"name": "x", "quantity": "1", "priceAmd": 0}],
        [{"name": "", "quantity": "1", "priceAmd": 100}],
        [{"name": "x", "quantity": "1", "priceAmd": 100, "adgCode": "no"}],
        [],
        [{"name": "x", "quantity": "1", "priceAmd": 100}] * 101,
    ],
)
def test_bad_item_lines_get_a_problem(dispatch_client, dispatcher, items):
    from tests.dispatch.orders_helpers import ORDER

    answer = dispatch_client.post("/orders", json=ORDER | {"items": items}, headers=dispatcher.headers)
    assert answer.status_code in (400, 422), answer.json
    assert answer.mimetype == "application/problem+json"


def test_item_lines_and_the_partner_tin_are_set_and_cleared_by_patch(dispatch_client, dispatcher):
    from tests.dispatch.orders_helpers import create_order

    order = create_order(dispatch_client, dispatcher)
    assert order["items"] is None and order["fiscalReceipt"] is None
    patched = dispatch_client.patch(
        f"/orders/{order['id']}", json={"items": ITEMS, "partnerTin": "01234567"}, headers=dispatcher.headers
    )
    assert patched.status_code == 200, patched.json
    assert (
        patched.json["order"]["items"][0] == {**ITEMS[0]}
        and patched.json["order"]["partnerTin"] == "01234567"
    )
    cleared = dispatch_client.patch(
        f"/orders/{order['id']}", json={"items": None, "partnerTin": None}, headers=dispatcher.headers
    )
    assert cleared.json["order"]["items"] is None and cleared.json["order"]["partnerTin"] is None


def test_a_shops_key_and_the_import_give_an_order_its_item_lines_and_partner_tin(
    dispatch_client, owner, dispatcher
):
    from tests.dispatch.import_helpers import csv_bytes, post_csv, row
    from tests.dispatch.orders_helpers import ORDER

    key = dispatch_client.post(
        "/company/integration-keys", json={"name": "Shop"}, headers=owner.headers
    ).json["key"]
    by_key = dispatch_client.post(
        "/orders",
        json=ORDER | {"items": ITEMS, "partnerTin": "01234567"},
        headers={"Authorization": f"Bearer {key}"},
    )
    assert by_key.status_code == 201, by_key.json
    assert by_key.json["order"]["items"][1]["quantity"] == "0.5"
    data = csv_bytes(
        [
            row(1, items="Թեյնիկ | 2 | 1 500 | 8516; Բաժակ | 0,5 | 2000", partnerTin="1234567"),
            row(2, items="only a name"),
        ]
    )
    answer = post_csv(dispatch_client, dispatcher, data)
    assert answer.status_code == 200, answer.json
    assert [r["row"] for r in answer.json["refused"]] == [3]
    imported = Order.get(Order.external_ref == "SHOP-1")
    assert imported.partner_tin == "01234567"
    assert imported.fiscal_items == (
        '[{"name":"Թեյնիկ","quantity":"2","priceAmd":1500,"adgCode":"8516"},'
        '{"name":"Բաժակ","quantity":"0.5","priceAmd":2000}]'
    )


def test_a_shops_statement_shows_how_much_of_its_cash_has_a_printed_receipt(
    dispatch_app, dispatch_client, owner, dispatcher, courier, ehdm, sender
):
    """Collected, handed over, receipted: the statement's cash says what has its receipt printed
    and what still waits for one (a lagging receipt is shown, it does not hold the payment)."""
    from tests.dispatch.test_shop_statements import new_key, period, shop_order

    set_up(dispatch_client, owner, ehdm)
    key_id, key = new_key(dispatch_client, owner, "Shop Arev")
    for amount in (4_500, 12_000):
        shop_order(dispatch_client, key, dispatcher, courier, isCod=True, amountAmd=amount)

    def cash() -> dict:
        answer = dispatch_client.get(f"/shops/{key_id}/statement?{period()}", headers=dispatcher.headers)
        assert answer.status_code == 200, answer.json
        return answer.json["cash"]

    before = cash()
    assert (before["ordersCollectedAmd"], before["receiptedAmd"], before["withoutReceiptAmd"]) == (
        16_500,
        0,
        16_500,
    )
    assert run(dispatch_app, sender) == 2
    after = cash()
    assert (after["receiptedAmd"], after["withoutReceiptAmd"]) == (16_500, 0)
    assert sum(int(float(p["request"]["cashAmount"])) for p in ehdm.printed(CRN)) == after["receiptedAmd"]


def test_the_tracking_page_draws_the_printed_receipts_qr_and_nothing_before(
    dispatch_app, dispatch_client, owner, dispatcher, courier, ehdm, sender
):
    import io

    import segno

    set_up(dispatch_client, owner, ehdm)
    order = delivered_cash_order(dispatch_client, dispatcher, courier, 4500)
    link = dispatch_client.post(f"/orders/{order['id']}/tracking", json={}, headers=dispatcher.headers).json
    path = f"/track/{link['token']}/receipt-qr.svg"
    assert dispatch_client.get(path).status_code == 404  # queued: no receipt yet
    assert run(dispatch_app, sender) == 1
    [printed] = ehdm.printed(CRN)
    answer = dispatch_client.get(path)
    assert answer.status_code == 200 and answer.mimetype == "image/svg+xml"
    expected = io.BytesIO()
    segno.make(printed["summary"]["qr"], error="m").save(expected, kind="svg", scale=4, border=2, title="QR")
    assert answer.data == expected.getvalue()  # the QR of exactly the text e-HDM answered
    assert answer.headers["Cache-Control"] == "private, no-store"
    wrong = link["token"][:-1] + ("A" if link["token"][-1] != "A" else "B")
    assert dispatch_client.get(f"/track/{wrong}/receipt-qr.svg").status_code == 404
