"""The facts the signer's policy judges a transaction by, read from the engine database by the
signer itself: nothing the caller says is believed but the payout it names, and that payout is
looked up. The engine database is writable by the serving side (issue 43, finding 2): what is
read here only ever narrows what the signer's own state (signer.db, bounds.py) allows; no
address is believed from it (deposit addresses are derived from the key)."""

from __future__ import annotations

from collections.abc import Sequence

from appliance.engine.chain.registry import Asset
from appliance.engine.ledger import controls
from appliance.engine.models import Broadcast, Payout
from appliance.engine.signer.policy import PAYOUT_WALLET, Facts, StoredPayout, Tx


def gather(
    account: int,
    index: int,
    tx: Tx,
    *,
    payout_id: int | None,
    fee_cost: int,
    payout_wallet: str,
    fee_wallet: str,
    assets: Sequence[Asset],
    gas_cap: int,
    recipient_derived: bool = False,
) -> Facts:
    """Inside a connection to the engine database (a read; nothing is locked or written)."""
    on_network = [asset for asset in assets if asset.network_id == tx.network_id]
    chain_ids = sorted({asset.chain_id for asset in on_network})
    from_payout_wallet = (account, index) == PAYOUT_WALLET
    payout = (
        _stored_payout(payout_id, assets, fee_cost) if from_payout_wallet and payout_id is not None else None
    )
    reserved = (
        from_payout_wallet
        and Broadcast.select()
        .where(
            Broadcast.chain_id.in_(chain_ids)
            & (Broadcast.wallet == payout_wallet)
            & (Broadcast.nonce == tx.nonce)
        )
        .exists()
    )
    return Facts(
        payout_wallet=payout_wallet,
        fee_wallet=fee_wallet,
        networks=frozenset(asset.network_id for asset in assets),
        contracts=frozenset(asset.contract for asset in on_network if asset.contract),
        payout=payout,
        reserved_nonce=bool(reserved),
        recipient_derived=recipient_derived,
        gas_cap=gas_cap,
    )


def _stored_payout(payout_id: int, assets: Sequence[Asset], fee_cost: int) -> StoredPayout | None:
    payout = Payout.get_or_none(Payout.id == payout_id)
    if payout is None:
        return None
    asset = next((a for a in assets if a.chain_id == payout.chain_id and a.code == payout.asset), None)
    native = next((a for a in assets if a.chain_id == payout.chain_id and a.kind == "native"), None)
    control = controls.control_of(payout.operator_id)
    broadcast = Broadcast.get_or_none(Broadcast.payout == payout.id)
    hold = None
    if broadcast is None and asset is not None and native is not None:
        # The controls as the pipeline applies them when it reserves the nonce (read only here: the
        # caller holds the locks), with the most this transaction may pay in fees.
        hold = controls.hold_reason(
            payout, native_code=native.code, native=asset.kind == "native", fee_cost=fee_cost, lock=False
        )
    return StoredPayout(
        payout_id=payout.payout_id,
        network_id=asset.network_id if asset is not None else None,
        destination=payout.destination,
        amount=int(payout.amount_minor),
        contract=asset.contract if asset is not None and asset.kind != "native" else None,
        status=payout.status,
        paused=bool(control is not None and control.paused),
        nonce=int(broadcast.nonce) if broadcast is not None else None,
        hold=hold,
        operator_id=str(payout.operator_id),
        chain_id=str(payout.chain_id),
        asset=str(payout.asset),
    )
