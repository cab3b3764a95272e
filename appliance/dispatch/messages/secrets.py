"""The SMPP password and recipients' link tokens at rest: sealed under their own subkeys of the
install's master key (common/keys.py), the password bound to the company and a token to its order
(a cipher copied to another row does not open)."""

from __future__ import annotations

from appliance.common import keys

PURPOSE = "recipient-smpp-password"
LINK_PURPOSE = "recipient-link-token"


def seal(master_key: bytes, company_id: int, secret: str) -> bytes:
    return keys.seal(master_key, PURPOSE, str(company_id), secret)


def unseal(master_key: bytes, company_id: int, blob: bytes) -> str:
    return keys.unseal(master_key, PURPOSE, str(company_id), blob)


def seal_token(master_key: bytes, order_id: int, token: str) -> bytes:
    return keys.seal(master_key, LINK_PURPOSE, str(order_id), token)


def unseal_token(master_key: bytes, order_id: int, blob: bytes) -> str:
    return keys.unseal(master_key, LINK_PURPOSE, str(order_id), blob)
