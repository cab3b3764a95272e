"""`appliance demo`: a ready-to-try install that works offline. Each step is idempotent (running
demo twice seeds once) and returns lines telling how to try it: roads and map tiles from the shipped
sample streets, a company with an owner, couriers and an order on its way with its tracking page,
an engine operator, the custody key, a funded embedded chain, payouts and a deposit that complete
once `serve` runs, and three commands to try. Printed for a courier company: the dispatch section
first, the payout engine's in a section of its own (`_sections`)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from appliance.settings import Settings

DemoStep = Callable[[Settings, dict[str, Any]], list[str]]

DEMO_COMPANY = "Demo Delivery"
OWNER = ("owner@demo.am", "Anahit Owner", "demo-owner-pass")
COURIERS = [
    ("courier1@demo.am", "Narek Courier", "demo-courier-1"),
    ("courier2@demo.am", "Lilit Courier", "demo-courier-2"),
]
OPERATOR = "op_demo0000001"


def dispatch_step(settings: Settings, state: dict[str, Any]) -> list[str]:
    from appliance.common import clock
    from appliance.common.db import bind_database, connection, write_transaction
    from appliance.common.passwords import hash_password
    from appliance.dispatch.company.admin import create_company_from_options
    from appliance.dispatch.db import database
    from appliance.dispatch.models import Company, Courier, Membership, User

    bind_database(database, settings.dispatch_db_url, busy_timeout_ms=settings.sqlite_busy_timeout_ms)
    with connection(database):
        if Company.get_or_none(Company.name == DEMO_COMPANY) is None:
            result = create_company_from_options(
                name=DEMO_COMPANY,
                city="Yerevan",
                phone="+37410000000",
                owner_email=OWNER[0],
                owner_name=OWNER[1],
                owner_password=OWNER[2],
                depot_name="Republic Square depot",
                depot_address="Republic Square, Yerevan",
                depot_lat=40.1776,
                depot_lon=44.5126,
            )
            company_id = int(result["company"]["id"])
            with write_transaction(database):
                for email, name, password in COURIERS:
                    user = User.create(
                        email=email,
                        display_name=name,
                        password_hash=hash_password(password),
                        email_confirmed=True,  # the operator's own demo accounts
                        created_at=clock.now(),
                        last_company=company_id,
                    )
                    Membership.create(user=user, company=company_id, role="courier", joined_at=clock.now())
                    Courier.create(company=company_id, user=user, display_name=name, created_at=clock.now())
    url = settings.dispatch_public_url
    return [
        f"Dispatcher console: {url}/console/ (sign in as {OWNER[0]} / {OWNER[2]}, the owner;"
        f" the API: POST {url}/auth/login)",
    ]


def courier_app_step(settings: Settings, state: dict[str, Any]) -> list[str]:
    url = settings.dispatch_public_url
    lines = [f"Courier app: {url}/app/ (on a phone, installable; sign in as a courier)"]
    return lines + [f"          courier {email} / {password}" for email, _, password in COURIERS]


SAMPLE_STREETS = Path(__file__).resolve().parent / "sample" / "sample-streets.osm.pbf"
# Points on the sample streets (Monaco's geometry moved onto Yerevan, Yerevan's street names:
# appliance/sample/README.md): the courier's position, and the order's pin when the address index
# is not built (it is placed from the index otherwise).
COURIER_AT = (40.17956, 44.49337)
ORDER_PIN = (40.18977, 44.50546)
DEMO_RECIPIENT = "Demo Recipient"
# The demo order's address, as a dispatcher types it and as the index labels it in each language.
ORDER_ADDRESS = "Աբովյան 10, բն. 12"
ORDER_LABELS = {
    "addressLabelHy": "Աբովյան փողոց 10",
    "addressLabelRu": "улица Абовяна 10",
    "addressLabelEn": "Abovyan Street 10",
}


def geo_step(settings: Settings, state: dict[str, Any]) -> list[str]:
    """Roads, address index and map tiles from the shipped sample extract, built once and cached
    in the data directory (rebuilt when the index is an older version's: its folding differs)."""
    import shutil

    from appliance.dispatch.geocoding.search import IndexMissing, open_index
    from appliance.dispatch.routing import build as routing
    from appliance.dispatch.tiles import build as tiles

    lines = []
    quiet: Callable[[str], None] = lambda _line: None  # noqa: E731
    try:
        open_index(settings.data_dir).close()
        index_current = True
    except IndexMissing:
        index_current = False
    # An older demo's data (Monaco's French names, the old folding): roads, index and tiles again.
    stale = routing.build_info(settings.data_dir) is not None and not index_current
    if routing.build_info(settings.data_dir) is None or not index_current:
        routing.build(SAMPLE_STREETS, settings.data_dir, quiet)
        lines.append(
            "Roads: built from the sample streets (Monaco's geometry moved onto Yerevan, not Yerevan's"
            " roads; Yerevan's street names: search Abovyan 10 or ул. Туманяна 5)"
        )
    redraw = stale and shutil.which("tilemaker") is not None  # else the old tiles still show the roads
    if redraw or not tiles.tiles_path(settings.data_dir).exists():
        if shutil.which("tilemaker") is None:
            lines.append(
                "Map tiles: not built (install Debian's tilemaker, then run demo again): the maps stay blank"
            )
        else:
            tiles.build(SAMPLE_STREETS, settings.data_dir, quiet)
            lines.append("Map tiles: built from the same sample streets")
    return lines


def _dispatch_client(settings: Settings) -> Any:
    from appliance.dispatch.app import create_app

    app = create_app(settings)
    return app.test_client()


def _token(client: Any, email: str, password: str) -> dict[str, str]:
    answer = client.post("/auth/login", json={"email": email, "password": password})
    if answer.status_code != 200:
        raise RuntimeError(f"demo sign-in of {email} failed: {answer.status_code} {answer.get_json()}")
    return {"Authorization": f"Bearer {answer.get_json()['accessToken']}"}


def delivery_step(settings: Settings, state: dict[str, Any]) -> list[str]:
    """A courier on shift near an order they have picked up, and a fresh tracking link for it,
    through the dispatch API itself (the same rules as any client)."""
    from appliance.common import clock

    client = _dispatch_client(settings)
    owner = _token(client, OWNER[0], OWNER[2])
    courier = _token(client, COURIERS[0][0], COURIERS[0][2])
    client.post("/courier/shift/start", headers=courier)  # 409 when already open: fine
    fix = {"lat": COURIER_AT[0], "lon": COURIER_AT[1], "capturedAt": clock.iso(clock.now())}
    client.post("/courier/location", json={"points": [fix]}, headers=courier)
    listed = client.get("/orders?limit=100", headers=owner).get_json()["orders"]
    order = next(
        (o for o in listed if o["recipientName"] == DEMO_RECIPIENT and o["status"] == "picked_up"), None
    )
    if order is None:
        order = _order_on_its_way(settings, client, owner, courier)
    link = client.post(f"/orders/{order['id']}/tracking", json={}, headers=owner).get_json()
    state["tracking_url"] = settings.dispatch_public_url + link["path"]
    return [f"Tracking page of an order on its way: {state['tracking_url']}"]


def _order_on_its_way(settings: Settings, client: Any, owner: dict[str, str], courier: dict[str, str]) -> Any:
    """Create the demo's order at its address, make it ready, assign it to the first courier and
    have the courier pick it up; every answer is checked (a refused step is an error, not an
    order left "ready" behind a link that says it is on its way)."""
    from appliance.dispatch.geocoding.search import Unplaced, locate

    try:
        lat, lon, apartment = locate(settings.data_dir, ORDER_ADDRESS)
    except Unplaced:  # the index is not built: the pin on the same street
        lat, lon, apartment = ORDER_PIN[0], ORDER_PIN[1], "12"

    def call(path: str, body: dict[str, Any], headers: dict[str, str], status: int) -> Any:
        answer = client.post(path, json=body, headers=headers)
        if answer.status_code != status:
            raise RuntimeError(f"demo: POST {path} answered {answer.status_code} {answer.get_json()}")
        return answer.get_json()

    created = call(
        "/orders",
        {
            "recipientName": DEMO_RECIPIENT,
            "recipientPhone": "+37491000000",
            "amountAmd": 4500,
            **ORDER_LABELS,
            "addressDetails": {"apartment": apartment},
            "pin": {"lat": lat, "lon": lon},
        },
        owner,
        201,
    )["order"]
    call(f"/orders/{created['id']}/status", {"status": "ready"}, owner, 200)
    me = client.get("/courier/me", headers=courier).get_json()
    # The API's ids are strings on the way out and integers on the way in (POST /orders/{id}/assign
    # takes {courierId integer}): "12" is refused with 400.
    call(f"/orders/{created['id']}/assign", {"courierId": int(me["courier"]["id"])}, owner, 201)
    return call(f"/courier/orders/{created['id']}/status", {"status": "picked_up"}, courier, 200)["order"]


def engine_step(settings: Settings, state: dict[str, Any]) -> list[str]:
    from appliance.common.db import bind_database, connection
    from appliance.common.keys import load_or_create_master_key
    from appliance.engine.auth.operators import create_operator
    from appliance.engine.db import database
    from appliance.engine.models import Operator

    bind_database(database, settings.engine_db_url, busy_timeout_ms=settings.sqlite_busy_timeout_ms)
    with connection(database):
        if Operator.get_or_none(Operator.id == OPERATOR) is not None:
            return [
                f"Engine: operator {OPERATOR} exists (its secret was shown once; "
                f"`appliance operator add-secret {OPERATOR}` makes another)"
            ]
        created = create_operator(load_or_create_master_key(settings.data_dir), OPERATOR)
    state["secret"] = created["secret"]
    return [
        f"Engine: operator {OPERATOR} secret {created['secret']} "
        "(shown once; sign requests as docs/engine-auth.md says)"
    ]


DEMO_FUNDS = (("ETH", 100 * 10**18), ("USDC", 1_000_000 * 10**6))  # the payout wallet's, in minor units
DEMO_FEE_FUNDS = 10 * 10**18  # the fee wallet's ETH, for gas top-ups
DEMO_PAYOUTS = (
    ("pyo_demo00000001", "ETH", "250000000000000000", "0x00000000000000000000000000000000000d3e01"),
    ("pyo_demo00000002", "USDC", "125000000", "0x00000000000000000000000000000000000d3e02"),
    ("pyo_demo00000003", "USDC", "42000000", "0x00000000000000000000000000000000000d3e03"),
)


def chain_step(settings: Settings, state: dict[str, Any]) -> list[str]:
    """The custody key and a funded payout wallet on the embedded chain, so payouts complete."""
    from appliance.cli.custody import ask_passphrase
    from appliance.engine.chain.registry import open_local_chain
    from appliance.engine.signer.apart import key_facts

    # Read in a child process: this one forks the serving processes next, and only the signer
    # process may ever hold the key (docs/engine-treasury.md, The signer).
    custody = key_facts(settings, ask_passphrase)
    keep = (
        "encrypted: keep its passphrase"
        if custody["encrypted"]
        else "not encrypted: write its 24 words down, backups leave it out"
    )
    created = "created" if custody["created"] else "present"
    lines = [f"Custody: key {custody['fingerprint']} {created} ({keep})"]
    if not settings.local_chain:
        return lines
    chain = open_local_chain(settings)
    try:
        wallet, fee_wallet = custody["payoutAddress"], custody["feeAddress"]
        for asset, amount in DEMO_FUNDS:
            contract = None if asset == "ETH" else chain.usdc_contract
            if chain.balance(wallet, contract) == 0:
                chain.faucet(asset, wallet, amount)
        if chain.balance(fee_wallet) == 0:
            chain.faucet("ETH", fee_wallet, DEMO_FEE_FUNDS)
        lines.append(f"Local chain eth_local: payout wallet {wallet} funded with 100 ETH and 1,000,000 USDC")
        if "secret" in state:
            lines += _payouts_and_a_deposit(settings, state["secret"], chain)
    finally:
        chain.close()
    return lines


def _payouts_and_a_deposit(settings: Settings, secret: str, chain: Any) -> list[str]:
    """Three payouts and a deposit, through the signed API: `serve`'s workers complete and
    confirm them within seconds of starting."""
    import json

    from appliance.common import clock
    from appliance.engine.app import create_app
    from appliance.engine.client import canonical_string, sign

    client = create_app(settings).test_client()

    def signed(method: str, path: str, payload: dict[str, Any], key: str | None = None) -> Any:
        body = json.dumps(payload).encode()
        timestamp = str(clock.unix())
        headers = {
            "X-Operator-Id": OPERATOR,
            "X-Timestamp": timestamp,
            "X-Signature": sign(secret, canonical_string(method, path, timestamp, key, body)),
            "Content-Type": "application/json",
        }
        if key:
            headers["Idempotency-Key"] = key
        return client.open(path, method=method, data=body, headers=headers)

    for payout_id, asset, amount, destination in DEMO_PAYOUTS:
        payload = {"payoutId": payout_id, "asset": asset, "amountMinor": amount, "destination": destination}
        signed("POST", "/v1/payouts", payload, key=f"demo-{payout_id}")
    address = signed("POST", "/v1/deposit-addresses", {"accountRef": "demo-customer", "chainId": "eth_local"})
    deposit_to = address.get_json()["address"]
    chain.faucet("ETH", deposit_to, 5 * 10**17)
    return [
        f"Payouts: {', '.join(p[0] for p in DEMO_PAYOUTS)} submitted; they complete once serve runs",
        f"Deposit: 0.5 ETH sent to demo-customer's address {deposit_to}; it confirms within seconds",
    ]


def try_it(settings: Settings, state: dict[str, Any]) -> list[str]:
    """Three commands that work as printed."""
    d, e = settings.dispatch_public_url, f"http://127.0.0.1:{settings.engine_port}"
    login = json.dumps({"email": OWNER[0], "password": OWNER[2]})
    lines = [
        "",
        "Try it:",
        f"  TOKEN=$(curl -s -X POST {d}/auth/login -H 'Content-Type: application/json' -d '{login}' "
        "| python3 -c 'import json,sys; print(json.load(sys.stdin)[\"accessToken\"])')",
        f'  curl -s "{d}/orders" -H "Authorization: Bearer $TOKEN"',
    ]
    if "secret" not in state:
        lines.append(f"  (a signed engine request needs a secret: appliance operator add-secret {OPERATOR})")
    elif getattr(sys, "frozen", False):  # the single executable has no Python for the reference client
        lines.append(
            f"  TS=$(date +%s); SIG=$(printf 'GET\\n/v1/payouts\\n%s\\n\\n%s' \"$TS\" "
            f"\"$(printf '' | sha256sum | cut -d' ' -f1)\" | openssl dgst -sha256 -hmac '{state['secret']}' "
            f"| sed 's/^.*= //'); curl -s {e}/v1/payouts -H 'X-Operator-Id: {OPERATOR}' "
            '-H "X-Timestamp: $TS" -H "X-Signature: $SIG"'
        )
    else:
        lines.append(
            f"  {sys.executable} -c 'from appliance.engine.client import EngineClient; "
            f'print(EngineClient("{e}", "{OPERATOR}", "{state["secret"]}").list_payouts())\''
        )
    return lines


DISPATCH_HEADING = "== Delivery dispatch: your courier company =="
ENGINE_HEADING = "== Payout engine (crypto payouts, apart from deliveries): operator, custody, wallets =="


def _steps() -> list[DemoStep]:
    """In the order they run: the roads first (the order is placed from the address index), the
    engine after the dispatch steps."""
    return [geo_step, dispatch_step, delivery_step, courier_app_step, engine_step, chain_step, try_it]


def _sections() -> list[tuple[str | None, list[DemoStep]]]:
    """What is printed, in the order a courier company reads it: the dispatch section (console
    and its sign-in, the tracking link of the order on its way, the courier app, then the road
    data), the payout engine's operator, custody and wallets under a heading of their own, then
    the Try it block (its three commands are run as printed by .ci/demo-check.sh)."""
    return [
        (DISPATCH_HEADING, [dispatch_step, delivery_step, courier_app_step, geo_step]),
        (ENGINE_HEADING, [engine_step, chain_step]),
        (None, [try_it]),
    ]


def prepare_demo(settings: Settings) -> list[str]:
    state: dict[str, Any] = {}
    printed: dict[DemoStep, list[str]] = {}
    for step in _steps():
        printed[step] = step(settings, state)
    lines: list[str] = []
    for heading, steps in _sections():
        if heading is not None:
            lines += ["", heading] if lines else [heading]
        for step in steps:
            lines.extend(printed[step])
    return lines
