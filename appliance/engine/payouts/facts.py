"""The facts a payout's readiness (payouts.readiness.decide) is judged by, read from the
database, the custody and the chain, each once and only when the decision asks for it."""

from __future__ import annotations

import functools

from appliance.engine.chain.base import Chain, EstimateReverted, FeeQuote
from appliance.engine.chain.registry import Asset, Chains
from appliance.engine.custody import CustodyKeys
from appliance.engine.ledger import controls
from appliance.engine.models import Broadcast, Payout
from appliance.engine.outgoing import fees as fee_rules
from appliance.engine.outgoing import state, transactions
from appliance.engine.outgoing.fencing import Fenced, Fencing, Pending, Scanning
from appliance.engine.outgoing.transactions import Call
from appliance.engine.payouts.readiness import Stop, WaitKind

NO_CUSTODY = "waiting for the custody key: run `appliance custody init` and restart"


def custody_missing(custody: CustodyKeys | None) -> str | None:
    """Why nothing new can be signed here: no custody key, or a key that is not the deployment's
    (its fingerprint, recorded at first use, differs: custody_record); else None."""
    return NO_CUSTODY if custody is None else custody.verify()


def in_flight(chain_id: str, wallet: str) -> tuple[dict[str | None, int], int]:
    """Amounts (by asset contract; None = native) and gas budget of the wallet's transactions
    that are signed but not yet final: the chain's balance does not show them yet."""
    values: dict[str | None, int] = {}
    gas = 0
    rows = Broadcast.select().where(
        (Broadcast.chain_id == chain_id)
        & (Broadcast.wallet == wallet)
        & (Broadcast.status.in_(state.IN_FLIGHT))
    )
    for row in rows:
        to, value, data = transactions.decode_call(row)
        gas += int(row.gas_limit) * int(row.max_fee_per_gas)
        if data[:4] == transactions.TRANSFER_SELECTOR:
            values[to] = values.get(to, 0) + int.from_bytes(data[36:68], "big")
        else:
            values[None] = values.get(None, 0) + value
    return values, gas


def fencing_stop(
    fencing: Fencing, chain: Chain, chain_id: str, wallet: str, role: str
) -> tuple[int, Stop | None]:
    """The chain's nonce of the wallet as the fencing checked it, or why signing for it stops."""
    try:
        return fencing.check(chain, chain_id, wallet, role), None
    except Pending as exc:  # another copy's transactions in the pool: wait until they are mined
        return 0, Stop(WaitKind.POOL, exc.reason)
    except Scanning as exc:  # the next pass reads the next blocks
        return 0, Stop(WaitKind.SCANNING, exc.reason)
    except Fenced as exc:
        return 0, Stop(WaitKind.FENCED, exc.reason)


class Holdings:
    """What a wallet can spend on a chain: its balances less what is signed and not yet mined. The
    in-flight sum is read before the chain's balance: a payload mined in between is then counted
    twice (a wait), never not at all (an overspend)."""

    def __init__(self, chain: Chain, wallet: str) -> None:
        self.chain, self.wallet = chain, wallet
        self.values, self.gas = in_flight(chain.chain_id, wallet)

    def token(self, contract: str | None) -> int:
        return self.chain.balance(self.wallet, contract) - self.values.get(contract, 0)

    def native(self) -> int:
        return self.chain.balance(self.wallet) - self.values.get(None, 0) - self.gas


class PayoutFacts:
    def __init__(
        self,
        payout: Payout,
        chains: Chains,
        custody: CustodyKeys | None,
        fencing: Fencing,
        ceilings: dict[str, int],
    ) -> None:
        self.payout = payout
        self.chains, self.custody, self.fencing, self.ceilings = chains, custody, fencing, ceilings
        self.chain: Chain | None = chains.get(payout.chain_id)
        self.head = 0
        self.chain_nonce = 0

    @functools.cached_property
    def custody_missing(self) -> str | None:
        return custody_missing(self.custody)

    @functools.cached_property
    def asset(self) -> Asset | None:
        asset = self.chains.find(self.payout.chain_id, self.payout.asset)
        return None if self.chain is None else asset

    @property
    def native(self) -> Asset:
        return self.chains.native(self.payout.chain_id)

    @functools.cached_property
    def hold(self) -> str | None:
        """The operator's controls as they stand (a pause, an approval, its 24 h volume, its
        prefunded balance without the fee): checked again, with the fee, when reserving."""
        assert self.asset is not None
        return controls.hold_reason(
            self.payout,
            native_code=self.native.code,
            native=self.asset.kind == "native",
            fee_cost=0,
            lock=False,
        )

    @property
    def wallet(self) -> str:
        assert self.custody is not None
        return self.custody.payout_address

    @functools.cached_property
    def stop(self) -> Stop | None:
        assert self.chain is not None
        self.head = self.chain.head().number
        self.chain_nonce, stop = fencing_stop(
            self.fencing, self.chain, self.payout.chain_id, self.wallet, "payout"
        )
        return stop

    @functools.cached_property
    def still_requested(self) -> bool:
        self.payout = Payout.get_by_id(self.payout.id)
        return bool(self.payout.status == "REQUESTED")

    @functools.cached_property
    def fees(self) -> FeeQuote | None:
        assert self.chain is not None
        return fee_rules.capped_fees(self.chain.fee_quote(), self.ceiling)

    @property
    def ceiling(self) -> int | None:
        return self.ceilings.get(self.payout.chain_id)

    @functools.cached_property
    def holdings(self) -> Holdings:
        assert self.chain is not None
        return Holdings(self.chain, self.wallet)

    @functools.cached_property
    def token_held(self) -> int:
        assert self.asset is not None
        return self.holdings.token(self.asset.contract)

    @functools.cached_property
    def native_held(self) -> int:
        return self.holdings.native()

    def gas(self, call: Call) -> int | str:
        assert self.chain is not None
        try:
            return fee_rules.with_margin(self.chain.estimate_gas(self.wallet, call.to, call.value, call.data))
        except EstimateReverted as exc:
            return exc.reason
