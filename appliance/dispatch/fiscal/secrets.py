"""The e-HDM client key at rest: sealed under its own subkey of the install's master key and bound
to the company (a cipher copied to another company's row does not open), as the SMPP password is
(messages/secrets.py); common/keys.py does the sealing."""

from __future__ import annotations

from appliance.common import keys

PURPOSE = "fiscal-ehdm-client-key"


def seal(master_key: bytes, company_id: int, secret: str) -> bytes:
    return keys.seal(master_key, PURPOSE, str(company_id), secret)


def unseal(master_key: bytes, company_id: int, blob: bytes) -> str:
    return keys.unseal(master_key, PURPOSE, str(company_id), blob)
