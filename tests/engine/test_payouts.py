"""Payout submission, idempotency, detail, listing and tenant scope."""

from __future__ import annotations

import json
import random
import threading

import pytest
from eth_utils import to_checksum_address

from appliance.engine.chain.registry import eip55
from appliance.engine.models import Payout
from tests.engine.helpers import Signer, make_operator, payout_request


@pytest.fixture
def signer(engine_app, engine_client) -> Signer:
    op = make_operator(engine_app)
    return Signer(engine_client, op["operatorId"], op["secret"])


@pytest.fixture
def other(engine_app, engine_client) -> Signer:
    op = make_operator(engine_app, "op_beta00001")
    return Signer(engine_client, op["operatorId"], op["secret"])


def test_a_new_payout_is_accepted_as_requested(signer) -> None:
    response = signer.submit("pyo_first0001")
    assert response.status_code == 201
    assert response.json == {"payoutId": "pyo_first0001", "status": "REQUESTED", "outcome": "ACCEPTED"}


def test_the_same_instruction_with_the_same_key_is_replayed(signer) -> None:
    signer.submit("pyo_first0001", key="key-same-0001")
    again = signer.submit("pyo_first0001", key="key-same-0001")
    assert again.status_code == 200
    assert again.json["outcome"] == "REPLAYED"
    assert Payout.select().count() == 1


def test_a_reused_key_with_another_instruction_is_409_conflict(signer) -> None:
    signer.submit("pyo_first0001", key="key-same-0001", amount="1000")
    response = signer.submit("pyo_first0001", key="key-same-0001", amount="2000")
    assert response.status_code == 409
    assert response.json["type"] == "about:blank#conflict"


def test_a_known_payout_id_under_a_new_key_is_409(signer) -> None:
    signer.submit("pyo_first0001", key="key-one-00001")
    assert signer.submit("pyo_first0001", key="key-two-00001").status_code == 409


def test_ten_simultaneous_identical_submissions_create_one_payout(engine_app, signer) -> None:
    results: list[int] = []
    body = json.dumps(payout_request("pyo_race00001", amount="700")).encode()
    prepared = [signer.headers("POST", "/v1/payouts", body, key="key-race-0001") for _ in range(10)]

    def send(headers) -> None:
        results.append(engine_app.test_client().post("/v1/payouts", data=body, headers=headers).status_code)

    threads = [threading.Thread(target=send, args=(h,)) for h in prepared]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [200] * 9 + [201]
    assert Payout.select().count() == 1


def test_detail_shows_transitions_attempts_and_the_broadcast_reservation(signer) -> None:
    signer.submit("pyo_detail001", amount="123456789012345678901234567890123456789")
    body = signer.request("GET", "/v1/payouts/pyo_detail001").json
    assert body["amountMinor"] == "123456789012345678901234567890123456789"
    assert body["status"] == "REQUESTED"
    assert body["chainId"] == "eth_local"
    assert body["transitions"] == [{"from": None, "to": "REQUESTED", "occurredAt": body["createdAt"]}]
    assert body["attempts"] == []
    assert body["broadcast"] is None
    assert body["txHash"] is None and body["reason"] is None


def test_another_operators_payout_is_404_exactly_like_a_missing_one(signer, other) -> None:
    signer.submit("pyo_mine00001")
    theirs = other.request("GET", "/v1/payouts/pyo_mine00001")
    missing = other.request("GET", "/v1/payouts/pyo_none00001")
    assert theirs.status_code == missing.status_code == 404
    assert {k: v for k, v in theirs.json.items() if k != "requestId"} == {
        k: v for k, v in missing.json.items() if k != "requestId"
    }
    assert other.request("GET", "/v1/payouts").json["payouts"] == []


def test_cursor_paging_visits_each_payout_exactly_once_newest_first(signer, other) -> None:
    for n in range(23):
        signer.submit(f"pyo_page{n:05d}")
    other.submit("pyo_other0001")
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        path = "/v1/payouts?limit=5" + (f"&cursor={cursor}" if cursor else "")
        body = signer.request("GET", path).json
        seen += [p["payoutId"] for p in body["payouts"]]
        pages += 1
        cursor = body["nextCursor"]
        if cursor is None:
            break
    assert pages == 5
    assert seen == [f"pyo_page{n:05d}" for n in reversed(range(23))]


def test_listing_filters_by_status_and_defaults_to_fifty(signer) -> None:
    for n in range(3):
        signer.submit(f"pyo_stat{n:05d}")
    assert len(signer.request("GET", "/v1/payouts?status=REQUESTED").json["payouts"]) == 3
    assert signer.request("GET", "/v1/payouts?status=COMPLETED").json == {"payouts": [], "nextCursor": None}


@pytest.mark.parametrize(
    "query", ["limit=0", "limit=101", "limit=x", "status=DONE", "cursor=%21%21", "cursor=bm9wZQ"]
)
def test_bad_listing_parameters_are_400(signer, query: str) -> None:
    assert signer.request("GET", f"/v1/payouts?{query}").status_code == 400


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("payoutId", "pyo_short"),
        ("payoutId", "pyo_" + "a" * 49),
        ("payoutId", "pyo_ABCDEFGH"),
        ("payoutId", "pay_abcdefgh"),
        ("asset", "U"),
        ("asset", "usdc"),
        ("asset", "A" * 17),
        ("amountMinor", 1000),
        ("amountMinor", 10.5),
        ("amountMinor", "0"),
        ("amountMinor", "0100"),
        ("amountMinor", "1" * 40),
        ("amountMinor", "-5"),
        ("amountMinor", "1.5"),
        ("destination", ""),
        ("destination", "0x ab"),
        ("destination", "a" * 257),
    ],
)
def test_each_malformed_field_is_400_before_anything_is_stored(signer, field: str, value) -> None:
    payload = payout_request()
    payload[field] = value
    response = signer.request("POST", "/v1/payouts", payload, key="key-valid-001")
    assert response.status_code == 400
    assert set(response.json) >= {"type", "detail", "status", "requestId"}
    assert Payout.select().count() == 0


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("payoutId", "pyo_" + "a" * 8),
        ("payoutId", "pyo_" + "9" * 48),
        ("amountMinor", "9" * 39),
        ("destination", "0x" + "D" * 40),
    ],
)
def test_values_at_the_edges_of_their_patterns_are_accepted(signer, field: str, value: str) -> None:
    payload = payout_request(asset="ETH", amount="1")
    payload[field] = value
    assert signer.request("POST", "/v1/payouts", payload, key="key-edge-0001").status_code == 201


@pytest.mark.parametrize(
    "destination",
    [
        "d" * 256,
        "0xabc",
        "0x" + "g" * 40,
        "0xAbababababababababababababababababababab",
        "0x" + "ab" * 20 + "\n",
        "ab" * 21,
    ],
)
def test_a_destination_that_is_not_an_address_of_the_assets_chain_is_400_and_nothing_is_stored(
    signer, destination: str
) -> None:
    payload = payout_request(asset="ETH", amount="1", destination=destination)
    response = signer.request("POST", "/v1/payouts", payload, key="key-dest-0001")
    assert response.status_code == 400
    assert response.get_json()["detail"]
    with signer.client.application.app_context():
        assert Payout.select().count() == 0


def test_a_destination_with_its_eip55_checksum_or_in_one_case_is_accepted(signer) -> None:
    checksummed = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"  # EIP-55's own example
    spellings = [checksummed, checksummed.lower(), "0x" + checksummed[2:].upper()]
    for n, destination in enumerate(spellings):
        payload = payout_request(f"pyo_eipfiftyfive{n}", asset="ETH", amount="1", destination=destination)
        response = signer.request("POST", "/v1/payouts", payload, key=f"key-eip55-{n:04d}")
        assert response.status_code == 201, response.get_json()
    with signer.client.application.app_context():
        assert sorted(p.destination for p in Payout.select()) == sorted(spellings)


def test_the_eip55_spelling_is_the_one_eth_utils_gives() -> None:
    rng = random.Random(55)
    for _ in range(300):
        address = "0x" + "".join(rng.choice("0123456789abcdefABCDEF") for _ in range(40))
        assert eip55(address) == to_checksum_address(address)


@pytest.mark.parametrize("key", [None, "short", "k" * 129, "bad key!"])
def test_a_missing_or_malformed_idempotency_key_is_400(signer, key) -> None:
    payload = payout_request(amount="1")
    response = signer.request("POST", "/v1/payouts", payload, key=key)
    assert response.status_code == 400


def test_a_malformed_payout_id_in_the_path_is_400(signer) -> None:
    assert signer.request("GET", "/v1/payouts/pyo_UPPER0001").status_code == 400


def test_the_openapi_document_describes_the_payout_routes(engine_client) -> None:
    doc = engine_client.get("/openapi.json").json
    post = doc["paths"]["/v1/payouts"]["post"]
    assert {"201", "400", "401", "409"} <= set(post["responses"])
    assert doc["paths"]["/v1/payouts/{payout_id}"]["get"]["parameters"][0]["schema"]["pattern"].startswith(
        "^pyo_"
    )


def test_the_openapi_document_describes_partial_delivery(engine_client) -> None:
    schemas = engine_client.get("/openapi.json").json["components"]["schemas"]
    entry = schemas["PayoutEntry"]
    assert {"deliveredMinor", "debitedMinor"} <= set(entry["properties"])
    assert "COMPLETED_SHORT" in str(entry["properties"]["status"]) + str(schemas.get("Status", ""))


def test_the_embedded_chain_offers_eth_and_usdc_as_the_specs_asset_entries(signer) -> None:
    response = signer.request("GET", "/v1/assets")
    assert response.status_code == 200
    assets = {a["assetId"]: a for a in response.get_json()["assets"]}
    assert set(assets) == {"eth_local:ETH", "eth_local:USDC"}
    assert assets["eth_local:ETH"] == {
        "assetId": "eth_local:ETH",
        "assetCode": "ETH",
        "chainId": "eth_local",
        "kind": "native",
        "contract": None,
        "decimals": 18,
        "networkId": 1337,
        "confirmations": 2,
        "environment": "local",
    }
    usdc = assets["eth_local:USDC"]
    assert (usdc["kind"], usdc["decimals"], usdc["environment"]) == ("ERC20", 6, "local")
    assert usdc["contract"].startswith("0x") and len(usdc["contract"]) == 42


def test_without_a_custody_key_the_payout_wallet_is_503_after_the_signature_check(signer) -> None:
    assert signer.client.get("/v1/payout-wallet").status_code == 401
    response = signer.request("GET", "/v1/payout-wallet")
    assert response.status_code == 503
    assert "custody" in response.get_json()["detail"]


def _signed_submission(
    signer, payout_id: str, key: str, amount: str = "1000"
) -> tuple[bytes, dict[str, str]]:
    body = json.dumps(payout_request(payout_id, amount=amount)).encode()
    return body, signer.headers("POST", "/v1/payouts", body, key=key)


def test_a_submission_sent_twice_with_one_signature_is_accepted_once_then_refused_as_a_replay(signer) -> None:
    body, headers = _signed_submission(signer, "pyo_twice0001", "key-twice-001")
    assert signer.client.post("/v1/payouts", data=body, headers=headers).status_code == 201
    assert signer.client.post("/v1/payouts", data=body, headers=headers).status_code == 401
    assert Payout.select().count() == 1


@pytest.mark.parametrize("asset", ["USDC", "XYZ"])  # refused inside the transaction (409), before it (400)
def test_a_refused_submission_uses_up_its_signature_all_the_same(signer, asset: str) -> None:
    signer.submit("pyo_taken0001", key="key-taken-001")
    body = json.dumps(payout_request("pyo_taken0001", asset=asset, amount="5")).encode()
    headers = signer.headers("POST", "/v1/payouts", body, key="key-other-001")
    first = signer.client.post("/v1/payouts", data=body, headers=headers)
    assert first.status_code == (409 if asset == "USDC" else 400)
    assert signer.client.post("/v1/payouts", data=body, headers=headers).status_code == 401


def test_simultaneous_sends_of_one_signed_submission_admit_exactly_one(engine_app, signer) -> None:
    body, headers = _signed_submission(signer, "pyo_same00001", "key-same-sig1")
    results: list[int] = []

    def send() -> None:
        results.append(engine_app.test_client().post("/v1/payouts", data=body, headers=headers).status_code)

    threads = [threading.Thread(target=send) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [201] + [401] * 5
    assert Payout.select().count() == 1
