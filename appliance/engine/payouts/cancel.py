"""Cancelling a payout (`appliance payout cancel`), and what the CLI shows of one
(`appliance payout status`).

A payout that holds no nonce (REQUESTED) is FAILED at once: nothing was signed. One that holds a
nonce (SIGNED, BROADCAST) cannot be withdrawn from the network: its nonce is taken instead by a
zero-value transfer from the payout wallet to itself, signed at that nonce with fees high enough
to replace the payload in force, stored as one more payload of the reservation and sent by the
pipeline. Whichever payload of the nonce is mined decides: the self-transfer makes the payout
FAILED ("cancelled"), the payout's own transfer (if it wins the race) COMPLETED. Nothing is
FAILED before one of them has landed.
"""

from __future__ import annotations

from typing import Any

from appliance.common import clock
from appliance.common.db import write_transaction
from appliance.engine.chain.registry import Chains
from appliance.engine.custody import PAYOUT_WALLET, CustodyKeys
from appliance.engine.db import database
from appliance.engine.models import Broadcast, ForeignTransaction, Payout, SignedPayload, Wallet
from appliance.engine.outgoing import transactions
from appliance.engine.outgoing.fees import bumped_fees
from appliance.engine.payouts.service import entry
from appliance.engine.payouts.state import transition
from appliance.engine.webhooks.events import PAYOUT_FAILED, emit


class CancelError(Exception):
    """A payout that cannot be cancelled (unknown, ambiguous, already final); one line."""


def find(payout_id: str, operator_id: str | None) -> Payout:
    query = Payout.select().where(Payout.payout_id == payout_id)
    if operator_id:
        query = query.where(Payout.operator == operator_id)
    found = list(query)
    if not found:
        raise CancelError(f"no payout {payout_id}" + (f" of operator {operator_id}" if operator_id else ""))
    if len(found) > 1:
        raise CancelError(f"payout {payout_id} exists for several operators: name one with --operator")
    return found[0]


def cancel(payout: Payout, chains: Chains, custody: CustodyKeys | None) -> dict[str, Any]:
    if payout.status in ("COMPLETED", "COMPLETED_SHORT", "FAILED"):
        raise CancelError(f"payout {payout.payout_id} is already {payout.status}")
    if payout.status == "REQUESTED":
        with write_transaction(database):
            transition(
                payout, "FAILED", reason="cancelled by the operator before it was signed; nothing was paid"
            )
            emit(payout.operator_id, PAYOUT_FAILED, {**entry(payout), "networkFeeMinor": None})
        return {"payoutId": payout.payout_id, "status": "FAILED", "cancel": None}
    if custody is None:
        raise CancelError("the custody key is not available: a cancellation must be signed")
    broadcast = Broadcast.get(Broadcast.payout == payout.id)
    chain = chains.get(payout.chain_id)
    if chain is None:
        raise CancelError(f"chain {payout.chain_id} is not configured on this deployment")
    if transactions.is_cancel(broadcast.raw, broadcast.wallet):
        raise CancelError(f"payout {payout.payout_id} is already being cancelled ({broadcast.tx_hash})")
    # An operator's explicit cancel may outbid the chain's fee ceiling: it frees a stuck nonce.
    fees = bumped_fees(broadcast, chain.fee_quote())
    assert fees is not None
    reason = (
        f"cancel requested: a zero-value self-transfer replaces it at nonce {broadcast.nonce}; FAILED "
        "once that lands (COMPLETED if the payout's own transfer lands first)"
    )
    with write_transaction(database):
        transactions.replace(
            custody,
            PAYOUT_WALLET,
            broadcast,
            chains.native(payout.chain_id).network_id,
            broadcast.wallet,
            0,
            b"",
            fees,
        )
        Payout.update(
            signed_payload_digest=broadcast.digest,
            tx_hash=broadcast.tx_hash,
            reason=reason,
            updated_at=clock.now(),
        ).where((Payout.id == payout.id) & (Payout.status == payout.status)).execute()
        if payout.status == "BROADCAST":
            transition(payout, "SIGNED", reason=reason)
    return {
        "payoutId": payout.payout_id,
        "status": "SIGNED",
        "cancel": {
            "nonce": str(broadcast.nonce),
            "txHash": broadcast.tx_hash,
            "maxFeePerGas": str(fees.max_fee_per_gas),
        },
    }


def status(payout: Payout) -> dict[str, Any]:
    """The payout's detail (as GET /v1/payouts/:id) with every payload signed at its nonce."""
    from appliance.engine.payouts.service import detail

    body = detail(payout.operator_id, payout.payout_id)
    broadcast = Broadcast.get_or_none(Broadcast.payout == payout.id)
    payloads = (
        SignedPayload.select().where(SignedPayload.broadcast == broadcast.id).order_by(SignedPayload.id)
        if broadcast
        else []
    )
    body["operatorId"] = payout.operator_id
    body["payloads"] = [
        {
            "txHash": p.tx_hash,
            "signedPayloadDigest": p.digest,
            "maxFeePerGas": p.max_fee_per_gas,
            "cancels": transactions.is_cancel(p.raw, broadcast.wallet) if broadcast else False,
            "createdAt": clock.iso(p.created_at),
        }
        for p in payloads
    ]
    return body


def unfence(chains: Chains, chain_id: str, address: str) -> dict[str, Any]:
    """Let the engine sign for a fenced wallet again, once an operator has checked what used its
    nonces: the counter continues at the chain's nonce now (the gap is taken as accounted for)."""
    wallet = Wallet.get_or_none((Wallet.chain_id == chain_id) & (Wallet.address == address))
    if wallet is None or not wallet.fence_reason:
        raise CancelError(f"wallet {address} on {chain_id} is not fenced")
    waiting = ForeignTransaction.select().where(
        (ForeignTransaction.chain_id == chain_id)
        & (ForeignTransaction.wallet == address)
        & (ForeignTransaction.status == "pending")
    )
    if waiting.exists():
        # Skipping over them would leave each undecided: neither the payout it may pay nor the
        # outflow it is would ever be recorded (issue 44, item 5).
        hashes = ", ".join(row.tx_hash for row in waiting)
        raise CancelError(
            f"wallet {address} on {chain_id} is fenced by transactions this engine did not sign, each "
            f"waiting for a decision ({hashes}): `appliance payout adopt` or `appliance payout "
            "reject-foreign` each of them; the wallet signs again once none waits"
        )
    chain = chains.get(chain_id)
    if chain is None:
        raise CancelError(f"chain {chain_id} is not configured on this deployment")
    head = chain.head().number
    chain_nonce = chain.nonce(address)
    with write_transaction(database):
        Wallet.update(
            fence_reason=None,
            next_nonce=max(int(wallet.next_nonce), chain_nonce),
            verified_block=head,
            scan_block=None,
        ).where(Wallet.id == wallet.id).execute()
    return {
        "chainId": chain_id,
        "wallet": address,
        "nextNonce": str(max(int(wallet.next_nonce), chain_nonce)),
        "was": wallet.fence_reason,
    }
