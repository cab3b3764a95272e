"""Signer: the custody key behind the policy. The signer process serves one (process.py);
LocalSigner is the same in the caller's process, for commands that sign outside `serve` (payout
cancel) and for tests: one policy, whichever process holds the key, and one signer.db (store.py)
beside the key, whose limits, journal and operator keys the serving side cannot write."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from appliance.common import clock
from appliance.common.db import connection
from appliance.engine.chain.registry import Asset
from appliance.engine.custody import Custody, CustodyError, CustodyKeys, CustodyRefused, Grounds, Guard
from appliance.engine.db import database
from appliance.engine.instructions import SignedInstruction
from appliance.engine.signer import bounds, facts, journal, own_policy, policy
from appliance.engine.signer.store import SignerStore, open_store, stamp

log = logging.getLogger("appliance.engine.signer")

# A top-up's recipient as the request names it: the deposit address's (account >= 1, index).
Recipient = tuple[int, int]


class SignerRefused(CustodyError):
    """The signer's policy refuses the transaction (the reason says why)."""


class Signer:
    def __init__(
        self, custody: Custody, assets: Sequence[Asset], gas_cap: int, data_dir: Path, *, lazy: bool = False
    ) -> None:
        self.custody = custody
        self.assets = list(assets)
        self.gas_cap = gas_cap
        self.data_dir = Path(data_dir)
        self._state: SignerStore | None = None
        self._opening = threading.Lock()
        if not lazy:  # the signer process: signer.db and the administrator token ready from the start
            _ = self.state

    @property
    def state(self) -> SignerStore:
        """signer.db, opened at first use in a LocalSigner (``lazy``): a command that only derives
        addresses or reads the fingerprint (`health`, `treasury`) never opens it."""
        with self._opening:
            if self._state is None:
                self._state = open_store(self.data_dir)
            return self._state

    def sign(
        self,
        account: int,
        index: int,
        tx: dict,
        payout_id: int | None,
        *,
        recipient: Recipient | None = None,
        instruction: SignedInstruction | None = None,
    ) -> tuple[bytes, str]:
        """Sign ``tx`` with the key at (account, index) if the policy allows it; else SignerRefused
        (CustodyRefused when the key is not the deployment's). Checked, signed and journaled in one
        signer.db transaction: two requests for one nonce take turns, and the second sees the first."""
        refusal = self.custody.verify()
        if refusal is not None:
            raise CustodyRefused(refusal)
        try:
            decoded = policy.Tx.of(tx)
            fees = bounds.Fees.of(tx)
        except (KeyError, TypeError, ValueError) as exc:
            raise SignerRefused(f"not a transaction the signer can read ({exc})") from None
        if recipient is not None and recipient[0] < 1:
            raise SignerRefused("a top-up's recipient is a deposit address: account 1 or above")
        derived = recipient is not None and self.custody.address(*recipient) == decoded.to
        with self.state.write_transaction() as db:
            own_policy.apply_due(db)
            cap = min(self.gas_cap, int(own_policy.deployment(db, "gas_topup_cap_wei")))
            with connection(database):
                found = facts.gather(
                    account,
                    index,
                    decoded,
                    payout_id=payout_id,
                    fee_cost=fees.gas * fees.max_fee_per_gas,
                    payout_wallet=self.custody.payout_address,
                    fee_wallet=self.custody.fee_address,
                    assets=self.assets,
                    gas_cap=cap,
                    recipient_derived=derived,
                )
            reason = policy.judge(account, index, decoded, found)
            kind = bounds.kind_of(account, index, decoded, found.payout_wallet)
            wallet = self.custody.address(account, index)
            if reason is None and kind is not None:
                reason = self._own_refusal(db, kind, wallet, decoded, fees, found, instruction)
            if reason is not None:
                self._refused(account, index, decoded, reason)
            assert kind is not None
            raw, tx_hash = self.custody.sign_transaction(account, index, tx)
            self._journal(
                db,
                kind,
                wallet,
                (account, index),
                decoded,
                fees,
                (raw, tx_hash),
                found,
                payout_id,
                recipient,
                instruction,
            )
        return raw, tx_hash

    def _own_refusal(
        self,
        db: Any,
        kind: str,
        wallet: str,
        tx: policy.Tx,
        fees: bounds.Fees,
        found: policy.Facts,
        instruction: SignedInstruction | None,
    ) -> str | None:
        reason = bounds.fee_refusal(db, kind, tx.network_id, fees)
        if reason is None:
            payout = found.payout if kind in bounds.PAYOUT_KINDS else None
            reason = bounds.journal_refusal(db, kind, wallet, tx, fees, payout, found.reserved_nonce)
            if reason is None and payout is not None:
                reason = bounds.payout_refusal(db, wallet, tx, payout, instruction, self.assets)
        return reason

    def _refused(self, account: int, index: int, tx: policy.Tx, reason: str) -> None:
        log.warning(
            "signer refused a transaction of m/44'/60'/%d'/0/%d (network %d, nonce %d, to %s): %s",
            account,
            index,
            tx.network_id,
            tx.nonce,
            tx.to,
            reason,
        )
        raise SignerRefused(reason)

    def _journal(
        self,
        db: Any,
        kind: str,
        wallet: str,
        key_path: tuple[int, int],
        tx: policy.Tx,
        fees: bounds.Fees,
        signed: tuple[bytes, str],
        found: policy.Facts,
        payout_row: int | None,
        recipient: Recipient | None,
        instruction: SignedInstruction | None,
    ) -> None:
        payout = found.payout if kind in bounds.PAYOUT_KINDS else None
        amount = bounds.payment(tx)[1] if payout is not None else None
        moment = stamp(clock.now())
        journal.append(
            db,
            {
                "at": moment,
                "wallet": wallet,
                "networkId": tx.network_id,
                "nonce": tx.nonce,
                "keyPath": f"{key_path[0]}/{key_path[1]}",
                "kind": kind,
                "to": tx.to,
                "value": str(tx.value),
                "data": tx.data.hex(),
                "gas": fees.gas,
                "maxFeePerGas": str(fees.max_fee_per_gas),
                "maxPriorityFeePerGas": str(fees.max_priority_fee_per_gas),
                "raw": signed[0].hex(),
                "txHash": signed[1],
                "reason": _reason(kind, payout),
                "payout": payout_row if payout is not None else None,
                "operatorId": payout.operator_id if payout else None,
                "payoutId": payout.payout_id if payout else None,
                "chainId": payout.chain_id if payout else None,
                "asset": payout.asset if payout else None,
                "amountMinor": str(amount) if amount is not None else None,
                "instruction": instruction.to_wire() if instruction is not None and payout else None,
                "recipient": {"account": recipient[0], "index": recipient[1]} if recipient else None,
            },
        )
        if payout is not None:
            db.execute(
                "INSERT INTO signed_payout (operator, payout_id, chain_id, asset, amount_minor, wallet, "
                "network_id, nonce, signed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (operator, payout_id) DO NOTHING",
                (
                    payout.operator_id,
                    payout.payout_id,
                    payout.chain_id,
                    payout.asset,
                    str(amount),
                    wallet,
                    tx.network_id,
                    tx.nonce,
                    moment,
                ),
            )


def _reason(kind: str, payout: policy.StoredPayout | None) -> str:
    if payout is not None:
        return f"payout {payout.payout_id} of {payout.operator_id}"
    return {
        "cancellation": "a cancellation of the nonce",
        "gas_topup": "gas for the payout wallet or a deposit address",
        "sweep_native": "a sweep to the payout wallet",
        "sweep_token": "a token sweep to the payout wallet",
    }.get(kind, kind)


class LocalSigner(CustodyKeys):
    """CustodyKeys in this process: the key's addresses, and signatures under the signer's policy."""

    def __init__(self, custody: Custody, assets: Sequence[Asset], gas_cap: int, data_dir: Path) -> None:
        self.key = custody
        self.signer = Signer(custody, assets, gas_cap, data_dir, lazy=True)

    def __repr__(self) -> str:
        return f"LocalSigner({self.key!r})"

    @property
    def fingerprint(self) -> str:
        return self.key.fingerprint

    @property
    def source(self) -> str:
        return self.key.source

    def guard_with(self, guard: Guard) -> None:
        self.key.guard_with(guard)

    def verify(self) -> str | None:
        return self.key.verify()

    def address(self, account: int, index: int) -> str:
        return self.key.address(account, index)

    def account_xpub(self, account: int) -> str:
        return self.key.account_xpub(account)

    def _sign(self, account: int, index: int, tx: dict, grounds: Grounds) -> tuple[bytes, str]:
        return self.signer.sign(
            account,
            index,
            tx,
            grounds.payout_id,
            recipient=grounds.recipient,
            instruction=grounds.instruction,
        )
