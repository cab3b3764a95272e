"""Payout rules: idempotent submission, detail and cursor listing, always scoped to the calling
operator inside the query."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Callable
from typing import Any

import orjson

from appliance.common import clock
from appliance.common.compiled import CompiledSelect, Slot
from appliance.common.db import write_transaction
from appliance.common.group_commit import GroupCommit
from appliance.common.problems import ApiError, BadRequest, Conflict, NotFound
from appliance.engine.chain.registry import MAX_UINT256, Chains, check_destination
from appliance.engine.db import database
from appliance.engine.instructions import SIGNATURE_HEX
from appliance.engine.ledger import controls
from appliance.engine.models import Broadcast, Payout, PayoutAttempt, PayoutTransition
from appliance.engine.payouts.instructions import check_signature
from appliance.engine.payouts.state import prepare_new


def instruction_hash(payout_id: str, asset: str, amount_minor: str, destination: str) -> str:
    values = {"payoutId": payout_id, "asset": asset, "amountMinor": amount_minor, "destination": destination}
    canonical = orjson.dumps(values, option=orjson.OPT_SORT_KEYS)
    if not canonical.isascii() or b"\\" in canonical:
        # Something escaped: the standard library's escapes, with which every stored hash was made
        # (orjson writes the same bytes when nothing needs escaping, which a valid instruction never does).
        canonical = json.dumps(values, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(canonical).hexdigest()


# Run on every submission: compiled once.
_BY_KEY_OR_ID = CompiledSelect(
    lambda: Payout.select().where(
        (Payout.operator == Slot("operator_id"))
        & ((Payout.idempotency_key == Slot("key")) | (Payout.payout_id == Slot("payout_id")))
    )
)


def _existing(operator_id: str, key: str, payout_id: str) -> tuple[Payout | None, Payout | None]:
    """The payouts holding this key or this payoutId, read in one query (one snapshot, so a
    concurrent insert is seen by both or by neither)."""
    rows = _BY_KEY_OR_ID.all(database, operator_id=operator_id, key=key, payout_id=payout_id)
    by_key = next((row for row in rows if row.idempotency_key == key), None)
    by_id = next((row for row in rows if row.payout_id == payout_id), None)
    return by_key, by_id


def _replay_or_conflict(
    by_key: Payout | None, by_id: Payout | None, digest: str
) -> tuple[dict[str, str], bool]:
    if by_key is not None and by_key.instruction_hash == digest:
        return {"payoutId": by_key.payout_id, "status": by_key.status, "outcome": "REPLAYED"}, True
    if by_key is not None:
        raise Conflict("This Idempotency-Key was used for a different payout instruction.")
    if by_id is None:  # the insert was refused for another reason: never answer it as a conflict
        raise RuntimeError("the payout was neither stored nor found")
    raise Conflict("This payoutId already names another payout instruction (sent with another key).")


_ADMISSIONS = GroupCommit(database)


def _well_formed(signature: object) -> str | None:
    """The body's instructionSignature in lower case when it is 128 hex digits, else None (for
    an operator with a key that is answered 400 as missing or not verifying)."""
    if not isinstance(signature, str):
        return None
    lowered = signature.lower()
    return lowered if SIGNATURE_HEX.match(lowered) else None


def submit(
    chains: Chains,
    operator_id: str,
    key: str,
    payout_id: str,
    asset: str,
    amount_minor: str,
    destination: str,
    *,
    admit: Callable[[], None] = lambda: None,
    signature: object = None,
) -> tuple[dict[str, str], bool]:
    """Record a payout once; returns (body, replayed). The asset must name exactly one offered
    asset entry and the destination must be an address of its chain (400 before anything is stored).

    ``admit`` records the request's signature as seen (401 if it was seen before); it runs inside
    the same write transaction as the payout (or its replay answer), so that a submission commits
    once. A submission refused for any other reason uses its signature up all the same, so that a
    repeat of the request is a replay (401) like any other.

    ``signature`` is the body's instructionSignature (payouts/instructions.py): checked against the
    operator's signing key when it has one (400), stored with the payout when well-formed."""
    try:
        chain_id = chains.resolve_payout_asset(asset).chain_id
        check_destination(destination)
        if int(amount_minor) > MAX_UINT256:
            raise BadRequest(
                "amountMinor is larger than an EVM amount can be (2^256 - 1).",
                errors=[{"field": "amountMinor", "message": "above 2^256 - 1"}],
            )
        instruction_signature = _well_formed(signature)
        check_signature(
            operator_id, payout_id, asset, amount_minor, destination, chain_id, instruction_signature
        )
    except ApiError:
        with write_transaction(database):
            admit()
        raise
    digest = instruction_hash(payout_id, asset, amount_minor, destination)
    payout = Payout(
        operator=operator_id,
        payout_id=payout_id,
        idempotency_key=key,
        instruction_hash=digest,
        asset=asset,
        chain_id=chain_id,
        amount_minor=amount_minor,
        destination=destination,
        created_at=clock.now(),
        instruction_signature=instruction_signature,
    )
    store = prepare_new(payout)  # built and bound now: the batch holding the write lock only runs it

    def admission() -> tuple[dict[str, str], bool] | ApiError:
        # Refusals are returned, not raised: a piece that raises costs its whole batch a second run
        # (common/group_commit.py); what a refused piece wrote (the signature) is meant to stay.
        try:
            admit()
        except ApiError as replayed:  # nothing written
            return replayed
        try:
            # The operator's controls, read in this transaction: a pause committed before is seen.
            rolling = controls.check_submission(operator_id, chain_id, asset, int(amount_minor), destination)
        except ApiError as refused:
            # A retry of an instruction accepted before the controls changed is still a replay.
            by_key, _ = _existing(operator_id, key, payout_id)
            if by_key is not None and by_key.instruction_hash == digest:
                return {"payoutId": by_key.payout_id, "status": by_key.status, "outcome": "REPLAYED"}, True
            return refused
        if store():
            if rolling:  # only operators with a rolling approval threshold pay for it
                controls.enter_approval_window(payout)
            return {"payoutId": payout_id, "status": "REQUESTED", "outcome": "ACCEPTED"}, False
        # The key or the payoutId is taken (a retry, or a submission committed or batched
        # before): the stored payout answers, read in the same transaction.
        by_key, by_id = _existing(operator_id, key, payout_id)
        try:
            return _replay_or_conflict(by_key, by_id, digest)
        except Conflict as conflict:
            return conflict

    # Submissions that arrive together are committed together (answered once committed).
    outcome = _ADMISSIONS.run(admission)
    if isinstance(outcome, ApiError):
        raise outcome
    return outcome


def entry(payout: Payout) -> dict[str, Any]:
    return {
        "payoutId": payout.payout_id,
        "status": payout.status,
        "asset": payout.asset,
        "amountMinor": payout.amount_minor,
        "destination": payout.destination,
        "chainId": payout.chain_id,
        "txHash": payout.tx_hash,
        "reason": payout.reason,
        "createdAt": clock.iso(payout.created_at),
        "updatedAt": clock.iso(payout.updated_at),
        **delivery(payout),
    }


def delivery(payout: Payout) -> dict[str, str | None]:
    """deliveredMinor and debitedMinor: set once the payout is COMPLETED or COMPLETED_SHORT (a
    COMPLETED payout recorded before these were kept delivered its amount in full)."""
    if payout.status not in ("COMPLETED", "COMPLETED_SHORT"):
        return {"deliveredMinor": None, "debitedMinor": None}
    return {
        "deliveredMinor": payout.delivered_minor or payout.amount_minor,
        "debitedMinor": payout.debited_minor or payout.amount_minor,
    }


def detail(operator_id: str, payout_id: str) -> dict[str, Any]:
    payout = Payout.get_or_none((Payout.operator == operator_id) & (Payout.payout_id == payout_id))
    if payout is None:
        raise NotFound("No such payout.")
    transitions = (
        PayoutTransition.select().where(PayoutTransition.payout == payout.id).order_by(PayoutTransition.id)
    )
    attempts = PayoutAttempt.select().where(PayoutAttempt.payout == payout.id).order_by(PayoutAttempt.id)
    body = entry(payout)
    reservation = Broadcast.get_or_none(Broadcast.payout == payout.id)
    body["broadcast"] = (
        {
            "signedPayloadDigest": payout.signed_payload_digest,
            "wallet": reservation.wallet if reservation else None,
            "nonce": str(reservation.nonce) if reservation else None,
            "networkFeeMinor": payout.fee_minor,
        }
        if payout.signed_payload_digest
        else None
    )
    body["attempts"] = [
        {"occurredAt": clock.iso(a.occurred_at), "outcome": a.outcome, "txHash": a.tx_hash} for a in attempts
    ]
    body["transitions"] = [
        {"from": t.from_status, "to": t.to_status, "occurredAt": clock.iso(t.occurred_at)}
        for t in transitions
    ]
    return body


def _encode_cursor(row_id: int) -> str:
    return base64.urlsafe_b64encode(f"p{row_id}".encode()).decode().rstrip("=")


def _decode_cursor(cursor: str) -> int:
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        if not text.startswith("p") or not text[1:].isdigit():
            raise ValueError
        return int(text[1:])
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise BadRequest(
            "The cursor is not one this service issued.", errors=[{"field": "cursor", "message": "malformed"}]
        ) from None


def page(operator_id: str, *, status: str | None, limit: int, cursor: str | None) -> dict[str, Any]:
    """Newest first; the cursor names the last payout returned."""
    query = Payout.select().where(Payout.operator == operator_id)
    if status is not None:
        query = query.where(Payout.status == status)
    if cursor is not None:
        query = query.where(Payout.id < _decode_cursor(cursor))
    rows = list(query.order_by(Payout.id.desc()).limit(limit + 1))
    more = len(rows) > limit
    rows = rows[:limit]
    return {
        "payouts": [entry(row) for row in rows],
        "nextCursor": _encode_cursor(rows[-1].id) if more and rows else None,
    }
