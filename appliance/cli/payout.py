"""`appliance payout status|cancel|unfence|approve|reject|foreign|adopt|reject-foreign`: one
payout's attempts and payloads, cancelling a stuck payout, letting a fenced wallet sign again once
an operator has checked it, deciding on a payout above its operator's approval threshold, and on a
transaction found at a custody wallet's nonce that the engine did not sign."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import click

from appliance.cli._options import command_options, emit
from appliance.settings import Settings


def _with_engine(settings: Settings, action: Callable[..., Any], *, chains: bool = False) -> Any:
    from appliance.cli.admin import migrate_all
    from appliance.cli.custody import open_custody
    from appliance.common.db import bind_database, connection
    from appliance.engine.chain.base import ChainError
    from appliance.engine.chain.registry import build_chains
    from appliance.engine.db import database
    from appliance.engine.payouts.cancel import CancelError

    migrate_all(settings, ["engine"])
    bind_database(database, settings.engine_db_url, busy_timeout_ms=settings.sqlite_busy_timeout_ms)
    opened = build_chains(settings) if chains else None
    try:
        with connection(database):
            if chains:
                return action(opened, open_custody(settings))
            return action()
    except CancelError as exc:
        raise click.ClickException(str(exc)) from None
    except ChainError as exc:
        raise click.ClickException(f"the chain could not be reached: {exc}") from None
    finally:
        if opened is not None:
            opened.close()


@click.group("payout")
def payout_group() -> None:
    """One payout's attempts, cancelling a stuck payout, fenced wallets."""


@payout_group.command("status")
@click.argument("payout_id")
@click.option("--operator", "operator_id", default=None, help="The operator (when several use PAYOUT_ID).")
@command_options
def status_command(payout_id: str, operator_id: str | None, settings: Settings, as_json: bool) -> None:
    """A payout's status, reason, transitions, every send attempt and every payload signed at its nonce."""
    from appliance.engine.payouts.cancel import find, status

    result = _with_engine(settings, lambda: status(find(payout_id, operator_id)))
    emit(as_json, result, lambda: _describe(result))


def _describe(result: dict[str, Any]) -> str:
    lines = [
        f"payout {result['payoutId']} of {result['operatorId']}: {result['status']}"
        + (f" ({result['reason']})" if result.get("reason") else ""),
        f"  {result['amountMinor']} {result['asset']} to {result['destination']} on {result['chainId']}",
    ]
    if result.get("broadcast"):
        lines.append(f"  nonce {result['broadcast']['nonce']} of {result['broadcast']['wallet']}")
    lines += [f"  attempt {a['occurredAt']} {a['outcome']} {a['txHash']}" for a in result["attempts"]]
    lines += [
        f"  payload {p['txHash']} maxFeePerGas {p['maxFeePerGas']}" + (" (cancel)" if p["cancels"] else "")
        for p in result["payloads"]
    ]
    return "\n".join(lines)


@payout_group.command("cancel")
@click.argument("payout_id")
@click.option("--operator", "operator_id", default=None, help="The operator (when several use PAYOUT_ID).")
@command_options
def cancel_command(payout_id: str, operator_id: str | None, settings: Settings, as_json: bool) -> None:
    """Cancel a payout: FAILED at once when it holds no nonce; otherwise a zero-value self-transfer
    at its nonce replaces it, and it is FAILED only once that lands (run `appliance serve`)."""
    from appliance.engine.payouts.cancel import cancel, find

    result = _with_engine(
        settings, lambda chains, custody: cancel(find(payout_id, operator_id), chains, custody), chains=True
    )
    emit(
        as_json,
        result,
        lambda: (
            f"payout {payout_id} FAILED (cancelled before it was signed)"
            if result["cancel"] is None
            else f"payout {payout_id}: cancellation {result['cancel']['txHash']} signed at nonce "
            f"{result['cancel']['nonce']}; the payout is FAILED once it lands"
        ),
    )


@payout_group.command("unfence")
@click.option("--chain-id", "chain_id", required=True)
@click.option("--wallet", "wallet", required=True, help="The fenced wallet's address.")
@command_options
def unfence_command(chain_id: str, wallet: str, settings: Settings, as_json: bool) -> None:
    """Let a fenced wallet sign again, after checking the transactions that used its nonces (see
    /health/ready): the engine's counter continues at the chain's nonce."""
    from appliance.engine.chain.registry import eip55
    from appliance.engine.payouts.cancel import unfence

    if not re.fullmatch(r"0x[0-9a-fA-F]{40}", wallet):
        raise click.ClickException("--wallet must be 0x and 40 hex digits")
    result = _with_engine(
        settings, lambda chains, _custody: unfence(chains, chain_id, eip55(wallet)), chains=True
    )
    emit(as_json, result, lambda: json.dumps(result))


def _decide(
    payout_id: str,
    operator_id: str | None,
    by: str | None,
    memo: str | None,
    approve: bool,
    settings: Settings,
) -> dict[str, Any]:
    from appliance.cli._ledger import actor, with_ledger
    from appliance.engine.ledger.service import LedgerError, decide
    from appliance.engine.payouts.cancel import CancelError, find

    def action() -> dict[str, Any]:
        try:
            payout = find(payout_id, operator_id)
        except CancelError as exc:
            raise LedgerError(str(exc)) from None
        return decide(payout, approve, actor(by), memo)

    return with_ledger(settings, action)


@payout_group.command("approve")
@click.argument("payout_id")
@click.option("--operator", "operator_id", default=None, help="The operator (when several use PAYOUT_ID).")
@click.option("--by", default=None, help="Who approves (default: the OS user).")
@command_options
def approve_command(
    payout_id: str, operator_id: str | None, by: str | None, settings: Settings, as_json: bool
) -> None:
    """Approve a payout above its operator's approval threshold (who and when are recorded); it is
    signed at the pipeline's next look, the other controls permitting. The approval is recorded in
    the signer's own state as well (its approval threshold: `signer-policy approve`)."""
    result = _decide(payout_id, operator_id, by, None, True, settings)
    result["signerApproval"] = _approve_in_signer(
        settings, result["operatorId"], payout_id, result["decidedBy"]
    )
    emit(as_json, result, lambda: f"payout {payout_id} approved by {result['decidedBy']}")


def _approve_in_signer(settings: Settings, operator_id: str, payout_id: str, by: str) -> dict[str, Any]:
    """The same approval in signer.db (through the running signer, with the administrator token):
    the signer believes no approval the engine database holds. When it cannot be recorded (the
    token belongs to another user), the engine's approval stands and the reason is returned."""
    from appliance.engine.signer.admin import AdminError, run
    from appliance.engine.signer.client import SignerUnavailable

    try:
        run(settings, "approve", operator=operator_id, payoutId=payout_id, by=by)
    except (AdminError, SignerUnavailable) as exc:
        click.echo(
            f"warning: not recorded in the signer ({exc}); run `appliance signer-policy approve "
            f"{payout_id} --operator {operator_id}` as its administrator if its threshold applies",
            err=True,
        )
        return {"recorded": False, "reason": str(exc)}
    return {"recorded": True, "reason": None}


@payout_group.command("reject")
@click.argument("payout_id")
@click.option("--operator", "operator_id", default=None, help="The operator (when several use PAYOUT_ID).")
@click.option("--by", default=None, help="Who rejects (default: the OS user).")
@click.option("--memo", default=None, help="Why (in the payout's reason).")
@command_options
def reject_command(
    payout_id: str,
    operator_id: str | None,
    by: str | None,
    memo: str | None,
    settings: Settings,
    as_json: bool,
) -> None:
    """Reject a payout above its operator's approval threshold: FAILED with the reason (who, when),
    nothing signed or paid."""
    result = _decide(payout_id, operator_id, by, memo, False, settings)
    emit(as_json, result, lambda: f"payout {payout_id} rejected by {result['decidedBy']}: FAILED")


_TX_HASH = r"0x[0-9a-fA-F]{64}"


def _foreign(settings: Settings, action: Callable[..., Any], *, chains: bool = False) -> Any:
    from appliance.engine.payouts.cancel import CancelError
    from appliance.engine.payouts.foreign import ForeignError

    try:
        return _with_engine(settings, action, chains=chains)
    except (ForeignError, CancelError) as exc:
        raise click.ClickException(str(exc)) from None


def _describe_foreign(row: dict[str, Any]) -> str:
    decided = (
        f"{row['status']} by {row['decidedBy']} at {row['decidedAt']}" if row["decidedAt"] else "pending"
    )
    payout = f" for payout {row['payoutId']}" if row["payoutId"] else ""
    return (
        f"{row['txHash']} on {row['chainId']}: nonce {row['nonce']} of the {row['role']} wallet "
        f"{row['wallet']} (block {row['blockNumber']}) to {row['to']}, value {row['valueMinor']}, "
        f"data {row['data'][:20]}{'…' if len(row['data']) > 20 else ''}: {decided}{payout}"
    )


@payout_group.command("foreign")
@click.option("--pending", "only_pending", is_flag=True, help="Only those waiting for a decision.")
@command_options
def foreign_command(only_pending: bool, settings: Settings, as_json: bool) -> None:
    """Transactions found at a custody wallet's nonce whose signed bytes the engine does not hold:
    each fences its wallet until an administrator adopts or rejects it."""
    from appliance.engine.payouts.foreign import listing

    rows = _foreign(settings, lambda: listing("pending" if only_pending else None))
    emit(as_json, rows, lambda: "\n".join(_describe_foreign(r) for r in rows) or "none")


@payout_group.command("adopt")
@click.option("--chain-id", "chain_id", required=True)
@click.option("--tx", "tx_hash", required=True, help="The foreign transaction's hash.")
@click.option("--payout", "payout_id", required=True, help="The payout it pays exactly.")
@click.option("--operator", "operator_id", default=None, help="The operator (when several use the payoutId).")
@click.option("--by", default=None, help="Who decides (default: the OS user).")
@click.option("--memo", default=None, help="Why (kept with the decision).")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@command_options
def adopt_command(
    chain_id: str,
    tx_hash: str,
    payout_id: str,
    operator_id: str | None,
    by: str | None,
    memo: str | None,
    yes: bool,
    settings: Settings,
    as_json: bool,
) -> None:
    """Record a foreign transaction of the payout wallet as the engine's transaction for PAYOUT,
    which it must pay exactly (asset, amount, destination); the payout then confirms like any
    other and is never signed again. Audited (who, when, what)."""
    from appliance.cli._ledger import actor
    from appliance.engine.payouts.cancel import find
    from appliance.engine.payouts.foreign import adopt

    if not re.fullmatch(_TX_HASH, tx_hash):
        raise click.ClickException("--tx must be 0x and 64 hex digits")
    if not yes:
        click.confirm(
            f"Record {tx_hash} as the engine's own payment of payout {payout_id}? Only if you know who "
            "signed it (another copy of this deployment) and that it was meant to pay this payout",
            abort=True,
        )
    who = actor(by)
    result = _foreign(
        settings,
        lambda chains, _custody: adopt(chains, chain_id, tx_hash, find(payout_id, operator_id), who, memo),
        chains=True,
    )
    emit(as_json, result, lambda: _describe_foreign(result))


@payout_group.command("reject-foreign")
@click.option("--chain-id", "chain_id", required=True)
@click.option("--tx", "tx_hash", required=True, help="The foreign transaction's hash.")
@click.option("--by", default=None, help="Who decides (default: the OS user).")
@click.option("--memo", default=None, help="Why (kept with the decision).")
@command_options
def reject_foreign_command(
    chain_id: str, tx_hash: str, by: str | None, memo: str | None, settings: Settings, as_json: bool
) -> None:
    """Record a foreign transaction as a foreign outflow: nothing is taken as paid by it, reconcile
    keeps it as an unknown outflow until acknowledged, and its wallet signs again at the next nonce
    once nothing else of it waits for a decision. Audited (who, when, what)."""
    from appliance.cli._ledger import actor
    from appliance.engine.payouts.foreign import reject

    if not re.fullmatch(_TX_HASH, tx_hash):
        raise click.ClickException("--tx must be 0x and 64 hex digits")
    who = actor(by)
    result = _foreign(settings, lambda: reject(chain_id, tx_hash, who, memo))
    emit(as_json, result, lambda: _describe_foreign(result))


def register(group: click.Group) -> None:
    group.add_command(payout_group)
