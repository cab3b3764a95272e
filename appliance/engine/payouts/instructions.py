"""Operators' signed payout instructions on the engine's side (issue 43; the bytes and the
signature scheme are appliance/engine/instructions.py's, docs/engine-auth.md describes them).

- An operator registers an Ed25519 public key (`appliance operator add-signing-key`): the engine's
  copy lives in operator_signing_key, for the API's check; the signer keeps its own.
- While a key is in force, POST /v1/payouts needs ``instructionSignature``, a valid signature of the
  payout's canonical instruction by that key: missing or not verifying, 400 (``errors[].field``
  "instructionSignature"), before anything is stored.
- An operator without a key may send one all the same: it is checked for form only and stored, not
  verified (there is nothing to verify it with yet); a key registered later makes the signer verify
  what was stored.
- The stored signature goes with the payout's transaction to the signer (``instruction_for``).
"""

from __future__ import annotations

from appliance.common import clock
from appliance.common.compiled import CompiledSelect, Slot
from appliance.common.db import write_transaction
from appliance.common.problems import BadRequest
from appliance.engine.db import database
from appliance.engine.instructions import PUBLIC_KEY_HEX, Instruction, SignedInstruction, canonical, verify
from appliance.engine.models import Operator, OperatorSigningKey, Payout

FIELD = "instructionSignature"


class SigningKeyError(ValueError):
    """A key or operator the command cannot use (the message is one line)."""


# Run on every submission: compiled once (the partial unique index answers it).
_KEY_IN_FORCE = CompiledSelect(
    lambda: OperatorSigningKey.select(OperatorSigningKey.public_key).where(
        (OperatorSigningKey.operator == Slot("operator_id")) & OperatorSigningKey.revoked_at.is_null()
    )
)


def signing_key_of(operator_id: str) -> str | None:
    """The operator's public key in force (hex), or None."""
    rows = _KEY_IN_FORCE.raw_rows(database, operator_id=operator_id)
    return str(rows[0][0]) if rows else None


def check_signature(
    operator_id: str,
    payout_id: str,
    asset: str,
    amount_minor: str,
    destination: str,
    chain_id: str,
    signature: str | None,
) -> None:
    """400 when the operator has a key in force and ``signature`` is missing or does not verify."""
    public_key = signing_key_of(operator_id)
    if public_key is None:
        return
    if signature is None:
        raise BadRequest(
            "This operator signs its payout instructions: instructionSignature is required "
            "(Ed25519 over the canonical instruction, docs/engine-auth.md).",
            errors=[{"field": FIELD, "message": "required: the operator has a signing key"}],
        )
    if not verify(public_key, signature, canonical(payout_id, asset, amount_minor, destination, chain_id)):
        raise BadRequest(
            "instructionSignature does not verify with the operator's signing key over this "
            "instruction (payoutId, asset, amountMinor, destination, chainId).",
            errors=[{"field": FIELD, "message": "not a signature of this instruction by the operator's key"}],
        )


def instruction_for(payout: Payout) -> SignedInstruction | None:
    """The stored payout's signed instruction for the signer, or None when it carries none."""
    if not payout.instruction_signature:
        return None
    return SignedInstruction(
        Instruction(payout.payout_id, payout.asset, payout.amount_minor, payout.destination, payout.chain_id),
        payout.instruction_signature,
    )


def set_signing_key(operator_id: str, public_key_hex: str) -> dict[str, str]:
    """Put ``public_key_hex`` in force for the operator (a key in force before is revoked), in
    one transaction."""
    public_key = public_key_hex.strip().lower()
    if not PUBLIC_KEY_HEX.match(public_key):
        raise SigningKeyError("the public key is 64 hex digits (an Ed25519 public key, 32 bytes)")
    with write_transaction(database):
        if Operator.get_or_none(Operator.id == operator_id) is None:
            raise SigningKeyError(f"no operator {operator_id}")
        at = clock.now()
        OperatorSigningKey.update(revoked_at=at).where(
            (OperatorSigningKey.operator == operator_id) & OperatorSigningKey.revoked_at.is_null()
        ).execute()
        OperatorSigningKey.create(operator=operator_id, public_key=public_key, created_at=at)
    return {"operatorId": operator_id, "publicKey": public_key}


def remove_signing_key(operator_id: str) -> dict[str, str | bool]:
    """Revoke the operator's key in force (its payouts need no signature from then on)."""
    with write_transaction(database):
        if Operator.get_or_none(Operator.id == operator_id) is None:
            raise SigningKeyError(f"no operator {operator_id}")
        revoked = (
            OperatorSigningKey.update(revoked_at=clock.now())
            .where((OperatorSigningKey.operator == operator_id) & OperatorSigningKey.revoked_at.is_null())
            .execute()
        )
    return {"operatorId": operator_id, "revoked": bool(revoked)}


def instruction_of(payout_row_id: int | None) -> SignedInstruction | None:
    """``instruction_for`` of the stored payout with this row id (the id a payout's transaction
    is signed under: outgoing/transactions.py), read now; None for none or no signature."""
    if payout_row_id is None:
        return None
    payout = Payout.get_or_none(Payout.id == payout_row_id)
    return None if payout is None else instruction_for(payout)
