"""What the signer's own state allows (signer.db), on top of policy.py's rules: fee bounds, the
journal's one-payload-per-nonce rule, and a payout's limits, allow-list, pause, approval and
operator signature. Each function answers None (allowed) or why not, one line; they read inside
the caller's signer.db transaction and write nothing.
"""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from appliance.common import clock
from appliance.engine.chain.registry import Asset
from appliance.engine.instructions import SignedInstruction
from appliance.engine.signer import journal, own_policy
from appliance.engine.signer.policy import FEE_WALLET, PAYOUT_WALLET, StoredPayout, Tx, transfer_call
from appliance.engine.signer.store import stamp

VOLUME_WINDOW = timedelta(hours=24)
CANCELLATION = "cancellation"
PAYOUT_KINDS = ("native_payout", "token_payout")
SWEEP_KINDS = ("sweep_native", "sweep_token")


@dataclasses.dataclass(frozen=True)
class Fees:
    gas: int
    max_fee_per_gas: int
    max_priority_fee_per_gas: int

    @classmethod
    def of(cls, tx: dict[str, Any]) -> Fees:
        """KeyError unless the transaction carries EIP-1559 fees and a gas limit."""
        return cls(int(tx["gas"]), int(tx["maxFeePerGas"]), int(tx["maxPriorityFeePerGas"]))


def kind_of(account: int, index: int, tx: Tx, payout_wallet: str) -> str | None:
    """The kind of transaction (journal, gas ceilings); None for a key that signs nothing."""
    if (account, index) == PAYOUT_WALLET:
        if tx.to == payout_wallet and tx.value == 0 and not tx.data:
            return CANCELLATION
        return "token_payout" if tx.data else "native_payout"
    if (account, index) == FEE_WALLET:
        return "gas_topup"
    if account >= 1:
        return "sweep_token" if tx.data else "sweep_native"
    return None


def payment(tx: Tx) -> tuple[str, int, str | None]:
    """(destination, amount, token contract or None) of a payout transaction policy.py accepted."""
    if not tx.data:
        return tx.to, tx.value, None
    call = transfer_call(tx.data)
    assert call is not None  # policy.judge refused anything else
    return call[0], call[1], tx.to


def fee_refusal(db: sqlite3.Connection, kind: str, network_id: int, fees: Fees) -> str | None:
    """maxFeePerGas, maxPriorityFeePerGas and gas under the chain's ceilings (finding 3: a priority
    fee equal to a wallet's balance hands it to the block producer)."""
    ceiling = own_policy.chain(db, "max_fee_per_gas_wei", network_id)
    if fees.max_fee_per_gas > ceiling:
        return (
            f"maxFeePerGas {fees.max_fee_per_gas} is above the signer's ceiling {ceiling} "
            f"on network {network_id}"
        )
    tip_ceiling = own_policy.chain(db, "max_priority_fee_per_gas_wei", network_id)
    if fees.max_priority_fee_per_gas > tip_ceiling:
        return (
            f"maxPriorityFeePerGas {fees.max_priority_fee_per_gas} is above the signer's ceiling "
            f"{tip_ceiling} on network {network_id}"
        )
    if fees.max_priority_fee_per_gas > fees.max_fee_per_gas:
        return "maxPriorityFeePerGas is above maxFeePerGas"
    gas_ceiling = own_policy.chain(db, f"gas_limit_{kind}", network_id)
    if fees.gas > gas_ceiling:
        return f"a gas limit of {fees.gas} is above the signer's ceiling {gas_ceiling} for a {kind}"
    return None


def journal_refusal(
    db: sqlite3.Connection,
    kind: str,
    wallet: str,
    tx: Tx,
    fees: Fees,
    payout: StoredPayout | None,
    engine_reserved: bool,
) -> str | None:
    """Never two payloads at one (wallet, network, nonce) but a fee bump of the same transaction
    or a cancellation. A cancellation needs a nonce the journal holds (or, when the journal holds
    nothing of the wallet yet, the engine's reservation: a signer.db newer than the deployment)."""
    entries = journal.at_nonce(db, wallet, tx.network_id, tx.nonce)
    where = f"nonce {tx.nonce} of {wallet} on network {tx.network_id}"
    if kind == CANCELLATION:
        if entries or (engine_reserved and not journal.has_wallet(db, wallet, tx.network_id)):
            return None
        return f"a cancellation only at a nonce the signer signed; {where} is not one"
    if not entries:
        return None
    for entry in entries:
        if entry["kind"] == CANCELLATION or not _same_call(kind, entry, tx):
            continue
        if payout is not None and entry.get("payoutId") not in (None, payout.payout_id):
            continue
        if fees.max_fee_per_gas < int(entry["maxFeePerGas"]) or fees.max_priority_fee_per_gas < int(
            entry["maxPriorityFeePerGas"]
        ):
            return (
                f"{where} was signed with higher fees (journal entry {entry['seq']}): a bump only raises them"
            )
        return None
    first = entries[0]
    return (
        f"{where} was signed for another transaction (journal entry {first['seq']}, {first['kind']}): "
        "only a fee bump of it or a cancellation is signed there"
    )


def _same_call(kind: str, entry: dict[str, Any], tx: Tx) -> bool:
    if entry["kind"] != kind or entry["to"] != tx.to or entry["data"] != tx.data.hex():
        return False
    if kind == "sweep_native":  # its replacement moves less, to pay the higher fee from the balance
        return tx.value <= int(entry["value"])
    return int(entry["value"]) == tx.value


def signed_payout(db: sqlite3.Connection, operator: str, payout_id: str) -> tuple[str, int, int] | None:
    """(wallet, network, nonce) the payout was signed at, or None."""
    row = db.execute(
        "SELECT wallet, network_id, nonce FROM signed_payout WHERE operator = ? AND payout_id = ?",
        (operator, payout_id),
    ).fetchone()
    return None if row is None else (str(row[0]), int(row[1]), int(row[2]))


def volume(db: sqlite3.Connection, operator: str, chain_id: str, asset: str) -> int:
    """What the signer signed for the operator in the asset within the last 24 h (minor units)."""
    since = stamp(clock.now() - VOLUME_WINDOW)
    rows = db.execute(
        "SELECT amount_minor FROM signed_payout "
        "WHERE operator = ? AND chain_id = ? AND asset = ? AND signed_at > ?",
        (operator, chain_id, asset, since),
    )
    return sum(int(row[0]) for row in rows)


def payout_refusal(
    db: sqlite3.Connection,
    wallet: str,
    tx: Tx,
    payout: StoredPayout,
    instruction: SignedInstruction | None,
    assets: Sequence[Asset],
) -> str | None:
    """The signer's own rules for a payout transaction: the operator not paused (every signature);
    at its first signature the operator's signature (when it has a key, or the policy requires
    one), maximum per payout, allow-list, rolling 24 h volume and approval threshold; once signed,
    only at the same nonce (never a second payment)."""
    operator, name = payout.operator_id, payout.payout_id
    if own_policy.paused(db, operator):
        return f"operator {operator} is paused in the signer"
    signed = signed_payout(db, operator, name)
    if signed is not None:
        if signed != (wallet, tx.network_id, tx.nonce):
            return f"payout {name} of {operator} was signed at nonce {signed[2]} of {signed[0]}: never twice"
        return None
    destination, amount, contract = payment(tx)
    refusal = instruction_refusal(db, payout, instruction, tx, (destination, amount, contract), assets)
    if refusal is not None:
        return refusal
    chain_id, asset = payout.chain_id, payout.asset
    maximum = own_policy.limit(db, "max_payout_minor", operator, chain_id, asset)
    if maximum is not None and amount > maximum:
        return f"payout {name}: {amount} is above the signer's maximum per payout of {maximum} for {operator}"
    allowed = own_policy.allow_list(db, operator)
    if allowed and destination.lower() not in allowed:
        return f"payout {name}: {destination} is not on the signer's allow-list of {operator}"
    daily = own_policy.limit(db, "daily_volume_minor", operator, chain_id, asset)
    if daily is not None:
        signed_today = volume(db, operator, chain_id, asset)
        if signed_today + amount > daily:
            return (
                f"payout {name}: {signed_today} of {asset} signed for {operator} within 24 h, with {amount} "
                f"more above the signer's rolling limit of {daily}"
            )
    threshold = own_policy.limit(db, "approval_threshold_minor", operator, chain_id, asset)
    if threshold is not None and amount > threshold:
        approved = db.execute(
            "SELECT 1 FROM approval WHERE operator = ? AND payout_id = ?", (operator, name)
        ).fetchone()
        if approved is None:
            return (
                f"payout {name}: {amount} is above the signer's approval threshold of {threshold}: "
                f"`appliance signer-policy approve {name} --operator {operator}` records an approval"
            )
    return None


def instruction_refusal(
    db: sqlite3.Connection,
    payout: StoredPayout,
    instruction: SignedInstruction | None,
    tx: Tx,
    paid: tuple[str, int, str | None],
    assets: Sequence[Asset],
) -> str | None:
    """For an operator with a registered key (or under require_instruction_signatures): the
    operator's signature over an instruction that names this payout and what the transaction
    itself pays (destination, amount, the asset's chain and contract), not only the stored row."""
    key = own_policy.signing_key(db, payout.operator_id)
    required = bool(own_policy.deployment(db, "require_instruction_signatures"))
    if key is None:
        if required:
            return (
                f"operator {payout.operator_id} has no signing key and the signer requires "
                "signed instructions"
            )
        return None
    name = payout.payout_id
    if instruction is None:
        return (
            f"payout {name}: operator {payout.operator_id} signs its payouts; no instruction signature came"
        )
    if not instruction.verify(key):
        return f"payout {name}: the instruction's signature is not operator {payout.operator_id}'s"
    said = instruction.instruction
    destination, amount, contract = paid
    asset = next((a for a in assets if a.chain_id == said.chain_id and a.code == said.asset), None)
    if said.payout_id != name or (said.chain_id, said.asset) != (payout.chain_id, payout.asset):
        return f"payout {name}: the signed instruction names another payout or asset"
    moved = (asset.contract or "").lower() if asset is not None and asset.kind != "native" else ""
    if asset is None or asset.network_id != tx.network_id or moved != (contract or "").lower():
        return f"payout {name}: the signed instruction's asset is not what the transaction moves"
    if not said.amount_minor.isdigit() or int(said.amount_minor) != amount:
        return f"payout {name}: the operator signed {said.amount_minor} minor units, not {amount}"
    if said.destination.lower() != destination.lower():
        return f"payout {name}: the operator signed destination {said.destination}, not {destination}"
    return None
