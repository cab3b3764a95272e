"""The one place where sweeps sign (a separate signer process will enforce the same rules).

Two kinds of transaction, and only these:

- a sweep: from a recorded deposit address (its own key, m/44'/60'/account'/0/index) to the
  deployment's payout wallet, either its native balance or a configured token's ``transfer`` to
  the payout wallet;
- a gas top-up: from the fee wallet to a recorded deposit address, native value and no data.

Anything else raises SweepRefused before a key is derived.
"""

from __future__ import annotations

from typing import Any

from eth_utils import to_checksum_address

from appliance.engine.chain.registry import Chains
from appliance.engine.custody import FEE_WALLET, CustodyKeys
from appliance.engine.models import DepositAddress
from appliance.engine.outgoing import transactions

SWEEP, TOPUP = "sweep", "sweep_topup"  # Broadcast.purpose of each kind


class SweepRefused(Exception):
    """A transaction that is not a sweep to the payout wallet nor a top-up of a deposit address."""


def sign_sweep_transaction(
    custody: CustodyKeys, chains: Chains, kind: str, deposit: DepositAddress, tx: dict[str, Any]
) -> tuple[bytes, str]:
    """Sign ``tx`` of ``kind`` (SWEEP or TOPUP) for the recorded deposit address ``deposit``;
    returns (raw bytes, 0x hash) as Custody.sign_transaction does."""
    to = to_checksum_address(tx["to"])
    data = bytes(tx.get("data") or b"")
    address = to_checksum_address(deposit.address)
    if kind == TOPUP:
        if to != address or data:
            raise SweepRefused(f"a gas top-up goes to the deposit address {address}, without data")
        # Named by its key path: the signer derives the address itself and believes no row.
        recipient = (int(deposit.custody_account), int(deposit.derivation_index))
        return custody.sign_transaction(*FEE_WALLET, tx, recipient=recipient)
    if kind != SWEEP:
        raise SweepRefused(f"not a kind of sweep transaction: {kind}")
    key = (int(deposit.custody_account), int(deposit.derivation_index))
    if custody.address(*key) != address:
        raise SweepRefused(f"the key at {key} is not the deposit address {address}")
    payout = custody.payout_address
    if not data:
        if to != payout:
            raise SweepRefused(f"a sweep of the native asset pays the payout wallet {payout}")
    else:
        tokens = {a.contract for a in chains.assets_of(deposit.chain_id) if a.contract}
        receiver = to_checksum_address("0x" + data[16:36].hex()) if len(data) == 68 else None
        if (
            to not in tokens
            or data[:4] != transactions.TRANSFER_SELECTOR
            or receiver != payout
            or int(tx.get("value", 0))
        ):
            raise SweepRefused(
                f"a token sweep is a configured token's transfer to the payout wallet {payout}"
            )
    return custody.sign_transaction(*key, tx)
