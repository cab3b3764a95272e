"""The signer on PostgreSQL as a database role of its own (issue 43): with `signer_engine_database`
naming a role that may only read the engine's tables (and record the custody key's fingerprint),
a real signer process signs a stored payout, and that role can write no payout, control or
reservation: a compromised signer host cannot forge facts either (docs/security.md, Deployments)."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit

import psycopg2
import pytest
from eth_utils import to_checksum_address

from appliance.common.db import connection
from appliance.engine.chain.local import NETWORK_ID
from appliance.engine.custody import CustodyError
from appliance.engine.db import database
from appliance.engine.models import Payout
from appliance.engine.signer.client import SignerClient
from appliance.engine.signer.supervisor import SignerSupervisor
from appliance.settings import Settings
from tests.conftest import BACKEND
from tests.engine.helpers import make_operator
from tests.engine.pipeline_harness import harness_settings

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(BACKEND != "postgres", reason="a PostgreSQL role (APPLIANCE_TEST_BACKEND=postgres)"),
]
OPERATOR = "op_rolesigner1"
PAYEE = to_checksum_address("0x" + "00" * 18 + "00e1")
GWEI = 10**9


def _as(url: str, user: str, password: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or "127.0.0.1"
    return urlunsplit(parts._replace(netloc=f"{user}:{password}@{host}:{parts.port or 5432}"))


@pytest.fixture
def signer_role(settings: Settings) -> Iterator[tuple[str, str]]:
    """(the engine database's URL, the same database as a role that may only read it)."""
    url = settings.engine_db_url
    role, password = f"signer_facts_{secrets.token_hex(4)}", secrets.token_hex(12)
    admin = psycopg2.connect(url)
    admin.autocommit = True
    name = urlsplit(url).path.lstrip("/")
    with admin.cursor() as cursor:
        cursor.execute(f"CREATE ROLE {role} LOGIN PASSWORD %s", (password,))
        cursor.execute(f'GRANT CONNECT ON DATABASE "{name}" TO {role}')
        cursor.execute(f"GRANT USAGE ON SCHEMA public TO {role}")
        cursor.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}")
        # The one write a signer makes in the engine database: the key's fingerprint, first seen.
        cursor.execute(f"GRANT INSERT ON custody_fingerprint TO {role}")
        cursor.execute(f"GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {role}")
    try:
        yield url, _as(url, role, password)
    finally:
        with admin.cursor() as cursor:
            cursor.execute(f"DROP OWNED BY {role}")
            cursor.execute(f"DROP ROLE {role}")
        admin.close()


def test_the_signer_signs_through_a_role_that_may_only_read_and_that_role_forges_nothing(
    settings: Settings, signer_role: tuple[str, str]
) -> None:
    from appliance.engine.app import create_app

    engine_url, role_url = signer_role
    configured = harness_settings(settings, {}).replace(signer_engine_database=role_url)
    app = create_app(configured)
    make_operator(app, OPERATOR)
    with connection(database):
        row = Payout.create(
            operator=OPERATOR,
            payout_id="pyo_roleread01",
            idempotency_key="role-1",
            instruction_hash="0" * 64,
            asset="ETH",
            chain_id="eth_local",
            amount_minor="12345",
            destination=PAYEE,
            status="REQUESTED",
        )
    supervisor = SignerSupervisor(configured)
    supervisor.start()
    try:
        tx = {
            "type": 2, "chainId": NETWORK_ID, "nonce": 0, "to": PAYEE, "value": 12345, "data": b"",
            "gas": 21_000, "maxFeePerGas": 3 * GWEI, "maxPriorityFeePerGas": GWEI,
        }  # fmt: skip
        client = SignerClient(supervisor.path)
        raw, tx_hash = client.sign_transaction(0, 0, tx, payout_id=row.id)
        assert raw and tx_hash.startswith("0x")
        # It is that role the signer reads through: without its right to read payouts, it signs none.
        admin = psycopg2.connect(engine_url)
        admin.autocommit = True
        with admin.cursor() as cursor:
            cursor.execute(f"REVOKE SELECT ON payout FROM {urlsplit(role_url).username}")
        admin.close()
        with pytest.raises(CustodyError, match="permission denied"):
            client.sign_transaction(0, 0, tx, payout_id=row.id)
    finally:
        supervisor.stop()

    forged = psycopg2.connect(role_url)
    try:
        for statement in (
            "UPDATE payout SET destination = 'x' WHERE id = %s",
            "INSERT INTO broadcast (id) VALUES (%s)",
            "UPDATE operator_control SET paused = false WHERE operator_id = %s",
        ):
            with pytest.raises(psycopg2.errors.InsufficientPrivilege), forged.cursor() as cursor:
                cursor.execute(statement, (OPERATOR if "operator_id" in statement else row.id,))
            forged.rollback()
    finally:
        forged.close()
    assert engine_url != role_url
