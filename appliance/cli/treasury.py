"""`appliance treasury` and `appliance reconcile`: the deployment's money, for its administrator
(the HTTP reads of the same figures stay 501 to operators: they are deployment-global)."""

from __future__ import annotations

import getpass
import re
from typing import Any

import click

from appliance.cli._options import command_options, emit
from appliance.cli.payout import _with_engine
from appliance.settings import Settings


@click.command("treasury", short_help="Custody wallets' balances per asset, on chain and expected.")
@command_options
def treasury_command(settings: Settings, as_json: bool) -> None:
    """Every custody wallet's balance per asset, on chain and as the engine's records expect
    (deposit addresses only when they hold or are owed something)."""
    from appliance.engine.treasury.positions import all_positions, positions_body
    from appliance.engine.treasury.solvency import all_exposures

    result = _with_engine(
        settings,
        lambda chains, custody: {
            **positions_body(all_positions(chains, custody)),
            "exposures": all_exposures(chains.chains),
        },
        chains=True,
    )
    emit(as_json, result, lambda: _positions_text(result, _decimals(settings)))


# What "expected" means for each kind of wallet (docs/engine-treasury.md, Treasury).
EXPECTED = {
    "payout": "still to pay out (payouts not yet mined)",
    "fee": "what the engine's records leave it after gas sent",
    "deposit": "deposits credited and not yet swept",
}


def _decimals(settings: Settings) -> dict[tuple[str, str], int]:
    from appliance.engine.chain.registry import declared_assets

    return {(a.chain_id, a.code): a.decimals for a in declared_assets(settings)}


def _positions_text(result: dict[str, Any], decimals: dict[tuple[str, str], int]) -> str:
    from appliance.common.amounts import in_units

    def units(row: dict[str, Any], minor: str) -> str:
        return in_units(minor, decimals.get((row["chainId"], row["assetCode"]), 0), row["assetCode"])

    rows = result["positions"]

    def exposure(e: dict[str, Any]) -> str:
        ceiling = units(e, e["ceilingMinor"]) if e["ceilingMinor"] else "none"
        return (
            f"exposure {e['chainId']} {e['assetCode']} {e['operatorId']}: paid out "
            f"{units(e, e['exposureMinor'])} beyond what it was credited (ceiling {ceiling})"
        )

    exposures = [exposure(e) for e in result.get("exposures", [])]
    if not rows:
        return "\n".join(
            ["no custody wallets (no custody key and no deposit address holds anything)", *exposures]
        )
    meanings = sorted({p["role"] for p in rows} & set(EXPECTED))
    return "\n".join(
        [
            f"{p['chainId']:<12} {p['assetCode']:<6} {p['role']:<8} {p['address']} "
            f"on chain {units(p, p['onChainMinor'])}, expected {units(p, p['expectedMinor'])}"
            for p in rows
        ]
        + [f"expected, for a {role} wallet: {EXPECTED[role]}" for role in meanings]
        + exposures
    )


@click.command(
    "reconcile",
    short_help="Reconcile custody wallets with the chains; print findings.",
)
@click.option(
    "--acknowledge",
    "acknowledge",
    default=None,
    metavar="CHAIN:ADDRESS:NONCE|TXHASH|FROM-TO",
    help="Acknowledge, after looking at it, the unknown outflow at this wallet's nonce, or the "
    "findings of this address naming a transaction (an unexplained outflow, a deposit out of "
    "range) or a block range (a flow mismatch): they leave the findings and the readiness check; "
    "who and when are kept.",
)
@command_options
def reconcile_command(acknowledge: str | None, settings: Settings, as_json: bool) -> None:
    """Compare the custody wallets with the chains and the engine's records now; print the
    findings (exit 0 whatever they are: read them, or the `treasury` readiness check)."""
    from appliance.common import clock
    from appliance.engine.chain.registry import eip55
    from appliance.engine.treasury import reconcile as rec

    if acknowledge is not None:
        ref_pattern = r"([0-9]{1,20}|0x[0-9a-fA-F]{64}|[0-9]{1,20}-[0-9]{1,20})"
        match = re.fullmatch(r"([A-Za-z0-9_]{3,32}):(0x[0-9a-fA-F]{40}):" + ref_pattern, acknowledge)
        if match is None:
            raise click.ClickException(
                "--acknowledge takes CHAIN:ADDRESS:NONCE, CHAIN:ADDRESS:TXHASH or CHAIN:ADDRESS:FROM-TO, "
                "e.g. eth_main:0xAbC…:7"
            )
        chain_id, address, ref = match.group(1), eip55(match.group(2)), match.group(3)
        if ref.isdigit():
            done = _with_engine(settings, lambda: rec.acknowledge(chain_id, address, int(ref), _who()))
            if not done:
                raise click.ClickException(
                    f"no open unknown outflow at nonce {ref} of {address} on {chain_id}"
                )
        elif not _with_engine(settings, lambda: rec.acknowledge_ref(chain_id, address, ref, _who())):
            raise click.ClickException(f"no open finding naming {ref} of {address} on {chain_id}")
    result = _with_engine(settings, lambda chains, custody: rec.reconcile(chains, custody), chains=True)
    if as_json:
        emit(as_json, result, "")
        return
    resolved = _with_engine(
        settings,
        lambda: [
            (clock.iso(r.resolved_at), r.kind, r.chain_id, r.address, r.resolution)
            for r in rec.recently_resolved()
        ],
    )
    emit(as_json, result, _findings_text(result) + _resolved_text(resolved))


def _who() -> str:
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):
        return "cli"


def _findings_text(result: dict[str, Any]) -> str:
    lines = [f"reconciled at {result['checkedAt']}: {len(result['findings'])} finding(s)"]
    lines += [
        f"  {f['kind']} {f['chainId']} {f['assetCode']} {f['address']}: expected {f['expectedMinor']}, "
        f"actual {f['actualMinor']} ({f['detail']})"
        for f in result["findings"]
    ]
    lines += ["solvency:"] if result.get("solvency") else []
    for s in result.get("solvency", []):
        lines.append(
            f"  {s['chainId']} {s['assetCode']}: owed {s['owedMinor']}, held {s['heldMinor']}, "
            f"shortfall {s['shortfallMinor']}, deployment costs {s['deploymentCostsMinor']}"
        )
        lines += [
            f"    exposure {e['operatorId']}: {e['exposureMinor']} (ceiling {e['ceilingMinor'] or 'none'})"
            for e in s["exposures"]
        ]
    return "\n".join(lines)


def _resolved_text(resolved: list[tuple[str, str, str, str, str]]) -> str:
    """Findings the reconciler resolved itself lately (raised while a node lagged): listed, so an
    alarm that came and went is not silent."""
    if not resolved:
        return ""
    lines = [f"\n{len(resolved)} finding(s) resolved by reconcile in the last 7 days:"]
    lines += [f"  {at} {kind} {chain} {address}: {why}" for at, kind, chain, address, why in resolved]
    return "\n".join(lines)


@click.command("sweeps", short_help="Recent sweeps of deposit addresses into the payout wallet.")
@click.option("--limit", type=click.IntRange(1, 1000), default=50, show_default=True, help="Sweeps to list.")
@click.option(
    "--status",
    type=click.Choice(["skipped", "topping_up", "signed", "sent", "completed", "failed"]),
    default=None,
    help="Only sweeps in this status (skipped ones are listed only when asked for).",
)
@command_options
def sweeps_command(limit: int, status: str | None, settings: Settings, as_json: bool) -> None:
    """The newest sweeps first, with their status, amounts and transactions, and the totals swept
    per chain and asset."""
    from appliance.engine.sweeps.view import recent

    result = _with_engine(settings, lambda: recent(limit, status))
    emit(as_json, result, lambda: _sweeps_text(result))


def _sweeps_text(result: dict[str, Any]) -> str:
    lines = [
        f"{t['chainId']} {t['assetCode']}: swept {t['sweptMinor']} in {t['completed']} sweep(s), "
        f"{t['open']} in flight, {t['failed']} failed"
        for t in result["totals"]
    ] or ["no sweeps yet"]
    lines += [
        f"  #{s['sweepId']} {s['chainId']} {s['assetCode']} {s['address']} {s['status']} "
        f"{s['amountMinor'] or '-'} {s['txHash'] or ''}{' (' + s['reason'] + ')' if s['reason'] else ''}"
        for s in result["sweeps"]
    ]
    return "\n".join(lines)


def register(group: click.Group) -> None:
    group.add_command(treasury_command)
    group.add_command(sweeps_command)
    group.add_command(reconcile_command)
