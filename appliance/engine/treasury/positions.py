"""Treasury positions: what each custody wallet holds on chain and what the engine's records say
it should hold, per asset (docs/engine-treasury.md, "Treasury positions").

Roles: ``payout`` (m/44'/60'/0'/0/0, pays every payout), ``fee`` (m/44'/60'/0'/0/1, keeps the
payout wallet's gas) and ``deposit`` (every operator's deposit addresses). expectedMinor is:

- deposit: the transfers recorded to the address (PENDING and CONFIRMED; a RETRACTED one is not
  there any more), less what its sweeps moved to the payout wallet and the network fees they
  paid, plus the gas top-ups it received from the fee wallet (sweeps/movements.py).
- payout: what the payout wallet still has to pay: the amounts of open payouts of the asset whose
  transaction is not mined yet (the wallet is short when it holds less). A sweep into it is no
  obligation: the chain shows it once mined.
- fee: what the fee wallet has signed and not yet paid (the native asset): its gas top-ups not
  mined yet; 0 otherwise.

A deposit address appears only when it holds or is owed something (most addresses of a large
deployment are empty); the two wallets always appear, one row per asset of their chain.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from typing import Any

from appliance.engine.chain.registry import Asset, Chains
from appliance.engine.custody import CustodyKeys
from appliance.engine.models import Broadcast, Deposit, DepositAddress, Payout, TreasuryMovement
from appliance.engine.sweeps.movements import deposit_movements, fee_wallet_owes
from appliance.engine.treasury.bulk import BulkReader

ROLES = ("payout", "fee", "deposit")
OPEN_PAYOUTS = ("REQUESTED", "SIGNED", "BROADCAST")


@dataclasses.dataclass(frozen=True)
class Position:
    chain_id: str
    asset_code: str
    role: str
    address: str
    on_chain: int
    expected: int

    def body(self) -> dict[str, Any]:
        return {
            "chainId": self.chain_id,
            "assetCode": self.asset_code,
            "role": self.role,
            "address": self.address,
            "onChainMinor": str(self.on_chain),
            "expectedMinor": str(self.expected),
        }


def recorded_deposits(chain_id: str, *, through_block: int | None = None) -> dict[tuple[str, str], int]:
    """(address, asset code) → the sum of the transfers recorded to it (not RETRACTED), counting
    only those at or below ``through_block`` when given. Summed in Python: amounts are decimal
    strings of up to 39 digits."""
    query = (
        Deposit.select(DepositAddress.address, Deposit.asset_code, Deposit.amount_minor)
        .join(DepositAddress, on=(Deposit.address == DepositAddress.id))
        .where((Deposit.chain_id == chain_id) & (Deposit.status != "RETRACTED"))
    )
    if through_block is not None:
        query = query.where(Deposit.block_height <= through_block)
    totals: dict[tuple[str, str], int] = defaultdict(int)
    for address, code, amount in query.tuples():
        totals[(address, code)] += int(amount)
    return totals


def payout_obligations(chain_id: str) -> dict[str, int]:
    """Asset code → the amounts of open payouts whose transaction is not mined yet."""
    mined = Broadcast.select(Broadcast.payout).where(
        Broadcast.payout.is_null(False) & Broadcast.status.in_(("mined", "final"))
    )
    totals: dict[str, int] = defaultdict(int)
    rows = Payout.select(Payout.asset, Payout.amount_minor).where(
        (Payout.chain_id == chain_id) & Payout.status.in_(OPEN_PAYOUTS) & ~(Payout.id.in_(mined))
    )
    for code, amount in rows.tuples():
        totals[code] += int(amount)
    return totals


def deposit_addresses(chain_id: str) -> list[str]:
    query = (
        DepositAddress.select(DepositAddress.address)
        .where(DepositAddress.chain_id == chain_id)
        .order_by(DepositAddress.id)
    )
    return list(dict.fromkeys(a for (a,) in query.tuples()))


def wallet_addresses(custody: CustodyKeys | None) -> list[tuple[str, str]]:
    """(role, address) of the payout and fee wallets; none without a custody key."""
    if custody is None:
        return []
    return [("payout", custody.payout_address), ("fee", custody.fee_address)]


def holding(address: str, asset: Asset) -> tuple[str, str | None]:
    return (address, asset.contract if asset.kind == "ERC20" else None)


def chain_positions(
    chains: Chains,
    chain_id: str,
    custody: CustodyKeys | None,
    reader: BulkReader,
    block: int | None = None,
    *,
    deposits: bool = True,
) -> list[Position]:
    """The positions of one chain at ``block`` (None: the head): the payout and fee wallets' when
    ``custody`` is given, the deposit addresses' when ``deposits``."""
    assets = chains.assets_of(chain_id)
    pairs = [(role, address, asset) for role, address in wallet_addresses(custody) for asset in assets]
    if deposits:
        pairs += [("deposit", address, asset) for address in deposit_addresses(chain_id) for asset in assets]
    balances = reader.balances([holding(address, asset) for _, address, asset in pairs], block)
    recorded = recorded_deposits(chain_id, through_block=block)
    if deposits:
        for key, change in deposit_movements(chains, chain_id, reader, block).items():
            recorded[key] = recorded.get(key, 0) + change
        for address, code, change in (
            TreasuryMovement.select(
                TreasuryMovement.address, TreasuryMovement.asset_code, TreasuryMovement.change_minor
            )
            .where(TreasuryMovement.chain_id == chain_id)
            .tuples()
        ):
            # Unexplained outflows the flows named (treasury/flows.py): the finding is theirs.
            recorded[(address, code)] = recorded.get((address, code), 0) + int(change)
    owed = payout_obligations(chain_id)
    out = []
    for (role, address, asset), on_chain in zip(pairs, balances, strict=True):
        if role == "deposit":
            expected = recorded.get((address, asset.code), 0)
            if not on_chain and not expected:
                continue
        elif role == "payout":
            expected = owed.get(asset.code, 0)
        else:
            expected = fee_wallet_owes(chain_id, address) if asset.kind == "native" else 0
        out.append(Position(chain_id, asset.code, role, address, on_chain, expected))
    return out


def all_positions(chains: Chains, custody: CustodyKeys | None) -> list[Position]:
    """Every chain's positions at its head (a chain that cannot be read raises its ChainError:
    a partial treasury would look like money gone)."""
    out: list[Position] = []
    for chain_id in sorted(chains.chains):
        out += chain_positions(chains, chain_id, custody, BulkReader(chains.chains[chain_id]))
    return out


def positions_body(positions: list[Position]) -> dict[str, Any]:
    return {"positions": [p.body() for p in positions]}
