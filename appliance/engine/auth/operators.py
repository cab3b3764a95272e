"""Operators and their secrets. A secret is shown once, when created, and rests encrypted
(AES-GCM under a subkey of appliance.key, which lives outside the database), bound to its operator
and secret id so a ciphertext cannot be moved to another operator."""

from __future__ import annotations

import functools
import os
import re
import secrets as random_secrets

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from appliance.common import clock
from appliance.common.compiled import CompiledSelect, Slot
from appliance.common.db import connection, write_transaction
from appliance.common.health import Check, Probe
from appliance.common.keys import subkey
from appliance.engine import audit
from appliance.engine.db import database
from appliance.engine.models import Operator, OperatorSecret

OPERATOR_ID = re.compile(r"^op_[a-z0-9]{8,48}$")
SECRET_BYTES = 32  # shown as 64 lowercase hex characters


class OperatorError(Exception):
    pass


KEY_MISMATCH = (
    "this node's appliance.key does not decrypt the operator secrets in the database: they were "
    "encrypted under another key (every node on one database needs the same appliance.key)"
)


class SecretsUnreadable(Exception):
    """The stored secrets were encrypted under another appliance.key than this process holds."""


@functools.lru_cache(maxsize=16)
def _cipher(master_key: bytes) -> AESGCM:
    # The subkey is derived once per master key, not on every signed request.
    return AESGCM(subkey(master_key, "engine-operator-secrets"))


def _aad(operator_id: str, secret_id: str) -> bytes:
    return f"{operator_id}/{secret_id}".encode()


def encrypt_secret(master_key: bytes, operator_id: str, secret_id: str, secret: str) -> bytes:
    nonce = os.urandom(12)
    return nonce + _cipher(master_key).encrypt(nonce, secret.encode(), _aad(operator_id, secret_id))


def decrypt_secret(master_key: bytes, operator_id: str, secret_id: str, blob: bytes) -> str:
    return _decrypted(master_key, operator_id, secret_id, bytes(blob))


@functools.lru_cache(maxsize=1024)
def _decrypted(master_key: bytes, operator_id: str, secret_id: str, blob: bytes) -> str:
    """Every signed request needs its operator's secrets in the clear: each stored ciphertext is
    decrypted once per process. The rows are still read on every request, so a removed secret
    stops working at once, in every process."""
    return _cipher(master_key).decrypt(blob[:12], blob[12:], _aad(operator_id, secret_id)).decode()


def new_secret() -> str:
    return random_secrets.token_hex(SECRET_BYTES)


def _add_secret(master_key: bytes, operator_id: str) -> tuple[str, str]:
    secret_id = "sec_" + random_secrets.token_hex(8)
    secret = new_secret()
    OperatorSecret.create(
        id=secret_id,
        operator=operator_id,
        ciphertext=encrypt_secret(master_key, operator_id, secret_id, secret),
        created_at=clock.now(),
    )
    return secret_id, secret


def create_operator(master_key: bytes, operator_id: str) -> dict[str, str]:
    if not OPERATOR_ID.match(operator_id):
        raise OperatorError("operator id must be op_ followed by 8 to 48 characters of [a-z0-9]")
    with write_transaction(database):
        if Operator.get_or_none(Operator.id == operator_id) is not None:
            raise OperatorError(f"operator {operator_id} already exists")
        Operator.create(id=operator_id, created_at=clock.now())
        secret_id, secret = _add_secret(master_key, operator_id)
        audit.record("operator.created", f"operator:{operator_id}", after={"secretId": secret_id})
    return {"operatorId": operator_id, "secretId": secret_id, "secret": secret}


def add_secret(master_key: bytes, operator_id: str) -> dict[str, str]:
    with write_transaction(database):
        if Operator.get_or_none(Operator.id == operator_id) is None:
            raise OperatorError(f"no operator {operator_id}")
        secret_id, secret = _add_secret(master_key, operator_id)
        audit.record("operator.secret_added", f"operator:{operator_id}", after={"secretId": secret_id})
    return {"operatorId": operator_id, "secretId": secret_id, "secret": secret}


def remove_secret(operator_id: str, secret_id: str) -> dict[str, object]:
    with write_transaction(database):
        deleted = (
            OperatorSecret.delete()
            .where((OperatorSecret.operator == operator_id) & (OperatorSecret.id == secret_id))
            .execute()
        )
        if not deleted:
            raise OperatorError(f"operator {operator_id} has no secret {secret_id}")
        audit.record("operator.secret_removed", f"operator:{operator_id}", before={"secretId": secret_id})
    return {"operatorId": operator_id, "secretIds": secret_ids(operator_id)}


def secret_ids(operator_id: str) -> list[str]:
    query = OperatorSecret.select(OperatorSecret.id).where(OperatorSecret.operator == operator_id)
    return [row.id for row in query.order_by(OperatorSecret.created_at, OperatorSecret.id)]


def list_operators() -> list[dict[str, object]]:
    return [
        {"operatorId": operator.id, "secretIds": secret_ids(operator.id)}
        for operator in Operator.select().order_by(Operator.id)
    ]


# Read on every signed request (so that a removed secret stops at once): compiled once.
_SECRETS = CompiledSelect(
    lambda: OperatorSecret.select(OperatorSecret.id, OperatorSecret.ciphertext).where(
        OperatorSecret.operator == Slot("operator_id")
    )
)


def secrets_of(master_key: bytes, operator_id: str) -> list[str]:
    """The operator's secrets in the clear, for verification only (empty for unknown operators)."""
    rows = _SECRETS.raw_rows(database, operator_id=operator_id)
    try:
        return [decrypt_secret(master_key, operator_id, secret_id, blob) for secret_id, blob in rows]
    except InvalidTag:
        raise SecretsUnreadable(KEY_MISMATCH) from None


def secrets_probe(master_key: bytes) -> Probe:
    """Readiness: the newest operator secret decrypts with this process's appliance.key (a node
    given another key than the others must leave the load balancer, not answer every operator)."""

    def probe() -> Check:
        with connection(database):
            row = OperatorSecret.select().order_by(OperatorSecret.created_at.desc()).first()
        if row is None:
            return Check("pass")
        try:
            decrypt_secret(master_key, row.operator_id, row.id, row.ciphertext)
        except InvalidTag:
            return Check("fail", KEY_MISMATCH)
        return Check("pass")

    return probe
