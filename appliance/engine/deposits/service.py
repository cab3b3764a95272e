"""Deposit addresses and the deposits recorded for them.

An address is derived, never supplied: m/44'/60'/(1 + A)'/0/I where A is the operator's custody
account (allocated once, sequentially: two operators never share an account) and I the next
index of that account (recorded, sequential: never a hash, which could collide). The same key on
another machine derives the same addresses from the recorded numbers.
"""

from __future__ import annotations

import secrets
from typing import Any

import peewee

from appliance.common import clock
from appliance.common.db import locked, write_transaction
from appliance.common.problems import BadRequest, NotFound, Unavailable
from appliance.engine.chain.base import ChainError
from appliance.engine.chain.registry import Chains
from appliance.engine.custody import KEY_REFUSED, SIGNER_SILENT, CustodyError, CustodyKeys
from appliance.engine.db import database
from appliance.engine.models import CustodyAccount, Deposit, DepositAddress

FIRST_DEPOSIT_ACCOUNT = 1  # BIP44 account 0 holds the payout and fee wallets


def address_body(chains: Chains, row: DepositAddress) -> dict[str, Any]:
    return {
        "addressId": row.address_id,
        "address": row.address,
        "chainId": row.chain_id,
        "accountRef": row.account_ref,
        "derivationIndex": str(row.derivation_index),
        "assets": [
            {
                "assetCode": a.code,
                "contract": a.contract,
                "decimals": a.decimals,
                "confirmations": a.confirmations,
            }
            for a in chains.assets_of(row.chain_id)
        ],
    }


def transfer_body(row: Deposit) -> dict[str, Any]:
    return {
        "transferId": row.transfer_id,
        "chainId": row.chain_id,
        "txHash": row.tx_hash,
        "outputIndex": row.output_index,
        "assetCode": row.asset_code,
        "amountMinor": row.amount_minor,
        "blockHeight": str(row.block_height),
        "status": row.status,
        "detectedAt": clock.iso(row.detected_at),
    }


def _existing(operator_id: str, chain_id: str, account_ref: str) -> DepositAddress | None:
    return DepositAddress.get_or_none(
        (DepositAddress.operator == operator_id)
        & (DepositAddress.chain_id == chain_id)
        & (DepositAddress.account_ref == account_ref)
    )


def _custody_account(operator_id: str) -> CustodyAccount:
    """The operator's custody account, allocated on first use (inside a write transaction)."""
    account = locked(CustodyAccount.select().where(CustodyAccount.operator == operator_id)).first()
    if account is None:
        highest = CustodyAccount.select(peewee.fn.MAX(CustodyAccount.account)).scalar()
        account = CustodyAccount.create(
            operator=operator_id,
            account=FIRST_DEPOSIT_ACCOUNT if highest is None else highest + 1,
            next_index=0,
        )
    return account


def create_address(
    chains: Chains, custody: CustodyKeys | None, operator_id: str, account_ref: str, chain_id: str
) -> tuple[dict[str, Any], bool]:
    """(body, created): 201 for a new address, 200 when the account already has one on the chain."""
    if custody is None:
        raise Unavailable(
            "This deployment has no custody key (appliance custody init): no deposit addresses."
        )
    if custody.verify() is not None:  # checked before the allocating transaction opens
        raise Unavailable(KEY_REFUSED)
    chain = chains.get(chain_id)
    if chain is None:
        raise BadRequest(
            f"Chain {chain_id} is not a chain of this deployment (GET /v1/assets lists them).",
            errors=[{"field": "chainId", "message": "unknown chain"}],
        )
    existing = _existing(operator_id, chain_id, account_ref)
    if existing is not None:
        return address_body(chains, existing), False
    try:
        head = chain.head().number
    except ChainError as exc:
        raise Unavailable(f"Chain {chain_id} cannot be reached right now; try again.") from exc
    for _attempt in range(3):  # two new operators may race for the next custody account on PostgreSQL
        try:
            return _allocate(chains, custody, operator_id, account_ref, chain_id, head)
        except CustodyError as exc:  # the signer went silent meanwhile: rolled back, nothing taken
            raise Unavailable(SIGNER_SILENT) from exc
        except peewee.IntegrityError:  # a simultaneous request made it first: answer theirs
            existing = _existing(operator_id, chain_id, account_ref)
            if existing is not None:
                return address_body(chains, existing), False
    raise Unavailable("Deposit addresses are being allocated by many requests at once; try again.")


def _allocate(
    chains: Chains, custody: CustodyKeys, operator_id: str, account_ref: str, chain_id: str, head: int
) -> tuple[dict[str, Any], bool]:
    with write_transaction(database):
        existing = _existing(operator_id, chain_id, account_ref)
        if existing is not None:
            return address_body(chains, existing), False
        account = _custody_account(operator_id)
        index = int(account.next_index)
        CustodyAccount.update(next_index=index + 1).where(CustodyAccount.id == account.id).execute()
        row = DepositAddress.create(
            address_id="waddr_" + secrets.token_hex(12),
            operator=operator_id,
            chain_id=chain_id,
            account_ref=account_ref,
            address=custody.address(int(account.account), index),
            custody_account=int(account.account),
            derivation_index=index,
            watch_from=head,
        )
    return address_body(chains, row), True


def deposits(operator_id: str, account_ref: str, chain_id: str | None) -> dict[str, Any]:
    addresses = DepositAddress.select(DepositAddress.id).where(
        (DepositAddress.operator == operator_id) & (DepositAddress.account_ref == account_ref)
    )
    if chain_id is not None:
        addresses = addresses.where(DepositAddress.chain_id == chain_id)
    if not addresses.exists():
        raise NotFound("This account has no registered deposit address.")
    rows = (
        Deposit.select()
        .where((Deposit.operator == operator_id) & (Deposit.address.in_(addresses)))
        .order_by(Deposit.block_height.desc(), Deposit.id.desc())
    )
    return {
        "operatorId": operator_id,
        "accountRef": account_ref,
        "transfers": [transfer_body(r) for r in rows],
    }
