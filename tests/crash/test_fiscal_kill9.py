"""A fiscal receipt is never printed twice when the server dies mid-print (issue 47): a real
`appliance serve` sends a print to the e-HDM test server, which prints it and holds the answer;
kill -9 of the whole server; after the restart the receipt's row is found still "sending" (its
request stored before the call), so the order is flagged for a person instead of printed again,
and the person records the receipt e-HDM kept (looked up with printCopy)."""

from __future__ import annotations

import time

import pytest
import requests

from tests.conftest import BACKEND
from tests.crash.harness import start_server
from tests.dispatch.ehdm_server import EhdmServer
from tests.dispatch.orders_helpers import ORDER
from tests.dispatch.test_fiscal_receipts import CRN, credentials

pytestmark = [
    pytest.mark.server,
    pytest.mark.skipif(
        BACKEND != "sqlite", reason="kills a server on the SQLite files of its data directory"
    ),
]


def _until(what: str, check, seconds: float = 90.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"{what}: not within {seconds} s")


def test_a_server_killed_mid_print_never_prints_the_receipt_again(settings) -> None:
    from appliance.dispatch.app import create_app
    from tests.dispatch.factory import make_company, make_member

    app = create_app(settings)
    company = make_company("Arev")
    owner = make_member(app, company, "owner")
    courier = make_member(app, company, "courier")
    env = {"APPLIANCE_EHDM_ALLOW_PRIVATE": "1"}
    ehdm = EhdmServer().start()
    server = start_server(settings.data_dir, "--processes", "1", env=env)
    try:
        url = server.dispatch
        assert requests.put(f"{url}/company/fiscal", json=credentials(ehdm), headers=owner.headers).ok
        assert requests.post(f"{url}/company/fiscal/activate", headers=owner.headers).ok
        order = requests.post(f"{url}/orders", json=ORDER | {"isCod": True}, headers=owner.headers).json()[
            "order"
        ]
        requests.post(f"{url}/orders/{order['id']}/status", json={"status": "ready"}, headers=owner.headers)
        requests.post(
            f"{url}/orders/{order['id']}/assign",
            json={"courierId": courier.courier.id},
            headers=owner.headers,
        )
        moves = f"{url}/courier/orders/{order['id']}/status"
        assert requests.post(moves, json={"status": "picked_up"}, headers=courier.headers).ok
        ehdm.fault = "hang"  # e-HDM prints, then holds its answer
        assert requests.post(moves, json={"status": "delivered"}, headers=courier.headers).ok
        _until("the print reaches e-HDM", lambda: ehdm.printed(CRN))
        server.kill_group()
        server = start_server(settings.data_dir, "--processes", "1", env=env)
        url = server.dispatch
        flagged = _until(
            "the order is flagged",
            lambda: (
                (o := requests.get(f"{url}/orders/{order['id']}", headers=owner.headers).json()["order"])[
                    "needsAttention"
                ]
                and o
            ),
        )
        assert flagged["needsAttention"]["move"] == "fiscal_receipt"
        [receipt] = requests.get(f"{url}/orders/{order['id']}/fiscal-receipts", headers=owner.headers).json()[
            "receipts"
        ]
        assert receipt["status"] == "unknown" and "stopped" in receipt["lastError"]
        [printed] = ehdm.printed(CRN)
        assert [call for _, call in ehdm.calls].count("print") == 1
        decided = requests.post(
            f"{url}/orders/{order['id']}/fiscal-receipts/decision",
            json={"outcome": "printed", "receiptId": printed["summary"]["receiptId"]},
            headers=owner.headers,
        )
        assert decided.status_code == 200, decided.text
        assert decided.json()["fiscalNumber"] == printed["summary"]["fiscal"]
        assert [call for _, call in ehdm.calls].count("print") == 1
    finally:
        server.stop()
        ehdm.stop()
