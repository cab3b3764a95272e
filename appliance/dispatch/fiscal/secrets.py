"""The e-HDM client key at rest: AES-GCM under its own subkey of the install's master key, bound to
the company (a cipher copied to another company's row does not open), as the SMPP password is
(messages/secrets.py)."""

from __future__ import annotations

import os

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from appliance.common.keys import subkey

PURPOSE = "fiscal-ehdm-client-key"


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
