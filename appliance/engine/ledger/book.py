"""Posting to the per-operator double-entry ledger (docs/engine-treasury.md, "Ledger").

Every journal is legs that sum to zero (two; three when a payout's transfer moved other than its
amount: a fee-on-transfer token), on accounts of one operator and one asset
(chain id + asset code), written inside the caller's write transaction, i.e. in the same
transaction as the state change that causes it (a deposit confirmed or retracted, a payout
reserved, failed, completed or charged its network fee, an administrator's adjustment). Amounts
are Python integers stored as decimal strings: a uint256 fits no database integer.

Accounts of an operator and asset:
  balance       what the operator may still spend (the "available" balance)
  in_flight     payouts reserved (signed) and not yet final
  deposits      the counter-account of confirmed deposits (minus: what came in)
  paid_out      payouts completed
  network_fees  network fees its payouts paid (in the chain's native asset)
  adjustments   the counter-account of administrators' credits and debits
so that balance + in_flight = deposits in − paid out − fees + adjustments, to the wei.
"""

from __future__ import annotations

import secrets
from typing import Any

from appliance.common import clock
from appliance.common.db import locked
from appliance.engine.ledger.models import LedgerAccount, LedgerEntry
from appliance.engine.models import Payout

BALANCE, IN_FLIGHT, DEPOSITS, PAID_OUT, FEES, ADJUSTMENTS = (
    "balance",
    "in_flight",
    "deposits",
    "paid_out",
    "network_fees",
    "adjustments",
)
ACCOUNTS = (BALANCE, IN_FLIGHT, DEPOSITS, PAID_OUT, FEES, ADJUSTMENTS)

DEPOSIT_CREDIT = "deposit_credit"
DEPOSIT_REVERSAL = "deposit_reversal"
PAYOUT_RESERVE = "payout_reserve"
PAYOUT_RELEASE = "payout_release"
PAYOUT_SETTLE = "payout_settle"
NETWORK_FEE = "network_fee"
ADMIN_CREDIT = "admin_credit"
ADMIN_DEBIT = "admin_debit"


def _account(operator_id: str, chain_id: str, asset_code: str, account: str) -> LedgerAccount:
    """The account's row, locked until the transaction ends (FOR UPDATE on PostgreSQL; SQLite's
    write transaction is exclusive), created at zero on first use."""
    query = LedgerAccount.select().where(
        (LedgerAccount.operator == operator_id)
        & (LedgerAccount.chain_id == chain_id)
        & (LedgerAccount.asset_code == asset_code)
        & (LedgerAccount.account == account)
    )
    row = locked(query).get_or_none()
    if row is None:
        # ON CONFLICT DO NOTHING: a concurrent first posting inserted it; then it is read locked.
        LedgerAccount.insert(
            operator=operator_id,
            chain_id=chain_id,
            asset_code=asset_code,
            account=account,
            balance_minor="0",
            updated_at=clock.now(),
        ).on_conflict_ignore().execute()
        row = locked(query).get()  # a fresh query (first() would answer its cached None)
    return row


def lock_balance(operator_id: str, chain_id: str, asset_code: str) -> int:
    """The operator's available balance of the asset, its row locked for the rest of the
    transaction: reservations of one operator and asset take turns on it (two nodes included)."""
    return int(_account(operator_id, chain_id, asset_code, BALANCE).balance_minor)


def read_balance(operator_id: str, chain_id: str, asset_code: str) -> int:
    """The available balance as last committed (no lock, nothing written)."""
    row = LedgerAccount.get_or_none(
        (LedgerAccount.operator == operator_id)
        & (LedgerAccount.chain_id == chain_id)
        & (LedgerAccount.asset_code == asset_code)
        & (LedgerAccount.account == BALANCE)
    )
    return int(row.balance_minor) if row is not None else 0


def post(
    kind: str,
    operator_id: str,
    chain_id: str,
    asset_code: str,
    legs: dict[str, int],
    *,
    ref: str | None = None,
    memo: str | None = None,
    actor: str | None = None,
) -> str:
    """Write one journal (inside the caller's write transaction); returns its id."""
    if sum(legs.values()) != 0:
        raise ValueError(f"a journal's legs must sum to zero: {legs}")
    journal = "jrn_" + secrets.token_hex(12)
    moment = clock.now()
    # The balance row first, whether or not a leg is on it: it is the lock of the operator and
    # asset, which a reservation takes first too (controls.hold_reason). Sorting each journal's
    # legs was not enough: a completion settles (in_flight) and then charges its fee (balance) in
    # one transaction, and a reservation on another node holding balance and waiting for
    # in_flight deadlocked with it on PostgreSQL. The rest in name order.
    rows = {BALANCE: _account(operator_id, chain_id, asset_code, BALANCE)}
    for account in sorted(legs, key=lambda name: (name != BALANCE, name)):
        amount = legs[account]
        row = rows.get(account) or _account(operator_id, chain_id, asset_code, account)
        LedgerAccount.update(balance_minor=str(int(row.balance_minor) + amount), updated_at=moment).where(
            LedgerAccount.id == row.id
        ).execute()
        LedgerEntry.create(
            journal=journal,
            kind=kind,
            operator=operator_id,
            chain_id=chain_id,
            asset_code=asset_code,
            account=account,
            amount_minor=str(amount),
            ref=ref,
            memo=memo,
            actor=actor,
            created_at=moment,
        )
    return journal


# -- the causes -------------------------------------------------------------------------------------


def deposit_confirmed(deposit: Any) -> None:
    amount = int(deposit.amount_minor)
    post(
        DEPOSIT_CREDIT,
        deposit.operator_id,
        deposit.chain_id,
        deposit.asset_code,
        {DEPOSITS: -amount, BALANCE: amount},
        ref=f"deposit:{deposit.transfer_id}",
    )


def deposit_retracted(deposit: Any) -> None:
    """A confirmed deposit whose block left the canonical chain: its credit is reversed."""
    amount = int(deposit.amount_minor)
    post(
        DEPOSIT_REVERSAL,
        deposit.operator_id,
        deposit.chain_id,
        deposit.asset_code,
        {DEPOSITS: amount, BALANCE: -amount},
        ref=f"deposit:{deposit.transfer_id}",
    )


def _payout_ref(payout: Payout) -> str:
    return f"payout:{payout.id}"


def _reserved(payout: Payout) -> bool:
    """Whether the payout's reservation is posted and not yet released or settled (payouts signed
    before the ledger existed have none: nothing to release)."""
    kinds = [
        row.kind
        for row in LedgerEntry.select(LedgerEntry.kind).where(
            (LedgerEntry.ref == _payout_ref(payout))
            & (LedgerEntry.kind.in_((PAYOUT_RESERVE, PAYOUT_RELEASE, PAYOUT_SETTLE)))
            & (LedgerEntry.account == IN_FLIGHT)
        )
    ]
    return kinds.count(PAYOUT_RESERVE) > kinds.count(PAYOUT_RELEASE) + kinds.count(PAYOUT_SETTLE)


def on_transition(payout: Payout, before: str, after: str) -> None:
    """Called by payouts.state.transition in the transaction of every move: a payout is debited
    when it is reserved (REQUESTED → SIGNED: it gets a nonce), released when it FAILED, and moved
    to paid_out when it COMPLETED or COMPLETED_SHORT: by what left the payout wallet
    (``debited_minor``; a fee-on-transfer token's transfer may move more or less than the amount
    asked), the difference back to (or further off) the balance. Never released to be paid again."""
    amount = int(payout.amount_minor)
    args = (payout.operator_id, payout.chain_id, payout.asset)
    if before == "REQUESTED" and after == "SIGNED":
        post(PAYOUT_RESERVE, *args, {BALANCE: -amount, IN_FLIGHT: amount}, ref=_payout_ref(payout))
    elif after == "FAILED" and _reserved(payout):
        post(PAYOUT_RELEASE, *args, {IN_FLIGHT: -amount, BALANCE: amount}, ref=_payout_ref(payout))
    elif after in ("COMPLETED", "COMPLETED_SHORT") and _reserved(payout):
        debited = int(payout.debited_minor) if payout.debited_minor else amount
        legs = {IN_FLIGHT: -amount, PAID_OUT: debited, BALANCE: amount - debited}
        post(PAYOUT_SETTLE, *args, {k: v for k, v in legs.items() if v}, ref=_payout_ref(payout))


def charge_fee(payout: Payout, fee_asset_code: str) -> None:
    """The network fee the payout's transaction paid (COMPLETED or FAILED on chain), debited to
    the payout's operator in the chain's native asset."""
    if not payout.fee_minor:
        return
    fee = int(payout.fee_minor)
    post(
        NETWORK_FEE,
        payout.operator_id,
        payout.chain_id,
        fee_asset_code,
        {BALANCE: -fee, FEES: fee},
        ref=_payout_ref(payout),
    )


def adjust(operator_id: str, chain_id: str, asset_code: str, amount: int, *, memo: str, actor: str) -> str:
    """An administrator's credit (amount > 0) or debit (amount < 0)."""
    kind = ADMIN_CREDIT if amount > 0 else ADMIN_DEBIT
    return post(
        kind,
        operator_id,
        chain_id,
        asset_code,
        {ADJUSTMENTS: -amount, BALANCE: amount},
        memo=memo,
        actor=actor,
    )


def balances(operator_id: str) -> dict[tuple[str, str], dict[str, int]]:
    """Every account of the operator: {(chain_id, asset_code): {account: balance}}."""
    out: dict[tuple[str, str], dict[str, int]] = {}
    for row in LedgerAccount.select().where(LedgerAccount.operator == operator_id):
        accounts = out.setdefault((row.chain_id, row.asset_code), dict.fromkeys(ACCOUNTS, 0))
        accounts[row.account] = int(row.balance_minor)
    return out
