"""Signer: the custody key behind the policy. The signer process serves one (process.py);
LocalSigner is the same in the caller's process, for commands that sign outside `serve` (payout
cancel) and for tests: one policy, whichever process holds the key."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from appliance.common.db import connection
from appliance.engine.chain.registry import Asset
from appliance.engine.custody import Custody, CustodyError, CustodyRefused, Guard
from appliance.engine.db import database
from appliance.engine.signer import facts, policy

log = logging.getLogger("appliance.engine.signer")


class SignerRefused(CustodyError):
    """The signer's policy refuses the transaction (the reason says why)."""


class Signer:
    def __init__(self, custody: Custody, assets: Sequence[Asset], gas_cap: int) -> None:
        self.custody = custody
        self.assets = list(assets)
        self.gas_cap = gas_cap

    def sign(self, account: int, index: int, tx: dict, payout_id: int | None) -> tuple[bytes, str]:
        """Sign ``tx`` with the key at (account, index) if the policy allows it; else SignerRefused
        (CustodyRefused when the key is not the deployment's)."""
        refusal = self.custody.verify()
        if refusal is not None:
            raise CustodyRefused(refusal)
        try:
            decoded = policy.Tx.of(tx)
            fee_cost = int(tx.get("gas", 0)) * int(tx.get("maxFeePerGas", tx.get("gasPrice", 0)))
        except (KeyError, TypeError, ValueError) as exc:
            raise SignerRefused(f"not a transaction the signer can read ({exc})") from None
        with connection(database):
            found = facts.gather(
                account,
                index,
                decoded,
                payout_id=payout_id,
                fee_cost=fee_cost,
                payout_wallet=self.custody.payout_address,
                fee_wallet=self.custody.fee_address,
                assets=self.assets,
                gas_cap=self.gas_cap,
            )
        reason = policy.judge(account, index, decoded, found)
        if reason is not None:
            log.warning(
                "signer refused a transaction of m/44'/60'/%d'/0/%d (network %d, nonce %d, to %s): %s",
                account,
                index,
                decoded.network_id,
                decoded.nonce,
                decoded.to,
                reason,
            )
            raise SignerRefused(reason)
        return self.custody.sign_transaction(account, index, tx)


class LocalSigner:
    """CustodyKeys in this process: the key's addresses, and signatures under the signer's policy."""

    def __init__(self, custody: Custody, assets: Sequence[Asset], gas_cap: int) -> None:
        self.key = custody
        self.signer = Signer(custody, assets, gas_cap)

    def __repr__(self) -> str:
        return f"LocalSigner({self.key!r})"

    @property
    def fingerprint(self) -> str:
        return self.key.fingerprint

    @property
    def source(self) -> str:
        return self.key.source

    @property
    def encrypted(self) -> bool:
        return self.key.encrypted

    def guard_with(self, guard: Guard) -> None:
        self.key.guard_with(guard)

    def verify(self) -> str | None:
        return self.key.verify()

    def address(self, account: int, index: int) -> str:
        return self.key.address(account, index)

    def account_xpub(self, account: int) -> str:
        return self.key.account_xpub(account)

    def sign_transaction(
        self, account: int, index: int, tx: dict, *, payout_id: int | None = None
    ) -> tuple[bytes, str]:
        return self.signer.sign(account, index, tx, payout_id)

    @property
    def payout_address(self) -> str:
        return self.key.payout_address

    @property
    def fee_address(self) -> str:
        return self.key.fee_address
