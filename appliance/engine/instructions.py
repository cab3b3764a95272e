"""Payout instructions an operator signs with its own Ed25519 key, so that the signer can verify
who asked for a payout on state the serving side cannot forge: a compromised web tier or database
can write a payout row, but not the operator's signature over it.

The canonical instruction is the UTF-8 JSON object of exactly five members, keys sorted, no
whitespace: ``{"amountMinor":"…","asset":"…","chainId":"…","destination":"…","payoutId":"…"}``;
``destination`` is lower-cased (an EVM address's checksum is a display form, not part of what it
names). The signature is 64 bytes, sent and stored as 128 lower-case hex digits; a public key is 32
bytes, as 64 hex digits. Both sides (the reference client, the engine, the signer) build the bytes
with ``canonical`` alone.
"""

from __future__ import annotations

import dataclasses
import re

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from appliance.engine.protocol import canonical_instruction

PUBLIC_KEY_HEX = re.compile(r"^[0-9a-f]{64}$")
SIGNATURE_HEX = re.compile(r"^[0-9a-f]{128}$")


@dataclasses.dataclass(frozen=True)
class Instruction:
    payout_id: str
    asset: str
    amount_minor: str  # a decimal string of minor units, as on the wire
    destination: str
    chain_id: str

    def canonical(self) -> bytes:
        return canonical(self.payout_id, self.asset, self.amount_minor, self.destination, self.chain_id)


def canonical(payout_id: str, asset: str, amount_minor: str | int, destination: str, chain_id: str) -> bytes:
    return canonical_instruction(payout_id, asset, amount_minor, destination, chain_id)


def public_key_of(private_key_hex: str) -> str:
    """The hex public key of a 32-byte private key given as 64 hex digits."""
    key = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(private_key_hex))
    return key.public_key().public_bytes_raw().hex()


def sign(private_key_hex: str, message: bytes) -> str:
    key = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(private_key_hex))
    return key.sign(message).hex()


def verify(public_key_hex: str, signature_hex: str | None, message: bytes) -> bool:
    """True only for a well-formed signature of ``message`` by the key; never raises."""
    if not signature_hex or not SIGNATURE_HEX.match(signature_hex):
        return False
    if not PUBLIC_KEY_HEX.match(public_key_hex):
        return False
    try:
        Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_key_hex)).verify(
            bytes.fromhex(signature_hex), message
        )
    except (InvalidSignature, ValueError):
        return False
    return True


@dataclasses.dataclass(frozen=True)
class SignedInstruction:
    """An instruction with the operator's signature over its canonical bytes, as the engine stores
    it and hands it to the signer with the payout's transaction (the wire's ``instruction``)."""

    instruction: Instruction
    signature: str  # 128 hex digits

    def to_wire(self) -> dict[str, str]:
        i = self.instruction
        return {
            "payoutId": i.payout_id,
            "asset": i.asset,
            "amountMinor": i.amount_minor,
            "destination": i.destination,
            "chainId": i.chain_id,
            "signature": self.signature,
        }

    @classmethod
    def from_wire(cls, fields: object) -> SignedInstruction:
        """ValueError unless ``fields`` is exactly the wire's six string members."""
        names = ("payoutId", "asset", "amountMinor", "destination", "chainId", "signature")
        if not isinstance(fields, dict) or set(fields) != set(names):
            raise ValueError("instruction carries exactly " + ", ".join(names))
        if not all(isinstance(fields[name], str) for name in names):
            raise ValueError("every member of instruction is a string")
        return cls(
            Instruction(*(fields[name] for name in names[:5])),
            fields["signature"],
        )

    def verify(self, public_key_hex: str) -> bool:
        return verify(public_key_hex, self.signature, self.instruction.canonical())
