"""The SMPP password at rest: AES-GCM under its own subkey of the install's master key, bound to
the company (a cipher copied to another company's row does not decrypt)."""

from __future__ import annotations

import os

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from appliance.common.keys import subkey

PURPOSE = "recipient-smpp-password"


def seal(master_key: bytes, company_id: int, secret: str) -> bytes:
    nonce = os.urandom(12)
    return nonce + AESGCM(subkey(master_key, PURPOSE)).encrypt(
        nonce, secret.encode(), str(company_id).encode()
    )


def unseal(master_key: bytes, company_id: int, blob: bytes) -> str:
    blob = bytes(blob)
    return (
        AESGCM(subkey(master_key, PURPOSE)).decrypt(blob[:12], blob[12:], str(company_id).encode()).decode()
    )


LINK_PURPOSE = "recipient-link-token"


def seal_token(master_key: bytes, order_id: int, token: str) -> bytes:
    nonce = os.urandom(12)
    return nonce + AESGCM(subkey(master_key, LINK_PURPOSE)).encrypt(
        nonce, token.encode(), str(order_id).encode()
    )


def unseal_token(master_key: bytes, order_id: int, blob: bytes) -> str:
    blob = bytes(blob)
    return (
        AESGCM(subkey(master_key, LINK_PURPOSE))
        .decrypt(blob[:12], blob[12:], str(order_id).encode())
        .decode()
    )
