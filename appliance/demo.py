"""`appliance demo`: seed a ready-to-try install. Each step is idempotent (running demo twice
seeds once) and returns lines telling how to try it."""

from __future__ import annotations

from collections.abc import Callable

from appliance.settings import Settings

DemoStep = Callable[[Settings], list[str]]

DEMO_COMPANY = "Demo Delivery"
OWNER = ("owner@demo.am", "Anahit Owner", "demo-owner-pass")
COURIERS = [
    ("courier1@demo.am", "Narek Courier", "demo-courier-1"),
    ("courier2@demo.am", "Lilit Courier", "demo-courier-2"),
]
OPERATOR = "op_demo0000001"


def dispatch_step(settings: Settings) -> list[str]:
    from appliance.common import clock
    from appliance.common.db import bind_database, connection, write_transaction
    from appliance.common.passwords import hash_password
    from appliance.dispatch.company.admin import create_company
    from appliance.dispatch.db import database
    from appliance.dispatch.models import Company, Courier, Membership, User

    bind_database(database, settings.dispatch_db_url, busy_timeout_ms=settings.sqlite_busy_timeout_ms)
    with connection(database):
        if Company.get_or_none(Company.name == DEMO_COMPANY) is None:
            result = create_company(
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
                        created_at=clock.now(),
                        last_company=company_id,
                    )
                    Membership.create(user=user, company=company_id, role="courier", joined_at=clock.now())
                    Courier.create(company=company_id, user=user, display_name=name, created_at=clock.now())
    url = settings.dispatch_public_url
    lines = [f"Dispatch: sign in at POST {url}/auth/login as {OWNER[0]} / {OWNER[2]} (owner)"]
    lines += [f"          courier {email} / {password}" for email, _, password in COURIERS]
    return lines


def engine_step(settings: Settings) -> list[str]:
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
    return [
        f"Engine: operator {OPERATOR} secret {created['secret']} "
        "(shown once; sign requests as docs/engine-auth.md says)"
    ]


DEMO_FUNDS = (("ETH", 100 * 10**18), ("USDC", 1_000_000 * 10**6))  # the payout wallet's, in minor units
DEMO_FEE_FUNDS = 10 * 10**18  # the fee wallet's ETH, for gas top-ups


def chain_step(settings: Settings) -> list[str]:
    """The custody key and a funded payout wallet on the embedded chain, so payouts complete."""
    from appliance.engine.chain.registry import open_local_chain
    from appliance.engine.custody import create_custody_key, load_custody

    created, fingerprint = create_custody_key(settings.data_dir)
    custody = load_custody(settings.data_dir, settings.custody_key)
    assert custody is not None
    lines = [f"Custody: key {fingerprint} {'created' if created else 'present'} (back up custody.key)"]
    if not settings.local_chain:
        return lines
    chain = open_local_chain(settings)
    try:
        wallet = custody.payout_address
        for asset, amount in DEMO_FUNDS:
            contract = None if asset == "ETH" else chain.usdc_contract
            if chain.balance(wallet, contract) == 0:
                chain.faucet(asset, wallet, amount)
        if chain.balance(custody.fee_address) == 0:
            chain.faucet("ETH", custody.fee_address, DEMO_FEE_FUNDS)
    finally:
        chain.close()
    lines.append(f"Local chain eth_local: payout wallet {wallet} funded with 100 ETH and 1,000,000 USDC")
    return lines


def _steps() -> list[DemoStep]:
    return [dispatch_step, engine_step, chain_step]


def prepare_demo(settings: Settings) -> list[str]:
    lines: list[str] = []
    for step in _steps():
        lines.extend(step(settings))
    lines.append(
        "Road routing and map tiles: `appliance routing build --pbf FILE` and "
        "`appliance map build --pbf FILE`"
    )
    return lines
